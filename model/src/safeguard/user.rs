//! A safeguard described in a file (see [`spec`](super::spec) for the file): its lock and
//! store as data, run by the same [`LockedSpend`](super::locked::LockedSpend) machine as the
//! built-in safeguards.
//!
//! A loaded file is registered once per process and named by a [`UserId`] (four bytes), so a
//! [`Safeguard::User`](super::Safeguard::User) is `Copy` and the checker's states hash a
//! number, not the file. Its scripts are [`ScriptId::User`] and its statements
//! [`Statement::Text`] — interned texts ([`crate::intern`]) — unless a text is exactly one of
//! the tutorial's: then it *is* the built-in script or statement, and a file that spells a
//! tutorial safeguard runs byte for byte as the built-in one.

use std::sync::{Arc, Mutex, OnceLock};

use crate::postgres::Statement;
use crate::redis::{Command, Reply, ScriptId};

use super::lock::{Acquire, Release};
use super::retry::Retry;
use super::step::{Input, RedisRequest, SqlRequest, Step};
use super::store::{unexpected, Read, Written};
use super::{BalanceIn, Keys};

/// A registered safeguard file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserId(u32);

/// How many distinct safeguard files a process may register.
pub const MAX_USER_SAFEGUARDS: usize = 1_024;

/// A value a template can name, written `{name}` in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Var {
    /// `{lock_key}`: the lock's key.
    LockKey,
    /// `{fence_key}`: the fence counter's key.
    FenceKey,
    /// `{balance_key}`: the balance's key (a Redis balance).
    BalanceKey,
    /// `{token}`: this caller's random token (32 hex digits).
    Token,
    /// `{ttl_ms}`: the lease duration in milliseconds.
    TtlMs,
    /// `{wallet_id}`: the wallet (`wallets.id`).
    WalletId,
    /// `{amount}`: how much each caller spends.
    Amount,
    /// `{new_balance}`: the balance read minus the amount (the write only).
    NewBalance,
    /// `{fence}`: the caller's fencing token from its acquire, 0 without one (the write
    /// only).
    Fence,
}

impl Var {
    /// Every variable with its name in the file.
    pub const ALL: [(Var, &'static str); 9] = [
        (Var::LockKey, "lock_key"),
        (Var::FenceKey, "fence_key"),
        (Var::BalanceKey, "balance_key"),
        (Var::Token, "token"),
        (Var::TtlMs, "ttl_ms"),
        (Var::WalletId, "wallet_id"),
        (Var::Amount, "amount"),
        (Var::NewBalance, "new_balance"),
        (Var::Fence, "fence"),
    ];
}

/// A piece of a template.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Piece {
    /// Literal text.
    Text(String),
    /// A variable.
    Var(Var),
}

/// A word with `{variables}` in it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Template(pub Vec<Piece>);

/// The values a template is rendered with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Vars<'a> {
    /// The run's keys.
    pub keys: &'a Keys,
    /// The caller's token.
    pub token: &'a [u8],
    /// The lease duration.
    pub ttl_ms: u64,
    /// The wallet.
    pub wallet_id: i64,
    /// The amount.
    pub amount: i64,
    /// The balance to write (the write only).
    pub new_balance: Option<i64>,
    /// The caller's fencing token (the write only).
    pub fence: Option<i64>,
}

impl Template {
    /// True when the template is the literal word `word`, in any letter case (a command
    /// name such as `WAIT` or `multi`).
    pub fn is_word(&self, word: &str) -> bool {
        matches!(self.0.as_slice(), [Piece::Text(text)] if text.eq_ignore_ascii_case(word))
    }

    /// The template with every variable replaced.
    pub fn render(&self, vars: &Vars<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        for piece in &self.0 {
            match piece {
                Piece::Text(text) => out.extend_from_slice(text.as_bytes()),
                Piece::Var(var) => out.extend_from_slice(&match var {
                    Var::LockKey => vars.keys.lock.clone(),
                    Var::FenceKey => vars.keys.fence.clone(),
                    Var::BalanceKey => vars.keys.balance.clone(),
                    Var::Token => vars.token.to_vec(),
                    Var::TtlMs => vars.ttl_ms.to_string().into_bytes(),
                    Var::WalletId => vars.wallet_id.to_string().into_bytes(),
                    Var::Amount => vars.amount.to_string().into_bytes(),
                    Var::NewBalance => vars.new_balance.unwrap_or(0).to_string().into_bytes(),
                    Var::Fence => vars.fence.unwrap_or(0).to_string().into_bytes(),
                }),
            }
        }
        out
    }

