//! `SET`, `RESET` and `SHOW`: what a session's settings change, and what the stand-in
//! refuses rather than ignore.
//!
//! The isolation settings are run: `SET TRANSACTION ISOLATION LEVEL ...` (the open block,
//! before its first query), `SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL ...`
//! and `SET default_transaction_isolation` (every later transaction, the implicit one of a
//! statement outside a block included). Settings changed inside a block are undone when it
//! rolls back, as PostgreSQL undoes them.
//!
//! Parameters that change nothing the stand-in models (`application_name`, `search_path`,
//! ...) are accepted and kept for `SHOW`; `TimeZone`, `DateStyle` and `IntervalStyle` only at
//! values that keep times as the stand-in reads and shows them (UTC, ISO, postgres).
//! `lock_timeout` and `statement_timeout` are read as PostgreSQL reads them and kept per
//! session ([`time_limit_ms`]); a server that lets statements wait (`pg_server.rs`) cancels
//! a wait past them. The idle-session limits are accepted at 0 only: the stand-in never ends
//! a session itself, and a silently ignored limit would make a safeguard that relies on it
//! look different from what it is on PostgreSQL. Any other parameter PostgreSQL 15 has is 0A000
//! naming it; a name it does not have is its 42704.

use sqlparser::ast;

use super::engine::{Isolation, Session, SessionSettings, TxStatus};
use super::error::{sqlstate, PgError, PgNotice};
use super::value::{SqlType, Value};

/// The version `SHOW server_version` and `version()` give.
pub const SERVER_VERSION: &str = "15.8";

/// What a `SET` or `RESET` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetPlan {
    /// `default_transaction_isolation` (`None`: back to `read committed`).
    DefaultIsolation(Option<Isolation>),
    /// The open block's level (`SET TRANSACTION ISOLATION LEVEL`, `SET transaction_isolation`).
    TransactionIsolation(Isolation),
    /// `default_transaction_read_only` (`None`: back to off).
    DefaultReadOnly(Option<bool>),
    /// The open block's access mode (`SET TRANSACTION READ ONLY | READ WRITE`,
    /// `SET transaction_read_only`): true for read only.
    TransactionReadOnly(bool),
    /// `SET TRANSACTION` or `SESSION CHARACTERISTICS` naming a level and an access mode.
    Both(Box<SetPlan>, Box<SetPlan>),
    /// A parameter that changes nothing here, with its new value (`None`: back to its default).
    Other(String, Option<String>),
    /// `RESET ALL`.
    ResetAll,
    /// `SET LOCAL` of a parameter that changes nothing here: its value until the block ends.
    Local(String, Option<String>),
}

/// The functions of the settings, run where they stand in a statement as `SHOW` and `SET`
/// would run (`call`; `current_setting` before its statement, `resolve_stable_calls` in
/// `exec.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SettingFn {
    /// `current_setting(name)`: `SHOW name`'s answer.
    Current,
    /// `current_setting(name, missing_ok)`: NULL instead of 42704 for a name without a value
    /// when `missing_ok`.
    CurrentMissingOk,
    /// `set_config(name, value, is_local)`: `SET` (or `SET LOCAL`) `name` to `value` (NULL:
    /// its default), answering the new value as `SHOW` would.
    SetConfig,
}

impl SettingFn {
    /// The function `name` called with `arguments` arguments, if it is one of these (a call
    /// with another count is the one PostgreSQL reports as not existing).
    pub fn parse(name: &str, arguments: usize) -> Option<SettingFn> {
        Some(match (name, arguments) {
            ("current_setting", 2) => SettingFn::CurrentMissingOk,
            ("current_setting", _) => SettingFn::Current,
            ("set_config", _) => SettingFn::SetConfig,
            _ => return None,
        })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            SettingFn::Current | SettingFn::CurrentMissingOk => "current_setting",
            SettingFn::SetConfig => "set_config",
        }
    }

    /// The types of its arguments.
    pub fn parameters(self) -> &'static [SqlType] {
        match self {
            SettingFn::Current => &[SqlType::Text],
            SettingFn::CurrentMissingOk => &[SqlType::Text, SqlType::Bool],
            SettingFn::SetConfig => &[SqlType::Text, SqlType::Text, SqlType::Bool],
        }
    }
}

/// `function` called with `values` in `session`. `current_setting` is strict (a NULL
/// argument answers NULL); `set_config` is not: a NULL name is 22004, a NULL value sets the
/// default, a NULL `is_local` is false. A `set_config(..., true)` outside a block changes
/// nothing past its statement (its answer is the value it would have set). The
/// transaction's own isolation and access mode are not set this way here (0A000).
pub(super) fn call(
    session: &mut Session,
    function: SettingFn,
    values: &[Value],
) -> Result<Value, PgError> {
    let text = |value: &Value| match value {
        Value::Text(text) => Some(text.clone()),
        _ => None,
    };
    match function {
        SettingFn::Current | SettingFn::CurrentMissingOk => read(session, values),
        SettingFn::SetConfig => {
            let Some(name) = values.first().and_then(text) else {
                return Err(PgError::error("22004", "SET requires parameter name"));
            };
            let name = name.to_lowercase();
            // A custom parameter set to its default is defined, empty.
            let value = match values.get(1).and_then(text) {
                None if name.contains('.') => Some(String::new()),
                value => value,
            };
            let local = matches!(values.get(2), Some(Value::Bool(true)));
            let statement = format!("set_config('{name}', ...)");
            if matches!(
                name.as_str(),
                "transaction_isolation" | "transaction_read_only"
            ) {
                return Err(unsupported(&statement));
            }
            let plan = plan_parameter(&name, value, &statement)?;
            if local && session.status != TxStatus::InBlock {
                // It would last until the statement's own transaction ends: nothing to keep
                // but a custom parameter's definition (empty).
                if name.contains('.') {
                    session.settings.others.entry(name.clone()).or_default();
                }
                let mut after = session.clone();
                apply(&mut after, plan)?;
                return show(&after, &name).map(Value::Text);
            }
            let plan = match plan {
                SetPlan::Other(name, value) if local => SetPlan::Local(name, value),
                other => other,
            };
            apply(session, plan)?;
            show(session, &name).map(Value::Text)
        }
    }
}

