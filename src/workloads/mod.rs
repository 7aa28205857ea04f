//! The workloads: one module each, one trait for all, and the repetition that turns runs into
//! figures with their spread.

pub mod access;
pub mod bounce;
pub mod load;
pub mod mix;
pub mod multitrack;
pub mod probe;

pub mod realtime;
pub mod sampler;
pub mod seek;
pub mod seq;
pub mod sweep;
pub mod zones;

use crate::audio::Format;
use crate::control::Control;
use crate::datadir::DataDir;
use crate::dataset::{self, Span};
use crate::error::{Error, Result};
use crate::io::IoSettings;
use crate::io::driver::{DriveStats, Limits, Pattern};
use crate::result::findings::Finding;
use crate::result::metrics as m;
use crate::result::search::{RealTimeDetail, SearchDetail};
use crate::result::{Detail, Metric, RowLatency, RunRow, Section, Transfers, metric};
use crate::target::{TargetInfo, TargetKind};
use crate::units::mb_per_s;
use std::time::Duration;

/// Filesystems that live in RAM: whatever O_DIRECT says, nothing reaches a disk.
const MEMORY_FILESYSTEMS: [&str; 2] = ["tmpfs", "ramfs"];

/// What every workload runs against.
pub struct Env<'a> {
    pub target: &'a TargetInfo,
    /// trackbench's data directory; `None` for a file or a device (read-only tests only).
    pub data: Option<&'a mut DataDir>,
    pub io: IoSettings,
    /// The audio format of test media and of track counts.
    pub format: Format,
    /// What the run may pin in buffers and rings.
    pub memory: crate::memory::MemoryBudget,
    pub ctl: Control<'a>,
    /// A sequential transfer this session already measured (the suite's `seq`, which runs
    /// first): later workloads take their naive count from it instead of a transfer of their
    /// own, so that a result has one naive count, from one measurement.
    pub sequential: Sequential,
}

/// Bytes per second of a sequential transfer measured earlier in the session, each way.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sequential {
    pub read: Option<f64>,
    pub write: Option<f64>,
}

impl Sequential {
    /// What a `seq` section measured (the median of its runs), if `s` is one.
    pub fn of(s: &Section) -> Option<Sequential> {
        if s.workload != "seq" {
            return None;
        }
        let rate = |row: &str| {
            s.row(row)
                .and_then(|r| r.get(&m::RATE_MB_PER_S))
                .map(|f| f.spread.median * 1e6)
                .filter(|r| *r > 0.0)
        };
        Some(Sequential {
            read: rate("read"),
            write: rate("write"),
        })
    }
}

