//! What a run observed besides its figures: structured findings, each a kind and its values,
//! which presenters put into words (`report::words`). The result document keeps them as tagged
//! objects; the finished sentences of older documents load as [`Finding::Text`].

use crate::result::search::SearchLimit;
use crate::verdict::Shortcoming;
use crate::verdict::Verdict;
use serde::{Deserialize, Deserializer, Serialize};

/// Which way data moved, for findings about a direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Way {
    Read,
    Write,
}

/// One probe of a search, as its trail shows it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrailStep {
    pub count: u32,
    pub verdict: Verdict,
    pub confirmation: bool,
    /// Why a probe that did not pass did not, where the run could say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortcoming: Option<Shortcoming>,
}

/// One observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    // How the figures were measured.
    /// The filesystem keeps files in RAM: the figures are RAM speed.
    MemoryFilesystem { filesystem: String },
    /// O_DIRECT was refused: measured through the page cache.
    DirectRefused { filesystem: String },
    /// `--cached`: through the page cache on purpose.
    CachedOnPurpose,
    /// A streaming profile that reads through the page cache, as its program does.
    ThroughPageCache { profile: String },
    /// A page-cache profile's playback search: checked against its program on a device capped in
    /// bytes per second, not on one capped in I/Os per second, where it answered 224 and 536
    /// tracks while Ardour played 90 and failed at 120 (docs/lab/profiles.md, "An IOPS cap").
    /// Documents from before confirmations were located as the program keep it.
    PageCacheSearchUnchecked { profile: String },
    /// A page-cache profile's playback search: its confirmations located as the program does,
    /// its other probes quickly, so that its answer passed both ways (docs/lab/profiles.md,
    /// "An IOPS cap").
    PageCacheSearchLocatedBothWays { profile: String },
    /// A page-cache profile's playback search: its probes located quickly but leaving the
    /// kernel's read-ahead as the program's own locate does, its confirmations located as the
    /// program does and run `confirm_s` seconds, long enough that the read-ahead's lead and the
    /// program's large refills cannot hide a device that falls behind (docs/lab/profiles.md, "The
    /// quick locate's read-ahead"). Documents from before keep `PageCacheSearchLocatedBothWays`.
    PageCacheSearchConfirmedLong { profile: String, confirm_s: f64 },
    /// Through the page cache on a platform that cannot drop a file's cached pages (macOS,
    /// Windows): a run may read from RAM what an earlier run of the same files left cached.
    PagesKept { profile: String },
    /// The first of several runs stood apart from the rest (signed, percent of their median).
    FirstRunOutlier { row: String, deviation_pct: f64 },

    // Classic workloads.
    /// seq: what the sequential read rate alone predicts.
    NaiveCount { tracks: f64 },
    /// sweep: the block size that carries the most tracks.
    BestBlock {
        block: String,
        tracks: f64,
        ram_bytes: u64,
        files: u32,
    },
    /// sweep: block sizes at which the tracks counted would need more buffer memory than the
    /// process may pin (`ram_bytes` each, against `limit_bytes`).
    BuffersBeyondMemory {
        blocks: Vec<String>,
        ram_bytes: Vec<u64>,
        limit_bytes: u64,
    },
    /// zones: the end's rate against the start's.
    ZoneFalloff {
        end_pct: f64,
        per_point_bytes: u64,
        block_bytes: u64,
    },
    /// zones on a file: positions follow the filesystem's layout.
    FileLayout,
    /// seek: faster than half a turn, so no platter was waited for.
    NoPlatterWait {
        access_ms: f64,
        rpm: u32,
        half_turn_ms: f64,
    },
    /// seek: the rotational share of the access time.
    RotationShare {
        access_ms: f64,
        rpm: u32,
        half_turn_ms: f64,
    },
    /// access: same-sector and random reads against sequential.
    RelativeToSequential {
        same_sector_pct: f64,
        random_pct: f64,
    },

    // One streaming run.
    /// `--buffer` was raised to the engine's fewest chunks.
    RingRaised {
        asked_s: f64,
        min_chunks: u64,
        chunk_bytes: u64,
        ring_bytes: u64,
        ring_s: f64,
    },
    /// SCHED_FIFO or mlockall was refused.
    NotRealTime { reason: String },
    /// The locate took long enough to call a session start stuck.
    LongLocate { locate_ms: f64 },
    /// The audio tick woke up late by more than half a period.
    LateTick { max_us: f64, period_us: f64 },
    /// The butler's thread, ready to run, waited for a CPU long enough to matter against its
    /// deadline (`budget_ms`: a ring's length for a track, the preload's for a sampler voice):
    /// the machine was busy, and a run that failed (`failed`: not one that ended too soon to
    /// tell) may have failed on the CPU.
    ButlerWaitedForCpu {
        max_ms: f64,
        total_ms: f64,
        ran_s: f64,
        budget_ms: f64,
        failed: bool,
    },
    /// Why a run did not pass.
    DidNotPass {
        shortcoming: Shortcoming,
        #[serde(default)]
        first_xrun_ms: Option<f64>,
        #[serde(default)]
        margin_in_s: Option<f64>,
    },
    /// A passing run's spare capacity.
    SpareCapacity { idle_pct: f64 },
    /// A passing run whose rings fell behind by more than `SHORTFALL_LIMIT_PCT`, no more than
    /// its longest hold accounts for, with ample idle time (`CapacityEvidence::drain_is_one_hold`).
    DrainWithinOneHold {
        shortfall_pct: f64,
        hold_ms: f64,
        one_hold_pct: f64,
        idle_pct: f64,
    },
    /// What the device read against what the butler read for the tracks during the run.
    ReadAmplification {
        device_read_bytes: u64,
        /// What the butler read from the files during the run (0 in documents from before it
        /// was kept: the ratio was then per byte played).
        #[serde(default)]
        read_bytes: u64,
        played_bytes: u64,
        ratio: f64,
        direct: bool,
    },
    /// A probe stopped as soon as it could no longer pass.
    StoppedEarly { after_s: f64 },

    // Searches.
    /// The first guess's transfers.
    FirstGuess {
        files: u32,
        way: Way,
        chunk_bytes: u64,
        round_robin_mb_s: f64,
        sequential_mb_s: f64,
    },
    /// The first guess's transfers with a parallel butler's queue depth.
    ParallelGuess {
        queue_depth: u32,
        read_mb_s: Option<f64>,
        write_mb_s: Option<f64>,
    },
    /// A round robin faster than sequential: a cache answered the first guess.
    CacheAnsweredGuess,
    /// Every probe of one search and its answer.
    SearchTrail {
        label: String,
        probes: Vec<TrailStep>,
        answer: u32,
        confirmed: bool,
        limited_by: Option<SearchLimit>,
    },
    /// Tracks starting in phase can use only a share of what the disk streams.
    InPhaseWave {
        slack_s: f64,
        cycle_s: f64,
        share_pct: f64,
    },
    /// The answer beside the naive count.
    RealTimeAnswer {
        tracks: f64,
        naive_tracks: f64,
        way: Way,
        limited_by: Option<SearchLimit>,
    },
    /// A shared-storage model's answer for the studio: every workstation as busy as the one
    /// simulated.
    SharedStorage {
        clients: u32,
        tracks_each: f64,
        /// Each workstation's own link, not its share of the storage, is what caps it.
        link_bound: bool,
    },
    /// What a serial butler leaves to a parallel one.
    SerialLeaves {
        queue_depth: u32,
        serial_tracks: f64,
        parallel_tracks: f64,
    },
    /// What a probe had to show to pass.
    ProbeRule {
        probe_s: f64,
        ring_s: f64,
        simulated: bool,
        /// Seconds of the first ring each probe starts past: the periods before its first
        /// refill falls due, in which nothing is read (`StreamSpec::start_at_first_refill`).
        #[serde(default, skip_serializing_if = "is_zero")]
        head_start_s: f64,
        /// The probes that steered the search started in the steady state: how long they ran
        /// and the warm-up they waited out (the rule above is then the confirmations').
        #[serde(default, skip_serializing_if = "Option::is_none")]
        steady: Option<SteadyProbe>,
    },
    /// `--compare-parallel` would show what a parallel butler holds.
    TryCompareParallel,
    /// The settings a search's answers hold for.
    AnswersHoldFor {
        profile: String,
        format: String,
        period_frames: u32,
        ring_bytes: u64,
        chunk_bytes: u64,
        margin_pct: f64,
        staggered: bool,
    },
    /// run's real-time section: what each answer had to show.
    SuiteRule,

    // Sampler.
    /// The instrument load before the clock: every sample's preload read into RAM.
    InstrumentLoad {
        samples: u32,
        preload_bytes: u64,
        load_ms: f64,
    },
    /// What a sampler run played.
    Voices {
        voices: u32,
        notes: u64,
        steals: u64,
        seconds: f64,
        preload_ms: f64,
        slack_min_ms: Option<f64>,
        late: u64,
    },
    /// The most voices beside the naive count.
    VoicesAnswer {
        voices: f64,
        naive_voices: f64,
        notes_per_s: f64,
        limited_by: Option<SearchLimit>,
    },
    /// What an offline export wrote, and the levels it normalised.
    Bounced {
        tracks: u32,
        seconds: f64,
        render_bytes: u64,
        export_bytes: u64,
        quietest: f32,
        loudest: f32,
    },
    /// An offline export in a user's words.
    BounceSpeed {
        tracks: u32,
        render_x: f64,
        export_x: f64,
    },
    /// How cold a template load's cold passes were.
    ColdMeans { how: String },
    /// A template load in a user's words.
    TemplateLoad {
        files: u32,
        cold_s: f64,
        cold_parallel_s: f64,
        warm_s: f64,
        threads: u32,
    },
    /// The settings a voice count holds for.
    SamplerHoldsFor {
        profile: String,
        format: String,
        preload_bytes: u64,
        read_bytes: u64,
        samples: u32,
        notes_per_s: f64,
        simulated: bool,
    },
    /// A finding of one of run's searches ("playback", "record" …).
    Of {
        search: String,
        finding: Box<Finding>,
    },

    /// A finished sentence, as documents before schema 5 kept their notes.
    Text { text: String },
}