/// `current_setting(name [, missing_ok])` of `values` in `session` (strict: a NULL argument
/// answers NULL).
pub(super) fn read(session: &Session, values: &[Value]) -> Result<Value, PgError> {
    let Some(Value::Text(name)) = values.first() else {
        return Ok(Value::Null);
    };
    let missing_ok = match values.get(1) {
        Some(Value::Bool(missing_ok)) => *missing_ok,
        Some(_) => return Ok(Value::Null),
        None => false,
    };
    let name = name.to_lowercase();
    if is_parameter(&name) && !name.contains('.') && !showable(&name) {
        return Err(unsupported(&format!("current_setting('{name}')")));
    }
    match show(session, &name) {
        Ok(value) => Ok(Value::Text(value)),
        Err(_) if missing_ok => Ok(Value::Null),
        Err(error) => Err(error),
    }
}

/// Puts back the settings `before` a transaction (or a failed statement outside one)
/// changed them, as PostgreSQL undoes them, keeping the custom parameters (`app.user_id`)
/// it defined meanwhile: PostgreSQL keeps those defined, empty.
pub(super) fn restore(settings: &mut SessionSettings, before: SessionSettings) {
    let defined: Vec<String> = settings
        .others
        .keys()
        .chain(settings.locals.keys())
        .filter(|name| name.contains('.'))
        .cloned()
        .collect();
    *settings = before;
    keep_defined(settings, defined);
}

/// Ends the `SET LOCAL`s of a block, keeping the custom parameters they defined (empty).
pub(super) fn end_locals(settings: &mut SessionSettings) {
    let defined: Vec<String> = settings
        .locals
        .keys()
        .filter(|name| name.contains('.'))
        .cloned()
        .collect();
    settings.locals.clear();
    keep_defined(settings, defined);
}

fn keep_defined(settings: &mut SessionSettings, defined: Vec<String>) {
    for name in defined {
        settings.others.entry(name).or_default();
    }
}

/// Parameters accepted and kept, with no effect on what the stand-in does.
const NO_EFFECT: &[&str] = &[
    "application_name",
    "bytea_output",
    "client_encoding",
    "client_min_messages",
    "extra_float_digits",
    "lc_messages",
    "search_path",
    "synchronous_commit",
];

