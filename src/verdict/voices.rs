//! A sampler's run judged: a fail on any dropout; marginal when a first read left less than the
//! margin of its preload, a ring fell below the margin, the tick fell behind or the capacity
//! rules say the storage had nothing to spare; a pass only with positive evidence of spare
//! capacity. From what the engine's voices measured (`engine::voices`).

use super::evidence::{
    CapacityEvidence, capacity_share, longest_hold_ms, one_hold_pct, spare_min_pct,
};
use super::windows::{MIN_STEADY_S, tick_behind_of};
use super::{Judged, Shortcoming, Verdict, own_verdict};
use crate::control::{Control, NoProgress, Progress};
use crate::engine::ring::RingMemory;
use crate::engine::seams::EngineOut;
use crate::engine::virtual_time::DeviceModel;
use crate::engine::voices::{
    self, Library, Notes, SampleFile, Slack, VoicePlayer, VoicesRun, streams,
};
use crate::engine::{FillPoint, StreamSpec};
use crate::error::Result;
use crate::stats::{Histogram, LatencySummary};
use crate::target::DeviceInfo;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Everything a sampler run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplerOutcome {
    pub verdict: Verdict,
    pub voices: u32,
    pub samples: u32,
    pub notes_per_s: f64,
    /// Notes started during the run (note ends and steals).
    pub notes: u64,
    pub steals: u64,
    /// Periods a voice had nothing to play.
    pub dropouts: u64,
    pub dropout_notes: u64,
    pub first_dropout_ms: Option<f64>,
    /// First-read slack of the notes read on time (µs), and the smallest of all (ms; negative:
    /// late).
    pub first_read_slack: Option<LatencySummary>,
    pub first_read_slack_hist: Option<Histogram>,
    /// The slack 99% of first reads had at least (negative: more than 1% were late).
    pub first_read_slack_p1_ms: Option<f64>,
    pub first_read_slack_min_ms: Option<f64>,
    pub late_first_reads: u64,
    /// The deadline a first read has: the preload's length in time.
    pub preload_ms: f64,
    pub preload_bytes: u64,
    pub preload_ram_bytes: u64,
    pub ring_bytes_per_voice: u64,
    pub ring_ram_bytes: u64,
    pub worst_headroom_pct: f64,
    pub fill: Vec<FillPoint>,
    pub locate_ms: f64,
    pub ran_ms: f64,
    pub read_bytes: u64,
    pub butler_idle_pct: Option<f64>,
    /// The butler's idle share over the second half of the steady part, in percent: a device
    /// that lends time at first (a kernel throttle grants a slice's budget at once after each
    /// gap) leaves the butler idle early in a run it cannot sustain.
    #[serde(default)]
    pub butler_idle_late_pct: Option<f64>,
    /// How much less audio the butler brought than the voices consumed over the steady part,
    /// in percent (negative: more).
    pub shortfall_pct: Option<f64>,
    /// The most of that shortfall, in percent, that the run's longest single hold (a read, or
    /// the disk thread's wait for a CPU) accounts for (`super::one_hold_pct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_hold_pct: Option<f64>,
    /// Real runs: the share of the demand, in percent, that the tick did not ask for over the
    /// steady part because it ran behind its schedule (`super::telemetry::tick_behind_pct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_behind_pct: Option<f64>,
    pub shortcoming: Option<Shortcoming>,
    pub min_run_s: f64,
    pub stopped_early: bool,
    pub read_latency: Option<LatencySummary>,
    pub read_latency_hist: Option<Histogram>,
    pub tick_lateness: Option<LatencySummary>,
    pub tick_lateness_hist: Option<Histogram>,
    pub realtime: bool,
    pub realtime_note: Option<String>,
    pub tick_cpu_pct: f64,
    pub butler_cpu_pct: f64,
    /// The longest the disk thread, ready to run, waited for a CPU, and all its waiting (ms;
    /// real runs on Linux): notes dropped with no slow read and a long wait here were the
    /// busy machine's, not the device's or the engine's.
    #[serde(default)]
    pub butler_cpu_wait_max_ms: Option<f64>,
    #[serde(default)]
    pub butler_cpu_wait_ms: Option<f64>,
    pub realtime_allocations: Option<u64>,
    pub peak_rss_bytes: Option<u64>,
    pub interrupted: bool,
    pub simulated: bool,
}

