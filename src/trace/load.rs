//! Reading a trace file: parse, check the format version, convert the mirrors back and
//! validate. Every error names the file, the line or field, and what was expected.

use std::path::{Path, PathBuf};

use leaselab_checker::CheckConfig;
use leaselab_model::ledger::Ledger;
use leaselab_model::scenario::Scenario;
use leaselab_model::world::Action;

use super::format::{parse_action, Origin, TraceFile, FORMAT, FORMAT_VERSION};

/// A trace that was read and validated.
#[derive(Clone, Debug)]
pub struct Trace {
    /// Where it was read from.
    pub path: PathBuf,
    /// The document as written.
    pub file: TraceFile,
    /// Its scenario, converted back.
    pub scenario: Scenario,
    /// Its recorded ledger, converted back.
    pub ledger: Ledger,
    /// For a model counterexample: the check and its path.
    pub model: Option<ModelPath>,
    /// The line of `"events": [` in the file, when found.
    pub events_line: Option<usize>,
}

/// A model counterexample as a trace records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelPath {
    /// The check.
    pub config: CheckConfig,
    /// The violated property.
    pub property: String,
    /// The actions.
    pub actions: Vec<Action>,
    /// Simulated ms per tick.
    pub ms_per_tick: u64,
}

/// What is wrong with a trace file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// It could not be read.
    Io(String),
    /// It is not a regular file: a directory, a fifo, a device. Says what it is.
    NotAFile(String),
    /// It is larger than [`super::files::MAX_TRACE_BYTES`].
    TooLarge {
        /// Its size, when known before reading.
        bytes: Option<u64>,
    },
    /// It holds nothing, or only whitespace.
    Empty {
        /// True when it holds whitespace, false when it is zero bytes.
        whitespace: bool,
    },
    /// It is not UTF-8 text.
    NotUtf8 {
        /// 1-based line of the first byte that is not UTF-8.
        line: usize,
        /// 1-based column (in characters) on that line.
        column: usize,
        /// 0-based byte offset in the file.
        byte: usize,
    },
    /// It is not well-formed JSON.
    Syntax {
        /// 1-based.
        line: usize,
        /// 1-based.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// It is JSON but not a leaselab trace.
    NotATrace(String),
    /// It was written in an older format version that this leaselab no longer reads.
    OlderVersion {
        /// Its version.
        version: u64,
    },
    /// It was written in a newer format version than this leaselab reads.
    NewerVersion {
        /// Its version.
        version: u64,
        /// The leaselab that wrote it, if it says.
        written_by: Option<String>,
    },
    /// A field has the wrong type, is missing, or is unknown or invalid.
    Field {
        /// The field's path, e.g. `scenario.faults[0].pause_ms`.
        field: String,
        /// The line it is on, when known.
        line: Option<usize>,
        /// What was expected.
        message: String,
    },
    /// The trace's scenario uses something this leaselab does not know.
    UnknownScenario {
        /// The field's path.
        field: String,
        /// The line it is on, when known.
        line: Option<usize>,
        /// Which scenario and which part.
        message: String,
    },
    /// The recorded digest is not the events' digest: the file was edited or damaged.
    DigestMismatch {
        /// As written.
        recorded: String,
        /// Of the events in the file.
        computed: String,
        /// The line of the `digest` field.
        line: Option<usize>,
    },
}

/// A trace file that cannot be used: which file and what is wrong. Exit code 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub problem: Problem,
}

