//! Arbitrary bytes fed to the wire decoders (RESP requests, PostgreSQL startup packets and
//! frontend messages): no panic, an answer for every input, no allocation out of proportion to
//! the bytes given (whatever count or length they announce), and the same answer however the
//! bytes are split into reads.
//!
//! A counting global allocator records the largest single allocation made by this thread
//! while a decoder runs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use leaselab_sim::pg_wire::{decode_frontend, decode_startup};
use leaselab_sim::resp::{decode_request, RequestReader};
use proptest::prelude::*;

struct Counting;

thread_local! {
    static LARGEST_ALLOCATION: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST_ALLOCATION.try_with(|largest| largest.set(largest.get().max(size)));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the largest single allocation it made.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST_ALLOCATION.with(|largest| largest.set(0));
    let result = f();
    (result, LARGEST_ALLOCATION.with(Cell::get))
}

/// The most any decoder may allocate at once for `len` input bytes: a copy or two of the input
/// plus small fixed structures.
fn bound(len: usize) -> usize {
    4 * len + 4096
}

/// Bytes that look like the protocols often enough to go deep: fragments of RESP and of
/// PostgreSQL messages, with huge, negative and non-numeric counts and lengths, zero bytes,
/// quotes, and arbitrary bytes in between.
fn hostile_bytes() -> impl Strategy<Value = Vec<u8>> {
    let fragment = prop_oneof![
        Just(b"*".to_vec()),
        Just(b"$".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\x00".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"'".to_vec()),
        Just(b"\\x4".to_vec()),
        Just(b" ".to_vec()),
        Just(b"PING".to_vec()),
        Just(b"2147483647".to_vec()),
        Just(b"2147483648".to_vec()),
        Just(b"536870913".to_vec()),
        Just(b"-1".to_vec()),
        Just(b"99999999999999999999".to_vec()),
        (0i64..5).prop_map(|n| n.to_string().into_bytes()),
        Just(vec![0x7f, 0xff, 0xff, 0xff]),
        Just(vec![0, 0, 0, 8]),
        Just(vec![0, 3, 0, 0]),
        Just(80_877_103i32.to_be_bytes().to_vec()),
        Just(80_877_102i32.to_be_bytes().to_vec()),
        Just(b"Q".to_vec()),
        Just(b"P".to_vec()),
        Just(b"B".to_vec()),
        Just(b"D".to_vec()),
        Just(b"\xff\xff".to_vec()),
        Just(b"user\x00postgres\x00".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..16),
    ];
    proptest::collection::vec(fragment, 0..40).prop_map(|fragments| fragments.concat())
}

fn any_input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..512),
        hostile_bytes(),
    ]
}

/// The requests read (each an argument vector), the protocol error's text if any, the reader.
type ReadAll = (Vec<Vec<Vec<u8>>>, Option<Vec<u8>>, RequestReader);

/// Everything a reader yields for `chunks` pushed one after another, up to the first error.
fn read_all(chunks: &[&[u8]]) -> ReadAll {
    let mut reader = RequestReader::new();
    let mut requests = Vec::new();
    for chunk in chunks {
        reader.push(chunk);
        loop {
            match reader.next_request() {
                Ok(Some(argv)) => requests.push(argv),
                Ok(None) => break,
                Err(error) => return (requests, Some(error.0), reader),
            }
        }
    }
    (requests, None, reader)
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(512)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn resp_decoding_never_panics_and_allocates_in_proportion(input in any_input()) {
        let (result, largest) = largest_allocation(|| decode_request(&input));
        prop_assert!(largest <= bound(input.len()), "allocated {largest} for {} bytes", input.len());
        if let Ok(Some(request)) = &result {
            prop_assert!(request.consumed_bytes <= input.len());
            prop_assert!(request.consumed_bytes > 0);
        }
        let (_, _, reader) = read_all(&[&input]);
        prop_assert!(reader.held_bytes() <= input.len());
        prop_assert!(reader.reserved_bytes() <= bound(input.len()));
    }

    #[test]
    fn resp_requests_do_not_depend_on_how_the_bytes_arrive(
        input in any_input(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let whole = read_all(&[&input]);
        let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(input.len() + 1)).collect();
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for cut in cuts {
            chunks.push(&input[start..cut]);
            start = cut;
        }
        chunks.push(&input[start..]);
        let split = read_all(&chunks);
        prop_assert_eq!(&whole.0, &split.0);
        prop_assert_eq!(&whole.1, &split.1);
    }

    #[test]
    fn postgres_startup_decoding_never_panics(input in any_input()) {
        let (result, largest) = largest_allocation(|| decode_startup(&input));
        prop_assert!(largest <= bound(input.len()), "allocated {largest} for {} bytes", input.len());
        if let Ok(Some(decoded)) = &result {
            prop_assert!(decoded.consumed_bytes <= input.len());
            prop_assert!(decoded.consumed_bytes >= 8);
        }
        // A prefix either waits for more or already gives the whole input's answer.
        for len in 0..input.len() {
            let prefix = decode_startup(&input[..len]);
            if prefix != Ok(None) {
                prop_assert_eq!(&prefix, &result, "prefix of {} bytes", len);
            }
        }
    }

    #[test]
    fn postgres_message_decoding_never_panics(input in any_input()) {
        let (result, largest) = largest_allocation(|| decode_frontend(&input));
        prop_assert!(largest <= bound(input.len()), "allocated {largest} for {} bytes", input.len());
        if let Ok(Some(decoded)) = &result {
            prop_assert!(decoded.consumed_bytes <= input.len());
            prop_assert!(decoded.consumed_bytes >= 5);
        }
        for len in 0..input.len() {
            let prefix = decode_frontend(&input[..len]);
            if prefix != Ok(None) {
                prop_assert_eq!(&prefix, &result, "prefix of {} bytes", len);
            }
        }
    }
}

/// Announced sizes are not reserved: a 512 MiB bulk and an `INT_MAX` count cost what arrived.
#[test]
fn announced_sizes_are_not_allocated() {
    let input = b"*2147483647\r\n$536870912\r\nabc".to_vec();
    let ((_, _, reader), largest) = largest_allocation(|| read_all(&[&input]));
    assert!(largest <= bound(input.len()), "allocated {largest}");
    assert_eq!(reader.held_bytes(), 3);
    let mut query = b"Q".to_vec();
    query.extend_from_slice(&((1i32 << 30) - 2).to_be_bytes());
    query.extend_from_slice(b"SELECT");
    let (result, largest) = largest_allocation(|| decode_frontend(&query));
    assert_eq!(result, Ok(None));
    assert!(largest <= bound(query.len()), "allocated {largest}");
}
