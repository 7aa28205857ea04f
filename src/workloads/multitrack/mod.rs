//! `play`, `record` and `hdr`: the real-time streaming engine as workloads — one run at a given
//! track count with its verdict, or `--find-max`, the search for the most tracks that pass
//! (`find_max`: each search from its first guess, `guess`, run probe by probe, `search`), with
//! the naive (sequential-rate) count, the parallel butler's count and the default engine's count
//! beside it. A real run lays out, streams and removes its files (`files`).

pub(crate) mod files;
mod find_max;
mod guess;
mod search;

use super::probe::{late_tick, not_real_time, page_cache_notes, verdict_notes};
use super::{Env, RunOutcome, Workload};
use crate::engine::StreamSpec;
use crate::engine::ring::RingMemory;
use crate::engine::shape::steady_start_allowed;
use crate::engine::virtual_time::DeviceModel;
use crate::error::Result;
use crate::result::findings::Finding;
use crate::result::metrics as m;
use crate::result::search::SearchLimit;
use crate::result::{Detail, Metric, RunRow, Section, metric};
use crate::units::fmt_size;
use crate::verdict::tracks::{self as judged, StreamOutcome};
use crate::verdict::windows::min_run_s;
use serde::Serialize;

/// Which streaming workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamKind {
    Play,
    Record,
    Hdr,
}

/// The record share of the hdr curve: M = 0, N/4, N/2 and N.
pub const HDR_RATIOS: [f64; 4] = [0.0, 0.25, 0.5, 1.0];

#[derive(Debug, Clone)]
pub struct Multitrack {
    pub kind: StreamKind,
    /// Counts in it are used for single runs; `--find-max` searches them.
    pub spec: StreamSpec,
    /// Run in virtual time against this model instead of the disk.
    pub device: Option<DeviceModel>,
    pub find_max: bool,
    /// With a profile other than the default engine, also search the default engine.
    pub compare_default: bool,
    /// For a serial butler, also search the parallel butler at this queue depth.
    pub compare_parallel: Option<u32>,
    /// Read recorded files back and check every tag.
    pub verify: bool,
    /// The user asked for the ring length (`--buffer`): say so where the ring had to be larger.
    pub buffer_asked: bool,
    /// `--max-tracks`: the most tracks (in all) a search tries.
    pub max_tracks: Option<u32>,
    /// What stopped the main search short of a failing count (set by the search).
    pub main_limited_by: Option<SearchLimit>,
    /// hdr `--find-max` with this many record tracks throughout: one search for the most
    /// playback tracks beside them, instead of the N-for-each-M curve.
    pub hdr_record: Option<u32>,
}

/// A locate longer than this is said to be one: a session start a user would call stuck.
const LOCATE_NOTE_MS: f64 = 10_000.0;

impl Multitrack {
    /// Whether a probe of `spec` starts where its first refill falls due
    /// (`StreamSpec::start_at_first_refill`): real probes of direct reads. Simulated probes
    /// cost no wall time and keep their full start.
    fn probes_start_at_first_refill(&self, spec: &StreamSpec) -> bool {
        spec.policy.direct && self.device.is_none()
    }

    /// Whether a search's probes (not its confirmations) of `spec` start in the steady state
    /// (`StreamSpec::steady_start`): real ones, alone (a studio's ranks keep their clocks and
    /// rings in step), of a playback search (hdr's curve keeps one rule for all its points)
    /// whose rings the in-phase start does not bind. Simulated probes cost no wall time and
    /// keep their exact trails.
    fn probes_start_steady(&self, spec: &StreamSpec, alone: bool) -> bool {
        self.kind == StreamKind::Play
            && self.device.is_none()
            && alone
            && steady_start_allowed(spec)
    }

    fn label(&self, spec: &StreamSpec) -> String {
        match self.kind {
            StreamKind::Play => format!("{} tracks", spec.play_tracks),
            StreamKind::Record => format!("{} tracks", spec.record_tracks),
            StreamKind::Hdr => format!("{} play + {} record", spec.play_tracks, spec.record_tracks),
        }
    }