impl Env<'_> {
    /// The data directory (with the control, borrowed alongside), or a refusal naming the target
    /// when it is a file or a device.
    pub fn data_dir(&mut self, what: &str) -> Result<(&mut DataDir, &Control<'_>)> {
        let Env {
            target, data, ctl, ..
        } = self;
        match data.as_deref_mut() {
            Some(d) if target.kind == TargetKind::Directory => Ok((d, ctl)),
            _ => Err(Error::WriteRefused {
                path: target.path.clone(),
                kind: target.kind.describe(),
                what: what.to_string(),
            }),
        }
    }

    /// The region a single-file workload reads: on a directory, a trackbench WAV file of about
    /// `size` bytes (laid out once and shared by workloads of the same run); on a file or a
    /// device, all of it.
    pub fn span(&mut self, size: u64) -> Result<Span> {
        match self.target.kind {
            TargetKind::Directory => {
                let format = self.format;
                let cached = self.io.cached;
                let (dd, ctl) = self.data_dir("laying out test media")?;
                let (mut spans, _) =
                    dataset::ensure_wavs(dd, "span", 1, &format, size, cached, ctl)?;
                Ok(spans.remove(0))
            }
            _ => dataset::existing_span(&self.target.path, self.io.cached),
        }
    }

    /// Runs `pattern` over `spans` with this environment's backend and buffers of `buf_len`.
    /// The I/O settings for a transfer of at most `ops` requests of `buf_len` bytes: never more
    /// request buffers than it can have in flight at once, and none beyond the memory budget.
    pub fn io_for(&self, ops: Option<u64>, buf_len: u32) -> Result<IoSettings> {
        fit_io(self.io, ops, buf_len, &self.memory)
    }

    /// The workstations of a studio start it together (see [`Env::drive_alone`] for transfers
    /// that are not measured, or not made by every rank).
    pub fn drive(
        &self,
        spans: &[&Span],
        pattern: &mut dyn Pattern,
        buf_len: u32,
        limits: Limits,
        label: &str,
    ) -> Result<DriveStats> {
        // One tag for every transfer: ranks in different roles name theirs differently.
        self.ctl.world.start("transfer", self.ctl.cancel)?;
        let mut s = self.drive_alone(spans, pattern, buf_len, limits, label)?;
        crate::io::driver::stonewall(&self.ctl, &mut s)?;
        Ok(s)
    }

    /// [`Env::drive`] without waiting for the other ranks.
    pub fn drive_alone(
        &self,
        spans: &[&Span],
        pattern: &mut dyn Pattern,
        buf_len: u32,
        limits: Limits,
        label: &str,
    ) -> Result<DriveStats> {
        let files: Vec<&std::fs::File> = spans.iter().map(|s| &s.file).collect();
        let most = [
            pattern.max_ops(),
            limits.bytes.map(|b| b.div_ceil(u64::from(buf_len.max(1)))),
        ]
        .into_iter()
        .flatten()
        .min();
        let io = self.io_for(most, buf_len)?;
        let dfs: Vec<_> = spans.iter().map(|s| s.drive_file()).collect();
        io.drive(
            &files,
            &dfs,
            buf_len as usize,
            pattern,
            limits,
            label,
            &self.ctl,
        )
    }

    /// The sequential rate `kind`-wise at 1 MiB, in bytes per second: the session's own
    /// sequential measurement where it has one (one naive count for the whole run), else a
    /// second of transfer over `span`.
    pub fn sequential_rate(&mut self, kind: crate::io::OpKind, span: &Span) -> Result<f64> {
        let measured = match kind {
            crate::io::OpKind::Read => self.sequential.read,
            _ => self.sequential.write,
        };
        if let Some(r) = measured {
            return Ok(r);
        }
        let mut p =
            crate::io::patterns::Sequential::new(kind, 0, span.start, span.end, 1 << 20, true);
        let label = if kind == crate::io::OpKind::Read {
            "sequential read rate"
        } else {
            "sequential write rate"
        };
        let lim = Limits {
            duration: Some(Duration::from_secs(1)),
            bytes: None,
        };
        let s = self.drive(&[span], &mut p, 1 << 20, lim, label)?;
        Ok(crate::units::mb_per_s(s.bytes(), s.elapsed) * 1e6)
    }

    /// Bytes per second `spans` carry when `ranges` of them are read (or written) round robin in
    /// `block` requests, `qd` in flight, for `duration`: what a butler serving many streams
    /// gets from the device.
    #[allow(clippy::too_many_arguments)]
    pub fn round_robin_rate(
        &mut self,
        spans: &[&Span],
        ranges: &[(u64, u64)],
        block: u32,
        qd: u32,
        cached: bool,
        kind: crate::io::OpKind,
        duration: Duration,
        label: &str,
    ) -> Result<f64> {
        let saved = self.io;
        self.io = IoSettings {
            backend: if qd > 1 {
                crate::io::BackendKind::PARALLEL
            } else {
                crate::io::BackendKind::Sync
            },
            queue_depth: qd,
            cached,
        };
        let mut rr = crate::io::patterns::RoundRobin::new(ranges, block);
        if kind == crate::io::OpKind::Write {
            rr = rr.writing();
        }
        let limits = Limits {
            duration: Some(duration),
            bytes: None,
        };
        let r = self.drive(spans, &mut rr, block, limits, label);
        self.io = saved;
        let s = r?;
        Ok(mb_per_s(s.bytes(), s.elapsed) * 1e6)
    }
}

/// `io` with its queue depth cut to the `ops` a transfer can have in flight, checked against the
/// memory budget.
fn fit_io(
    mut io: IoSettings,
    ops: Option<u64>,
    buf_len: u32,
    memory: &crate::memory::MemoryBudget,
) -> Result<IoSettings> {
    if let Some(m) = ops {
        io.queue_depth = io.queue_depth.min(m.clamp(1, u64::from(u32::MAX)) as u32);
    }
    memory.check(
        &format!(
            "{} request buffers of {}",
            io.queue_depth,
            crate::units::fmt_size(u64::from(buf_len))
        ),
        u64::from(io.queue_depth) * u64::from(buf_len),
        "a smaller --qd or --block",
    )?;
    Ok(io)
}