impl Finding {
    /// Findings a reader should not miss: the figures are not what they seem, or a run did not
    /// pass. Presenters set them apart.
    pub fn is_caution(&self) -> bool {
        match self {
            Finding::MemoryFilesystem { .. }
            | Finding::DirectRefused { .. }
            | Finding::FirstRunOutlier { .. }
            | Finding::NotRealTime { .. }
            | Finding::LongLocate { .. }
            | Finding::LateTick { .. }
            | Finding::ButlerWaitedForCpu { failed: true, .. }
            | Finding::DidNotPass { .. }
            | Finding::CacheAnsweredGuess
            | Finding::PageCacheSearchUnchecked { .. }
            | Finding::InPhaseWave { .. } => true,
            Finding::Of { finding, .. } => finding.is_caution(),
            _ => false,
        }
    }
}

/// A passing run's drain that one hold accounts for, in words a reader can check
/// (`CapacityEvidence::drain_is_one_hold`); None for any other run.
pub fn drain_within_one_hold(
    evidence: &crate::verdict::evidence::CapacityEvidence,
    hold_ms: Option<f64>,
) -> Option<Finding> {
    let s = evidence
        .shortfall_pct
        .filter(|&s| s > crate::verdict::SHORTFALL_LIMIT_PCT && evidence.drain_is_one_hold(s))?;
    Some(Finding::DrainWithinOneHold {
        shortfall_pct: s,
        hold_ms: hold_ms?,
        one_hold_pct: evidence.one_hold_pct?,
        idle_pct: evidence.ground_idle_pct?,
    })
}