/// Time limits: 0 (off, PostgreSQL's default) is all the stand-in runs.
/// Every parameter PostgreSQL 15 knows (`SELECT name FROM pg_settings ORDER BY name` on
/// PostgreSQL 15.20, with the four it hides from that view: `is_superuser`, `role`, `seed`,
/// `session_authorization`), in lower case as names are compared, sorted: a name outside it,
/// and without a dot, is 42704 as there; one inside it that the stand-in does not model is
/// 0A000.
const POSTGRES_PARAMETERS: &[&str] = &[
    "allow_in_place_tablespaces",
    "allow_system_table_mods",
    "application_name",
    "archive_cleanup_command",
    "archive_command",
    "archive_library",
    "archive_mode",
    "archive_timeout",
    "array_nulls",
    "authentication_timeout",
    "autovacuum",
    "autovacuum_analyze_scale_factor",
    "autovacuum_analyze_threshold",
    "autovacuum_freeze_max_age",
    "autovacuum_max_workers",
    "autovacuum_multixact_freeze_max_age",
    "autovacuum_naptime",
    "autovacuum_vacuum_cost_delay",
    "autovacuum_vacuum_cost_limit",
    "autovacuum_vacuum_insert_scale_factor",
    "autovacuum_vacuum_insert_threshold",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_threshold",
    "autovacuum_work_mem",
    "backend_flush_after",
    "backslash_quote",
    "backtrace_functions",
    "bgwriter_delay",
    "bgwriter_flush_after",
    "bgwriter_lru_maxpages",
    "bgwriter_lru_multiplier",
    "block_size",
    "bonjour",
    "bonjour_name",
    "bytea_output",
    "check_function_bodies",
    "checkpoint_completion_target",
    "checkpoint_flush_after",
    "checkpoint_timeout",
    "checkpoint_warning",
    "client_connection_check_interval",
    "client_encoding",
    "client_min_messages",
    "cluster_name",
    "commit_delay",
    "commit_siblings",
    "composite_type_mismatch",
    "compute_query_id",
    "config_file",
    "constraint_exclusion",
    "cpu_index_tuple_cost",
    "cpu_operator_cost",
    "cpu_tuple_cost",
    "cursor_tuple_fraction",
    "data_checksums",
    "data_directory",
    "data_directory_mode",
    "data_sync_retry",
    "datestyle",
    "db_user_namespace",
    "deadlock_timeout",
    "debug_assertions",
    "debug_discard_caches",
    "debug_pretty_print",
    "debug_print_parse",
    "debug_print_plan",
    "debug_print_rewritten",
    "default_statistics_target",
    "default_table_access_method",
    "default_tablespace",
    "default_text_search_config",
    "default_toast_compression",
    "default_transaction_deferrable",
    "default_transaction_isolation",
    "default_transaction_read_only",
    "dynamic_library_path",
    "dynamic_shared_memory_type",
    "effective_cache_size",
    "effective_io_concurrency",
    "enable_async_append",
    "enable_bitmapscan",
    "enable_gathermerge",
    "enable_hashagg",
    "enable_hashjoin",
    "enable_incremental_sort",
    "enable_indexonlyscan",
    "enable_indexscan",
    "enable_material",
    "enable_memoize",
    "enable_mergejoin",
    "enable_nestloop",
    "enable_parallel_append",
    "enable_parallel_hash",
    "enable_partition_pruning",
    "enable_partitionwise_aggregate",
    "enable_partitionwise_join",
    "enable_seqscan",
    "enable_sort",
    "enable_tidscan",
    "escape_string_warning",
    "event_source",
    "exit_on_error",
    "extension_destdir",
    "external_pid_file",
    "extra_float_digits",
    "force_parallel_mode",
    "from_collapse_limit",
    "fsync",
    "full_page_writes",
    "geqo",
    "geqo_effort",
    "geqo_generations",
    "geqo_pool_size",
    "geqo_seed",
    "geqo_selection_bias",
    "geqo_threshold",
    "gin_fuzzy_search_limit",
    "gin_pending_list_limit",
    "hash_mem_multiplier",
    "hba_file",
    "hot_standby",
    "hot_standby_feedback",
    "huge_page_size",
    "huge_pages",
    "ident_file",
    "idle_in_transaction_session_timeout",
    "idle_session_timeout",
    "ignore_checksum_failure",
    "ignore_invalid_pages",
    "ignore_system_indexes",
    "in_hot_standby",
    "integer_datetimes",
    "intervalstyle",
    "is_superuser",
    "jit",
    "jit_above_cost",
    "jit_debugging_support",
    "jit_dump_bitcode",
    "jit_expressions",
    "jit_inline_above_cost",
    "jit_optimize_above_cost",
    "jit_profiling_support",
    "jit_provider",
    "jit_tuple_deforming",
    "join_collapse_limit",
    "krb_caseins_users",
    "krb_server_keyfile",
    "lc_collate",
    "lc_ctype",
    "lc_messages",
    "lc_monetary",
    "lc_numeric",
    "lc_time",
    "listen_addresses",
    "lo_compat_privileges",
    "local_preload_libraries",
    "lock_timeout",
    "log_autovacuum_min_duration",
    "log_checkpoints",
    "log_connections",
    "log_destination",
    "log_directory",
    "log_disconnections",
    "log_duration",
    "log_error_verbosity",
    "log_executor_stats",
    "log_file_mode",
    "log_filename",
    "log_hostname",
    "log_line_prefix",
    "log_lock_waits",
    "log_min_duration_sample",
    "log_min_duration_statement",
    "log_min_error_statement",
    "log_min_messages",
    "log_parameter_max_length",
    "log_parameter_max_length_on_error",
    "log_parser_stats",
    "log_planner_stats",
    "log_recovery_conflict_waits",
    "log_replication_commands",
    "log_rotation_age",
    "log_rotation_size",
    "log_startup_progress_interval",
    "log_statement",
    "log_statement_sample_rate",
    "log_statement_stats",
    "log_temp_files",
    "log_timezone",
    "log_transaction_sample_rate",
    "log_truncate_on_rotation",
    "logging_collector",
    "logical_decoding_work_mem",
    "maintenance_io_concurrency",
    "maintenance_work_mem",
    "max_connections",
    "max_files_per_process",
    "max_function_args",
    "max_identifier_length",
    "max_index_keys",
    "max_locks_per_transaction",
    "max_logical_replication_workers",
    "max_parallel_maintenance_workers",
    "max_parallel_workers",
    "max_parallel_workers_per_gather",
    "max_pred_locks_per_page",
    "max_pred_locks_per_relation",
    "max_pred_locks_per_transaction",
    "max_prepared_transactions",
    "max_replication_slots",
    "max_slot_wal_keep_size",
    "max_stack_depth",
    "max_standby_archive_delay",
    "max_standby_streaming_delay",
    "max_sync_workers_per_subscription",
    "max_wal_senders",
    "max_wal_size",
    "max_worker_processes",
    "min_dynamic_shared_memory",
    "min_parallel_index_scan_size",
    "min_parallel_table_scan_size",
    "min_wal_size",
    "old_snapshot_threshold",
    "output_plugin_libraries",
    "parallel_leader_participation",
    "parallel_setup_cost",
    "parallel_tuple_cost",
    "password_encryption",
    "plan_cache_mode",
    "port",
    "post_auth_delay",
    "pre_auth_delay",
    "primary_conninfo",
    "primary_slot_name",
    "promote_trigger_file",
    "quote_all_identifiers",
    "random_page_cost",
    "recovery_end_command",
    "recovery_init_sync_method",
    "recovery_min_apply_delay",
    "recovery_prefetch",
    "recovery_target",
    "recovery_target_action",
    "recovery_target_inclusive",
    "recovery_target_lsn",
    "recovery_target_name",
    "recovery_target_time",
    "recovery_target_timeline",
    "recovery_target_xid",
    "recursive_worktable_factor",
    "remove_temp_files_after_crash",
    "restart_after_crash",
    "restore_command",
    "restrict_nonsystem_relation_kind",
    "role",
    "row_security",
    "search_path",
    "seed",
    "segment_size",
    "seq_page_cost",
    "server_encoding",
    "server_version",
    "server_version_num",
    "session_authorization",
    "session_preload_libraries",
    "session_replication_role",
    "shared_buffers",
    "shared_memory_size",
    "shared_memory_size_in_huge_pages",
    "shared_memory_type",
    "shared_preload_libraries",
    "ssl",
    "ssl_ca_file",
    "ssl_cert_file",
    "ssl_ciphers",
    "ssl_crl_dir",
    "ssl_crl_file",
    "ssl_dh_params_file",
    "ssl_ecdh_curve",
    "ssl_key_file",
    "ssl_library",
    "ssl_max_protocol_version",
    "ssl_min_protocol_version",
    "ssl_passphrase_command",
    "ssl_passphrase_command_supports_reload",
    "ssl_prefer_server_ciphers",
    "standard_conforming_strings",
    "statement_timeout",
    "stats_fetch_consistency",
    "superuser_reserved_connections",
    "synchronize_seqscans",
    "synchronous_commit",
    "synchronous_standby_names",
    "syslog_facility",
    "syslog_ident",
    "syslog_sequence_numbers",
    "syslog_split_messages",
    "tcp_keepalives_count",
    "tcp_keepalives_idle",
    "tcp_keepalives_interval",
    "tcp_user_timeout",
    "temp_buffers",
    "temp_file_limit",
    "temp_tablespaces",
    "timezone",
    "timezone_abbreviations",
    "trace_notify",
    "trace_recovery_messages",
    "trace_sort",
    "track_activities",
    "track_activity_query_size",
    "track_commit_timestamp",
    "track_counts",
    "track_functions",
    "track_io_timing",
    "track_wal_io_timing",
    "transaction_deferrable",
    "transaction_isolation",
    "transaction_read_only",
    "transform_null_equals",
    "unix_socket_directories",
    "unix_socket_group",
    "unix_socket_permissions",
    "update_process_title",
    "vacuum_cost_delay",
    "vacuum_cost_limit",
    "vacuum_cost_page_dirty",
    "vacuum_cost_page_hit",
    "vacuum_cost_page_miss",
    "vacuum_defer_cleanup_age",
    "vacuum_failsafe_age",
    "vacuum_freeze_min_age",
    "vacuum_freeze_table_age",
    "vacuum_multixact_failsafe_age",
    "vacuum_multixact_freeze_min_age",
    "vacuum_multixact_freeze_table_age",
    "wal_block_size",
    "wal_buffers",
    "wal_compression",
    "wal_consistency_checking",
    "wal_decode_buffer_size",
    "wal_init_zero",
    "wal_keep_size",
    "wal_level",
    "wal_log_hints",
    "wal_receiver_create_temp_slot",
    "wal_receiver_status_interval",
    "wal_receiver_timeout",
    "wal_recycle",
    "wal_retrieve_retry_interval",
    "wal_segment_size",
    "wal_sender_timeout",
    "wal_skip_threshold",
    "wal_sync_method",
    "wal_writer_delay",
    "wal_writer_flush_after",
    "work_mem",
    "xmlbinary",
    "xmloption",
    "zero_damaged_pages",
];

