//! Where a run's verdict looks: the steady part after the first ring (whole refill cycles, at
//! least `MIN_CYCLES` and `MIN_STEADY_S`), the shortest run that can pass, and the early look of
//! a run that may end once its verdict is beyond doubt.

use super::evidence::{AMPLE_IDLE_PCT, spare_min_pct};
use crate::engine::seams::EarlyEnd;
use crate::engine::shape::cycle_and_prefill_s;
use crate::engine::telemetry;
use crate::engine::{FillPoint, StreamSpec, Sustain};

/// Refill cycles after the first ring has played that a run needs before it can pass.
pub const MIN_CYCLES: f64 = 3.0;

/// Seconds of steady running (after the first ring) a run needs before it can pass, however
/// short its refill cycle. Devices are bursty on their own time scales, not the ring's: a
/// kernel throttle grants a 100 ms slice's budget at once after a gap, a drive serves from its
/// cache. On a loop device capped at 21 MB/s (bound 145.8 tracks) with 64K chunks (0.46 s
/// cycles), 147 tracks left the butler idle over 2% of a 1.8 s window, and 0.8% of a 28 s one.
/// Five seconds is what three cycles of the default engine (256K chunks) already last.
pub const MIN_STEADY_S: f64 = 5.0;

/// The butler's idle share, in percent, over the steady part so far at which a run that may end
/// early (`StreamSpec::end_early`) ends at the shortest length that can pass: twice
/// `AMPLE_IDLE_PCT`, at which the rule no longer asks the rings to hold their level, so that the
/// few milliseconds between the butler's look and the run's end cannot take the share below it.
/// On this machine's disk the first probes of this stop's searches, at 0.6-0.8 of the answer,
/// left the butler idle 24-36%: they had run a refill cycle longer than the rule needs.
pub const EARLY_PASS_IDLE_PCT: f64 = 2.0 * AMPLE_IDLE_PCT;

/// The butler's idle share, in percent, over the steady part so far under which a run that may
/// end early (`StreamSpec::end_early`) ends at the shortest length that can pass, failing: a
/// quarter of `spare_min_pct`, so that the rest of the probe would have to leave it idle about
/// four times the rule's least share over a refill cycle to pass. On this machine's disk a
/// steering probe of 7214 tracks (1.05 of that search's answer) left its butler idle 0.0% and
/// drained 4.0% over its full 11.5 s; the ones that lose ground nearer the answer leave it idle
/// 5-9%, and run in full.
pub fn early_fail_idle_pct(simulated: bool) -> f64 {
    spare_min_pct(simulated) / 4.0
}

/// Where a run of `spec` that may end early (`StreamSpec::end_early`) looks at its idle share
/// (the verdict's, [`idle_pct_of`]), in ns of run time: the shortest run that can pass
/// ([`min_run_s`]) with the scheduling slack a search's probes have (`planned_duration_s`).
pub fn early_end_at_ns(spec: &StreamSpec) -> u64 {
    ((min_run_s(spec) + EARLY_END_SLACK_S) * 1e9) as u64
}

/// Seconds past the shortest passing run at which a run that may end early looks: a probe's
/// own slack for scheduling (`planned_duration_s`).
const EARLY_END_SLACK_S: f64 = 0.3;

/// The steady part of the rule in words, for notes and errors: "at least 3 refill cycles and 5 s".
pub fn steady_words() -> String {
    format!("at least {MIN_CYCLES:.0} refill cycles and {MIN_STEADY_S:.0} s")
}

/// The evidence of spare capacity a pass needs, in words, for notes.
pub fn spare_words(simulated: bool) -> String {
    format!(
        "the butler idle at least {}% of the time, and the rings holding their level (within the trend's noise) unless it was idle {AMPLE_IDLE_PCT:.0}% or more",
        spare_min_pct(simulated)
    )
}

/// Whole refill cycles the steady part of a run must span: `MIN_CYCLES`, and at least
/// `MIN_STEADY_S`.
fn steady_cycles(cycle_s: f64) -> f64 {
    if cycle_s <= 0.0 {
        return MIN_CYCLES;
    }
    MIN_CYCLES.max((MIN_STEADY_S / cycle_s - 1e-9).ceil())
}

/// The shortest run that can pass: the first ring played (so the prefill alone cannot carry
/// it), then the steady refill cycles (at least `MIN_CYCLES`, at least `MIN_STEADY_S`) in
/// which the butler's idle share and the fill trend are measured.
pub fn min_run_s(spec: &StreamSpec) -> f64 {
    let (cycle_s, prefill_s) = cycle_and_prefill_s(spec);
    prefill_s.max(cycle_s) + steady_cycles(cycle_s) * cycle_s
}

/// The butler's idle share, in percent, over the whole refill cycles that follow the first
/// ring (counted back from the end of the run); None when fewer than `steady_cycles` fit.
pub(crate) fn idle_pct_of(
    spec: &StreamSpec,
    idle: &telemetry::IdleLog,
    ran_ns: u64,
) -> Option<f64> {
    idle_window_of(spec, ran_ns).map(|from| 100.0 * idle.share(from, ran_ns))
}

