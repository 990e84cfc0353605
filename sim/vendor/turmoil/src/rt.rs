use std::cell::{Cell, RefCell};
use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use rand::rngs::SmallRng;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio::task::LocalSet;
use tokio::time::{sleep, Duration, Instant};

use super::Result;

// To support re-creation, we need to store a factory of the future that
// represents the software. This is somewhat annoying in that it requires
// boxxing to avoid generics.
type Software<'a> = Box<dyn Fn() -> Pin<Box<dyn Future<Output = Result>>> + 'a>;

/// Runtime kinds.
pub enum Kind<'a> {
    /// A runtime for executing test code.
    Client,

    /// A runtime that is running simulated host software.
    Host { software: Software<'a> },

    /// A runtime without any software. The network topology uses this for
    /// time tracking and message delivery.
    NoSoftware,
}

/// Runtime configuration.
#[derive(Clone, Default)]
pub struct Config {
    /// Whether io is enabled on the runtime.
    pub enable_io: bool,

    /// Rng used to seed the tokio runtime.
    ///
    /// Only used if the `tokio_unstable` cfg flag is set.
    #[cfg_attr(not(tokio_unstable), expect(dead_code))]
    pub rng: Option<SmallRng>,
}

/// Per host simulated runtime.
///
/// The tokio runtime is paused (see [`Builder::start_paused`]), which gives us
/// control over when and how to advance time. In particular, see [`Rt::tick`],
/// which lets the runtime do a bit more work.
pub struct Rt<'a> {
    pub kind: Kind<'a>,

    /// Handle to the Tokio runtime driving this simulated host. Each runtime
    /// may have a different sense of "now" which simulates clock skew.
    tokio: Runtime,

    /// Local task set used for running !Send tasks.
    local: LocalSet,

    /// A user readable name to identify the node.
    pub nodename: Arc<str>,

    /// Optional handle to a host's software. When software finishes, the handle is
    /// consumed to check for error, which is propagated up to fail the simulation.
    handle: Option<JoinHandle<Result>>,

    /// Runtime configuration.
    config: Config,

    /// Set when a task of the host's `LocalSet` is woken from outside it (a
    /// message, a timer, another host), or when a tick ends with tasks still
    /// queued: the host has work. Cleared when a tick starts.
    woken: Arc<AtomicBool>,

    /// How far the runtime's clock is behind the simulation: the steps in
    /// which the host was skipped (see [`Rt::skip`]).
    lag: Duration,

    /// The runtime's paused clock as last read by [`Rt::now`]; forgotten
    /// whenever the runtime is entered in a way that may move it (a tick, a
    /// catch-up, new software, a new runtime). Reading the clock enters the
    /// runtime and locks its clock, once per host per step otherwise.
    clock: Cell<Option<Instant>>,

    /// The waker a tick polls the `LocalSet` with ([`NoteWoken`]) and the
    /// runtime's waker inside it: made once, not at every poll.
    note_waker: RefCell<Option<(Waker, Waker)>>,
}

/// The waker the `LocalSet` is polled with during a tick: notes that the host
/// has work, then wakes the runtime's own waker.
struct NoteWoken {
    woken: Arc<AtomicBool>,
    inner: Waker,
}

impl Wake for NoteWoken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Relaxed);
        self.inner.wake_by_ref();
    }
}

/// Polls `future` with the waker in `waker` (when set) instead of the one it
/// is polled with.
struct PollWith<'w, F> {
    future: F,
    waker: &'w RefCell<Option<Waker>>,
}

impl<F: Future + Unpin> Future for PollWith<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let future = Pin::new(&mut this.future);
        match this.waker.borrow().as_ref() {
            Some(waker) => future.poll(&mut Context::from_waker(waker)),
            None => future.poll(cx),
        }
    }
}

impl<'a> Rt<'a> {
    pub(crate) fn client<F>(nodename: Arc<str>, client: F, mut config: Config) -> Self
    where
        F: Future<Output = Result> + 'static,
    {
        let (tokio, local) = init(&mut config);

        let handle = with(&tokio, &local, || tokio::task::spawn_local(client));

        Self {
            kind: Kind::Client,
            tokio,
            local,
            nodename,
            handle: Some(handle),
            config,
            woken: Arc::new(AtomicBool::new(true)),
            lag: Duration::ZERO,
            clock: Cell::new(None),
            note_waker: RefCell::new(None),
        }
    }