const TIME_LIMITS: &[&str] = &[
    "idle_in_transaction_session_timeout",
    "idle_session_timeout",
];

/// The units a time setting in milliseconds takes (case matters), in milliseconds.
const MILLISECOND_UNITS: &[(&str, f64)] = &[
    ("us", 0.001),
    ("ms", 1.0),
    ("s", 1_000.0),
    ("min", 60_000.0),
    ("h", 3_600_000.0),
    ("d", 86_400_000.0),
];

/// A time setting in milliseconds (`lock_timeout`, `statement_timeout`) read as PostgreSQL's
/// `parse_int` reads it: a number, fractions allowed, and an optional unit after optional
/// spaces, rounded to the millisecond; 22023 with PostgreSQL's messages otherwise.
pub fn milliseconds(name: &str, value: &str) -> Result<u64, PgError> {
    let invalid = |hint: Option<&str>| {
        let error = PgError::error(
            "22023",
            format!("invalid value for parameter \"{name}\": \"{value}\""),
        );
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    };
    let trimmed = value.trim();
    let number_end = trimmed
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(number_end);
    // `strtod`'s overflow (`1e400`) and NaN are no number to PostgreSQL either.
    let number: f64 = number
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite())
        .ok_or_else(|| invalid(None))?;
    let unit = unit.trim();
    let factor = if unit.is_empty() {
        1.0
    } else {
        MILLISECOND_UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, factor)| *factor)
            .ok_or_else(|| {
                invalid(Some(
                    "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".",
                ))
            })?
    };
    let ms = (number * factor).round_ties_even();
    if !(f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&ms) {
        return Err(invalid(Some("Value exceeds integer range.")));
    }
    if ms < 0.0 {
        return Err(PgError::error(
            "22023",
            format!(
                "{ms} ms is outside the valid range for parameter \"{name}\" (0 .. 2147483647)"
            ),
        ));
    }
    Ok(ms as u64)
}

