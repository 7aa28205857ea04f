//! The result document: one versioned JSON object holding the command, every setting, the target,
//! the host and the measurements with their spread over runs. Reports render from it alone.

pub mod fairness;
pub mod findings;
pub mod metrics;
pub mod search;

use crate::audio::Format;
use crate::host::HostInfo;
use crate::io::IoSettings;
use crate::result::findings::{Finding, deserialize_findings};
use crate::result::metrics::Def;
use crate::result::search::{RealTimeDetail, SearchDetail};
use crate::stats::{Histogram, Spread};
use crate::target::TargetInfo;
use crate::verdict::tracks::StreamOutcome;
use serde::{Deserialize, Deserializer, Serialize};

/// Bumped whenever a field changes meaning or disappears.
/// 2: streaming verdicts may be `too_short`; outcomes carry `butler_idle_pct`, `shortcoming`,
/// `min_run_s`, `stopped_early`, `played_bytes` and `device_read_bytes`; rings of the default
/// engine hold at least four chunks; searches record what limited them.
/// 3: `verification` says how reads were checked.
/// 4: every figure is declared once in `metrics`; seq's `tracks_naive` is `naive_tracks`, as in
/// the streaming sections (the old name still loads, see `metrics::Def::aliases`).
/// 5: a section's `notes` are `findings` (tagged objects; older sentences load as `text`), its
/// `extra` is a tagged `detail` (older shapes are recognised), classic sections keep each row's
/// latency histogram and streaming runs theirs; the document records its `session` (command,
/// format, runs, I/O settings).
pub const SCHEMA_VERSION: u32 = 6;

/// One measured figure of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub def: &'static Def,
    pub value: f64,
}

pub fn metric(def: &'static Def, value: f64) -> Metric {
    Metric { def, value }
}

/// One row (a phase, a block size, a zone) of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub label: String,
    pub metrics: Vec<Metric>,
}

/// A figure over all runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub unit: String,
    #[serde(flatten)]
    pub spread: Spread,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub label: String,
    pub figures: Vec<Figure>,
}

impl Row {
    /// The figure declared as `def`, under its current name or one it had in an older document.
    pub fn get(&self, def: &Def) -> Option<&Figure> {
        self.figures
            .iter()
            .find(|f| f.name == def.name || def.aliases.contains(&f.name.as_str()))
    }

    /// The median of the figure declared as `def` (`get`).
    pub fn median(&self, def: &Def) -> Option<f64> {
        self.get(def).map(|f| f.spread.median)
    }
}

/// The outcome of one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    pub workload: String,
    pub title: String,
    /// Every setting the workload ran with.
    pub settings: serde_json::Value,
    /// Figures went through the page cache (asked for, or O_DIRECT refused).
    pub cached: bool,
    pub interrupted: bool,
    /// Runs that finished (the last may be partial when interrupted).
    pub runs: u32,
    pub rows: Vec<Row>,
    /// What the run observed besides its figures, for presenters to put into words.
    #[serde(alias = "notes", deserialize_with = "deserialize_findings")]
    pub findings: Vec<Finding>,
    /// Workload-specific detail for charts: a streaming run's telemetry, a search's probes, the
    /// classic rows' latency distributions.
    #[serde(
        default,
        alias = "extra",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "Detail::lenient"
    )]
    pub detail: Option<Detail>,
}

/// A section's detail, by kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Detail {
    /// One streaming run (play, record, hdr without --find-max).
    Stream(Box<StreamOutcome>),
    /// A --find-max search: every probe of every search.
    Search(SearchDetail),
    /// run's real-time section: its three searches.
    RealTime(Box<RealTimeDetail>),
    /// A classic workload: each row's latency distribution, from the last run.
    Transfers(Transfers),
    /// One sampler run.
    Sampler(Box<crate::verdict::voices::SamplerOutcome>),
}

/// Each row's latencies, for histograms.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Transfers {
    pub rows: Vec<RowLatency>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowLatency {
    pub label: String,
    pub read: Option<Histogram>,
    pub write: Option<Histogram>,
}