impl Trace {
    /// The events, parsed; an event this leaselab cannot read is an error that names it.
    pub fn events(&self) -> Result<Vec<leaselab_sim::events::Event>, TraceError> {
        self.file
            .events
            .iter()
            .enumerate()
            .map(|(index, raw)| {
                let mut deserializer = serde_json::Deserializer::from_str(raw.text());
                serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
                    let inner_path = error.path().to_string();
                    let field = if inner_path == "." {
                        format!("events[{index}]")
                    } else {
                        format!("events[{index}].{inner_path}")
                    };
                    TraceError {
                        path: self.path.clone(),
                        problem: Problem::Field {
                            line: self.events_line.map(|line| line + 1 + index),
                            field,
                            message: format!(
                                "{}; this event was written by leaselab {} and this leaselab cannot read it (replay still works: `leaselab replay --update` rewrites the trace)",
                                strip_position(&error.into_inner().to_string()),
                                self.file.leaselab_version
                            ),
                        },
                    }
                })
            })
            .collect()
    }
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = self.path.display();
        let line = |line: &Option<usize>| line.map(|l| format!(" line {l}:")).unwrap_or_default();
        match &self.problem {
            Problem::Io(error) => write!(f, "{file}: cannot read the trace: {error}"),
            Problem::NotAFile(what) => write!(f, "{file}: cannot read the trace: {what}"),
            Problem::TooLarge { bytes } => write!(
                f,
                "{file}: cannot read the trace: {} larger than the limit of {} MiB for a trace file; is it a trace?",
                bytes
                    .map(|b| format!("it is {b} bytes,"))
                    .unwrap_or_else(|| "it grew while being read and is".into()),
                super::files::MAX_TRACE_BYTES / (1024 * 1024)
            ),
            Problem::Empty { whitespace: false } => write!(
                f,
                "{file}: the file is empty (0 bytes); expected a leaselab trace (a JSON document)"
            ),
            Problem::Empty { whitespace: true } => write!(
                f,
                "{file}: the file holds only whitespace; expected a leaselab trace (a JSON document)"
            ),
            Problem::NotUtf8 { line, column, byte } => write!(
                f,
                "{file}: line {line}, column {column} (byte {byte}): not UTF-8 text; a trace is a UTF-8 JSON document"
            ),
            Problem::Syntax {
                line,
                column,
                message,
            } => write!(
                f,
                "{file}: line {line}, column {column}: not valid JSON: {message}"
            ),
            Problem::NotATrace(message) => write!(f, "{file}: not a leaselab trace: {message}"),
            Problem::OlderVersion { version } => write!(
                f,
                "{file}: written in trace format version {version}, whose events this leaselab no longer reads (version 1 logged requests and replies as text, version 2 outcomes as text); this leaselab ({}) reads format version {FORMAT_VERSION} only (typed events). Its scenario and seed are still in the file: re-run them with `leaselab run` (or `check` for a model counterexample) to get a version {FORMAT_VERSION} trace",
                super::format::LEASELAB_VERSION
            ),
            Problem::NewerVersion {
                version,
                written_by,
            } => write!(
                f,
                "{file}: written in trace format version {version}{}, but this leaselab ({}) reads versions up to {FORMAT_VERSION}; upgrade leaselab to read it",
                written_by
                    .as_ref()
                    .map(|v| format!(" by leaselab {v}"))
                    .unwrap_or_default(),
                super::format::LEASELAB_VERSION
            ),
            Problem::Field {
                field,
                line: at,
                message,
            } => write!(f, "{file}:{} field `{field}`: {message}", line(at)),
            Problem::UnknownScenario {
                field,
                line: at,
                message,
            } => write!(
                f,
                "{file}:{} field `{field}`: this scenario no longer exists: {message}",
                line(at)
            ),
            Problem::DigestMismatch {
                recorded,
                computed,
                line: at,
            } => write!(
                f,
                "{file}:{} field `digest`: recorded {recorded}, but the events in the file digest to {computed}; the file was edited or damaged (regenerate it with `leaselab replay --update`)",
                line(at)
            ),
        }
    }
}

impl std::error::Error for TraceError {}

impl From<TraceError> for crate::exit::UsageError {
    fn from(error: TraceError) -> crate::exit::UsageError {
        crate::exit::UsageError::new(error.to_string())
    }
}

/// Reads and validates the trace at `path` (a regular file of at most
/// [`super::files::MAX_TRACE_BYTES`]; see [`super::files::read_text`]).
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    let text = super::files::read_text(path).map_err(|problem| TraceError {
        path: path.to_path_buf(),
        problem,
    })?;
    parse(path, &text)
}