/// How `SHOW` prints a time setting in milliseconds: in the largest unit that holds it
/// whole (`1500ms`, `2s`, `1min`), `0` for none.
pub fn milliseconds_text(ms: u64) -> String {
    if ms == 0 {
        return "0".to_string();
    }
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("min", 60_000),
        ("s", 1_000),
    ] {
        if ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// The level an SQL isolation level runs at (`READ UNCOMMITTED` is `READ COMMITTED` in
/// PostgreSQL).
pub fn isolation_of(level: &ast::TransactionIsolationLevel) -> Result<Isolation, PgError> {
    use ast::TransactionIsolationLevel as L;
    Ok(match level {
        L::ReadUncommitted | L::ReadCommitted => Isolation::ReadCommitted,
        L::RepeatableRead => Isolation::RepeatableRead,
        L::Serializable => Isolation::Serializable,
        other => return Err(unsupported(&format!("isolation level {other}"))),
    })
}

fn unsupported(what: &str) -> PgError {
    PgError::unsupported_statement(what)
}

/// A value as `SET` takes it: a quoted string, a number or a word (lower-cased unless
/// quoted), several joined with ", "; `None` for `DEFAULT`.
fn value_text(values: &[ast::Expr]) -> Option<String> {
    let mut parts = Vec::new();
    for value in values {
        let text = match value {
            ast::Expr::Identifier(ident)
                if ident.quote_style.is_none() && ident.value.eq_ignore_ascii_case("default") =>
            {
                return None
            }
            ast::Expr::Identifier(ident) if ident.quote_style.is_none() => {
                ident.value.to_lowercase()
            }
            ast::Expr::Identifier(ident) => ident.value.clone(),
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) => s.clone(),
                ast::Value::Number(n, _) => n.clone(),
                ast::Value::Boolean(b) => if *b { "on" } else { "off" }.to_string(),
                other => other.to_string(),
            },
            ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr,
            } => format!("-{expr}"),
            other => other.to_string(),
        };
        parts.push(text);
    }
    Some(parts.join(", "))
}

/// A setting of `name` to `value` (`None`: its default), as a plan; 0A000 for a parameter
/// the stand-in would have to ignore.
fn plan_parameter(name: &str, value: Option<String>, text: &str) -> Result<SetPlan, PgError> {
    let isolation = |value: &str| -> Result<Isolation, PgError> {
        Ok(match value.to_ascii_lowercase().as_str() {
            "read committed" | "read uncommitted" => Isolation::ReadCommitted,
            "repeatable read" => Isolation::RepeatableRead,
            "serializable" => Isolation::Serializable,
            _ => {
                return Err(PgError::error(
                    "22023",
                    format!("invalid value for parameter \"{name}\": \"{value}\""),
                )
                .with_hint(
                    "Available values: serializable, repeatable read, read committed, read uncommitted.",
                ))
            }
        })
    };
    let boolean = |value: &str| -> Result<bool, PgError> {
        match value.to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" | "1" | "t" | "y" => Ok(true),
            "off" | "false" | "no" | "0" | "f" | "n" => Ok(false),
            _ => Err(PgError::error(
                "22023",
                format!("parameter \"{name}\" requires a Boolean value"),
            )),
        }
    };
    Ok(match name {
        "default_transaction_read_only" => {
            SetPlan::DefaultReadOnly(value.as_deref().map(boolean).transpose()?)
        }
        "transaction_read_only" => match value {
            Some(value) => SetPlan::TransactionReadOnly(boolean(&value)?),
            None => return Err(unsupported(text)),
        },
        "default_transaction_isolation" => {
            SetPlan::DefaultIsolation(value.as_deref().map(isolation).transpose()?)
        }
        "transaction_isolation" => match value {
            Some(value) => SetPlan::TransactionIsolation(isolation(&value)?),
            None => return Err(unsupported(text)),
        },
        "lock_timeout" | "statement_timeout" => match value {
            None => SetPlan::Other(name.to_string(), None),
            Some(value) => {
                let ms = milliseconds(name, &value)?;
                SetPlan::Other(name.to_string(), Some(milliseconds_text(ms)))
            }
        },
        _ if TIME_LIMITS.contains(&name) => {
            let off = value.as_deref().is_none_or(|v| {
                let digits = v.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                let number = &v[..v.len() - digits.len()];
                number.parse::<f64>().is_ok_and(|n| n == 0.0)
            });
            if !off {
                return Err(unsupported(&format!(
                    "{text} (the stand-in never ends an idle session itself: only 0, no \
                     limit, runs)"
                )));
            }
            SetPlan::Other(name.to_string(), value.filter(|_| false))
        }
        "standard_conforming_strings" => {
            if value
                .as_deref()
                .is_some_and(|v| !matches!(v, "on" | "true" | "1"))
            {
                return Err(unsupported(text));
            }
            SetPlan::Other(name.to_string(), None)
        }
        "timezone" | "datestyle" | "intervalstyle" => {
            if value.as_deref().is_some_and(|v| !time_format_kept(name, v)) {
                return Err(unsupported(&format!(
                    "{text} (times are read and shown in time zone UTC, DateStyle ISO and \
                     IntervalStyle postgres only)"
                )));
            }
            SetPlan::Other(name.to_string(), value)
        }
        _ if NO_EFFECT.contains(&name) || name.contains('.') => {
            SetPlan::Other(name.to_string(), value)
        }
        _ if !is_parameter(name) => return Err(unrecognized(name)),
        _ => return Err(unsupported(text)),
    })
}