    /// True when the template names `var`.
    pub fn uses(&self, var: Var) -> bool {
        self.0.contains(&Piece::Var(var))
    }
}

/// A Redis request with templates.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestTemplate {
    /// A command's argv.
    Command(Vec<Template>),
    /// A script (built-in when its source is a tutorial script) with its KEYS and ARGV.
    Script {
        /// The script.
        script: ScriptId,
        /// KEYS.
        keys: Vec<Template>,
        /// ARGV.
        args: Vec<Template>,
    },
    /// Commands sent back to back on one connection; the patterns judge the last reply.
    Pipeline(Vec<Vec<Template>>),
}

impl RequestTemplate {
    /// The request, or why Redis's parser refuses the rendered command.
    pub fn render(&self, vars: &Vars<'_>) -> Result<RedisRequest, String> {
        let all = |words: &[Template]| words.iter().map(|w| w.render(vars)).collect::<Vec<_>>();
        match self {
            RequestTemplate::Command(argv) => Command::parse(&all(argv))
                .map(RedisRequest::Command)
                .map_err(|reply| reply.describe()),
            RequestTemplate::Script { script, keys, args } => Ok(RedisRequest::Script {
                script: *script,
                keys: all(keys),
                args: all(args),
            }),
            RequestTemplate::Pipeline(commands) => commands
                .iter()
                .map(|argv| Command::parse(&all(argv)).map_err(|reply| reply.describe()))
                .collect::<Result<Vec<_>, _>>()
                .map(RedisRequest::Pipeline),
        }
    }

    /// True when any word of the request names `var`.
    pub fn uses(&self, var: Var) -> bool {
        let any = |words: &[Template]| words.iter().any(|word| word.uses(var));
        match self {
            RequestTemplate::Command(argv) => any(argv),
            RequestTemplate::Script { keys, args, .. } => any(keys) || any(args),
            RequestTemplate::Pipeline(commands) => commands.iter().any(|argv| any(argv)),
        }
    }

    /// The reply the file's patterns judge: a pipeline's last command's (when the reply is
    /// the array of one reply per command), else the reply itself.
    pub fn judged<'a>(&self, reply: &'a Reply) -> &'a Reply {
        match (self, reply) {
            (RequestTemplate::Pipeline(commands), Reply::Array(replies))
                if replies.len() == commands.len() =>
            {
                replies.last().unwrap_or(reply)
            }
            _ => reply,
        }
    }
}

/// A reply a file expects, e.g. `OK`, `nil`, `1`, `integer`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pattern {
    /// `nil`.
    Nil,
    /// `integer`: any integer.
    AnyInteger,
    /// An integer literal, e.g. `1`.
    Integer(i64),
    /// `bulk`: any bulk string.
    AnyBulk,
    /// `array`: any array.
    Array,
    /// `error`: any error.
    Error,
    /// `any`: anything.
    Any,
    /// Any other word: a status reply with that text (`OK`, `QUEUED`).
    Status(String),
}

impl Pattern {
    /// The pattern as the file writes it (`nil`, `1`, `OK`, ...).
    pub fn describe(&self) -> String {
        match self {
            Pattern::Nil => "nil".to_string(),
            Pattern::AnyInteger => "integer".to_string(),
            Pattern::Integer(value) => value.to_string(),
            Pattern::AnyBulk => "bulk".to_string(),
            Pattern::Array => "array".to_string(),
            Pattern::Error => "error".to_string(),
            Pattern::Any => "any".to_string(),
            Pattern::Status(text) => text.clone(),
        }
    }