/// One workload: settings in, rows of figures out.
pub trait Workload {
    /// Short name used on the command line and in documents (`seq`, `sweep` …).
    fn name(&self) -> &'static str;
    /// A title for tables.
    fn title(&self) -> String;
    /// Whether it measures the target (false for runs against a simulated device, which touch
    /// nothing there).
    fn uses_disk(&self) -> bool {
        true
    }
    /// The simulated device it runs against (`--device-model`), by name.
    fn simulated_device(&self) -> Option<&str> {
        None
    }
    /// Every setting, for the result document.
    fn settings(&self) -> serde_json::Value;
    /// One run. `run` counts from 0; patterns may seed their randomness with it.
    fn run_once(&mut self, env: &mut Env<'_>, run: u32) -> Result<RunOutcome>;
    /// Observations on the gathered figures (ratios, derived times).
    fn findings(&self, _section: &Section) -> Vec<Finding> {
        Vec::new()
    }
    /// The same pattern as fio jobs, for `--fio-job` (empty for workloads fio cannot express,
    /// such as the real-time ones).
    fn fio_jobs(&self, _target: &TargetInfo, _io: &IoSettings) -> Vec<crate::fio::FioJob> {
        Vec::new()
    }
}

/// What one run measured.
#[derive(Debug, Default)]
pub struct RunOutcome {
    pub rows: Vec<RunRow>,
    pub cached: bool,
    pub direct_refused: bool,
    pub interrupted: bool,
    /// Observations that depend on the target rather than on the figures.
    pub findings: Vec<Finding>,
    /// Detail for the document's charts (telemetry, probes), from the last run. A classic
    /// workload's is made from its rows' latencies.
    pub detail: Option<Detail>,
    /// Each row's latency distribution (classic workloads, through `push`).
    pub latencies: Vec<RowLatency>,
}

impl RunOutcome {
    /// Adds a row from a drive's figures, noting cache and interruption.
    pub fn push(
        &mut self,
        label: impl Into<String>,
        span_cached: bool,
        s: &DriveStats,
        extra: Vec<Metric>,
    ) {
        let mut metrics = standard_metrics(s);
        metrics.extend(extra);
        let label = label.into();
        self.latencies.push(RowLatency {
            label: label.clone(),
            read: s.read.latency.histogram(),
            write: s.write.latency.histogram(),
        });
        self.rows.push(RunRow { label, metrics });
        self.cached |= span_cached;
        self.interrupted |= s.interrupted;
    }
}

/// Rate, IOPS, latency and CPU of a drive: the columns every classic table shares.
pub fn standard_metrics(s: &DriveStats) -> Vec<Metric> {
    let mut lat = s.read.latency.clone();
    lat.merge(&s.write.latency);
    let l = lat.summary();
    let secs = s.elapsed.as_secs_f64();
    vec![
        metric(&m::RATE_MB_PER_S, mb_per_s(s.bytes(), s.elapsed)),
        metric(
            &m::IOPS,
            if secs > 0.0 {
                s.ops() as f64 / secs
            } else {
                0.0
            },
        ),
        metric(&m::LATENCY_US_MEAN, l.mean_us),
        metric(&m::LATENCY_US_P50, l.p50_us),
        metric(&m::LATENCY_US_P99, l.p99_us),
        metric(&m::LATENCY_US_P999, l.p999_us),
        metric(&m::CPU_PCT, s.cpu_pct()),
        metric(&m::CPU_S_PER_GB, s.cpu_s_per_gb()),
    ]
    .into_iter()
    .chain(
        s.stonewall
            .filter(|w| w.secs > 0.0)
            .into_iter()
            .flat_map(|w| {
                [
                    metric(&m::STONEWALL_MB_PER_S, w.bytes / w.secs / 1e6),
                    metric(&m::STONEWALL_IOPS, w.ops / w.secs),
                ]
            }),
    )
    .collect()
}

/// What the runs of a workload gathered, before they become a section.
#[derive(Default)]
struct Gathered {
    rows: Vec<Vec<RunRow>>,
    cached: bool,
    refused: bool,
    interrupted: bool,
    findings: Vec<Finding>,
    detail: Option<Detail>,
    /// A repeated search's details, one a run, gathered into one at the end.
    searches: Vec<SearchDetail>,
    realtime: Vec<RealTimeDetail>,
}

impl Gathered {
    /// Adds one run's outcome: its rows, its labels and its findings (each once), and its
    /// detail (the last run's stands, but a search's are all kept: see `detail`).
    fn add(&mut self, out: RunOutcome) {
        // A search's repetition stopped midway answered nothing: the ones that ended stand
        // without its rows, findings and detail (the section is still marked interrupted).
        let searched = matches!(out.detail, Some(Detail::Search(_) | Detail::RealTime(_)));
        if out.interrupted && searched && !(self.searches.is_empty() && self.realtime.is_empty()) {
            self.interrupted = true;
            return;
        }
        self.cached |= out.cached;
        self.refused |= out.direct_refused;
        self.interrupted |= out.interrupted;
        if let Some(Detail::Search(d)) = out.detail {
            self.searches.push(d);
        } else if let Some(Detail::RealTime(d)) = out.detail {
            self.realtime.push(*d);
        } else if out.detail.is_some() {
            self.detail = out.detail;
        } else if !out.latencies.is_empty() {
            self.detail = Some(Detail::Transfers(Transfers {
                rows: out.latencies,
            }));
        }
        // A search repeated guesses again each time: the last run's guesses stand for them all
        // (each search's own trail is kept).
        let guess = |f: &Finding| {
            matches!(
                f,
                Finding::FirstGuess { .. } | Finding::ParallelGuess { .. }
            )
        };
        if out.findings.iter().any(guess) {
            self.findings.retain(|f| !guess(f));
        }
        for f in out.findings {
            if !self.findings.contains(&f) {
                self.findings.push(f);
            }
        }
        if !out.rows.is_empty() {
            self.rows.push(out.rows);
        }
    }