    /// One run at the spec's counts, simulated or real.
    fn one(
        &self,
        env: &mut Env<'_>,
        spec: &StreamSpec,
        rings: &mut RingMemory,
    ) -> Result<StreamOutcome> {
        match &self.device {
            Some(m) => judged::simulate_watched(spec, m, env.ctl.cancel, env.ctl.progress),
            None => self.one_real(env, spec, rings),
        }
    }

    /// The notes a run's settings call for: through the page cache (a search's confirmations
    /// run long there), and a ring larger than `--buffer` asked for.
    fn setting_notes(&self, cached: bool) -> Vec<Finding> {
        let mut f = Vec::new();
        if cached {
            let confirm_s = (self.find_max && self.kind != StreamKind::Record)
                .then(|| search::confirmation_ns(&self.spec) as f64 / 1e9);
            f.extend(page_cache_notes(&self.spec.policy.profile, confirm_s));
        }
        if let Some((asked_s, min_chunks)) = self.spec.ring_raised().filter(|_| self.buffer_asked) {
            f.push(Finding::RingRaised {
                asked_s,
                min_chunks,
                chunk_bytes: self.spec.policy.chunk_bytes,
                ring_bytes: self.spec.ring_bytes(),
                ring_s: self.spec.ring_s(),
            });
        }
        f
    }

    /// One run at the spec's counts: its verdict, figures and notes.
    fn single_run(&self, env: &mut Env<'_>, mut out: RunOutcome) -> Result<RunOutcome> {
        let spec = self.spec.clone();
        let o = self.one(env, &spec, &mut RingMemory::new())?;
        out.findings.extend(run_findings(&spec, &o));
        out.interrupted = o.interrupted;
        out.rows.push(RunRow {
            label: format!("{}: {}", self.label(&spec), o.verdict.word()),
            metrics: outcome_metrics(&o),
        });
        out.detail = Some(Detail::Stream(Box::new(o)));
        Ok(out)
    }
}

pub(super) fn outcome_metrics(o: &StreamOutcome) -> Vec<Metric> {
    let secs = (o.ran_ms / 1000.0).max(f64::MIN_POSITIVE);
    let mut m = vec![
        metric(&m::TRACKS, f64::from(o.play_tracks + o.record_tracks)),
        metric(&m::XRUNS, o.xruns() as f64),
        metric(&m::UNDERRUNS, o.underruns as f64),
        metric(&m::OVERRUNS, o.overruns as f64),
        metric(&m::WORST_HEADROOM_PCT, o.worst_headroom_pct),
        metric(&m::LOCATE_MS, o.locate_ms),
        metric(&m::READ_MB_PER_S, o.read_bytes as f64 / secs / 1e6),
        metric(&m::WRITE_MB_PER_S, o.written_bytes as f64 / secs / 1e6),
        metric(&m::RAM_BYTES, o.ram_bytes as f64),
    ];
    if let Some(s) = &o.sustain {
        m.push(metric(&m::SHORTFALL_PCT, s.shortfall_pct));
    }
    if let Some(i) = o.butler_idle_pct {
        m.push(metric(&m::BUTLER_IDLE_PCT, i));
    }
    if let Some(w) = o.butler_cpu_wait_max_ms {
        m.push(metric(&m::BUTLER_CPU_WAIT_MS_MAX, w));
    }
    if let Some(a) = o.read_amplification() {
        m.push(metric(&m::READ_AMPLIFICATION, a));
    }
    if let Some(l) = &o.read_latency {
        m.push(metric(&m::READ_LATENCY_US_P99, l.p99_us));
    }
    if let Some(l) = &o.write_latency {
        m.push(metric(&m::WRITE_LATENCY_US_P99, l.p99_us));
    }
    if let Some(l) = &o.tick_lateness {
        m.push(metric(&m::TICK_LATE_US_P50, l.p50_us));
        m.push(metric(&m::TICK_LATE_US_P99, l.p99_us));
        m.push(metric(&m::TICK_LATE_US_MAX, l.max_us));
    }
    if !o.simulated {
        m.push(metric(&m::TICK_CPU_PCT, o.tick_cpu_pct));
        m.push(metric(&m::BUTLER_CPU_PCT, o.butler_cpu_pct));
    }
    m
}