impl SamplerOutcome {
    /// MB/s streamed from the device.
    pub fn streamed_mb_per_s(&self) -> f64 {
        self.read_bytes as f64 / (self.ran_ms / 1000.0).max(f64::MIN_POSITIVE) / 1e6
    }

    /// What the device carries, as a share of this run's voices, where the run can tell: a
    /// passing run left the butler idle, which bounds it from above.
    pub fn capacity_estimate(&self) -> Option<f64> {
        capacity_share(self.shortcoming, || self.capacity_evidence())
    }

    /// The longest single hold of the run, in ms (see [`longest_hold_ms`]).
    pub fn longest_hold_ms(&self) -> Option<f64> {
        longest_hold_ms(
            self.read_latency.as_ref().map(|l| l.max_us),
            None,
            self.butler_cpu_wait_max_ms,
        )
    }

    /// What the run says of the storage's capacity (see [`CapacityEvidence`]).
    pub fn capacity_evidence(&self) -> CapacityEvidence {
        evidence(
            self.shortfall_pct,
            self.one_hold_pct,
            self.butler_idle_pct.map(|whole_pct| Idle {
                whole_pct,
                late_pct: self.butler_idle_late_pct.unwrap_or(whole_pct),
            }),
            self.simulated,
        )
    }

    /// The verdict apart from the capacity rules (see [`own_verdict`]).
    pub fn own_verdict(&self) -> Verdict {
        own_verdict(
            self.verdict,
            self.shortcoming.as_ref(),
            self.butler_idle_pct,
        )
    }
}

impl Judged for SamplerOutcome {
    super::judged_by_fields!();
    fn missed(&self) -> u64 {
        self.dropouts
    }
    fn first_missed_ms(&self) -> Option<f64> {
        self.first_dropout_ms
    }
}

/// How long a search's confirmation of its answer runs, at least, in seconds: a device may lend
/// time for a while before its rate binds (a kernel throttle grants each slice's budget at once
/// after a gap, so bursty refills run ahead of its rate until the queue never empties). On a
/// loop device capped at 21 MB/s (77.9 voices), 79 voices held their rings for 7 s and passed
/// a 7 s probe, then lost ground; 20 s shows it.
pub const CONFIRM_RUN_S: f64 = 20.0;

/// The shortest sampler run that can pass: one ring's worth of warming up (the voices started
/// part way into notes, their rings full), then `MIN_STEADY_S` of steady running.
pub fn min_run_s(spec: &StreamSpec) -> f64 {
    spec.ring_s() + MIN_STEADY_S
}

/// The butler's idle share (percent) over a run's steady part, whole and its second half.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Idle {
    pub whole_pct: f64,
    pub late_pct: f64,
}

/// A sampler's capacity evidence: its stock's trend (no standard error: ground lost is anything
/// beyond `LOSING_GROUND_PCT`) and the butler's idle share, of which only what lasts to the end
/// of the run may outweigh lost ground, or a drain one hold accounts for (`one_hold_pct`).
fn evidence(
    shortfall_pct: Option<f64>,
    one_hold_pct: Option<f64>,
    idle: Option<Idle>,
    simulated: bool,
) -> CapacityEvidence {
    CapacityEvidence {
        shortfall_pct,
        noise_pct: 0.0,
        idle_pct: idle.map(|i| i.whole_pct),
        ground_idle_pct: idle.map(|i| i.whole_pct.min(i.late_pct)),
        spare_min_pct: spare_min_pct(simulated),
        buffered_shortfall_pct: None,
        buffered_noise_pct: 0.0,
        draining_sigmas: 0.0,
        one_hold_pct,
    }
}