    pub(crate) fn host<F, Fut>(nodename: Arc<str>, software: F, mut config: Config) -> Self
    where
        F: Fn() -> Fut + 'a,
        Fut: Future<Output = Result> + 'static,
    {
        let (tokio, local) = init(&mut config);

        let software: Software = Box::new(move || Box::pin(software()));
        let handle = with(&tokio, &local, || tokio::task::spawn_local(software()));

        Self {
            kind: Kind::Host { software },
            tokio,
            local,
            nodename,
            handle: Some(handle),
            config,
            woken: Arc::new(AtomicBool::new(true)),
            lag: Duration::ZERO,
            clock: Cell::new(None),
            note_waker: RefCell::new(None),
        }
    }

    pub(crate) fn no_software() -> Self {
        let mut config = Config::default();
        let (tokio, local) = init(&mut config);

        Self {
            kind: Kind::NoSoftware,
            tokio,
            local,
            nodename: String::new().into(),
            handle: None,
            config,
            woken: Arc::new(AtomicBool::new(true)),
            lag: Duration::ZERO,
            clock: Cell::new(None),
            note_waker: RefCell::new(None),
        }
    }

    pub(crate) fn is_client(&self) -> bool {
        matches!(self.kind, Kind::Client)
    }

    fn is_host(&self) -> bool {
        matches!(self.kind, Kind::Host { .. })
    }

    pub(crate) fn is_software_running(&self) -> bool {
        self.handle.is_some()
    }

    pub(crate) fn now(&self) -> Instant {
        if let Some(now) = self.clock.get() {
            return now;
        }
        let now = {
            let _guard = self.tokio.enter();
            Instant::now()
        };
        self.clock.set(Some(now));
        now
    }

    /// The simulation's time on this runtime's clock: [`Rt::now`] plus the
    /// steps it was skipped.
    pub(crate) fn sim_now(&self) -> Instant {
        self.now() + self.lag
    }

    /// Whether a task of the host was woken since its last tick began (or its
    /// last tick ended with tasks still queued).
    pub(crate) fn is_woken(&self) -> bool {
        self.woken.load(Ordering::Relaxed)
    }

    /// The host sits out a step of `duration`: its runtime is not entered,
    /// and its clock falls behind by `duration` until [`Rt::catch_up`].
    pub(crate) fn skip(&mut self, duration: Duration) {
        self.lag += duration;
    }

    /// Brings the runtime's clock up to the simulation's time after skipped
    /// steps, in one move. No timer of the host falls inside the skipped steps
    /// (that is why they were skipped), so none fires: as if it had been
    /// ticked through them. Returns false if one did fire (an undeclared
    /// timer, see [`crate::wake_at`]): it fired late.
    pub(crate) fn catch_up(&mut self) -> bool {
        let lag = mem::take(&mut self.lag);
        if lag.is_zero() {
            return true;
        }
        self.woken.store(false, Ordering::Relaxed);
        self.clock.set(None);
        self.tokio.block_on(tokio::time::advance(lag));
        !self.woken.load(Ordering::Relaxed)
    }

    // This method is called by [`Sim::run`], which iterates through all the
    // runtimes and ticks each one. The magic of this method is described in the
    // documentation for [`LocalSet::run_until`], but it may not be entirely
    // obvious how things fit together.
    //
    // A [`LocalSet`] tracks the tasks to run, which may in turn spawn more
    // tasks. `run_until` drives a top level task to completion, but not its
    // children. If you look below, you may be confused. The task we run here
    // just sleeps and has no children! However, it's the _same `LocalSet`_ that
    // is used to run software on the host.
    //
    // In this way, every time `tick` is called, the following unfolds:
    //
    // 1. Time advances on the runtime
    // 2. We schedule a new task that simply sleeps
    // 3. Other tasks on the `LocalSet` get a chance to run
    // 4. The sleep finishes
    // 5. The runtime pauses
    //
    // Returns whether the software has finished successfully or the error
    // that caused failure. Subsequent calls do not return the error as it is
    // expected to fail the simulation.
    pub(crate) fn tick(&mut self, duration: Duration) -> Result<bool> {
        debug_assert!(self.lag.is_zero(), "a skipped host ticks only after catching up");
        self.woken.store(false, Ordering::Relaxed);
        self.clock.set(None);
        // The tick's own sleep is polled with the runtime's waker, not with
        // `NoteWoken`: its end wakes no task of the host's software.
        let plain: RefCell<Option<Waker>> = RefCell::new(None);
        let sleep = {
            let _guard = self.tokio.enter();
            std::pin::pin!(sleep(duration))
        };
        let mut run = std::pin::pin!(self.local.run_until(PollWith {
            future: sleep,
            waker: &plain,
        }));
        self.tokio.block_on(std::future::poll_fn(|cx: &mut Context<'_>| {
            plain.replace(Some(cx.waker().clone()));
            // The `LocalSet` keeps the waker it was last polled with, and wakes
            // it when one of its tasks is woken from outside: `woken` notes it.
            let waker = {
                let mut cached = self.note_waker.borrow_mut();
                match cached.as_ref() {
                    Some((inner, note)) if inner.will_wake(cx.waker()) => note.clone(),
                    _ => {
                        let note = Waker::from(Arc::new(NoteWoken {
                            woken: self.woken.clone(),
                            inner: cx.waker().clone(),
                        }));
                        *cached = Some((cx.waker().clone(), note.clone()));
                        note
                    }
                }
            };
            match run.as_mut().poll(&mut Context::from_waker(&waker)) {
                Poll::Ready(()) => Poll::Ready(()),
                Poll::Pending => Poll::Pending,
            }
        }));
        self.clock.set(None);

