//! How a run is judged: the verdict, why a run fell short of a pass, and the rules behind both —
//! the run's own deadlines (xruns, the margin, its length, the tick's schedule) and the capacity
//! rules on what it says of the storage (`evidence`), over the windows the rules look at
//! (`windows`). A fixed set of tracks' run (`tracks`) and a sampler's (`voices`) are judged here
//! from what the engine measured.

pub mod evidence;
pub mod tracks;
pub mod voices;
pub mod windows;

use crate::stats::LatencySummary;
use evidence::CapacityEvidence;
use serde::{Deserialize, Serialize};

/// The [`Judged`] answers both outcomes give from fields of the same names.
macro_rules! judged_by_fields {
    () => {
        fn verdict(&self) -> Verdict {
            self.verdict
        }
        fn shortcoming(&self) -> Option<Shortcoming> {
            self.shortcoming
        }
        fn worst_headroom_pct(&self) -> f64 {
            self.worst_headroom_pct
        }
        fn ran_s(&self) -> f64 {
            self.ran_ms / 1000.0
        }
        fn interrupted(&self) -> bool {
            self.interrupted
        }
        fn butler_idle_pct(&self) -> Option<f64> {
            self.butler_idle_pct
        }
        fn capacity_estimate(&self) -> Option<f64> {
            Self::capacity_estimate(self)
        }
        fn own_verdict(&self) -> Verdict {
            Self::own_verdict(self)
        }
        fn capacity_evidence(&self) -> CapacityEvidence {
            Self::capacity_evidence(self)
        }
        fn longest_hold_ms(&self) -> Option<f64> {
            Self::longest_hold_ms(self)
        }
        fn realtime_note(&self) -> Option<&str> {
            self.realtime_note.as_deref()
        }
        fn tick_lateness(&self) -> Option<&LatencySummary> {
            self.tick_lateness.as_ref()
        }
        fn butler_cpu_wait_ms(&self) -> (Option<f64>, Option<f64>) {
            (self.butler_cpu_wait_max_ms, self.butler_cpu_wait_ms)
        }
    };
}
use judged_by_fields;

/// What every judged run says, whatever streamed (tracks or voices): its verdict and why,
/// what it missed and how close it came, how long it ran, what it says of the storage, and
/// what the machine did to it. The workloads' probes, notes and figures that do not depend on
/// what streamed are written once against it (`workloads::probe`).
pub trait Judged {
    fn verdict(&self) -> Verdict;
    /// Why the verdict is not a pass.
    fn shortcoming(&self) -> Option<Shortcoming>;
    /// Lowest headroom of any ring, in percent of its capacity.
    fn worst_headroom_pct(&self) -> f64;
    /// Deadlines missed: xruns, or a sampler's dropouts.
    fn missed(&self) -> u64;
    /// When the first deadline was missed, in ms into the run.
    fn first_missed_ms(&self) -> Option<f64>;
    /// Seconds the run streamed after its locate.
    fn ran_s(&self) -> f64;
    fn interrupted(&self) -> bool;
    /// Share of the steady part in which the butler had nothing to do, in percent.
    fn butler_idle_pct(&self) -> Option<f64>;
    /// What the device carries, as a share of this run's count, where the run can tell.
    fn capacity_estimate(&self) -> Option<f64>;
    /// The verdict apart from the capacity rules.
    fn own_verdict(&self) -> Verdict;
    fn capacity_evidence(&self) -> CapacityEvidence;
    /// The run's longest single hold, in ms.
    fn longest_hold_ms(&self) -> Option<f64>;
    /// Why the tick was not real-time, where it was not.
    fn realtime_note(&self) -> Option<&str>;
    /// The audio tick's wake-up lateness (real runs).
    fn tick_lateness(&self) -> Option<&LatencySummary>;
    /// The butler's longest wait for a CPU and all its waiting, in ms (real runs on Linux).
    fn butler_cpu_wait_ms(&self) -> (Option<f64>, Option<f64>);
}

/// The outcome of a run: pass, too short to tell, marginal (a ring fell below the margin, the
/// rings drained, or the device had nothing to spare) or fail (any xrun).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    /// Nothing went wrong, but the run was too short for that to mean anything: the prefilled
    /// rings alone could have carried it.
    TooShort,
    Marginal,
    Fail,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::TooShort => "TOO SHORT",
            Verdict::Marginal => "MARGINAL",
            Verdict::Fail => "FAIL",
        }
    }
}

