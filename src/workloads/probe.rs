//! What the streaming workloads (tracks and voices) share, written once against a judged run
//! ([`Judged`]): a run as a search's probe, the notes of a run that do not depend on what
//! streamed, a search's trail and its report in the result, and the most a search may try.

use super::Env;
use crate::control::Live;
use crate::engine::StreamSpec;
use crate::error::{Error, Result};
use crate::result::Metric;
use crate::result::findings::{Finding, TrailStep, butler_cpu_wait, drain_within_one_hold};
use crate::result::search::{Capacity, CapacityReport, SearchLimit};
use crate::search::{ProbeEvidence, ProbeResult, figures_of};
use crate::verdict::Judged;

/// A judged run of `count` as a search's probe (what `find_max` hears back, its figures from
/// `figures`), with the live view told its verdict; an interrupted run stops the search.
pub fn probe_of<O: Judged>(
    env: &Env<'_>,
    count: u32,
    confirmation: bool,
    run: Result<O>,
    figures: impl FnOnce(&O) -> Vec<Metric>,
    (steady_start, program_locate): (bool, bool),
) -> Result<Option<ProbeResult>> {
    let o = match run {
        Ok(o) if o.interrupted() => return Ok(None),
        Ok(o) => o,
        Err(Error::Interrupted) => return Ok(None),
        Err(e) => return Err(e),
    };
    env.ctl.progress.live(&Live::Probe {
        count,
        verdict: o.verdict().word(),
        confirmation,
    });
    Ok(Some(ProbeResult {
        ran_s: Some(o.ran_s()),
        steady_start,
        verdict: o.verdict(),
        shortcoming: o.shortcoming(),
        worst_headroom_pct: o.worst_headroom_pct(),
        xruns: o.missed(),
        estimate: o.capacity_estimate().map(|share| share * f64::from(count)),
        figures: figures_of(&figures(&o)),
        ranks: Vec::new(),
        program_locate,
        evidence: Some(ProbeEvidence {
            own: o.own_verdict(),
            capacity: o.capacity_evidence(),
        }),
        storage: None,
    }))
}

/// The tick was not real-time, where it was not.
pub fn not_real_time(o: &impl Judged) -> Option<Finding> {
    o.realtime_note().map(|reason| Finding::NotRealTime {
        reason: reason.to_string(),
    })
}

/// The tick woke up more than half a period (`period_us`) late: the machine's trouble, not the
/// disk's.
pub fn late_tick(o: &impl Judged, period_us: f64) -> Option<Finding> {
    o.tick_lateness()
        .filter(|l| l.max_us > period_us / 2.0)
        .map(|l| Finding::LateTick {
            max_us: l.max_us,
            period_us,
        })
}

/// A run's notes on its verdict: the butler waiting for a CPU where it mattered (against what it
/// keeps buffered, `budget_ms`), then why the run did not pass (its first missed deadline, and
/// where the rings drained, when the average would reach the margin: `margin_in_s`), or what it
/// had to spare and a drain one hold accounts for.
pub fn verdict_notes(o: &impl Judged, budget_ms: f64, margin_in_s: Option<f64>) -> Vec<Finding> {
    let (wait_max_ms, wait_ms) = o.butler_cpu_wait_ms();
    let failed = o.shortcoming().is_some_and(|s| s.is_failure());
    let mut f: Vec<Finding> = butler_cpu_wait(wait_max_ms, wait_ms, o.ran_s(), budget_ms, failed)
        .into_iter()
        .collect();
    if let Some(shortcoming) = o.shortcoming() {
        f.push(Finding::DidNotPass {
            shortcoming,
            first_xrun_ms: o.first_missed_ms(),
            margin_in_s,
        });
    } else if let Some(idle_pct) = o.butler_idle_pct() {
        f.push(Finding::SpareCapacity { idle_pct });
        f.extend(drain_within_one_hold(
            &o.capacity_evidence(),
            o.longest_hold_ms(),
        ));
    }
    f
}

/// The notes of a run through the page cache, as `profile`'s program reads: the kernel's
/// read-ahead is part of the cost; a search's confirmations run `confirm_s` where they run
/// long; and a platform that cannot drop a file's pages may serve a run from what an earlier
/// one left.
pub fn page_cache_notes(profile: &str, confirm_s: Option<f64>) -> Vec<Finding> {
    let profile = profile.to_string();
    let mut f = vec![Finding::ThroughPageCache {
        profile: profile.clone(),
    }];
    if let Some(confirm_s) = confirm_s {
        f.push(Finding::PageCacheSearchConfirmedLong {
            profile: profile.clone(),
            confirm_s,
        });
    }
    if !crate::platform::CAN_DROP_PAGES {
        f.push(Finding::PagesKept { profile });
    }
    f
}

/// A search's trail of probes, as the note `label` shows under its answer.
pub fn search_trail(label: &str, cap: &Capacity, limited_by: Option<SearchLimit>) -> Finding {
    Finding::SearchTrail {
        label: label.to_string(),
        probes: cap
            .probes
            .iter()
            .map(|p| TrailStep {
                count: p.count,
                verdict: p.verdict,
                confirmation: p.confirmation,
                shortcoming: p.shortcoming,
            })
            .collect(),
        answer: cap.answer,
        confirmed: cap.confirmed,
        limited_by,
    }
}

/// A search of `spec`'s shape as the result keeps it: its answer (`play` and `record` tracks
/// or voices), what stopped it short of a failing count, and every probe.
pub fn report(
    label: String,
    spec: &StreamSpec,
    (play_tracks, record_tracks): (u32, u32),
    limited_by: Option<SearchLimit>,
    capacity: Capacity,
) -> CapacityReport {
    CapacityReport {
        label,
        profile: spec.policy.profile.clone(),
        butler: spec.butler.to_string(),
        play_tracks,
        record_tracks,
        period_frames: Some(spec.period_frames),
        margin_pct: Some(100.0 * spec.margin),
        limited_by,
        capacity,
    }
}

/// The most a search may try, and what sets it: the tightest of `limits` and the engine's own
/// ceiling (`engine_max`), the first named where two are as tight.
pub fn tightest(
    engine_max: u64,
    limits: impl IntoIterator<Item = (u64, SearchLimit)>,
) -> (u64, SearchLimit) {
    limits
        .into_iter()
        .fold((engine_max, SearchLimit::Engine), |best, l| {
            if l.0 < best.0 { l } else { best }
        })
}