/// What the butler's wait for a CPU says, when it says anything: its longest wait a tenth of
/// the deadline it works against (`budget_ms`), or its waits together 5% of the run. Below both
/// the scheduler's ordinary slices (a few ms on a quiet machine, docs/lab/test-suite.md) say nothing.
pub fn butler_cpu_wait(
    max_ms: Option<f64>,
    total_ms: Option<f64>,
    ran_s: f64,
    budget_ms: f64,
    failed: bool,
) -> Option<Finding> {
    let (max_ms, total_ms) = (max_ms?, total_ms?);
    (max_ms >= budget_ms / 10.0 || total_ms >= ran_s * 1000.0 * 0.05).then_some(
        Finding::ButlerWaitedForCpu {
            max_ms,
            total_ms,
            ran_s,
            budget_ms,
            failed,
        },
    )
}

/// Reads a section's findings: tagged objects, or the sentences older documents kept.
pub fn deserialize_findings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Finding>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Kept {
        Sentence(String),
        Found(Finding),
    }
    Ok(Vec::<Kept>::deserialize(d)?
        .into_iter()
        .map(|k| match k {
            Kept::Sentence(text) => Finding::Text { text },
            Kept::Found(f) => f,
        })
        .collect())
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_butler_wait_for_a_cpu_is_told_only_when_it_matters_and_cautions_only_a_failure() {
        // A quiet machine's slices: nothing to say.
        assert!(butler_cpu_wait(Some(3.4), Some(4.8), 8.0, 213.0, true).is_none());
        // No measurement (a simulated run, another platform): nothing.
        assert!(butler_cpu_wait(None, None, 8.0, 213.0, true).is_none());
        // Long waits in all (six spinning processes beside a sampler run): told, not a caution
        // while the run passed.
        let f = butler_cpu_wait(Some(6.9), Some(691.0), 8.0, 213.0, false).unwrap();
        assert!(!f.is_caution());
        // One wait a tenth of the deadline, in a run that failed: a caution.
        let f = butler_cpu_wait(Some(25.0), Some(30.0), 8.0, 213.0, true).unwrap();
        assert!(f.is_caution());
        assert_eq!(
            serde_json::to_value(&f).unwrap()["kind"],
            "butler_waited_for_cpu"
        );
        // A run that ended too soon to tell did not fail: no caution, no "run it again".
        use crate::verdict::Shortcoming;
        let too_short = Shortcoming::TooShort {
            ran_s: 4.0,
            needed_s: 12.7,
        };
        assert!(!too_short.is_failure());
        assert!(Shortcoming::Xruns { count: 1 }.is_failure());
    }

    #[test]
    fn findings_are_tagged_objects_and_old_sentences_still_load() {
        let f = Finding::DidNotPass {
            shortcoming: Shortcoming::Xruns { count: 3 },
            first_xrun_ms: Some(12.0),
            margin_in_s: None,
        };
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["kind"], "did_not_pass");
        assert_eq!(v["shortcoming"]["kind"], "xruns");
        #[derive(Deserialize)]
        struct S {
            #[serde(deserialize_with = "deserialize_findings")]
            notes: Vec<Finding>,
        }
        let s: S = serde_json::from_value(serde_json::json!({
            "notes": ["an old sentence", v, {"kind": "cached_on_purpose"}]
        }))
        .unwrap();
        assert_eq!(
            s.notes,
            [
                Finding::Text {
                    text: "an old sentence".into()
                },
                f,
                Finding::CachedOnPurpose
            ]
        );
        let nested = Finding::Of {
            search: "playback".into(),
            finding: Box::new(Finding::LongLocate { locate_ms: 2e4 }),
        };
        assert!(nested.is_caution());
        assert!(!Finding::SuiteRule.is_caution());
    }
}

/// A search's probes that started in the steady state (`StreamSpec::steady_start`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyProbe {
    /// The longest such probe, in seconds.
    pub probe_s: f64,
    /// The warm-up each waited out before its steady part, in seconds.
    pub warmup_s: f64,
    /// Where such a probe ended whose verdict was beyond doubt (`StreamSpec::end_early`), in
    /// seconds; None for searches from before it could.
    #[serde(
        default,
        alias = "pass_early_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub end_early_s: Option<f64>,
}