    /// Reads a pattern from the file.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let text = text.trim();
        Ok(match text {
            "" => return Err("an empty reply pattern".to_string()),
            "nil" => Pattern::Nil,
            "integer" => Pattern::AnyInteger,
            "bulk" => Pattern::AnyBulk,
            "array" => Pattern::Array,
            "error" => Pattern::Error,
            "any" => Pattern::Any,
            _ => match text.parse::<i64>() {
                Ok(n) => Pattern::Integer(n),
                Err(_) if text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => {
                    Pattern::Status(text.to_string())
                }
                Err(_) => {
                    return Err(format!(
                        "{text:?} is not a reply pattern: use nil, integer, an integer such as 1, \
                         bulk, array, error, any, or a status word such as OK"
                    ))
                }
            },
        })
    }

    /// True when `reply` fits.
    pub fn matches(&self, reply: &Reply) -> bool {
        match (self, reply) {
            // A nil array (`EXEC` after a watched key changed) is nil too, as redis-cli and the
            // clients show it.
            (Pattern::Nil, Reply::Nil | Reply::NilArray) => true,
            (Pattern::AnyInteger, Reply::Integer(_)) => true,
            (Pattern::Integer(want), Reply::Integer(got)) => want == got,
            (Pattern::AnyBulk, Reply::Bulk(_)) => true,
            (Pattern::Array, Reply::Array(_)) => true,
            (Pattern::Error, Reply::Error(_)) => true,
            (Pattern::Any, _) => true,
            (Pattern::Status(want), Reply::Status(got)) => want == got,
            _ => false,
        }
    }
}

fn any_matches(patterns: &[Pattern], reply: &Reply) -> bool {
    patterns.iter().any(|p| p.matches(reply))
}

/// The acquire step.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AcquireSpec {
    /// The request.
    pub request: RequestTemplate,
    /// Replies that mean the lock is ours.
    pub got: Vec<Pattern>,
    /// Replies that mean somebody else holds it.
    pub busy: Vec<Pattern>,
    /// An integer reply that means "got" is the fencing token.
    pub fence_from_reply: bool,
}

/// The release step.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReleaseSpec {
    /// The request.
    pub request: RequestTemplate,
    /// Replies that mean it was released.
    pub released: Vec<Pattern>,
    /// Replies that mean it was not held (expired or taken).
    pub not_held: Vec<Pattern>,
}

/// The refresh a watchdog sends every TTL/3 while the caller works.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RefreshSpec {
    /// The request.
    pub request: RequestTemplate,
    /// Replies that mean the lease was extended (anything else: lost).
    pub refreshed: Vec<Pattern>,
}

/// A parameter of a SQL statement, named in the file's `params`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SqlParam {
    /// `new_balance`: the balance read minus the amount.
    NewBalance,
    /// `balance`: the balance read.
    Balance,
    /// `amount`: how much is spent.
    Amount,
    /// `fence`: the caller's fencing token (0 without one).
    Fence,
    /// `version`: the second column of the read (the version or fence it saw).
    Version,
    /// `wallet_id`: the wallet.
    WalletId,
}

impl SqlParam {
    /// Every parameter with its name in the file.
    pub const ALL: [(SqlParam, &'static str); 6] = [
        (SqlParam::NewBalance, "new_balance"),
        (SqlParam::Balance, "balance"),
        (SqlParam::Amount, "amount"),
        (SqlParam::Fence, "fence"),
        (SqlParam::Version, "version"),
        (SqlParam::WalletId, "wallet_id"),
    ];
}

/// What a statement of a SQL step does to the caller's transaction block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TxEffect {
    /// `BEGIN` or `START TRANSACTION`: opens a block.
    Begins,
    /// `COMMIT` or `END`: closes it.
    Ends,
    /// `SAVEPOINT`, `RELEASE`, `ROLLBACK TO`, `SET`, `RESET`, `LOCK`: changes no row.
    Control,
    /// Anything else: a query or a change (the read's last statement, the write's judged one).
    Data,
}

/// One statement of a SQL step, `{wallet_id}` still in its text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SqlStatementSpec {
    /// The text.
    pub sql: Template,
    /// What it does to the transaction block.
    pub effect: TxEffect,
}