    /// The section's detail: a search repeated is one detail with every repetition that ended,
    /// its answer their median (`SearchDetail::gathered`); otherwise the last run's.
    fn detail(&mut self) -> Option<Detail> {
        if !self.searches.is_empty() {
            return SearchDetail::gathered(std::mem::take(&mut self.searches)).map(Detail::Search);
        }
        if !self.realtime.is_empty() {
            return RealTimeDetail::gathered(std::mem::take(&mut self.realtime))
                .map(|d| Detail::RealTime(Box::new(d)));
        }
        self.detail.take()
    }
}

/// Runs a workload `runs` times and gathers the figures. Stops early, marked interrupted, on a
/// cancel; the runs finished so far are kept.
pub fn run_repeated(w: &mut dyn Workload, env: &mut Env<'_>, runs: u32) -> Result<Section> {
    if runs == 0 || runs > 1000 {
        return Err(Error::invalid("runs", runs, "1 to 1000"));
    }
    let mut g = Gathered::default();
    for r in 0..runs {
        if env.ctl.cancelled() {
            g.interrupted = true;
            break;
        }
        match w.run_once(env, r) {
            Ok(o) => g.add(o),
            Err(Error::Interrupted) => {
                g.interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        }
        if g.interrupted {
            break;
        }
    }
    if g.rows.is_empty() && g.interrupted {
        return Err(Error::Interrupted);
    }
    let mut s = Section::from_runs(w.name(), w.title(), w.settings(), &g.rows);
    let memory_fs = env
        .target
        .fs_type
        .as_deref()
        .filter(|t| MEMORY_FILESYSTEMS.contains(t));
    s.cached = g.cached || env.io.cached || memory_fs.is_some();
    s.interrupted = g.interrupted;
    s.findings.extend(caching_note(env, memory_fs, g.refused));
    s.findings.extend(first_run_outliers(&s));
    s.detail = g.detail();
    let own = w.findings(&s);
    s.findings.extend(own);
    s.findings.extend(g.findings);
    Ok(s)
}

/// How the figures were cached, if they were: a filesystem in memory (`memory_fs`), O_DIRECT
/// refused, or `--cached`.
fn caching_note(env: &Env<'_>, memory_fs: Option<&str>, refused: bool) -> Option<Finding> {
    if let Some(fs) = memory_fs {
        Some(Finding::MemoryFilesystem {
            filesystem: fs.to_string(),
        })
    } else if refused {
        Some(Finding::DirectRefused {
            filesystem: env
                .target
                .fs_type
                .clone()
                .unwrap_or_else(|| "unknown".into()),
        })
    } else {
        env.io.cached.then_some(Finding::CachedOnPurpose)
    }
}

/// Rows whose first run stood apart from the rest.
fn first_run_outliers(s: &Section) -> Vec<Finding> {
    s.rows
        .iter()
        .filter_map(|row| {
            let dev = row.figures.first()?.spread.first_run_outlier()?;
            Some(Finding::FirstRunOutlier {
                row: row.label.clone(),
                deviation_pct: 100.0 * dev,
            })
        })
        .collect()
}

/// Checks a block size: a multiple of 512 bytes, from 512 B to 64 MiB.
pub fn check_block(what: &'static str, bytes: u64) -> Result<u32> {
    if bytes == 0 || !bytes.is_multiple_of(512) || bytes > 64 << 20 {
        return Err(Error::invalid(
            what,
            crate::units::fmt_size(bytes),
            "a multiple of 512 bytes from 512 to 64M (e.g. 4K, 64K, 1M)",
        ));
    }
    Ok(bytes as u32)
}

/// Checks a duration: more than nothing, at most a day.
pub fn check_duration(what: &'static str, d: Duration) -> Result<Duration> {
    if d.is_zero() || d > Duration::from_secs(86_400) {
        return Err(Error::invalid(
            what,
            humantime::format_duration(d),
            "more than 0 and at most 24h (e.g. 500ms, 10s, 2m)",
        ));
    }
    Ok(d)
}

/// Checks that a span holds at least `needed` bytes.
pub fn check_span(span: &Span, needed: u64) -> Result<()> {
    if span.len() < needed {
        return Err(Error::TooSmall {
            path: span.path.clone(),
            size: span.len(),
            needed,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::BackendKind;
    use crate::memory::MemoryBudget;

    /// One run of a search that answered `answer` (stopped midway if `interrupted`).
    fn searched(answer: u32, interrupted: bool) -> RunOutcome {
        let detail: SearchDetail = serde_json::from_value(serde_json::json!({
            "naive_tracks": 200.0, "first_guess_tracks": 100.0,
            "searches": [{"label": "s", "profile": "trackbench", "butler": "serial",
                "play_tracks": answer, "record_tracks": 0,
                "capacity": {"answer": answer, "first_failing": null, "first_guess": 100,
                    "confirmed": !interrupted, "hit_limit": false, "probes": []}}]
        }))
        .unwrap();
        RunOutcome {
            rows: vec![RunRow {
                label: "s".into(),
                metrics: vec![metric(&m::TRACKS, f64::from(answer))],
            }],
            interrupted,
            detail: Some(Detail::Search(detail)),
            ..RunOutcome::default()
        }
    }

    #[test]
    fn a_repeated_search_stopped_midway_stands_on_the_repetitions_that_ended() {
        let mut g = Gathered::default();
        g.add(searched(144, false));
        g.add(searched(140, false));
        g.add(searched(0, true));
        assert!(g.interrupted);
        assert_eq!(g.rows.len(), 2, "the stopped one's rows are not figures");
        let Some(Detail::Search(d)) = g.detail() else {
            panic!("a search's detail")
        };
        assert_eq!(d.repeated().unwrap().answers, [144, 140]);
        // A search stopped in its first run keeps what it had: its probes so far.
        let mut g = Gathered::default();
        g.add(searched(90, true));
        assert!(g.interrupted && g.rows.len() == 1);
        assert!(matches!(g.detail(), Some(Detail::Search(d)) if d.repetitions.is_empty()));
    }

    #[test]
    fn request_buffers_never_exceed_what_a_transfer_uses_or_the_budget() {
        let io = IoSettings {
            backend: BackendKind::PARALLEL,
            queue_depth: 4096,
            cached: false,
        };
        let budget = MemoryBudget::default_for(Some(8 << 30));
        // 8 MiB in 1 MiB requests: 8 buffers, not 4096 (4 GiB).
        assert_eq!(
            fit_io(io, Some(8), 1 << 20, &budget).unwrap().queue_depth,
            8
        );
        assert_eq!(
            fit_io(io, Some(0), 1 << 20, &budget).unwrap().queue_depth,
            1
        );
        // An endless pattern keeps the depth asked for, if the budget allows it.
        assert_eq!(
            fit_io(io, None, 1 << 20, &budget).unwrap().queue_depth,
            4096
        );
        let e = fit_io(io, None, 64 << 20, &budget).unwrap_err();
        assert!(matches!(e, Error::Memory { .. }), "{e}");
    }
}