/// Whether `value` of `TimeZone`, `DateStyle` or `IntervalStyle` leaves times read and shown
/// as the stand-in reads and shows them: UTC, ISO (with either field order: only ISO dates
/// are read), postgres.
fn time_format_kept(name: &str, value: &str) -> bool {
    let value = value.trim().to_ascii_lowercase();
    match name {
        "timezone" => matches!(
            value.as_str(),
            "utc"
                | "etc/utc"
                | "gmt"
                | "etc/gmt"
                | "uct"
                | "etc/uct"
                | "zulu"
                | "universal"
                | "etc/universal"
                | "etc/zulu"
                | "0"
                | "+0"
                | "-0"
                | "utc0"
        ),
        "datestyle" => value.split(',').any(|part| part.trim() == "iso"),
        _ => value == "postgres",
    }
}

/// Whether PostgreSQL 15 knows parameter `name` (a dotted name is a custom one, always known).
pub fn is_parameter(name: &str) -> bool {
    name.contains('.') || POSTGRES_PARAMETERS.binary_search(&name).is_ok()
}

/// 42704 for a parameter PostgreSQL does not know.
pub fn unrecognized(name: &str) -> PgError {
    PgError::error(
        "42704",
        format!("unrecognized configuration parameter \"{name}\""),
    )
}

/// The plan of a `SET` statement.
pub fn plan_set(set: &ast::Set, text: &str) -> Result<SetPlan, PgError> {
    match set {
        ast::Set::SingleAssignment {
            scope,
            hivevar: false,
            variable,
            values,
        } => {
            let name = variable.to_string().to_lowercase();
            let value = value_text(values);
            let plan = plan_parameter(&name, value, text)?;
            // `SET LOCAL` lasts until the block ends: kept apart for the parameters kept as
            // text; the block's own isolation and access mode last that long anyway.
            if matches!(scope, Some(ast::ContextModifier::Local)) {
                return match plan {
                    SetPlan::Other(name, value) => Ok(SetPlan::Local(name, value)),
                    SetPlan::TransactionIsolation(_) | SetPlan::TransactionReadOnly(_) => Ok(plan),
                    _ => Err(unsupported(text)),
                };
            }
            Ok(plan)
        }
        ast::Set::SetTimeZone { value, .. } => {
            plan_parameter("timezone", value_text(std::slice::from_ref(value)), text)
        }
        ast::Set::SetNames {
            charset_name,
            collation_name: None,
        } => Ok(SetPlan::Other(
            "client_encoding".to_string(),
            Some(charset_name.value.clone()),
        )),
        ast::Set::SetTransaction {
            modes,
            snapshot: None,
            session,
        } => {
            let mut level = None;
            let mut read_only = None;
            for mode in modes {
                match mode {
                    ast::TransactionMode::IsolationLevel(l) => level = Some(isolation_of(l)?),
                    ast::TransactionMode::AccessMode(access) => {
                        read_only = Some(*access == ast::TransactionAccessMode::ReadOnly)
                    }
                }
            }
            let level = level.map(|level| {
                if *session {
                    SetPlan::DefaultIsolation(Some(level))
                } else {
                    SetPlan::TransactionIsolation(level)
                }
            });
            let access = read_only.map(|read_only| {
                if *session {
                    SetPlan::DefaultReadOnly(Some(read_only))
                } else {
                    SetPlan::TransactionReadOnly(read_only)
                }
            });
            match (level, access) {
                (Some(level), Some(access)) => Ok(SetPlan::Both(Box::new(level), Box::new(access))),
                (Some(one), None) | (None, Some(one)) => Ok(one),
                (None, None) => Err(unsupported(text)),
            }
        }
        _ => Err(unsupported(text)),
    }
}

/// The plan of a `RESET` statement.
pub fn plan_reset(reset: &ast::ResetStatement, text: &str) -> Result<SetPlan, PgError> {
    match &reset.reset {
        ast::Reset::ALL => Ok(SetPlan::ResetAll),
        ast::Reset::ConfigurationParameter(name) => {
            plan_parameter(&name.to_string().to_lowercase(), None, text)
        }
        _ => Err(unsupported(text)),
    }
}

/// The column `SHOW name` answers under: the parameter's own spelling (`TimeZone`).
pub fn column_name(name: &str) -> String {
    match name {
        "timezone" => "TimeZone",
        "datestyle" => "DateStyle",
        "intervalstyle" => "IntervalStyle",
        other => other,
    }
    .to_string()
}

/// Whether `SHOW name` has an answer here.
pub fn showable(name: &str) -> bool {
    default_value(name).is_some()
        || NO_EFFECT.contains(&name)
        || name.contains('.')
        || matches!(
            name,
            "transaction_read_only" | "default_transaction_read_only"
        )
}