/// The verdict of a sampler run: a fail on any dropout; marginal when a first read left less
/// than the margin of its preload, a ring fell below the margin of what it could hold, or the
/// butler had no time to spare; too short before `min_run_s`; a pass only with positive
/// evidence of spare capacity. Rings that lose ground are excused only by ample idle time in
/// both the whole steady part and its second half: on a loop device capped at 21 MB/s
/// (77.9 voices at the run's streamed share), 79 voices held their stock for 7 s while the
/// throttle lent time, then lost 1.5% of the demand; over 20 s the butler was idle 19% in all
/// and the trend fell 0.99%.
#[allow(clippy::too_many_arguments)]
pub fn judge(
    spec: &StreamSpec,
    player: &VoicePlayer,
    slack: &Slack,
    preload_ms: f64,
    idle: Option<Idle>,
    shortfall_pct: Option<f64>,
    one_hold_pct: Option<f64>,
    tick_behind_pct: Option<f64>,
    ran_s: f64,
    simulated: bool,
) -> (Verdict, Option<Shortcoming>) {
    let idle_pct = idle.map(|i| i.whole_pct);
    let needed_ms = spec.margin * preload_ms;
    let min_slack_ms = slack.min_ns.map(|n| n as f64 / 1e6);
    let shortcoming = if player.dropouts > 0 {
        Some(Shortcoming::Dropouts {
            count: player.dropouts,
            notes: player.dropout_notes,
        })
    } else if let Some(m) = min_slack_ms.filter(|&m| m < needed_ms) {
        Some(Shortcoming::LateFirstRead {
            slack_ms: m,
            needed_ms,
        })
    } else if player.worst < spec.margin {
        Some(Shortcoming::BelowMargin {
            worst_pct: 100.0 * player.worst,
            margin_pct: 100.0 * spec.margin,
        })
    } else if let Some(s) = Shortcoming::tick_behind(tick_behind_pct) {
        Some(s)
    } else if let Some(s) = evidence(shortfall_pct, one_hold_pct, idle, simulated).shortcoming() {
        // A device that lends time after each gap (a throttle's slice, a drive's cache) keeps
        // a saturated butler idle a little while the voices slip: on a device capped at 77.6
        // voices, 82 passed on idle time alone; only idle time that lasts to the end outweighs
        // lost ground.
        Some(s)
    } else if idle_pct.is_none() || ran_s < min_run_s(spec) {
        Some(Shortcoming::TooShort {
            ran_s,
            needed_s: min_run_s(spec),
        })
    } else {
        None
    };
    let verdict = match shortcoming {
        None => Verdict::Pass,
        Some(Shortcoming::Dropouts { .. }) => Verdict::Fail,
        Some(Shortcoming::TooShort { .. }) => Verdict::TooShort,
        Some(_) => Verdict::Marginal,
    };
    (verdict, shortcoming)
}