/// Why a run did not pass: a structured finding that presenters turn into words.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Shortcoming {
    /// Underruns or overruns.
    Xruns { count: u64 },
    /// A ring fell below the margin.
    BelowMargin { worst_pct: f64, margin_pct: f64 },
    /// The butler brought measurably less than the tracks used.
    Draining { shortfall_pct: f64 },
    /// The butler was hardly ever idle: the device ran at its limit, with nothing to spare.
    NoSpareCapacity { idle_pct: f64, needed_pct: f64 },
    /// The rings lost ground (by less than `Draining` needs), and the butler's idle share was
    /// too small to outweigh it: idle time a bursty device lent, not spare capacity.
    LosingGround {
        shortfall_pct: f64,
        idle_pct: f64,
        ample_pct: f64,
    },
    /// The run ended before it could tell (it needs `needed_s`).
    TooShort { ran_s: f64, needed_s: f64 },
    /// Sampler voices had nothing to play: periods, and the notes they fell in.
    Dropouts { count: u64, notes: u64 },
    /// A note's first read landed with less of its preload left than the margin.
    LateFirstRead { slack_ms: f64, needed_ms: f64 },
    /// Through the page cache: the device read less than the tracks played, beyond the trend's
    /// noise (the rings stayed full from the kernel's read-ahead, which was eaten instead).
    DeviceBehind { shortfall_pct: f64, noise_pct: f64 },
    /// The audio tick fell behind its schedule (its periods' work did not fit in the CPU time
    /// it was given): it asked for `behind_pct` less than the demand stated, so nothing the run saw
    /// of the storage counts for that demand.
    TickBehind { behind_pct: f64, limit_pct: f64 },
}

impl Shortcoming {
    /// Whether the run failed, rather than ending too soon to tell.
    pub fn is_failure(&self) -> bool {
        !matches!(self, Shortcoming::TooShort { .. })
    }
}

impl Shortcoming {
    /// `TickBehind` where a tick `behind_pct` behind its schedule is beyond the limit
    /// (`TICK_BEHIND_LIMIT_PCT`).
    pub fn tick_behind(behind_pct: Option<f64>) -> Option<Shortcoming> {
        behind_pct
            .filter(|&b| b > TICK_BEHIND_LIMIT_PCT)
            .map(|behind_pct| Shortcoming::TickBehind {
                behind_pct,
                limit_pct: TICK_BEHIND_LIMIT_PCT,
            })
    }

    /// One of the capacity rules' ([`CapacityEvidence::shortcoming`]): what the storage could
    /// not carry, not a deadline the run itself missed.
    pub fn is_capacity(&self) -> bool {
        matches!(
            self,
            Shortcoming::Draining { .. }
                | Shortcoming::NoSpareCapacity { .. }
                | Shortcoming::LosingGround { .. }
                | Shortcoming::DeviceBehind { .. }
        )
    }
}

/// A run whose rings drain by more than this share of the demand is marginal even if no ring
/// reached the margin yet: it only ran too short to get there.
/// Two percent: the precision a search's answer is given to, and above the noise of a steady
/// run on a shared virtual disk (-3.5..-0.5% measured at 65..100% of the answer).
pub const SHORTFALL_LIMIT_PCT: f64 = 2.0;

/// A run whose tick fell behind its schedule by more than this share of the demand
/// (`Shortcoming::TickBehind`) cannot pass: it asked the storage for that much less than it
/// states. The drain's limit, for the same reason: a tick behind by b and rings draining by d
/// lose about b + d of the demand, and either alone is held to the precision of the answer.
/// On this machine, 11,000 tracks' tick before the prefetch (docs/lab/search-time.md) took 16.98 s for a
/// 14.9 s run, 12% behind; 5000 tracks' tick, which kept up (woken 61 ms late at worst), was
/// 0.00005% behind.
pub const TICK_BEHIND_LIMIT_PCT: f64 = SHORTFALL_LIMIT_PCT;

/// A run's verdict apart from the capacity rules: its own xruns, margin and length. A run the
/// capacity rules alone held back would otherwise have passed, or been too short to tell
/// (`idle_pct` None).
pub fn own_verdict(
    verdict: Verdict,
    shortcoming: Option<&Shortcoming>,
    idle_pct: Option<f64>,
) -> Verdict {
    match shortcoming {
        Some(s) if s.is_capacity() && idle_pct.is_none() => Verdict::TooShort,
        Some(s) if s.is_capacity() => Verdict::Pass,
        _ => verdict,
    }
}