/// A parameter's value before any `SET` (PostgreSQL 15's defaults).
fn default_value(name: &str) -> Option<&'static str> {
    Some(match name {
        "transaction_isolation" | "default_transaction_isolation" => "read committed",
        "server_version" => SERVER_VERSION,
        "deadlock_timeout" => "1s",
        "search_path" => "\"$user\", public",
        "standard_conforming_strings" => "on",
        // As the server announces them at startup: the only values it runs.
        "timezone" => "UTC",
        "datestyle" => "ISO, MDY",
        "intervalstyle" => "postgres",
        // As a server initdb'd in UTF-8 on this machine's `C.UTF-8` locale answers.
        "client_encoding" => "UTF8",
        "lc_messages" => "C.UTF-8",
        "bytea_output" => "hex",
        "client_min_messages" => "notice",
        "extra_float_digits" => "1",
        "synchronous_commit" => "on",
        "lock_timeout"
        | "statement_timeout"
        | "idle_in_transaction_session_timeout"
        | "idle_session_timeout" => "0",
        _ => return None,
    })
}

/// `session`'s `lock_timeout` or `statement_timeout` in milliseconds (0: none).
pub(super) fn time_limit_ms(session: &Session, name: &str) -> u64 {
    session
        .settings
        .value_of(name)
        .flatten()
        .and_then(|text| milliseconds(name, text).ok())
        .unwrap_or(0)
}

/// What `SHOW name` answers in `session`.
pub(super) fn show(session: &Session, name: &str) -> Result<String, PgError> {
    let level = match name {
        "transaction_isolation" => Some(session.isolation),
        "default_transaction_isolation" => Some(session.settings.default_isolation),
        _ => None,
    };
    if let Some(level) = level {
        return Ok(level.sql().to_lowercase());
    }
    let read_only = match name {
        "transaction_read_only" => Some(session.read_only),
        "default_transaction_read_only" => Some(session.settings.default_read_only),
        _ => None,
    };
    if let Some(read_only) = read_only {
        return Ok(if read_only { "on" } else { "off" }.to_string());
    }
    if let Some(Some(value)) = session.settings.value_of(name) {
        return Ok(value.clone());
    }
    if name == "application_name" {
        let startup = session
            .identity
            .as_ref()
            .map(|i| i.application_name.clone());
        return Ok(startup.unwrap_or_default());
    }
    default_value(name)
        .map(str::to_string)
        .or_else(|| NO_EFFECT.contains(&name).then(String::new))
        .ok_or_else(|| {
            PgError::error(
                "42704",
                format!("unrecognized configuration parameter \"{name}\""),
            )
        })
}