/// Where the steady part [`idle_pct_of`] takes its share over begins, in ns of run time: whole
/// refill cycles counted back from `ran_ns`; None when fewer than `steady_cycles` fit.
fn idle_window_of(spec: &StreamSpec, ran_ns: u64) -> Option<u64> {
    let (cycle_s, prefill_s) = cycle_and_prefill_s(spec);
    let (cycle_ns, from_ns) = (
        (cycle_s * 1e9) as u64,
        (prefill_s.max(cycle_s) * 1e9) as u64,
    );
    if cycle_ns == 0 || ran_ns <= from_ns {
        return None;
    }
    let k = (ran_ns - from_ns) / cycle_ns;
    ((k as f64) >= steady_cycles(cycle_s)).then(|| ran_ns - k * cycle_ns)
}

/// Whether a run that may end early (`StreamSpec::end_early`) has shown its verdict beyond
/// doubt at `ran_ns`: the butler idle `EARLY_PASS_IDLE_PCT` or more over the steady part so far
/// and over its later half as well (a pass), or under `fail_below_pct` over it (a failure).
/// The later half, because a device lends time at first: on a loop device capped at 21 MB/s
/// (bound 145.8), a steady start of 150 tracks left the butler idle 23.1% by the shortest run,
/// nearly all of it in the seconds before the throttle began to hold its reads back (it lets
/// every read through at once while the group stays under its rate, and a little beyond for a
/// while), and passed with the rings draining 2.4%; whole runs of 151 were idle 5.7-6.7%.
pub(crate) fn early_verdict_is_clear(
    spec: &StreamSpec,
    idle: &telemetry::IdleLog,
    ran_ns: u64,
    fail_below_pct: f64,
) -> bool {
    let Some(from) = idle_window_of(spec, ran_ns) else {
        return false;
    };
    let whole = 100.0 * idle.share(from, ran_ns);
    let later = 100.0 * idle.share(from + (ran_ns - from) / 2, ran_ns);
    (whole >= EARLY_PASS_IDLE_PCT && later >= EARLY_PASS_IDLE_PCT) || whole < fail_below_pct
}

/// The fill trend after the first ring has played, over whole refill cycles.
pub(crate) fn sustain_of(spec: &StreamSpec, fill: &[FillPoint]) -> Option<Sustain> {
    let (cycle_s, prefill_s) = cycle_and_prefill_s(spec);
    telemetry::sustain(
        fill,
        1000.0 * prefill_s.max(cycle_s),
        1000.0 * cycle_s,
        spec.ring_s(),
        spec.margin,
    )
}

/// The trend of what the rings and the page cache hold together, over the same steady part as
/// the rings' own but averaged over the read-ahead's rhythm (`cycle_s`, at least a refill
/// cycle), and only over `BUFFERED_MIN_CYCLES` of it or more: after a locate whose first read
/// took a whole ring, ardour-small's float files were read ahead a ring at a time, and 85
/// tracks at 0.78 of a 21 MB/s cap showed a loss of 14% over a 10 s steady part averaged by the
/// 1.37 s refill cycle alone; ardour-medium's probes of 1 to 3 tracks, two 10.75 s cycles
/// long, lost 27% (noise 9.5%) as the lead the locate left settled. A search's probes are
/// too short for it; its confirmations and a single run of a minute are not.
pub(crate) fn buffered_sustain_of(
    spec: &StreamSpec,
    points: &[FillPoint],
    cycle_s: f64,
) -> Option<Sustain> {
    let (refill_s, prefill_s) = cycle_and_prefill_s(spec);
    let (from_s, cycle_s) = (prefill_s.max(refill_s), refill_s.max(cycle_s));
    let to_s = points.last()?.t_ms / 1000.0;
    if to_s - from_s < BUFFERED_MIN_CYCLES * cycle_s {
        return None;
    }
    telemetry::sustain(
        points,
        1000.0 * from_s,
        1000.0 * cycle_s,
        spec.ring_s(),
        spec.margin,
    )
}

/// The fewest read-ahead cycles over which the page cache's share of the buffer is judged.
const BUFFERED_MIN_CYCLES: f64 = 4.0;

/// How far behind its schedule a run's tick fell, in percent of the demand: over the steady
/// part's `window` (tick time, ms), or over all of a run stopped for it.
pub(crate) fn tick_behind_of(
    lag: &[telemetry::LagPoint],
    window: Option<(f64, f64)>,
    stopped_behind: bool,
) -> Option<f64> {
    if stopped_behind {
        telemetry::tick_behind_whole_pct(lag)
    } else {
        window.and_then(|(from, to)| telemetry::tick_behind_pct(lag, from, to))
    }
}

/// The early look of a run that may end once its verdict is beyond doubt, as the engine asks it
/// ([`EarlyEnd`]): at the shortest run that can pass ([`early_end_at_ns`]), the butler idle
/// [`EARLY_PASS_IDLE_PCT`] or more (a pass) or under [`early_fail_idle_pct`] (a failure).
pub struct EarlyLook<'a> {
    spec: &'a StreamSpec,
    fail_below_pct: f64,
}

impl<'a> EarlyLook<'a> {
    pub fn new(spec: &'a StreamSpec, simulated: bool) -> Self {
        EarlyLook {
            spec,
            fail_below_pct: early_fail_idle_pct(simulated),
        }
    }
}

impl EarlyEnd for EarlyLook<'_> {
    fn look_at_ns(&self) -> u64 {
        early_end_at_ns(self.spec)
    }
    fn verdict_is_clear(&self, idle: &telemetry::IdleLog, ran_ns: u64) -> bool {
        early_verdict_is_clear(self.spec, idle, ran_ns, self.fail_below_pct)
    }
}