impl Detail {
    /// Reads a detail of any schema: tagged since schema 5, recognised by its shape before.
    fn from_value(v: serde_json::Value) -> serde_json::Result<Detail> {
        #[derive(Deserialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        enum Tagged {
            Stream(Box<StreamOutcome>),
            Search(SearchDetail),
            RealTime(Box<RealTimeDetail>),
            Transfers(Transfers),
            Sampler(Box<crate::verdict::voices::SamplerOutcome>),
        }
        use serde_json::from_value as from;
        Ok(if v.get("kind").is_some() {
            match from::<Tagged>(v)? {
                Tagged::Stream(o) => Detail::Stream(o),
                Tagged::Search(s) => Detail::Search(s),
                Tagged::RealTime(r) => Detail::RealTime(r),
                Tagged::Transfers(t) => Detail::Transfers(t),
                Tagged::Sampler(o) => Detail::Sampler(o),
            }
        } else if v.get("verdict").is_some() {
            Detail::Stream(from(v)?)
        } else if v.get("searches").is_some() {
            Detail::Search(from(v)?)
        } else {
            Detail::RealTime(from(v)?)
        })
    }

    /// A detail that cannot be read (a shape no version wrote) is dropped rather than losing
    /// the whole document: figures and findings render without it.
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Detail>, D::Error> {
        Ok(Option::<serde_json::Value>::deserialize(d)?.and_then(|v| Detail::from_value(v).ok()))
    }
}

impl<'de> Deserialize<'de> for Detail {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Detail, D::Error> {
        Detail::from_value(serde_json::Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl Section {
    /// Gathers the rows of repeated runs into figures with their spread; rows keep the order of
    /// their first appearance, figures the order the workload gave them.
    pub fn from_runs(
        workload: &str,
        title: String,
        settings: serde_json::Value,
        runs: &[Vec<RunRow>],
    ) -> Section {
        let mut labels: Vec<&str> = Vec::new();
        for run in runs {
            for r in run {
                if !labels.contains(&r.label.as_str()) {
                    labels.push(&r.label);
                }
            }
        }
        let rows = labels
            .iter()
            .map(|label| {
                let mut defs: Vec<&'static Def> = Vec::new();
                for run in runs {
                    for r in run.iter().filter(|r| r.label == *label) {
                        for m in &r.metrics {
                            if !defs.iter().any(|d| d.name == m.def.name) {
                                defs.push(m.def);
                            }
                        }
                    }
                }
                let figures = defs
                    .iter()
                    .filter_map(|&def| {
                        let values: Vec<f64> = runs
                            .iter()
                            .flat_map(|run| run.iter().filter(|r| r.label == *label))
                            .flat_map(|r| r.metrics.iter().filter(|m| m.def.name == def.name))
                            .map(|m| m.value)
                            .collect();
                        (!values.is_empty()).then(|| Figure {
                            name: def.name.to_string(),
                            unit: def.unit.to_string(),
                            spread: Spread::of(&values),
                        })
                    })
                    .collect();
                Row {
                    label: label.to_string(),
                    figures,
                }
            })
            .collect();
        Section {
            workload: workload.to_string(),
            title,
            settings,
            cached: false,
            interrupted: false,
            runs: runs.len() as u32,
            rows,
            findings: Vec::new(),
            detail: None,
        }
    }

    pub fn row(&self, label: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.label == label)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// The commit the build was made from (schema 6; "unknown" where the source said none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// What the whole session ran with (schema 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The command (`run`, `seq`, `play` …).
    pub command: String,
    /// The audio format of test media and track counts.
    pub format: Format,
    /// Repetitions of each workload.
    pub runs: u32,
    /// I/O settings of the classic workloads.
    pub io: IoSettings,
}

/// A complete result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultDoc {
    pub schema_version: u32,
    pub tool: Tool,
    /// The command line as given.
    pub command: Vec<String>,
    /// The session's own settings; None in documents before schema 5.
    #[serde(default)]
    pub session: Option<SessionInfo>,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub finished_at: String,
    pub target: TargetInfo,
    pub host: HostInfo,
    /// Any figure in the document went through the page cache.
    pub cached: bool,
    pub interrupted: bool,
    pub sections: Vec<Section>,
    pub warnings: Vec<String>,
    /// How reads of trackbench's own files were checked (schema 3).
    #[serde(default)]
    pub verification: String,
    /// A studio run (schema 6): every rank of an MPI job a workstation on one shared storage.
    /// `host`, `target` and `sections` above are rank 0's own; a search's verdicts are the
    /// studio's (the worst of the ranks' own, and the capacity rules on their pooled evidence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub studio: Option<Studio>,
}

/// The workstations of a studio run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Studio {
    /// What started the ranks (`mpirun (Open MPI)`, `srun (Slurm)` …).
    pub launcher: String,
    /// How many workstations ran at once.
    pub ranks: u32,
    /// Each rank in rank order; empty when the run stopped before they could be gathered.
    pub hosts: Vec<StudioHost>,
    /// Ranks that died without cleaning up (their data directory left with its lock free),
    /// as rank 0 found them when the run was stopped.
    #[serde(default)]
    pub lost_ranks: Vec<u32>,
}

/// One workstation of a studio run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudioHost {
    pub rank: u32,
    pub host: HostInfo,
    /// The shared target as this rank named it.
    pub target: String,
    /// How long after the first rank this one left the barriers before measured runs (clock
    /// starts, transfers), in ms on the hosts' wall clocks: the median and the largest.
    pub start_skew_ms_median: f64,
    pub start_skew_ms_max: f64,
    /// This rank's own sections: its figures and findings (the charts' detail stays with rank
    /// 0's sections).
    pub sections: Vec<Section>,
}

