//! Writing traces: a [`RunReport`] becomes a [`TraceFile`], written as a pretty document
//! whose events are one per line, under a name that is the same for the same failure.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use leaselab_sim::run::RunReport;

use super::format::{
    slug, Origin, RawEvent, ScenarioSpec, TraceFile, FORMAT, FORMAT_VERSION, LEASELAB_VERSION,
};

/// Where `run`, `tour` and `check` save broken runs unless told otherwise.
pub const DEFAULT_DIR: &str = "traces/new";

/// How many hex digits of the digest go into a file name.
pub const NAME_DIGEST_DIGITS: usize = 12;

impl TraceFile {
    /// The trace of `report`, found as `origin` says.
    pub fn from_report(report: &RunReport, origin: Origin) -> TraceFile {
        TraceFile {
            format: FORMAT.to_string(),
            format_version: FORMAT_VERSION,
            leaselab_version: LEASELAB_VERSION.to_string(),
            origin,
            scenario: ScenarioSpec::from_scenario(&report.scenario),
            seed: report.seed,
            ledger: report.ledger.clone(),
            digest: report.digest().to_string(),
            events: report.events.iter().map(RawEvent::of).collect(),
        }
    }

    /// The file name: the scenario's slug and the digest's first digits, e.g.
    /// `step5-fencing-unfenced-3f2a9c01b2d4.json`. The same failure gets the same name.
    pub fn file_name(&self) -> String {
        let digits = self
            .digest
            .get(..NAME_DIGEST_DIGITS)
            .unwrap_or(&self.digest);
        format!("{}-{digits}.json", slug(&self.scenario.name))
    }

    /// The document: pretty JSON, with the events last, one per line.
    pub fn to_text(&self) -> String {
        let header = TraceFile {
            events: Vec::new(),
            ..self.clone()
        };
        let pretty = serde_json::to_string_pretty(&header).expect("traces serialise");
        // The header ends with `"events": []\n}`; put the events back one per line.
        let head = pretty
            .strip_suffix("\"events\": []\n}")
            .expect("events are the last field");
        let mut text = String::with_capacity(pretty.len() + self.events.len() * 160);
        text.push_str(head);
        if self.events.is_empty() {
            text.push_str("\"events\": []\n}\n");
            return text;
        }
        text.push_str("\"events\": [\n");
        for (index, event) in self.events.iter().enumerate() {
            let line = event.text();
            let comma = if index + 1 < self.events.len() {
                ","
            } else {
                ""
            };
            let _ = writeln!(text, "    {line}{comma}");
        }
        text.push_str("  ]\n}\n");
        text
    }

    /// The path the trace is saved at in `dir`.
    pub fn path_in(&self, dir: &Path) -> PathBuf {
        dir.join(self.file_name())
    }

    /// Writes the trace into `dir` (created if missing) under [`TraceFile::file_name`],
    /// atomically: a failure leaves no half-written trace.
    pub fn save_in(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = self.path_in(dir);
        super::files::write_atomic(&path, self.to_text().as_bytes())?;
        Ok(path)
    }
}

/// Saves the run `report` (a simulated run) as a trace in `dir`; returns its path. Called by
/// `run`, `tour` and `check` for every BROKEN run.
pub fn save_trace(report: &RunReport, dir: &Path) -> std::io::Result<PathBuf> {
    TraceFile::from_report(report, Origin::Simulation { shrunk_from: None }).save_in(dir)
}

/// The options of the commands that save broken runs (`run`, `tour`, `check`).
#[derive(Clone, Debug, clap::Args)]
pub struct SaveArgs {
    /// Save BROKEN runs as traces in DIR (same failure, same file name).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DIR)]
    pub save_traces: PathBuf,
    /// Save no traces.
    #[arg(long, conflicts_with = "save_traces")]
    pub no_save_traces: bool,
}

impl SaveArgs {
    /// The directory to save into, unless saving is off.
    pub fn dir(&self) -> Option<&Path> {
        (!self.no_save_traces).then_some(self.save_traces.as_path())
    }
}