/// Carries out `plan` in `session`: Ok with PostgreSQL's warning when it has one.
pub(super) fn apply(session: &mut Session, plan: SetPlan) -> Result<Option<PgNotice>, PgError> {
    let in_block = session.status == TxStatus::InBlock;
    if let SetPlan::Both(first, second) = plan {
        let warning = apply(session, *first)?;
        return Ok(apply(session, *second)?.or(warning));
    }
    if let SetPlan::TransactionReadOnly(read_only) = plan {
        if !in_block {
            return Ok(Some(PgError::warning(
                sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                "SET TRANSACTION can only be used in transaction blocks",
            )));
        }
        if !read_only && session.read_only && session.queried {
            return Err(PgError::error(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "transaction read-write mode must be set before any query",
            ));
        }
        session.read_only = read_only;
        return Ok(None);
    }
    if let SetPlan::TransactionIsolation(level) = plan {
        if !in_block {
            return Ok(Some(PgError::warning(
                sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                "SET TRANSACTION can only be used in transaction blocks",
            )));
        }
        if level != session.isolation && session.queried {
            return Err(PgError::error(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "SET TRANSACTION ISOLATION LEVEL must be called before any query",
            ));
        }
        session.isolation = level;
        return Ok(None);
    }
    if let SetPlan::Local(name, value) = plan {
        if !in_block {
            // Outside a block it would end with its own statement: nothing to keep.
            return Ok(Some(PgError::warning(
                sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                "SET LOCAL can only be used in transaction blocks",
            )));
        }
        if session.settings_at_block_start.is_none() {
            session.settings_at_block_start = Some(Box::new(session.settings.clone()));
        }
        session.settings.locals.insert(name, value);
        return Ok(None);
    }
    if in_block && session.settings_at_block_start.is_none() {
        session.settings_at_block_start = Some(Box::new(session.settings.clone()));
    }
    let settings: &mut SessionSettings = &mut session.settings;
    match plan {
        SetPlan::DefaultIsolation(level) => settings.default_isolation = level.unwrap_or_default(),
        SetPlan::DefaultReadOnly(read_only) => {
            settings.default_read_only = read_only.unwrap_or_default()
        }
        // A `SET` after a `SET LOCAL` of the same parameter outlasts the block.
        SetPlan::Other(name, Some(value)) => {
            settings.locals.remove(&name);
            settings.others.insert(name, value);
        }
        SetPlan::Other(name, None) => {
            settings.locals.remove(&name);
            settings.others.remove(&name);
        }
        SetPlan::ResetAll => *settings = SessionSettings::default(),
        SetPlan::TransactionIsolation(_)
        | SetPlan::TransactionReadOnly(_)
        | SetPlan::Both(..)
        | SetPlan::Local(..) => {
            unreachable!("handled above")
        }
    }
    if !in_block && session.status == TxStatus::Idle {
        session.isolation = session.settings.default_isolation;
        session.read_only = session.settings.default_read_only;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> Result<SetPlan, PgError> {
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let statements = sqlparser::parser::Parser::parse_sql(&dialect, text).expect("parses");
        match &statements[0] {
            ast::Statement::Set(s) => plan_set(s, text),
            ast::Statement::Reset(r) => plan_reset(r, text),
            other => panic!("not a SET: {other}"),
        }
    }

    #[test]
    fn the_parameter_list_is_sorted_and_unknown_names_are_42704() {
        assert!(POSTGRES_PARAMETERS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_parameter("work_mem") && is_parameter("seed") && is_parameter("my.app"));
        assert_eq!(set("SET nosuch = 1").unwrap_err().code, "42704");
        assert_eq!(set("SET work_mem = '4MB'").unwrap_err().code, "0A000");
    }

    #[test]
    fn isolation_settings_are_planned_and_time_limits_only_at_zero() {
        assert_eq!(
            set("SET default_transaction_isolation = 'repeatable read'").unwrap(),
            SetPlan::DefaultIsolation(Some(Isolation::RepeatableRead))
        );
        assert_eq!(
            set("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE").unwrap(),
            SetPlan::DefaultIsolation(Some(Isolation::Serializable))
        );
        assert_eq!(
            set("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").unwrap(),
            SetPlan::TransactionIsolation(Isolation::RepeatableRead)
        );
        assert_eq!(
            set("SET default_transaction_isolation = 'nope'")
                .unwrap_err()
                .code,
            "22023"
        );
        assert!(set("SET lock_timeout = 0").is_ok());
        assert!(set("SET lock_timeout = '0ms'").is_ok());
        // Times are shown in UTC, ISO and postgres style only.
        for kept in [
            "SET TimeZone = 'UTC'",
            "SET TIME ZONE 'Etc/UTC'",
            "SET timezone TO DEFAULT",
            "SET DateStyle = 'ISO, DMY'",
            "SET IntervalStyle = postgres",
        ] {
            assert!(set(kept).is_ok(), "{kept}");
        }
        for refused in [
            "SET TimeZone = 'Europe/Paris'",
            "SET TIME ZONE LOCAL",
            "SET DateStyle = 'German'",
            "SET IntervalStyle = 'iso_8601'",
        ] {
            assert_eq!(set(refused).unwrap_err().code, "0A000", "{refused}");
        }
        assert!(set("RESET statement_timeout").is_ok());
        assert_eq!(
            set("SET lock_timeout = '2s'").unwrap(),
            SetPlan::Other("lock_timeout".into(), Some("2s".into()))
        );
        assert_eq!(
            set("SET statement_timeout = 1500").unwrap(),
            SetPlan::Other("statement_timeout".into(), Some("1500ms".into()))
        );
        assert_eq!(
            set("SET idle_session_timeout = 100").unwrap_err().code,
            "0A000"
        );
        for (written, shown) in [
            ("1.5s", "1500ms"),
            ("60000", "1min"),
            ("90 s", "90s"),
            (" 2h ", "2h"),
            ("500us", "0"),
            ("1500us", "2ms"),
        ] {
            assert_eq!(
                milliseconds_text(milliseconds("x", written).unwrap()),
                shown
            );
        }
        for bad in ["2S", "abc", "-1", "3000000000", "100000h"] {
            assert_eq!(milliseconds("x", bad).unwrap_err().code, "22023", "{bad}");
        }
        assert_eq!(
            set("SET TRANSACTION READ ONLY").unwrap(),
            SetPlan::TransactionReadOnly(true)
        );
        assert_eq!(
            set("SET default_transaction_read_only = 'maybe'")
                .unwrap_err()
                .code,
            "22023"
        );
        assert_eq!(set("SET work_mem = '4MB'").unwrap_err().code, "0A000");
        assert_eq!(
            set("SET application_name = 'MyApp'").unwrap(),
            SetPlan::Other("application_name".into(), Some("MyApp".into()))
        );
        assert_eq!(
            set("SET myapp.owner = x").unwrap(),
            SetPlan::Other("myapp.owner".into(), Some("x".into()))
        );
    }

    #[test]
    fn settings_changed_in_a_block_are_kept_apart_for_a_rollback() {
        let mut session = Session::new_idle();
        apply(
            &mut session,
            SetPlan::DefaultIsolation(Some(Isolation::Serializable)),
        )
        .unwrap();
        assert_eq!(session.isolation, Isolation::Serializable);
        assert!(session.settings_at_block_start.is_none());
        session.status = TxStatus::InBlock;
        apply(
            &mut session,
            SetPlan::Other("application_name".into(), Some("x".into())),
        )
        .unwrap();
        let saved = session.settings_at_block_start.as_deref().expect("saved");
        assert!(saved.others.is_empty());
        assert_eq!(saved.default_isolation, Isolation::Serializable);
        session.queried = true;
        let refused = apply(
            &mut session,
            SetPlan::TransactionIsolation(Isolation::ReadCommitted),
        )
        .unwrap_err();
        assert_eq!(refused.code, "25001");
        // The same level again is no change.
        assert!(apply(
            &mut session,
            SetPlan::TransactionIsolation(Isolation::Serializable)
        )
        .is_ok());
    }

    #[test]
    fn show_answers_the_session_s_values_and_defaults() {
        let mut session = Session::new_idle();
        assert_eq!(show(&session, "lock_timeout").unwrap(), "0");
        assert_eq!(
            show(&session, "transaction_isolation").unwrap(),
            "read committed"
        );
        apply(
            &mut session,
            SetPlan::Other("timezone".into(), Some("UTC".into())),
        )
        .unwrap();
        assert_eq!(show(&session, "timezone").unwrap(), "UTC");
        assert_eq!(show(&session, "nope").unwrap_err().code, "42704");
    }
}