        // pull for software completion
        match &self.handle {
            Some(handle) if handle.is_finished() => {
                // Consume handle to extract task result
                if let Some(h) = self.handle.take() {
                    match self.tokio.block_on(h) {
                        // If the host was crashed the JoinError is cancelled, which
                        // needs to be handled to not fail the simulation.
                        Err(je) if je.is_cancelled() => {}
                        res => res??,
                    }
                };
                Ok(true)
            }
            Some(_) => Ok(false),
            None => Ok(true),
        }
    }

    pub(crate) fn crash(&mut self) {
        if !self.is_host() {
            panic!("can only crash host's software");
        }

        if self.handle.take().is_some() {
            self.cancel_tasks();
        };
    }

    pub(crate) fn bounce(&mut self) {
        if !self.is_host() {
            panic!("can only bounce host's software");
        }

        self.cancel_tasks();

        if let Kind::Host { software } = &self.kind {
            self.clock.set(None);
            let handle = with(&self.tokio, &self.local, || {
                tokio::task::spawn_local(software())
            });
            self.handle.replace(handle);
        };
    }

    /// Cancel all tasks within the [`Rt`] by dropping the current tokio
    /// [`Runtime`].
    ///
    /// Dropping the runtime blocks the calling thread until all futures have
    /// completed, which is desired here to ensure host software completes and
    /// all resources are dropped.
    ///
    /// Both the [`Runtime`] and [`LocalSet`] are replaced with new instances.
    fn cancel_tasks(&mut self) {
        let (tokio, local) = init(&mut self.config);

        _ = mem::replace(&mut self.tokio, tokio);
        drop(mem::replace(&mut self.local, local));
        self.clock.set(None);
        self.note_waker.replace(None);
        // A new runtime: nothing to catch up, no timer declared on its clock,
        // and its software starts at once.
        self.lag = Duration::ZERO;
        self.woken.store(true, Ordering::Relaxed);
        crate::world::World::current_if_set(|world| {
            if let Some(addr) = world.current {
                if let Some(host) = world.hosts.get_mut(&addr) {
                    host.wakes.clear();
                }
            }
        });
    }
}

fn init(config: &mut Config) -> (Runtime, LocalSet) {
    let mut tokio_builder = tokio::runtime::Builder::new_current_thread();

    #[cfg(tokio_unstable)]
    tokio_builder.unhandled_panic(tokio::runtime::UnhandledPanic::ShutdownRuntime);

    if config.enable_io {
        tokio_builder.enable_io();
    }

    #[cfg(tokio_unstable)]
    if let Some(rng) = &mut config.rng {
        let bytes: [u8; 32] = rand::Rng::random(rng);
        let seed = tokio::runtime::RngSeed::from_bytes(&bytes);
        tokio_builder.rng_seed(seed);
    }

    let tokio = tokio_builder
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();

    tokio.block_on(async {
        // Sleep to "round" `Instant::now()` to the closest `ms`
        tokio::time::sleep(Duration::from_millis(1)).await;
    });

    (tokio, new_local())
}

fn new_local() -> LocalSet {
    #[cfg(not(tokio_unstable))]
    let local = LocalSet::new();

    #[cfg(tokio_unstable)]
    let mut local = LocalSet::new();

    #[cfg(tokio_unstable)]
    local.unhandled_panic(tokio::runtime::UnhandledPanic::ShutdownRuntime);

    local
}

fn with<R>(tokio: &Runtime, local: &LocalSet, f: impl FnOnce() -> R) -> R {
    tokio.block_on(async { local.run_until(async { f() }).await })
}
