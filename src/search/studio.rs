//! A search run by every workstation of a studio at once, as one search: each probe is run by
//! every rank together, and its verdict is the studio's — the worst of the ranks' own
//! deadlines, then the capacity rules on the storage's evidence pooled from every rank's (they
//! share one storage). Alone, exactly [`find_max`].

use super::{ProbeEvidence, ProbeResult, find_max};
use crate::error::{Error, Result};
use crate::result::search::{Capacity, RankFigures};
use crate::studio::{World, gather};
use crate::verdict::evidence::CapacityEvidence;
use crate::verdict::{Shortcoming, Verdict};
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;

/// [`find_max`] run by every rank of `world` at once, as one search: the ranks start from the
/// least of their first guesses and limits, and each probe is run by all of them together with
/// the studio's verdict (see [`shared_probe`]), so every rank takes the same steps.
/// Alone, exactly `find_max`.
pub fn find_max_shared(
    world: &dyn World,
    cancel: &AtomicBool,
    first_guess: u32,
    limit: u32,
    tolerance: f64,
    mut probe: impl FnMut(u32, bool) -> Result<Option<ProbeResult>>,
) -> Result<Capacity> {
    let first = crate::studio::least(world, f64::from(first_guess), cancel)? as u32;
    let limit = crate::studio::least(world, f64::from(limit), cancel)? as u32;
    find_max(first, limit.max(1), tolerance, |n, confirm| {
        shared_probe(world, cancel, n, || probe(n, confirm))
    })
}

/// What a rank says of its probe.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum RankProbe {
    Ran(SharedResult),
    Interrupted,
    Failed(String),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SharedResult {
    verdict: Verdict,
    worst_headroom_pct: f64,
    xruns: u64,
    estimate: Option<f64>,
    figures: std::collections::BTreeMap<String, f64>,
    program_locate: bool,
    #[serde(default)]
    evidence: Option<ProbeEvidence>,
    #[serde(default)]
    shortcoming: Option<Shortcoming>,
}

/// One probe of `count`, run by every rank at once: the ranks meet before it (so files are laid
/// out and rings prefilled together, and the clocks start together inside the run), and its
/// verdict is the studio's ([`combine`]) — one xrun on one workstation fails the studio. A rank
/// that failed makes every rank fail with its error; one that was interrupted stops them all
/// (`Ok(None)`). Alone, the probe runs as it is.
pub fn shared_probe(
    world: &dyn World,
    cancel: &AtomicBool,
    count: u32,
    probe: impl FnOnce() -> Result<Option<ProbeResult>>,
) -> Result<Option<ProbeResult>> {
    if world.is_alone() {
        return probe();
    }
    match world.barrier("probe", cancel) {
        Err(Error::Interrupted) => return Ok(None),
        r => r?,
    }
    let mine = match probe() {
        Ok(Some(r)) => RankProbe::Ran(SharedResult {
            verdict: r.verdict,
            worst_headroom_pct: r.worst_headroom_pct,
            xruns: r.xruns,
            estimate: r.estimate,
            figures: r.figures,
            program_locate: r.program_locate,
            evidence: r.evidence,
            shortcoming: r.shortcoming,
        }),
        Ok(None) | Err(Error::Interrupted) => RankProbe::Interrupted,
        Err(e) => RankProbe::Failed(e.to_string()),
    };
    let all = match gather(world, "probe verdict", &mine, cancel) {
        Err(Error::Interrupted) => return Ok(None),
        r => r?,
    };
    combine(&all, count)
}

/// Why a studio's probe came out `worst`: the reason of the first rank whose verdict by
/// `verdict_of` (its own deadlines, or all its rules) is that; none for a pass.
fn reason_of(
    ran: &[&SharedResult],
    worst: Verdict,
    verdict_of: impl Fn(&SharedResult) -> Verdict,
) -> Option<Shortcoming> {
    if worst == Verdict::Pass {
        return None;
    }
    ran.iter()
        .find(|r| verdict_of(r) == worst)
        .and_then(|r| r.shortcoming)
}