impl Studio {
    /// Each rank's start skew from the times every rank left each start barrier
    /// (`starts[rank][i]`, ns of the wall clock): the median and the largest, in ms.
    pub fn skews_ms(starts: &[Vec<u64>]) -> Vec<(f64, f64)> {
        let n = starts.iter().map(Vec::len).min().unwrap_or(0);
        starts
            .iter()
            .map(|mine| {
                let mut d: Vec<f64> = (0..n)
                    .map(|i| {
                        let first = starts.iter().map(|s| s[i]).min().unwrap_or(mine[i]);
                        (mine[i] - first) as f64 / 1e6
                    })
                    .collect();
                d.sort_by(f64::total_cmp);
                let median = d.get(d.len() / 2).copied().unwrap_or(0.0);
                (median, d.last().copied().unwrap_or(0.0))
            })
            .collect()
    }
}

/// What `verification` says: streaming plays every byte and compares it; classic reads check
/// every tag and the noise of one block per request (comparing all of a large read would cost
/// a fast drive's queue-depth-1 rate).
pub const VERIFICATION: &str = "every read of trackbench's own files is checked: streaming compares every byte played with what was written (tag and noise); classic workloads check every 4 KiB block's tag and the noise of one whole block per request, a different one each request (all of a 4K request)";

impl ResultDoc {
    pub fn new(command: Vec<String>, target: TargetInfo, host: HostInfo) -> ResultDoc {
        ResultDoc {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "trackbench".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                commit: Some(env!("TRACKBENCH_COMMIT").into()),
            },
            command,
            session: None,
            started_at: now_rfc3339(),
            finished_at: String::new(),
            target,
            host,
            cached: false,
            interrupted: false,
            sections: Vec::new(),
            warnings: Vec::new(),
            verification: VERIFICATION.into(),
            studio: None,
        }
    }

    pub fn push(&mut self, s: Section) {
        self.cached |= s.cached;
        self.interrupted |= s.interrupted;
        self.sections.push(s);
    }

    pub fn finish(&mut self) {
        self.finished_at = now_rfc3339();
    }

    /// The audio format the session ran with: recorded since schema 5, found in a streaming
    /// section's settings before.
    pub fn format(&self) -> Option<Format> {
        if let Some(s) = &self.session {
            return Some(s.format);
        }
        self.sections.iter().find_map(|s| {
            serde_json::from_value(s.settings.get("spec")?.get("format")?.clone()).ok()
        })
    }

    /// The standard suite (`trackbench run`).
    pub fn is_suite(&self) -> bool {
        match &self.session {
            Some(s) => s.command == "run",
            None => self
                .sections
                .first()
                .is_some_and(|s| s.workload == "realtime"),
        }
    }
}

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::metrics as m;

    #[test]
    fn runs_gather_into_spreads_in_order() {
        let run = |a: f64, b: f64| {
            vec![
                RunRow {
                    label: "read".into(),
                    metrics: vec![metric(&m::RATE_MB_PER_S, a), metric(&m::IOPS, b)],
                },
                RunRow {
                    label: "write".into(),
                    metrics: vec![metric(&m::RATE_MB_PER_S, b)],
                },
            ]
        };
        let s = Section::from_runs(
            "seq",
            "t".into(),
            serde_json::json!({}),
            &[run(1.0, 10.0), run(3.0, 30.0), run(2.0, 20.0)],
        );
        assert_eq!(s.runs, 3);
        assert_eq!(s.rows[0].label, "read");
        let f = s.row("read").unwrap().get(&m::RATE_MB_PER_S).unwrap();
        assert_eq!(
            (f.spread.median, f.spread.min, f.spread.max),
            (2.0, 1.0, 3.0)
        );
        assert_eq!(s.rows[0].figures[1].name, "iops");
        assert_eq!(s.row("write").unwrap().figures[0].spread.median, 20.0);
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["rows"][0]["figures"][0]["median"], 2.0);
        assert_eq!(v["rows"][0]["figures"][0]["runs"][0], 1.0);
    }
}