/// A SQL step of the file: its statements, sent in order on the caller's one connection.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SqlSpec {
    /// The statements (1 to [`MAX_SQL_STATEMENTS`]).
    pub statements: Vec<SqlStatementSpec>,
    /// What `$1`, `$2`, ... are (each statement is sent as many as its highest `$n`).
    pub params: Vec<SqlParam>,
}

/// The most statements one SQL step may send.
pub const MAX_SQL_STATEMENTS: usize = 16;

impl SqlSpec {
    /// True when a statement of the step begins a transaction block.
    pub fn begins_block(&self) -> bool {
        self.statements.iter().any(|s| s.effect == TxEffect::Begins)
    }

    /// The statement whose answer the step is judged on: the last one that is not a
    /// transaction statement (the read's query, the write's change). The file is refused
    /// when there is none.
    pub fn judged(&self) -> usize {
        self.statements
            .iter()
            .rposition(|s| s.effect == TxEffect::Data)
            .unwrap_or(self.statements.len() - 1)
    }
}

/// How the balance is read.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReadSpec {
    /// A Redis command whose bulk reply is the balance.
    Redis(RequestTemplate),
    /// A query whose one row is `balance[, version]`.
    Sql(SqlSpec),
}

/// How the new balance is written.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WriteSpec {
    /// A Redis request; its reply is judged by the patterns.
    Redis {
        /// The request.
        request: RequestTemplate,
        /// Replies that mean the write landed.
        landed: Vec<Pattern>,
        /// Replies that mean it was refused.
        refused: Vec<Pattern>,
    },
    /// A statement: 1 row changed is landed, 0 refused.
    Sql(SqlSpec),
}

/// A compiled safeguard file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserSpec {
    /// Its name (on the command line, in tables and traces).
    pub name: String,
    /// The file's text, kept so that a trace can carry it.
    pub file_text: String,
    /// Where the balance lives.
    pub balance_in: BalanceIn,
    /// The lock, if any.
    pub acquire: Option<AcquireSpec>,
    /// The release (with a lock).
    pub release: Option<ReleaseSpec>,
    /// The watchdog's refresh, if any.
    pub refresh: Option<RefreshSpec>,
    /// The read.
    pub read: ReadSpec,
    /// The write.
    pub write: WriteSpec,
    /// How callers wait for a busy lock.
    pub retry: Retry,
    /// Full jitter over the retry.
    pub jitter: bool,
    /// The acquire deadline, unless the run sets one.
    pub acquire_timeout_ms: Option<u64>,
}

impl UserSpec {
    /// The file's Redis requests, each with its section.
    fn redis_requests(&self) -> impl Iterator<Item = (&'static str, &RequestTemplate)> {
        [
            ("[acquire]", self.acquire.as_ref().map(|a| &a.request)),
            ("[release]", self.release.as_ref().map(|r| &r.request)),
            ("[refresh]", self.refresh.as_ref().map(|r| &r.request)),
            (
                "[read]",
                match &self.read {
                    ReadSpec::Redis(request) => Some(request),
                    ReadSpec::Sql(_) => None,
                },
            ),
            (
                "[write]",
                match &self.write {
                    WriteSpec::Redis { request, .. } => Some(request),
                    WriteSpec::Sql(_) => None,
                },
            ),
        ]
        .into_iter()
        .filter_map(|(section, request)| request.map(|request| (section, request)))
    }

    /// True when a Redis request of the file names `var` (a SQL text names only
    /// `{wallet_id}`).
    pub fn uses(&self, var: Var) -> bool {
        self.redis_requests().any(|(_, request)| request.uses(var))
    }