/// The studio's verdict from every rank's probe of `count`: the lowest headroom and every xrun;
/// the worst of the ranks' own verdicts (an xrun or a ring below the margin on any workstation),
/// then the capacity rules on the storage's evidence, pooled from every rank's (they share it:
/// one rank's trend moves with its turn at the storage, see [`CapacityEvidence::pooled`]), and
/// the count the pooled evidence says the storage carries. Where a rank's workload gives no
/// evidence, the worst of the ranks' verdicts and the least estimate (each workstation gets its
/// share of the storage: the tightest share is what every one of them can count on).
fn combine(all: &[RankProbe], count: u32) -> Result<Option<ProbeResult>> {
    if let Some((rank, msg)) = all.iter().enumerate().find_map(|(i, p)| match p {
        RankProbe::Failed(m) => Some((i, m)),
        _ => None,
    }) {
        return Err(Error::RankFailed {
            rank: rank as u32,
            detail: msg.clone(),
        });
    }
    let ran: Vec<&SharedResult> = all
        .iter()
        .filter_map(|p| match p {
            RankProbe::Ran(r) => Some(r),
            _ => None,
        })
        .collect();
    if ran.len() < all.len() || ran.is_empty() {
        return Ok(None);
    }
    let evidence: Option<Vec<ProbeEvidence>> = ran.iter().map(|r| r.evidence).collect();
    let (verdict, shortcoming, estimate, storage) = match evidence {
        Some(ev) => {
            let own = ev.iter().map(|e| e.own).max().unwrap_or(Verdict::Fail);
            let caps: Vec<CapacityEvidence> = ev.iter().map(|e| e.capacity).collect();
            let storage = CapacityEvidence::pooled(&caps);
            // The capacity rules come after a rank's xruns and margin, before its length.
            let (verdict, shortcoming) = match storage.and_then(|s| s.shortcoming()) {
                Some(s) if own <= Verdict::Marginal => (Verdict::Marginal, Some(s)),
                Some(_) | None => (
                    own,
                    reason_of(&ran, own, |r| r.evidence.map_or(r.verdict, |e| e.own)),
                ),
            };
            let estimate = (own == Verdict::Pass)
                .then(|| storage.and_then(|s| s.share()))
                .flatten()
                .map(|share| share * f64::from(count));
            (verdict, shortcoming, estimate, storage)
        }
        None => {
            let estimates: Vec<f64> = ran.iter().filter_map(|r| r.estimate).collect();
            let verdict = ran.iter().map(|r| r.verdict).max().unwrap_or(Verdict::Fail);
            (
                verdict,
                reason_of(&ran, verdict, |r| r.verdict),
                // Only when every rank could tell: one rank's silence says nothing of its share.
                (estimates.len() == ran.len())
                    .then(|| estimates.into_iter().fold(f64::INFINITY, f64::min)),
                None,
            )
        }
    };
    Ok(Some(ProbeResult {
        ran_s: None,
        steady_start: false,
        verdict,
        shortcoming,
        worst_headroom_pct: ran
            .iter()
            .map(|r| r.worst_headroom_pct)
            .fold(f64::INFINITY, f64::min),
        xruns: ran.iter().map(|r| r.xruns).sum(),
        estimate,
        figures: Default::default(),
        program_locate: ran.iter().all(|r| r.program_locate),
        ranks: ran
            .iter()
            .enumerate()
            .map(|(rank, r)| RankFigures {
                rank: rank as u32,
                verdict: r.evidence.map_or(r.verdict, |e| e.own),
                figures: r.figures.clone(),
                capacity: r.evidence.map(|e| e.capacity),
            })
            .collect(),
        evidence: None,
        storage,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(v: Verdict, headroom: f64, xruns: u64, est: Option<f64>) -> RankProbe {
        RankProbe::Ran(SharedResult {
            verdict: v,
            worst_headroom_pct: headroom,
            xruns,
            estimate: est,
            figures: Default::default(),
            program_locate: false,
            evidence: None,
            shortcoming: None,
        })
    }

    /// A rank of a stream probe that passed by its own deadlines, with a fill trend and an
    /// idle share (the real-run thresholds).
    fn streamed(own: Verdict, shortfall: f64, noise: f64, idle: f64) -> RankProbe {
        let capacity = CapacityEvidence {
            shortfall_pct: Some(shortfall),
            noise_pct: noise,
            idle_pct: Some(idle),
            ground_idle_pct: Some(idle),
            spare_min_pct: 2.0,
            buffered_shortfall_pct: None,
            buffered_noise_pct: 0.0,
            draining_sigmas: 0.0,
            one_hold_pct: None,
        };
        let verdict = match capacity.shortcoming() {
            Some(_) if own == Verdict::Pass => Verdict::Marginal,
            _ => own,
        };
        RankProbe::Ran(SharedResult {
            verdict,
            worst_headroom_pct: 50.0,
            xruns: u64::from(own == Verdict::Fail),
            estimate: None,
            figures: Default::default(),
            program_locate: false,
            evidence: Some(ProbeEvidence { own, capacity }),
            // A rank's own rules come first, as a real run's do.
            shortcoming: match own {
                Verdict::Fail => Some(Shortcoming::Xruns { count: 1 }),
                Verdict::Marginal => Some(Shortcoming::BelowMargin {
                    worst_pct: 10.0,
                    margin_pct: 25.0,
                }),
                Verdict::TooShort => Some(Shortcoming::TooShort {
                    ran_s: 1.0,
                    needed_s: 5.0,
                }),
                Verdict::Pass => capacity.shortcoming(),
            },
        })
    }

    #[test]
    fn a_studio_judges_its_storage_by_every_ranks_evidence_together() {
        use Verdict::*;
        // As three ranks measured at 0.9 of a capped storage's bound: one rank's rings lost
        // 4.59% while another's gained 4.23%, every butler idle over 13%. The storage kept up.
        // Ranks that kept their own deadlines, each (shortfall %, idle %) with a noise of 0.8%.
        let studio = |ranks: &[(f64, f64)], count| {
            let all: Vec<RankProbe> = ranks
                .iter()
                .map(|&(sf, idle)| streamed(Pass, sf, 0.8, idle))
                .collect();
            combine(&all, count).unwrap().unwrap()
        };
        let r = studio(&[(-0.37, 13.0), (4.59, 14.1), (-4.23, 22.4)], 44);
        assert_eq!(r.verdict, Pass);
        let st = r.storage.unwrap();
        assert!((st.shortfall_pct.unwrap() - (-0.37 + 4.59 - 4.23) / 3.0).abs() < 1e-9);
        assert_eq!(
            st.idle_pct,
            Some(13.0),
            "the storage rests no more than the least"
        );
        assert!((st.noise_pct - (3.0f64 * 0.64).sqrt() / 3.0).abs() < 1e-9);
        assert_eq!(r.ranks[1].verdict, Pass, "its own deadlines held");
        // The storage's estimate: 13% idle bounds it from above.
        assert!((r.estimate.unwrap() - 44.0 / 0.87).abs() < 1e-6);
        // At 1.03 of the bound: the mean drains, whatever one rank's trend says.
        let r = studio(&[(0.05, 5.6), (12.12, 0.0), (-4.18, 0.2)], 50);
        assert_eq!(r.verdict, Marginal);
        assert!(
            matches!(r.shortcoming, Some(Shortcoming::Draining { shortfall_pct }) if (shortfall_pct - 7.99 / 3.0).abs() < 1e-9),
            "the pooled evidence says why, not one rank's: {:?}",
            r.shortcoming
        );
        let share = 1.0 - (0.05 + 12.12 - 4.18) / 300.0;
        assert!((r.estimate.unwrap() - 50.0 * share).abs() < 1e-6);
        // Every rank gaining, but one butler never idle: the storage had nothing to spare.
        let r = combine(
            &[
                streamed(Pass, -1.0, 0.1, 30.0),
                streamed(Pass, -1.0, 0.1, 1.0),
            ],
            10,
        )
        .unwrap()
        .unwrap();
        assert_eq!(r.verdict, Marginal);
        assert!(
            matches!(r.shortcoming, Some(Shortcoming::NoSpareCapacity { idle_pct, .. }) if idle_pct == 1.0),
            "{:?}",
            r.shortcoming
        );
        // A rank's own deadlines are its own: an xrun fails the studio, a ring below the
        // margin makes it marginal, a rank too short to tell leaves it too short.
        for (own, studio) in [(Fail, Fail), (Marginal, Marginal), (TooShort, TooShort)] {
            let short = streamed(own, 0.0, 0.1, 20.0);
            let RankProbe::Ran(ref rank) = short else {
                unreachable!("streamed ran")
            };
            let reason = rank.shortcoming;
            let r = combine(&[streamed(Pass, 0.0, 0.1, 20.0), short], 10)
                .unwrap()
                .unwrap();
            assert_eq!(r.verdict, studio, "{own:?}");
            assert_eq!(r.estimate, None, "{own:?}");
            assert_eq!(r.shortcoming, reason, "the short rank's reason: {own:?}");
        }
        // Storage that could not keep up, under a rank that failed its own deadlines: the
        // xruns are the reason given, as the verdict is theirs.
        let r = combine(
            &[streamed(Pass, 9.0, 0.1, 0.0), streamed(Fail, 9.0, 0.1, 0.0)],
            10,
        )
        .unwrap()
        .unwrap();
        assert_eq!(r.verdict, Fail);
        assert_eq!(r.shortcoming, Some(Shortcoming::Xruns { count: 1 }));
    }

    #[test]
    fn the_studio_verdict_is_the_worst_of_its_workstations() {
        let r = combine(
            &[
                ran(Verdict::Pass, 40.0, 0, Some(120.0)),
                ran(Verdict::Fail, 0.0, 3, Some(90.0)),
                ran(Verdict::Marginal, 12.0, 0, Some(100.0)),
            ],
            100,
        )
        .unwrap()
        .unwrap();
        assert_eq!(r.verdict, Verdict::Fail);
        assert_eq!(r.xruns, 3);
        assert_eq!(r.worst_headroom_pct, 0.0);
        assert_eq!(r.estimate, Some(90.0));
        let r = combine(
            &[
                ran(Verdict::Pass, 40.0, 0, Some(120.0)),
                ran(Verdict::TooShort, 30.0, 0, None),
            ],
            100,
        )
        .unwrap()
        .unwrap();
        assert_eq!(r.verdict, Verdict::TooShort);
        assert_eq!(r.estimate, None, "one rank could not tell");
    }

    #[test]
    fn one_interrupted_rank_stops_the_search_and_one_failed_rank_fails_it() {
        assert!(
            combine(
                &[ran(Verdict::Pass, 40.0, 0, None), RankProbe::Interrupted],
                1
            )
            .unwrap()
            .is_none()
        );
        let e = combine(
            &[
                ran(Verdict::Pass, 40.0, 0, None),
                RankProbe::Interrupted,
                RankProbe::Failed("no space left".into()),
            ],
            1,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("rank 2") && e.to_string().contains("no space left"),
            "{e}"
        );
    }

    #[test]
    fn alone_a_probe_runs_as_it_is() {
        let c = AtomicBool::new(true);
        let r = shared_probe(&crate::studio::Alone, &c, 1, || Ok(None)).unwrap();
        assert!(r.is_none());
    }
}
