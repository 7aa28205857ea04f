//! A run's verdict in words: why it did not pass, at length for a run's notes and in a few
//! words for a search's trail.

use crate::verdict::{Shortcoming, Verdict, windows};

/// A probe's verdict and, where it did not pass, why in a few words: "marginal (rings
/// draining)". For a search's trail and the report's probe table.
pub(crate) fn probe_verdict(verdict: Verdict, shortcoming: Option<Shortcoming>) -> String {
    let word = verdict.word().to_lowercase();
    match shortcoming {
        // A too-short probe's verdict already says why.
        Some(s) if verdict != Verdict::Pass && s.is_failure() => {
            format!("{word} ({})", brief(&s))
        }
        _ => word,
    }
}

/// Why a probe did not pass, in the few words a search's trail has room for.
fn brief(s: &Shortcoming) -> &'static str {
    match s {
        Shortcoming::Xruns { .. } => "xruns",
        Shortcoming::BelowMargin { .. } => "below the margin",
        Shortcoming::Draining { .. } => "rings draining",
        Shortcoming::NoSpareCapacity { .. } => "no spare capacity",
        Shortcoming::LosingGround { .. } => "losing ground",
        Shortcoming::TooShort { .. } => "too short",
        Shortcoming::Dropouts { .. } => "dropouts",
        Shortcoming::LateFirstRead { .. } => "late first reads",
        Shortcoming::DeviceBehind { .. } => "device behind",
        Shortcoming::TickBehind { .. } => "tick behind",
    }
}

/// Why a run did not pass, in words.
pub(super) fn shortcoming(
    s: &Shortcoming,
    first_xrun_ms: Option<f64>,
    margin_in_s: Option<f64>,
) -> String {
    match *s {
        Shortcoming::Xruns { count } => format!(
            "{count} xrun(s): a ring ran dry (playback) or full (capture){}",
            first_xrun_ms.map_or(String::new(), |t| format!(
                ", the first {t:.0} ms into the run"
            ))
        ),
        Shortcoming::BelowMargin {
            worst_pct,
            margin_pct,
        } => format!(
            "a ring fell to {worst_pct:.1}% of its capacity, below the {margin_pct:.0}% margin: no xrun, but too close to call safe"
        ),
        Shortcoming::TickBehind {
            behind_pct,
            limit_pct,
        } => format!(
            "the audio tick fell behind its schedule: its periods' work for this count did not fit in the time this machine gave it, so it asked for {behind_pct:.1}% less audio than the tracks need in real time (a pass allows {limit_pct:.0}%): this machine cannot play this count, and what the storage did here was done against a lighter demand"
        ),
        Shortcoming::Dropouts { count, notes } => format!(
            "{count} dropout(s) in {notes} note(s): a voice's stream was not in its ring when the voice needed it{}",
            first_xrun_ms.map_or(String::new(), |t| format!(
                ", the first {t:.0} ms into the run"
            ))
        ),
        Shortcoming::LateFirstRead {
            slack_ms,
            needed_ms,
        } => format!(
            "a note's first read landed {}: no dropout, but a pass needs {needed_ms:.1} ms to spare (the margin of the preload)",
            if slack_ms < 0.0 {
                format!("{:.1} ms after its preload ran out", -slack_ms)
            } else {
                format!("with {slack_ms:.1} ms of its preload left")
            }
        ),
        Shortcoming::TooShort { ran_s, needed_s } => format!(
            "too short to tell: the run lasted {ran_s:.1} s, and the prefilled rings alone could carry that; a run can pass only after one ring's length plus {} ({needed_s:.1} s): use --duration {}s or more",
            windows::steady_words(),
            (needed_s + 1.0).ceil()
        ),
        _ => capacity_shortcoming(s, margin_in_s),
    }
}

/// Why a run the capacity rules held back did not pass, in words: what it showed of the
/// storage ([`Shortcoming::is_capacity`]).
fn capacity_shortcoming(s: &Shortcoming, margin_in_s: Option<f64>) -> String {
    match *s {
        Shortcoming::Draining { shortfall_pct } => format!(
            "the butler brought {shortfall_pct:.1}% less audio than the tracks used{}: the rings are draining, so the run counts as marginal even where no ring reached the margin yet",
            margin_in_s.map_or(String::new(), |m| format!(
                " (the average ring would reach the margin about {m:.0} s in)"
            ))
        ),
        Shortcoming::NoSpareCapacity {
            idle_pct,
            needed_pct,
        } => format!(
            "the butler was idle only {idle_pct:.2}% of the steady part of the run (a pass needs {needed_pct}%): the device ran at its limit with nothing to spare, so this count is at or above what it sustains, even where the rings had not drained far yet"
        ),
        Shortcoming::LosingGround {
            shortfall_pct,
            idle_pct,
            ample_pct,
        } => format!(
            "the rings lost ground (the butler brought {shortfall_pct:.2}% less than the streams used, beyond the trend's noise) and the butler was idle only {idle_pct:.1}% of the time (spare capacity needs the rings holding their level or {ample_pct:.0}% idle): a device that lends time after each gap looks idle while it falls behind, so this count is not proven"
        ),
        Shortcoming::DeviceBehind {
            shortfall_pct,
            noise_pct,
        } => format!(
            "the device read {shortfall_pct:.2}% less than the tracks played (the trend's noise: {noise_pct:.2}%): through the page cache the rings stayed full from what the kernel had read ahead, and that lead was being eaten, so this count is not sustained however long the rings last"
        ),
        other => unreachable!("{other:?} is a run's own shortcoming"),
    }
}