    /// The section of the first pipeline of the file that sends `WAIT`, whose answer depends
    /// on how far the replicas have caught up (outside `MULTI` it blocks the rest of the
    /// pipeline until they acknowledge or the timeout passes).
    pub fn pipelines_wait(&self) -> Option<&'static str> {
        self.redis_requests()
            .find(|(_, request)| match request {
                RequestTemplate::Pipeline(commands) => commands
                    .iter()
                    .any(|argv| argv.first().is_some_and(|word| word.is_word("wait"))),
                _ => false,
            })
            .map(|(section, _)| section)
    }

    /// True when the write can be refused: a SQL write with a fence or version parameter, or
    /// a Redis write with `refused` replies.
    pub fn can_reject(&self) -> bool {
        match &self.write {
            // A conditional write, or one in a transaction, which PostgreSQL may refuse with
            // 40001 (REPEATABLE READ, SERIALIZABLE) or 40P01.
            WriteSpec::Sql(sql) => {
                sql.params
                    .iter()
                    .any(|p| matches!(p, SqlParam::Fence | SqlParam::Version))
                    || sql.begins_block()
                    || matches!(&self.read, ReadSpec::Sql(read) if read.begins_block())
            }
            WriteSpec::Redis { refused, .. } => !refused.is_empty(),
        }
    }
}

struct Registry {
    specs: Vec<&'static UserSpec>,
}

fn registry() -> &'static Mutex<Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(Registry { specs: Vec::new() }))
}

/// Registers a compiled file; the same file twice is one id. Refused: a name that another
/// file already took, or too many files.
pub fn register(spec: UserSpec) -> Result<UserId, String> {
    let mut registry = registry()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(index) = registry.specs.iter().position(|s| s.name == spec.name) {
        if *registry.specs[index] == spec {
            return Ok(UserId(index as u32));
        }
        return Err(format!(
            "another safeguard file already uses the name {:?}; give this one its own `name`",
            spec.name
        ));
    }
    if registry.specs.len() >= MAX_USER_SAFEGUARDS {
        return Err(format!(
            "more than {MAX_USER_SAFEGUARDS} safeguard files loaded"
        ));
    }
    registry.specs.push(Box::leak(Box::new(spec)));
    Ok(UserId((registry.specs.len() - 1) as u32))
}

/// The spec behind an id.
pub fn get(id: UserId) -> &'static UserSpec {
    registry()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .specs[id.0 as usize]
}

/// A registered file by its name.
pub fn find(name: &str) -> Option<UserId> {
    let registry = registry()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    registry
        .specs
        .iter()
        .position(|s| s.name == name)
        .map(|index| UserId(index as u32))
}

/// One caller's lock from a file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserLock {
    /// The file.
    pub spec: UserId,
    /// The run's keys.
    pub keys: Keys,
    /// This caller's token.
    pub token: super::FixedBytes,
    /// The lease duration.
    pub ttl_ms: u64,
    /// The wallet.
    pub wallet_id: i64,
    /// The amount.
    pub amount: i64,
}

impl UserLock {
    fn vars(&self, ttl_ms: u64) -> Vars<'_> {
        Vars {
            keys: &self.keys,
            token: &self.token,
            ttl_ms,
            wallet_id: self.wallet_id,
            amount: self.amount,
            new_balance: None,
            fence: None,
        }
    }

    fn request(&self, template: &RequestTemplate, ttl_ms: u64) -> RedisRequest {
        // The file's commands were parsed with these very variables when it was loaded
        // (`spec::compile`), and keys and numbers do not change what a command is.
        template
            .render(&self.vars(ttl_ms))
            .unwrap_or_else(|error| RedisRequest::Command(Command::Echo(error.into_bytes())))
    }

    /// The acquire request.
    pub fn acquire_request(&self) -> Option<RedisRequest> {
        let acquire = get(self.spec).acquire.as_ref()?;
        Some(self.request(&acquire.request, self.ttl_ms))
    }

    /// Reads the acquire reply; none when it fits no pattern.
    pub fn on_acquire(&self, reply: &Reply) -> Option<Acquire> {
        let acquire = get(self.spec).acquire.as_ref()?;
        let reply = acquire.request.judged(reply);
        if any_matches(&acquire.got, reply) {
            let fence = match reply {
                Reply::Integer(n) if acquire.fence_from_reply => Some(*n),
                _ => None,
            };
            Some(Acquire::Got { fence })
        } else if any_matches(&acquire.busy, reply) {
            Some(Acquire::Busy)
        } else {
            None
        }
    }

    /// The release request.
    pub fn release_request(&self) -> Option<RedisRequest> {
        let release = get(self.spec).release.as_ref()?;
        Some(self.request(&release.request, self.ttl_ms))
    }

    /// Reads the release reply; none when it fits no pattern.
    pub fn on_release(&self, reply: &Reply) -> Option<Release> {
        let release = get(self.spec).release.as_ref()?;
        let reply = release.request.judged(reply);
        if any_matches(&release.released, reply) {
            Some(Release::Released)
        } else if any_matches(&release.not_held, reply) {
            Some(Release::NotHeld)
        } else {
            None
        }
    }

    /// The refresh request, extending the lease to `ttl_ms`.
    pub fn refresh_request(&self, ttl_ms: u64) -> Option<RedisRequest> {
        let refresh = get(self.spec).refresh.as_ref()?;
        Some(self.request(&refresh.request, ttl_ms))
    }

    /// True when the refresh reply means the lease was extended.
    pub fn refreshed(&self, reply: &Reply) -> bool {
        get(self.spec)
            .refresh
            .as_ref()
            .is_some_and(|refresh| any_matches(&refresh.refreshed, refresh.request.judged(reply)))
    }
}

