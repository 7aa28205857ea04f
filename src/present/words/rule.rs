//! What a search's answer holds for, in words: the settings it stands on, the rule each probe
//! was held to, and what tracks starting in phase leave of the disk.

use crate::result::findings::{Finding, SteadyProbe};
use crate::units::fmt_size;
use crate::verdict::windows;

/// The sentence of a finding of this kind (the router, `words`, sends only these).
pub(super) fn words(f: &Finding) -> String {
    match f {
        Finding::InPhaseWave {
            slack_s,
            cycle_s,
            share_pct,
        } => format!(
            "tracks starting in phase all ask for a refill on the same tick, and each must get it within {slack_s:.2} s (before its ring passes the margin) instead of within a refill cycle of {cycle_s:.2} s: these rings let a session in phase use at most {share_pct:.0}% of what the disk streams; bigger rings (--buffer) or --stagger show the rest"
        ),
        Finding::ProbeRule {
            probe_s,
            ring_s,
            simulated,
            head_start_s,
            steady,
        } => probe_rule(*probe_s, *ring_s, *simulated, *head_start_s, steady.as_ref()),
        Finding::TryCompareParallel => "add --compare-parallel to see what a parallel butler (several reads in flight) holds on this target".into(),
        Finding::AnswersHoldFor {
            profile,
            format,
            period_frames,
            ring_bytes,
            chunk_bytes,
            margin_pct,
            staggered,
        } => format!(
            "answers hold for: {profile} at {format}, period {period_frames}, {} rings, {} chunks, margin {margin_pct:.0}%{}",
            fmt_size(*ring_bytes),
            fmt_size(*chunk_bytes),
            if *staggered {
                ", staggered starts"
            } else {
                ", tracks starting in phase"
            }
        ),
        Finding::SuiteRule => format!(
            "each answer is the most tracks that passed a --find-max search: no xrun, no ring below 20%, no drain, {} after a ring and {}; `trackbench play|record|hdr --find-max` searches with other settings",
            windows::spare_words(false),
            windows::steady_words()
        ),
        other => unreachable!("{other:?} is worded elsewhere"),
    }
}

/// How long each probe ran and what it had to show to pass, for a search's notes.
fn probe_rule(
    probe_s: f64,
    ring_s: f64,
    simulated: bool,
    head_start_s: f64,
    steady: Option<&SteadyProbe>,
) -> String {
    let first_ring = format!(
        "one ring ({ring_s:.2} s{})",
        if head_start_s > 0.0 {
            format!(
                ", its first {head_start_s:.2} s, before any ring has room for a read, counted as played: {} start where the first refills fall due",
                if steady.is_some() {
                    "confirmations"
                } else {
                    "probes"
                }
            )
        } else {
            String::new()
        }
    );
    let rule = format!(
        "{}, with no xrun, no ring below the margin, no drain, {} (spare capacity measured, not assumed)",
        windows::steady_words(),
        windows::spare_words(simulated)
    );
    match steady {
        None => format!(
            "each probe ran up to {probe_s:.1} s: a count passes only after {first_ring} and {rule}; a probe that could no longer pass stopped at once"
        ),
        Some(q) => format!(
            "each probe ran up to {:.1} s{}, its tracks' starts spread over one chunk as in a session that has settled: a count passes only after a warm-up of {:.2} s and {rule}; each confirmation, tracks starting in phase as the answer is stated, ran up to {probe_s:.1} s: {first_ring} before the same steady part; a run that could no longer pass stopped at once",
            q.probe_s,
            q.end_early_s.map_or(String::new(), |e| format!(
                " ({e:.1} s where the butler had been idle {:.0}% or more of its steady part by then and of that part's later half, a pass beyond doubt, or under {}% of it, a failure beyond doubt)",
                windows::EARLY_PASS_IDLE_PCT,
                windows::early_fail_idle_pct(simulated)
            )),
            q.warmup_s
        ),
    }
}