/// What one streaming run observed besides its figures.
fn run_findings(spec: &StreamSpec, o: &StreamOutcome) -> Vec<Finding> {
    let mut f: Vec<Finding> = not_real_time(o).into_iter().collect();
    if o.locate_ms > LOCATE_NOTE_MS {
        f.push(Finding::LongLocate {
            locate_ms: o.locate_ms,
        });
    }
    f.extend(late_tick(o, spec.period_ns() as f64 / 1000.0));
    let margin_in_s = o.sustain.and_then(|s| s.margin_in_s);
    f.extend(verdict_notes(o, spec.ring_s() * 1000.0, margin_in_s));
    if let (Some(d), Some(ratio)) = (o.device_read_bytes, o.read_amplification()) {
        f.push(Finding::ReadAmplification {
            device_read_bytes: d,
            read_bytes: o.read_bytes,
            played_bytes: o.played_bytes,
            ratio,
            direct: spec.policy.direct,
        });
    }
    if o.stopped_early {
        f.push(Finding::StoppedEarly {
            after_s: o.ran_ms / 1000.0,
        });
    }
    f
}

/// How long each run lasts when `--duration` is not given: a search's probes as long as it
/// takes to tell (one ring, then the refill cycles that measure the butler's spare time, with a
/// cycle and a little scheduling to spare: the idle share and the trend are taken over whole
/// cycles counted back from the end, and the extra cycle makes that window four cycles rather
/// than three; with three, the capped fixture's search once called 138 tracks (5% under the
/// bound) marginal and answered 136) and no longer; a single run at least 10 s. Simulated
/// probes cost no wall time: they run long enough for a small drain to show.
pub fn planned_duration_s(spec: &StreamSpec, find_max: bool, simulated: bool) -> f64 {
    let min = min_run_s(spec);
    let cycle = crate::engine::shape::refill_cycle_s(spec);
    match (find_max, simulated) {
        (true, true) => (40.0 * spec.ring_s()).max(120.0).max(min + 2.0 * cycle),
        (true, false) => min + cycle + 0.3,
        (false, _) => (min + cycle + 1.0).max(10.0),
    }
}

impl Workload for Multitrack {
    fn name(&self) -> &'static str {
        match self.kind {
            StreamKind::Play => "play",
            StreamKind::Record => "record",
            StreamKind::Hdr => "hdr",
        }
    }

    fn uses_disk(&self) -> bool {
        self.device.is_none()
    }

    fn simulated_device(&self) -> Option<&str> {
        self.device.as_ref().map(|d| d.name.as_str())
    }

    fn title(&self) -> String {
        let s = &self.spec;
        let what = match (self.kind, self.find_max) {
            (StreamKind::Play, false) => "Real-time playback",
            (StreamKind::Record, false) => "Real-time recording",
            (StreamKind::Hdr, false) => "Playback while recording",
            (StreamKind::Play, true) => "Most playback tracks",
            (StreamKind::Record, true) => "Most record tracks",
            (StreamKind::Hdr, true) => "Most playback tracks while recording (N for each M)",
        };
        format!(
            "{what}: {}, profile {}, {} butler, {} chunks, {} rings ({:.2} s), period {}{}",
            s.format,
            s.policy.profile,
            s.butler,
            fmt_size(s.policy.chunk_bytes),
            fmt_size(s.ring_bytes()),
            s.ring_s(),
            s.period_frames,
            match &self.device {
                Some(m) => format!(", simulated device {}", m.name),
                None => String::new(),
            }
        )
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "spec": self.spec,
            "device_model": self.device,
            "find_max": self.find_max,
            "compare_default": self.compare_default,
            "compare_parallel": self.compare_parallel,
            "verify": self.verify,
            "max_tracks": self.max_tracks,
            "profile_source": self.spec.policy.source,
        })
    }

    fn run_once(&mut self, env: &mut Env<'_>, _run: u32) -> Result<RunOutcome> {
        let mut out = RunOutcome::default();
        if self.device.is_none() {
            env.data_dir(self.name())?;
        }
        out.cached = self.device.is_none() && !self.spec.policy.direct;
        out.findings = self.setting_notes(out.cached);
        if self.find_max {
            self.find_max_run(env, out)
        } else {
            self.single_run(env, out)
        }
    }

    fn findings(&self, s: &Section) -> Vec<Finding> {
        if self.find_max {
            self.search_findings(s)
        } else {
            Vec::new()
        }
    }
}