/// Which SQL step of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SqlStep {
    /// The read.
    Read,
    /// The write.
    Write,
}

/// One caller's balance store from a file, its statements resolved for the run's wallet.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserStore {
    /// The file.
    pub spec: UserId,
    /// The run's keys.
    pub keys: Keys,
    /// The wallet.
    pub wallet_id: i64,
    /// The amount.
    pub amount: i64,
    /// The read's statements, in order (empty for a Redis read).
    pub read_statements: Arc<[Statement]>,
    /// The write's statements, in order (empty for a Redis write).
    pub write_statements: Arc<[Statement]>,
}

impl UserStore {
    /// The store for one run: SQL texts rendered for the wallet and interned.
    pub fn new(spec: UserId, keys: &Keys, wallet_id: i64, amount: i64) -> Result<Self, String> {
        let user = get(spec);
        let vars = Vars {
            keys,
            token: b"",
            ttl_ms: 0,
            wallet_id,
            amount,
            new_balance: None,
            fence: None,
        };
        let statements = |sql: &SqlSpec| -> Result<Arc<[Statement]>, String> {
            sql.statements
                .iter()
                .map(|s| Statement::text(&String::from_utf8_lossy(&s.sql.render(&vars))))
                .collect()
        };
        let read_statements = match &user.read {
            ReadSpec::Sql(sql) => statements(sql)?,
            ReadSpec::Redis(_) => Arc::from([]),
        };
        let write_statements = match &user.write {
            WriteSpec::Sql(sql) => statements(sql)?,
            WriteSpec::Redis { .. } => Arc::from([]),
        };
        Ok(UserStore {
            spec,
            keys: keys.clone(),
            wallet_id,
            amount,
            read_statements,
            write_statements,
        })
    }