/// Parses and validates trace text; `path` is used in errors.
pub fn parse(path: &Path, text: &str) -> Result<Trace, TraceError> {
    let fail = |problem| TraceError {
        path: path.to_path_buf(),
        problem,
    };
    // 1. Well-formed JSON at all?
    let value: serde_json::Value = serde_json::from_str(text).map_err(|error| {
        fail(Problem::Syntax {
            line: error.line(),
            column: error.column(),
            message: strip_position(&error.to_string()),
        })
    })?;
    // 2. A trace, in a version this leaselab reads? Checked before the fields, which a newer
    // version may have changed.
    let object = value.as_object().ok_or_else(|| {
        let found = match &value {
            serde_json::Value::Array(_) => "an array",
            serde_json::Value::String(_) => "a string",
            serde_json::Value::Number(_) => "a number",
            serde_json::Value::Bool(_) => "a boolean",
            serde_json::Value::Null => "null",
            serde_json::Value::Object(_) => "an object",
        };
        fail(Problem::NotATrace(format!(
            "the document is {found}; expected a JSON object with \"format\": \"{FORMAT}\""
        )))
    })?;
    match object.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT) => {}
        Some(other) => {
            return Err(fail(Problem::NotATrace(format!(
                "field `format` is \"{other}\"; expected \"{FORMAT}\""
            ))))
        }
        None => {
            return Err(fail(Problem::NotATrace(format!(
                "no field `format` (expected \"format\": \"{FORMAT}\")"
            ))))
        }
    }
    let version = object
        .get("format_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| {
            fail(Problem::Field {
                field: "format_version".into(),
                line: locate(text, "format_version"),
                message: "expected a positive integer".into(),
            })
        })?;
    if version > u64::from(FORMAT_VERSION) {
        return Err(fail(Problem::NewerVersion {
            version,
            written_by: object
                .get("leaselab_version")
                .and_then(|v| v.as_str())
                .map(str::to_string),
        }));
    }
    if version == 0 {
        return Err(fail(Problem::Field {
            field: "format_version".into(),
            line: locate(text, "format_version"),
            message: format!("0 is not a format version; expected {FORMAT_VERSION}"),
        }));
    }
    if version < u64::from(FORMAT_VERSION) {
        return Err(fail(Problem::OlderVersion { version }));
    }
    // 3. Every field of the right type, and no duration longer than the command line takes.
    for part in ["scenario", "origin"] {
        if let Some(value) = object.get(part) {
            if let Some((field, message)) = overlong_duration(part, value) {
                return Err(fail(Problem::Field {
                    line: locate(text, &field),
                    field,
                    message,
                }));
            }
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let file: TraceFile = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let field = error.path().to_string();
        let inner = error.into_inner();
        fail(Problem::Field {
            field: if field == "." {
                "(document)".into()
            } else {
                field
            },
            line: Some(inner.line()),
            message: strip_position(&inner.to_string()),
        })
    })?;
    // 4. The mirrors convert back; the digest matches.
    let spec_error = |error: super::format::SpecError| {
        let line = locate(text, &error.field);
        fail(if error.unknown_scenario_part {
            Problem::UnknownScenario {
                field: error.field,
                line,
                message: error.message,
            }
        } else {
            Problem::Field {
                field: error.field,
                line,
                message: error.message,
            }
        })
    };
    let scenario = file.scenario.to_scenario("scenario").map_err(spec_error)?;
    super::format::check_ledger(&file.ledger, "ledger").map_err(spec_error)?;
    let ledger = file.ledger.clone();
    let model = match &file.origin {
        Origin::Simulation { .. } => None,
        Origin::Model {
            check,
            property,
            path: actions,
            ms_per_tick,
        } => {
            let config = check.to_config("origin.check").map_err(spec_error)?;
            let actions = actions
                .iter()
                .enumerate()
                .map(|(index, text_action)| {
                    parse_action(text_action).ok_or_else(|| {
                        let field = format!("origin.path[{index}]");
                        fail(Problem::Field {
                            line: locate(text, &field),
                            field,
                            message: format!(
                                "\"{text_action}\" is not a model action; expected \"step N\", \"tick\", \"replicate\", \"failover\", \"redis-restart\", \"evict-fence\", \"redis-clock-jump\", \"redis-clock-slew\", \"lose-reply N\", \"drop-connection N\" or \"node-restart N\" (node-crash, node-clock-jump, node-clock-slew)"
                            ),
                        })
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            if *ms_per_tick == 0 {
                return Err(fail(Problem::Field {
                    field: "origin.ms_per_tick".into(),
                    line: locate(text, "origin.ms_per_tick"),
                    message: "expected a positive number of milliseconds".into(),
                }));
            }
            Some(ModelPath {
                config,
                property: property.clone(),
                actions,
                ms_per_tick: *ms_per_tick,
            })
        }
    };
    let computed = super::format::digest_lines(&file.events);
    if computed != file.digest {
        return Err(fail(Problem::DigestMismatch {
            recorded: file.digest.clone(),
            computed,
            line: locate(text, "digest"),
        }));
    }
    Ok(Trace {
        path: path.to_path_buf(),
        events_line: locate(text, "events"),
        file,
        scenario,
        ledger,
        model,
    })
}

/// The longest duration a trace may give, in milliseconds: what the command line takes
/// (`cli::duration`, about 31 years). Longer ones would overflow the simulation's clock.
pub const MAX_DURATION_MS: u64 = 1_000_000_000_000;

/// The first number under `value` (at `path`) in a field named `..._ms` or `..._us` (or a
/// list of them) that is longer than [`MAX_DURATION_MS`], with what to say about it.
fn overlong_duration(path: &str, value: &serde_json::Value) -> Option<(String, String)> {
    let limit_for = |name: &str| {
        if name.ends_with("_ms") {
            Some((MAX_DURATION_MS, "ms"))
        } else if name.ends_with("_us") {
            Some((MAX_DURATION_MS * 1_000, "us"))
        } else {
            None
        }
    };
    let too_long = |field: String, number: &serde_json::Value, (limit, unit): (u64, &str)| {
        let over = match number.as_u64() {
            Some(n) => n > limit,
            // Negative ones (a clock jumping back) are as long as their size.
            None => number.as_f64().is_some_and(|n| n.abs() > limit as f64),
        };
        over.then(|| {
            (
                field,
                format!("{number}{unit} is longer than leaselab runs (at most {limit}{unit}, about 31 years)"),
            )
        })
    };
    match value {
        serde_json::Value::Object(fields) => fields.iter().find_map(|(name, inner)| {
            let field = format!("{path}.{name}");
            match (limit_for(name), inner) {
                (Some(limit), serde_json::Value::Number(_)) => too_long(field, inner, limit),
                (Some(limit), serde_json::Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .find_map(|(index, item)| too_long(format!("{field}[{index}]"), item, limit)),
                _ => overlong_duration(&field, inner),
            }
        }),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(index, item)| overlong_duration(&format!("{path}[{index}]"), item)),
        _ => None,
    }
}

/// serde_json appends " at line L column C"; the error reports the position itself.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// The line of a field given by its path (`scenario.faults[0].at`), found by looking for
/// each key in turn after the previous one. Good enough for the documents leaselab writes.
fn locate(text: &str, path: &str) -> Option<usize> {
    let mut from = 0;
    for part in path.split('.') {
        let (key, indexes) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part, ""),
        };
        let needle = format!("\"{key}\"");
        from += text[from..].find(&needle)? + needle.len();
        // Skip to the N-th element of each index by counting opening braces or quotes of
        // elements is unreliable; elements are on their own lines in leaselab's documents.
        for index in indexes
            .split(']')
            .filter_map(|i| i.strip_prefix('['))
            .filter_map(|i| i.parse::<usize>().ok())
        {
            from += text[from..].find('[')? + 1;
            for _ in 0..index {
                from = skip_element(text, from)?;
            }
        }
    }
    Some(text[..from].matches('\n').count() + 1)
}

/// The position just after the array element starting at or after `from`.
fn skip_element(text: &str, from: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, c) in text[from..].char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => return Some(from + offset + 1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_located_by_path() {
        let text = "{\n  \"a\": 1,\n  \"scenario\": {\n    \"faults\": [\n      {\"at\": 1},\n      {\"at\": 2}\n    ]\n  }\n}\n";
        assert_eq!(locate(text, "scenario"), Some(3));
        assert_eq!(locate(text, "scenario.faults[1].at"), Some(6));
        assert_eq!(locate(text, "scenario.faults[0].at"), Some(5));
        assert_eq!(locate(text, "nowhere"), None);
    }

    #[test]
    fn durations_past_31_years_are_named_by_their_path() {
        let scenario = serde_json::json!({
            "work_ms": 1000, "start_offsets_ms": [0, 5],
            "faults": [{"kind": "clock-jump", "at_ms": 10, "jump_ms": -2_000_000_000_000i64}],
            "timing": {"tick_us": 100},
        });
        let (field, message) =
            overlong_duration("scenario", &scenario).expect("a jump too far back");
        assert_eq!(field, "scenario.faults[0].jump_ms");
        assert!(message.contains("longer than leaselab runs"), "{message}");
        let fine = serde_json::json!({"work_ms": MAX_DURATION_MS, "timing": {"tick_us": 1000}});
        assert_eq!(overlong_duration("scenario", &fine), None);
        let offsets = serde_json::json!({"start_offsets_ms": [0, u64::MAX]});
        assert_eq!(
            overlong_duration("scenario", &offsets).map(|(field, _)| field),
            Some("scenario.start_offsets_ms[1]".to_string())
        );
        let tick = serde_json::json!({"timing": {"tick_us": MAX_DURATION_MS * 1000 + 1}});
        assert_eq!(
            overlong_duration("scenario", &tick).map(|(field, _)| field),
            Some("scenario.timing.tick_us".to_string())
        );
    }

    #[test]
    fn positions_are_stripped_from_serde_messages() {
        assert_eq!(
            strip_position("missing field `seed` at line 3 column 1"),
            "missing field `seed`"
        );
    }
}