/// Plays `notes` on real sample files (`voices::run_real`) and judges the run.
pub fn run_real(
    spec: &StreamSpec,
    notes: &Notes,
    lib: &Arc<Library>,
    files: &[SampleFile<'_>],
    device: Option<&DeviceInfo>,
    rings: &mut RingMemory,
    ctl: &Control<'_>,
) -> Result<SamplerOutcome> {
    let run = voices::run_real(spec, notes, lib, files, device, rings, ctl)?;
    Ok(judge_run(spec, run))
}

/// Plays `notes` against `model` in virtual time and judges the run.
pub fn simulate(
    spec: &StreamSpec,
    notes: &Notes,
    lib: &Arc<Library>,
    model: &DeviceModel,
    cancel: &AtomicBool,
) -> Result<SamplerOutcome> {
    simulate_watched(spec, notes, lib, model, cancel, &NoProgress)
}

/// [`simulate`], telling `progress` what a live view shows (ring fill over virtual time).
pub fn simulate_watched(
    spec: &StreamSpec,
    notes: &Notes,
    lib: &Arc<Library>,
    model: &DeviceModel,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<SamplerOutcome> {
    let run = voices::simulate_watched(spec, notes, lib, model, cancel, progress)?;
    Ok(judge_run(spec, run))
}

/// What a sampler run showed over its steady part, the run after its first ring's warm-up
/// (where it ran long enough to pass): the butler's idle share, the voices' stock's trend, the
/// most of it one hold accounts for, and the tick's lag behind its schedule.
struct Steady {
    idle: Option<Idle>,
    shortfall_pct: Option<f64>,
    one_hold_pct: Option<f64>,
    tick_behind_pct: Option<f64>,
}

fn steady_part(spec: &StreamSpec, e: &EngineOut<VoicePlayer>, simulated: bool) -> Steady {
    let player = &e.side;
    let ran_s = (e.ran_ns as f64 / 1e9).max(f64::MIN_POSITIVE);
    let warm_ns = (spec.ring_s() * 1e9) as u64;
    let long_enough = ran_s >= min_run_s(spec);
    let idle = (long_enough && e.ran_ns > warm_ns).then(|| Idle {
        whole_pct: 100.0 * e.idle.share(warm_ns, e.ran_ns),
        late_pct: 100.0 * e.idle.share(warm_ns + (e.ran_ns - warm_ns) / 2, e.ran_ns),
    });
    let shortfall_pct = long_enough
        .then(|| player.stock.shortfall_pct(warm_ns, spec.period_ns()))
        .flatten();
    let hold_ms = longest_hold_ms(
        (e.read_lat.count() > 0).then(|| e.read_lat.summary().max_us),
        None,
        e.butler_cpu_wait_max_ms.filter(|_| !simulated),
    );
    // The stock's trend spans the run after the first ring's warm-up.
    let one_hold_pct = hold_ms
        .filter(|_| shortfall_pct.is_some())
        .and_then(|h| one_hold_pct(h, e.ran_ns.saturating_sub(warm_ns) as f64 / 1e6));
    // Over the stock's trend: the run after the first ring's warm-up.
    let tick_behind_pct = tick_behind_of(
        &e.tick.lag,
        e.tick
            .lag
            .last()
            .map(|last| (warm_ns as f64 / 1e6, last.t_ms)),
        e.tick.stopped_behind,
    );
    Steady {
        idle,
        shortfall_pct,
        one_hold_pct,
        tick_behind_pct,
    }
}

/// A sampler run, real or simulated, as its outcome.
pub fn judge_run(spec: &StreamSpec, run: VoicesRun) -> SamplerOutcome {
    let VoicesRun {
        engine: e,
        slack,
        lib,
        voices,
        notes_per_s,
        simulated,
        peak_rss_bytes,
    } = run;
    let Steady {
        idle,
        shortfall_pct,
        one_hold_pct,
        tick_behind_pct,
    } = steady_part(spec, &e, simulated);
    let player = e.side;
    let rate = spec.format.bytes_per_second();
    let ran_s = (e.ran_ns as f64 / 1e9).max(f64::MIN_POSITIVE);
    let preload_ms = lib.preload_bytes as f64 / rate as f64 * 1e3;
    let (verdict, shortcoming) = judge(
        spec,
        &player,
        &slack,
        preload_ms,
        idle,
        shortfall_pct,
        one_hold_pct,
        tick_behind_pct,
        ran_s,
        simulated,
    );
    let lateness = e.tick.lateness.as_ref().filter(|l| l.count() > 0);
    SamplerOutcome {
        verdict,
        voices,
        samples: lib.lens.len() as u32,
        notes_per_s,
        notes: player.notes,
        steals: player.steals,
        dropouts: player.dropouts,
        dropout_notes: player.dropout_notes,
        first_dropout_ms: player.first_dropout_ns.map(|t| t as f64 / 1e6),
        first_read_slack: (slack.on_time.count() > 0).then(|| slack.on_time.summary()),
        first_read_slack_hist: slack.on_time.histogram(),
        first_read_slack_p1_ms: slack.p1_ms(),
        first_read_slack_min_ms: slack.min_ns.map(|n| n as f64 / 1e6),
        late_first_reads: slack.late,
        preload_ms,
        preload_bytes: lib.preload_bytes,
        preload_ram_bytes: lib.preload_ram(),
        ring_bytes_per_voice: spec.ring_bytes(),
        ring_ram_bytes: spec.ring_bytes() * u64::from(streams(spec)),
        worst_headroom_pct: 100.0 * player.worst,
        fill: player.series.finish(),
        locate_ms: e.locate_ns as f64 / 1e6,
        ran_ms: e.ran_ns as f64 / 1e6,
        read_bytes: e.read_bytes,
        butler_idle_pct: idle.map(|i| i.whole_pct),
        butler_idle_late_pct: idle.map(|i| i.late_pct),
        shortfall_pct,
        one_hold_pct,
        tick_behind_pct,
        shortcoming,
        min_run_s: min_run_s(spec),
        stopped_early: e.tick.stopped_early,
        read_latency: (e.read_lat.count() > 0).then(|| e.read_lat.summary()),
        read_latency_hist: e.read_lat.histogram(),
        tick_lateness: lateness.map(|l| l.summary()),
        tick_lateness_hist: lateness.and_then(|l| l.histogram()),
        realtime: e.tick.realtime,
        realtime_note: e.tick.realtime_note,
        tick_cpu_pct: if simulated {
            0.0
        } else {
            100.0 * e.tick.cpu_s / ran_s
        },
        butler_cpu_pct: if simulated {
            0.0
        } else {
            100.0 * e.butler_cpu_s / ran_s
        },
        butler_cpu_wait_max_ms: e.butler_cpu_wait_max_ms,
        butler_cpu_wait_ms: e.butler_cpu_wait_ms,
        realtime_allocations: e.tick.allocations,
        peak_rss_bytes,
        interrupted: e.tick.interrupted,
        simulated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::Format;
    use crate::engine::profile::SamplerPolicy;
    use crate::engine::virtual_time::DeviceModel;
    use crate::engine::voices::{Shared, initial_positions, library_lengths};
    use crate::search::{ProbeResult, find_max};
    use std::sync::atomic::AtomicBool;

    fn stereo() -> Format {
        Format::parse("48k/24/stereo").unwrap()
    }

    fn spec(voices: u32, secs: f64) -> StreamSpec {
        let policy = SamplerPolicy::named("trackbench", &stereo())
            .unwrap()
            .policy;
        StreamSpec {
            period_frames: 256,
            duration_ns: (secs * 1e9) as u64,
            margin: 0.2,
            ..StreamSpec::new(stereo(), policy, (voices, 0))
        }
    }

    fn library(preload: u64) -> Arc<Library> {
        let lens = library_lengths(300, 1.0, 10.0, &stereo(), 5);
        let n = lens.len();
        Arc::new(Library::new(lens, (1..=n as u32).collect(), preload, 5))
    }

    #[test]
    fn a_preload_deadline_shorter_than_the_device_latency_drops_out_and_a_generous_one_does_not() {
        let no = AtomicBool::new(false);
        // 300 ms from request to data, however many are queued (a parallel butler overlaps
        // them); 60 KB of stereo 24-bit at 48 kHz last 213 ms.
        let m = DeviceModel::parse("bw=200M,lat=300ms").unwrap();
        let notes = Notes {
            voices: 20,
            notes_per_s: 20.0,
            seed: 1,
        };
        let mut s = spec(20, 8.0);
        s.butler = crate::engine::ButlerMode::Parallel(64);
        let o = simulate(&s, &notes, &library(60 << 10), &m, &no).unwrap();
        assert!(o.dropouts > 0 && o.late_first_reads > 0, "{o:?}");
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(o.first_read_slack_min_ms.unwrap() < 0.0);
        // A preload of 1 MiB lasts 3.6 s: every first read lands with 3.3 s to spare.
        let o = simulate(&s, &notes, &library(1 << 20), &m, &no).unwrap();
        assert_eq!(
            (o.dropouts, o.late_first_reads),
            (0, 0),
            "{:?}",
            o.shortcoming
        );
        let min = o.first_read_slack_min_ms.unwrap();
        assert!((3300.0..3341.0).contains(&min), "{min} ms");
        assert!(o.notes > 100, "{} notes in 8 s", o.notes);
    }

    fn search(m: &DeviceModel, lib: &Arc<Library>, notes_per_s: f64) -> u32 {
        let no = AtomicBool::new(false);
        let secs = min_run_s(&spec(1, 1.0)) + 4.0;
        let c = find_max(50, 5000, 0.01, |v, _| {
            let notes = Notes {
                voices: v,
                notes_per_s,
                seed: 3,
            };
            let mut s = spec(v, secs);
            s.stop_early = true;
            let o = simulate(&s, &notes, lib, m, &no)?;
            Ok(Some(ProbeResult {
                ran_s: None,
                steady_start: false,
                figures: Default::default(),
                ranks: Vec::new(),
                program_locate: false,
                evidence: None,
                storage: None,
                shortcoming: None,
                verdict: o.verdict,
                worst_headroom_pct: o.worst_headroom_pct,
                xruns: o.dropouts,
                estimate: o.capacity_estimate().map(|e| e * f64::from(v)),
            }))
        })
        .unwrap();
        assert!(c.confirmed, "{c:?}");
        c.answer
    }

    #[test]
    fn the_most_voices_stay_just_under_what_the_device_carries() {
        // 20 MB/s; each voice streams 288 kB/s for the part of its note past the preload.
        let bw = 20e6;
        let m = DeviceModel::parse("bw=20000000").unwrap();
        let lib = library(60 << 10);
        let bound = bw / (stereo().bytes_per_second() as f64 * lib.streamed_share());
        let found = f64::from(search(&m, &lib, 0.0));
        assert!(
            found <= bound && found >= 0.9 * bound,
            "found {found} voices, bound {bound:.1}"
        );
        // Note-ons that steal voices waste what their rings read ahead: fewer, never more.
        let stolen = f64::from(search(&m, &lib, 100.0));
        assert!(stolen <= found, "{stolen} with steals, {found} without");
    }

    #[test]
    fn a_live_view_sees_the_voices_rings_not_the_streams_between_notes() {
        // 60 voices with steals on a device that carries them: a voice's ring is judged only
        // once the voice draws on it, against what it could hold of the rest of its note, so
        // the worst stays well off empty (as the player's own series does).
        let no = AtomicBool::new(false);
        let m = DeviceModel::parse("bw=300M,lat=2ms").unwrap();
        let notes = Notes {
            voices: 60,
            notes_per_s: 20.0,
            seed: 1,
        };
        let w = crate::control::LiveRecorder::default();
        let o = simulate_watched(&spec(60, 20.0), &notes, &library(60 << 10), &m, &no, &w).unwrap();
        assert_eq!(o.dropouts, 0);
        let seen = w.0.borrow();
        assert!(seen.len() >= 90, "{} samples", seen.len());
        let worsts: Vec<f64> = seen
            .iter()
            .filter_map(|e| e.play.map(|g| g.worst))
            .collect();
        assert!(worsts.len() >= 90, "{} samples with voices", worsts.len());
        let worst = worsts.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(
            worst >= o.worst_headroom_pct / 100.0 - 0.05,
            "live worst {worst}, the run's {}%",
            o.worst_headroom_pct
        );
    }

    #[test]
    fn ground_lost_is_excused_only_by_idle_time_that_lasts_to_the_end() {
        // As measured on a loop device capped at 21 MB/s: 79 voices (1.4% over what it
        // carries) lost 1.06% over 20 s while the butler was idle 14.6% in all, 0.2% in the
        // second half (the throttle lent time at first); 78 voices lost nothing, idle 90%.
        let s = spec(79, 20.0);
        let lib = library(60 << 10);
        let initial = initial_positions(&lib, 79, 1);
        let notes = Notes {
            voices: 79,
            notes_per_s: 0.0,
            seed: 1,
        };
        let player = VoicePlayer::new(&s, Arc::clone(&lib), Shared::new(79), &notes, &initial);
        let judged_behind = |whole_pct, late_pct, shortfall, tick_behind_pct| {
            let idle = Some(Idle {
                whole_pct,
                late_pct,
            });
            judge(
                &s,
                &player,
                &Slack::default(),
                213.0,
                idle,
                Some(shortfall),
                None,
                tick_behind_pct,
                20.0,
                false,
            )
        };
        let judged =
            |whole_pct, late_pct, shortfall| judged_behind(whole_pct, late_pct, shortfall, None);
        let (verdict, why) = judged(14.6, 0.2, 1.06);
        assert_eq!(verdict, Verdict::Marginal);
        assert!(
            matches!(why, Some(Shortcoming::LosingGround { idle_pct, .. }) if idle_pct == 0.2),
            "{why:?}"
        );
        // Idle to the end: the device had time to spare, and the trend's dip is noise.
        assert_eq!(judged(14.6, 12.0, 1.06), (Verdict::Pass, None));
        assert_eq!(judged(89.8, 89.7, -0.01), (Verdict::Pass, None));
        // Ground lost beyond the search's precision is marginal whatever the idle time.
        assert_eq!(judged(89.8, 89.7, 2.5).0, Verdict::Marginal);
        // A tick that fell behind asked for less than the voices need: however idle the
        // butler, and however well the stock held, the run cannot pass.
        let behind = |pct| judged_behind(89.8, 89.7, -0.01, Some(pct));
        assert_eq!(
            behind(12.0),
            (
                Verdict::Marginal,
                Some(Shortcoming::TickBehind {
                    behind_pct: 12.0,
                    limit_pct: super::super::TICK_BEHIND_LIMIT_PCT
                })
            )
        );
        assert_eq!(behind(0.01), (Verdict::Pass, None));
    }
}