    fn vars(&self, new_balance: Option<i64>, fence: Option<i64>) -> Vars<'_> {
        Vars {
            keys: &self.keys,
            token: b"",
            ttl_ms: 0,
            wallet_id: self.wallet_id,
            amount: self.amount,
            new_balance,
            fence,
        }
    }

    /// The step's SQL, none for a Redis step.
    fn sql(&self, step: SqlStep) -> Option<&'static SqlSpec> {
        match (step, &get(self.spec).read, &get(self.spec).write) {
            (SqlStep::Read, ReadSpec::Sql(sql), _) | (SqlStep::Write, _, WriteSpec::Sql(sql)) => {
                Some(sql)
            }
            _ => None,
        }
    }

    /// How many requests the step sends: its statements, or 1 (a Redis request).
    pub fn len(&self, step: SqlStep) -> u8 {
        self.sql(step).map_or(1, |sql| {
            u8::try_from(sql.statements.len()).unwrap_or(u8::MAX)
        })
    }

    /// The statement of the write whose rows tell landed from refused (0 for a Redis write).
    pub fn write_judged(&self) -> u8 {
        self.sql(SqlStep::Write)
            .map_or(0, |sql| u8::try_from(sql.judged()).unwrap_or(u8::MAX))
    }

    /// What statement `at` of the step does to the transaction block (none for Redis).
    pub fn effect(&self, step: SqlStep, at: u8) -> Option<TxEffect> {
        self.sql(step)
            .and_then(|sql| sql.statements.get(usize::from(at)))
            .map(|s| s.effect)
    }

    /// True when a transaction block is open once statement `at` of the step answered
    /// (`succeeded`: without an error). The read's block stays open into the write; a failed
    /// statement leaves an open block aborted (still open: it needs a `ROLLBACK`), a failed
    /// `COMMIT` ends it, a failed `BEGIN` opens none.
    pub fn block_open(&self, step: SqlStep, at: u8, succeeded: bool) -> bool {
        let walk = |sql: Option<&SqlSpec>, upto: usize, mut open: bool| {
            for s in sql.map_or(&[][..], |sql| {
                &sql.statements[..upto.min(sql.statements.len())]
            }) {
                open = match s.effect {
                    TxEffect::Begins => true,
                    TxEffect::Ends => false,
                    TxEffect::Control | TxEffect::Data => open,
                };
            }
            open
        };
        let read = self.sql(SqlStep::Read);
        let before = match step {
            SqlStep::Read => walk(read, usize::from(at), false),
            SqlStep::Write => walk(
                self.sql(SqlStep::Write),
                usize::from(at),
                walk(read, usize::MAX, false),
            ),
        };
        match (self.effect(step, at), succeeded) {
            (Some(TxEffect::Begins), true) => true,
            (Some(TxEffect::Ends), _) => false,
            _ => before,
        }
    }

    /// True when the read leaves a transaction block open for the write.
    pub fn read_leaves_block_open(&self) -> bool {
        let last = self.len(SqlStep::Read) - 1;
        self.block_open(SqlStep::Read, last, true)
    }

    fn params(&self, sql: &SqlSpec, new_balance: i64, fence: i64, seen: i64) -> Vec<i64> {
        sql.params
            .iter()
            .map(|param| match param {
                SqlParam::NewBalance => new_balance,
                SqlParam::Balance => new_balance + self.amount,
                SqlParam::Amount => self.amount,
                SqlParam::Fence => fence,
                SqlParam::Version => seen,
                SqlParam::WalletId => self.wallet_id,
            })
            .collect()
    }

    /// Statement `at` of a SQL step, sent as many of the step's parameters as it uses.
    fn sql_step(&self, step: SqlStep, at: u8, mut params: Vec<i64>) -> Step {
        let statements = match step {
            SqlStep::Read => &self.read_statements,
            SqlStep::Write => &self.write_statements,
        };
        match statements.get(usize::from(at)) {
            Some(&statement) => {
                params.truncate(statement.param_count());
                Step::Sql(SqlRequest { statement, params })
            }
            None => Step::Done(super::Outcome::Failed(format!(
                "statement {} of the {} was not prepared",
                usize::from(at) + 1,
                match step {
                    SqlStep::Read => "read",
                    SqlStep::Write => "write",
                }
            ))),
        }
    }

    /// Request `at` of the read (0 for a Redis read).
    pub fn read_step(&self, at: u8) -> Step {
        match &get(self.spec).read {
            ReadSpec::Sql(sql) => self.sql_step(SqlStep::Read, at, self.params(sql, 0, 0, 0)),
            ReadSpec::Redis(request) => Step::Redis {
                node: super::step::SINGLE_REDIS,
                request: match request_or_echo(request, &self.vars(None, None)) {
                    Some(request) => request,
                    None => RedisRequest::Command(Command::Echo(b"no read".to_vec())),
                },
                timeout_ms: None,
            },
        }
    }

    /// Reads the balance (and the version, for a query with two columns) from the answer to
    /// the read's last request.
    pub fn on_read(&self, input: &Input) -> Result<Read, String> {
        let judged;
        let input = match (&get(self.spec).read, input) {
            (ReadSpec::Redis(request @ RequestTemplate::Pipeline(_)), Input::Redis(reply)) => {
                judged = Input::Redis(request.judged(reply).clone());
                &judged
            }
            _ => input,
        };
        match input {
            Input::Redis(Reply::Bulk(bytes)) => std::str::from_utf8(bytes)
                .ok()
                .and_then(|text| text.parse::<i64>().ok())
                .map(|balance| Read { balance, fence: 0 })
                .ok_or_else(|| {
                    format!(
                        "balance is not an integer: {:?}",
                        String::from_utf8_lossy(bytes)
                    )
                }),
            Input::Redis(Reply::Nil) => Err("balance key is missing".to_string()),
            Input::Sql(Ok(result)) => match result.rows.as_slice() {
                [row] if matches!(row.len(), 1 | 2) => Ok(Read {
                    balance: row[0],
                    fence: row.get(1).copied().unwrap_or(0),
                }),
                [] => Err("the read returned no row".to_string()),
                _ => Err(format!(
                    "the read should return one row of balance[, version], got {:?}",
                    result.rows
                )),
            },
            _ => Err(unexpected("read", input)),
        }
    }

    /// Request `at` of the write of `new_balance` (0 for a Redis write).
    pub fn write_step(&self, at: u8, new_balance: i64, fence: i64, seen: i64) -> Step {
        match &get(self.spec).write {
            WriteSpec::Sql(sql) => self.sql_step(
                SqlStep::Write,
                at,
                self.params(sql, new_balance, fence, seen),
            ),
            WriteSpec::Redis { request, .. } => Step::Redis {
                node: super::step::SINGLE_REDIS,
                request: match request_or_echo(request, &self.vars(Some(new_balance), Some(fence)))
                {
                    Some(request) => request,
                    None => RedisRequest::Command(Command::Echo(b"no write".to_vec())),
                },
                timeout_ms: None,
            },
        }
    }

    /// The fence and version a write carries (those its parameters name).
    pub fn write_marks(&self, fence: i64, seen: i64) -> (Option<i64>, Option<i64>) {
        match &get(self.spec).write {
            WriteSpec::Sql(sql) => (
                sql.params.contains(&SqlParam::Fence).then_some(fence),
                sql.params.contains(&SqlParam::Version).then_some(seen),
            ),
            WriteSpec::Redis { request, .. } => (request.uses(Var::Fence).then_some(fence), None),
        }
    }

    /// Judges the answer to the write's judged request. PostgreSQL's refusals of a
    /// transaction (class 40: `40001` could not serialize, `40P01` deadlock) wrote nothing:
    /// refused, as a changed-nothing write is.
    pub fn on_write(&self, input: &Input) -> Written {
        match (&get(self.spec).write, input) {
            (WriteSpec::Sql(_), Input::Sql(Ok(result))) => match result.rows_affected {
                0 => Written::Refused,
                1 => Written::Landed,
                n => Written::Failed(format!("the write changed {n} rows, expected 0 or 1")),
            },
            (WriteSpec::Sql(_), Input::Sql(Err(error))) if error.code.starts_with("40") => {
                Written::Refused
            }
            (
                WriteSpec::Redis {
                    request,
                    landed,
                    refused,
                },
                Input::Redis(reply),
            ) => {
                let reply = request.judged(reply);
                if any_matches(landed, reply) {
                    Written::Landed
                } else if any_matches(refused, reply) {
                    Written::Refused
                } else {
                    Written::Failed(unexpected("write", input))
                }
            }
            _ => Written::Failed(unexpected("write", input)),
        }
    }

    /// Judges the answer to a statement that is not the step's judged one: `Ok` when it ran,
    /// else what went wrong (`Refused` for PostgreSQL's refusals of the transaction, as
    /// [`UserStore::on_write`]).
    pub fn on_statement(&self, step: SqlStep, input: &Input) -> Result<(), Written> {
        match input {
            Input::Sql(Ok(_)) => Ok(()),
            Input::Sql(Err(error)) if step == SqlStep::Write && error.code.starts_with("40") => {
                Err(Written::Refused)
            }
            _ => Err(Written::Failed(unexpected(
                match step {
                    SqlStep::Read => "read",
                    SqlStep::Write => "write",
                },
                input,
            ))),
        }
    }
}

fn request_or_echo(request: &RequestTemplate, vars: &Vars<'_>) -> Option<RedisRequest> {
    request.render(vars).ok()
}
