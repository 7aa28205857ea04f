//! What a search leaves in the result document: its answer, every probe with the evidence it
//! was judged by, what capped it, and the rates its first guess came from.

use crate::verdict::evidence::CapacityEvidence;
use crate::verdict::{Shortcoming, Verdict};
use serde::{Deserialize, Serialize};

/// One run of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub count: u32,
    /// Wall time the probe took, setup included.
    pub elapsed_s: f64,
    pub verdict: Verdict,
    /// Why a probe that did not pass did not (the first rule that held), where it can say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortcoming: Option<Shortcoming>,
    pub worst_headroom_pct: f64,
    pub xruns: u64,
    /// A confirmation run: at the answer, or stepping down after a failed one.
    pub confirmation: bool,
    /// Located as the program the profile names locates (serially, in its own read calls)
    /// rather than quickly: a page-cache profile's confirmations.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub program_locate: bool,
    /// The count this probe suggests the device carries (see `ProbeResult::estimate`).
    #[serde(default)]
    pub estimate: Option<f64>,
    /// A studio's probe: what each rank saw (the verdict above is the worst of their own
    /// verdicts and the storage's, see `storage`). Empty for one computer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankFigures>,
    /// A studio's probe: the storage's capacity evidence, pooled from every rank's
    /// ([`CapacityEvidence::pooled`]), by which the capacity rules judged the probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<CapacityEvidence>,
    /// Started in the steady state, its tracks' starts spread over a chunk, its verdict's
    /// steady part after a warm-up instead of the first ring (`StreamSpec::steady_start`): a
    /// probe that steers the search, never a confirmation.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub steady_start: bool,
    /// Seconds the probe streamed after its locate: shorter than planned where it stopped as
    /// soon as it could no longer pass, or its verdict was beyond doubt (`StreamSpec::end_early`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_s: Option<f64>,
    /// One computer's probe: the capacity evidence the rules judged it by (the rings' trend
    /// and its noise, the butler's idle share). A studio's is its `storage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<CapacityEvidence>,
}

/// What one rank of a studio saw in a probe: its verdict by its own deadlines (xruns, the margin,
/// its length: the storage's capacity is judged on the probe's pooled `storage`), its figures (by
/// metric name), and its capacity evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankFigures {
    pub rank: u32,
    pub verdict: Verdict,
    pub figures: std::collections::BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityEvidence>,
}

/// The answer and how it was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// The largest count that passed (0 when even one failed).
    pub answer: u32,
    /// The smallest count seen failing or marginal, if any.
    pub first_failing: Option<u32>,
    pub first_guess: u32,
    /// The confirmation run at the answer passed.
    pub confirmed: bool,
    /// The search stopped at the limit without a failure.
    pub hit_limit: bool,
    pub probes: Vec<Probe>,
}

/// What capped a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchLimit {
    /// `--max-tracks`.
    MaxTracks,
    /// The rings may take at most half of RAM.
    Memory,
    /// Test files may take at most half of the free space.
    Space,
    /// The engine's own ceiling (20,000 tracks).
    Engine,
}

impl SearchLimit {
    pub fn words(self) -> &'static str {
        match self {
            SearchLimit::MaxTracks => "the --max-tracks limit",
            SearchLimit::Memory => "the memory the rings may take (half of RAM, or --max-memory)",
            SearchLimit::Space => "the free space test files may take (half of it)",
            SearchLimit::Engine => "the engine's ceiling of 20000 tracks",
        }
    }
}

/// One search of a `--find-max` run: its answer and every probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityReport {
    pub label: String,
    pub profile: String,
    pub butler: String,
    pub play_tracks: u32,
    pub record_tracks: u32,
    /// The audio period and the ring margin its probes were judged by (a program's profile
    /// brings its program's; None in documents from before they could differ by search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_frames: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_pct: Option<f64>,
    /// What stopped the search short of a failing count, if anything did.
    #[serde(default)]
    pub limited_by: Option<SearchLimit>,
    pub capacity: Capacity,
}

/// What the short transfers before a search measured, in bytes per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct GuessRates {
    pub round_robin_read: f64,
    pub round_robin_write: f64,
    pub sequential_read: f64,
    pub sequential_write: f64,
}

/// A `--find-max` run's detail: the first guess and every search with its probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchDetail {
    /// The share of the disk's stream tracks starting in phase can use (1 when staggered).
    #[serde(default = "one")]
    pub wave_share: f64,
    /// Sequential rate ÷ per-track rate.
    pub naive_tracks: f64,
    pub first_guess_tracks: f64,
    #[serde(default)]
    pub first_guess_parallel_tracks: f64,
    #[serde(default)]
    pub rates_bytes_per_s: GuessRates,
    pub searches: Vec<CapacityReport>,
    /// A search repeated (`--runs N`): every repetition's searches, in the order they ran.
    /// `searches` above is then the repetition whose answer stood nearest the median of all.
    /// Empty for one search.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repetitions: Vec<Vec<CapacityReport>>,
}

/// The answers of a repeated search: each repetition's, their median and range.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeated {
    /// Each repetition's answer, in the order they ran.
    pub answers: Vec<u32>,
    /// Their median, rounded down (a count, and never above the middle one of an even number).
    pub median: u32,
    pub low: u32,
    pub high: u32,
    /// Repetitions whose answer a run of its own confirmed.
    pub confirmed: usize,
}

impl Repeated {
    /// The answers of `searches` (the first search of each repetition); None for fewer than two.
    pub fn of(repetitions: &[Vec<CapacityReport>]) -> Option<Repeated> {
        let firsts: Vec<&CapacityReport> = repetitions.iter().filter_map(|r| r.first()).collect();
        if firsts.len() < 2 {
            return None;
        }
        let answers: Vec<u32> = firsts.iter().map(|r| r.capacity.answer).collect();
        let values: Vec<f64> = answers.iter().map(|&a| f64::from(a)).collect();
        let spread = crate::stats::Spread::of(&values);
        Some(Repeated {
            median: spread.median.floor() as u32,
            low: spread.min as u32,
            high: spread.max as u32,
            confirmed: firsts.iter().filter(|r| r.capacity.confirmed).count(),
            answers,
        })
    }

    /// The range as a share of the median: (high - low) / median.
    pub fn spread(&self) -> f64 {
        if self.median == 0 {
            return 0.0;
        }
        f64::from(self.high - self.low) / f64::from(self.median)
    }

    /// "140 to 146 over 3 searches".
    pub fn words(&self) -> String {
        let n = self.answers.len();
        if self.low == self.high {
            format!("{} in each of {n} searches", self.low)
        } else {
            format!("{} to {} over {n} searches", self.low, self.high)
        }
    }
}

impl SearchDetail {
    /// The searches of a run repeated `details.len()` times as one detail: the repetition whose
    /// answer is nearest the median of all (the lower on a tie) stands as `searches`, with
    /// every repetition's in `repetitions`. One detail is returned as it is.
    pub fn gathered(mut details: Vec<SearchDetail>) -> Option<SearchDetail> {
        if details.len() < 2 {
            return details.pop();
        }
        let repetitions: Vec<Vec<CapacityReport>> =
            details.iter().map(|d| d.searches.clone()).collect();
        let median = Repeated::of(&repetitions).map_or(0, |r| r.median);
        let answer = |d: &SearchDetail| d.searches.first().map_or(0, |r| r.capacity.answer);
        let nearest = (0..details.len())
            .min_by_key(|&i| {
                let a = answer(&details[i]);
                (a.abs_diff(median), a)
            })
            .unwrap_or(0);
        let mut d = details.swap_remove(nearest);
        d.repetitions = repetitions;
        Some(d)
    }

    /// The answers of its repetitions, where it was repeated.
    pub fn repeated(&self) -> Option<Repeated> {
        Repeated::of(&self.repetitions)
    }
}

fn one() -> f64 {
    1.0
}

/// One of the real-time section's searches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RealTimeSearch {
    /// The most tracks that passed (playback tracks for hdr).
    pub answer: u32,
    /// What stopped the search short of a failing count, if anything did.
    pub limited_by: Option<SearchLimit>,
    /// The search itself: its first guess and every probe.
    pub search: Option<SearchDetail>,
}

/// The real-time section's detail: its three searches, as far as the run got.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RealTimeDetail {
    pub play: Option<RealTimeSearch>,
    pub record: Option<RealTimeSearch>,
    pub hdr: Option<RealTimeSearch>,
}

impl RealTimeDetail {
    /// The sections of a suite run repeated `details.len()` times as one detail: each of its
    /// three searches gathered as [`SearchDetail::gathered`] gathers them, its answer the
    /// median of the repetitions'.
    pub fn gathered(details: Vec<RealTimeDetail>) -> Option<RealTimeDetail> {
        let part = |pick: fn(&RealTimeDetail) -> &Option<RealTimeSearch>| {
            let parts: Vec<&RealTimeSearch> =
                details.iter().filter_map(|d| pick(d).as_ref()).collect();
            let searches: Vec<SearchDetail> =
                parts.iter().filter_map(|p| p.search.clone()).collect();
            let search = SearchDetail::gathered(searches)?;
            let answer = search.repeated().map_or(
                search.searches.first().map_or(0, |r| r.capacity.answer),
                |r| r.median,
            );
            let limited_by = search.searches.first().and_then(|r| r.limited_by);
            Some(RealTimeSearch {
                answer,
                limited_by,
                search: Some(search),
            })
        };
        if details.is_empty() {
            return None;
        }
        Some(RealTimeDetail {
            play: part(|d| &d.play),
            record: part(|d| &d.record),
            hdr: part(|d| &d.hdr),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(answer: u32, confirmed: bool) -> CapacityReport {
        CapacityReport {
            label: "trackbench · serial".into(),
            profile: "trackbench".into(),
            butler: "serial".into(),
            play_tracks: answer,
            record_tracks: 0,
            period_frames: None,
            margin_pct: None,
            limited_by: None,
            capacity: Capacity {
                answer,
                first_failing: Some(answer + 3),
                first_guess: 100,
                confirmed,
                hit_limit: false,
                probes: Vec::new(),
            },
        }
    }

    fn detail(answer: u32) -> SearchDetail {
        SearchDetail {
            wave_share: 1.0,
            naive_tracks: 150.0,
            first_guess_tracks: f64::from(answer),
            first_guess_parallel_tracks: 0.0,
            rates_bytes_per_s: GuessRates::default(),
            searches: vec![report(answer, answer != 97)],
            repetitions: Vec::new(),
        }
    }

    #[test]
    fn a_repeated_search_stands_as_its_median_repetition_with_every_one_kept() {
        let d = SearchDetail::gathered([104, 97, 106, 95, 98].map(detail).to_vec()).unwrap();
        assert_eq!(d.searches[0].capacity.answer, 98, "the median of five");
        assert_eq!(
            d.first_guess_tracks, 98.0,
            "the median repetition's own detail"
        );
        let r = d.repeated().unwrap();
        assert_eq!(r.answers, [104, 97, 106, 95, 98], "in the order they ran");
        assert_eq!((r.median, r.low, r.high, r.confirmed), (98, 95, 106, 4));
        assert!((r.spread() - 11.0 / 98.0).abs() < 1e-9);
        assert_eq!(r.words(), "95 to 106 over 5 searches");
        // An even number: the median of 140 and 145 is 142.5, a count of 142 (never above the
        // middle); the repetition nearest it, the lower on a tie, stands.
        let d = SearchDetail::gathered([145, 140].map(detail).to_vec()).unwrap();
        assert_eq!(d.repeated().unwrap().median, 142);
        assert_eq!(d.searches[0].capacity.answer, 140);
        let same = SearchDetail::gathered([144, 144, 144].map(detail).to_vec()).unwrap();
        assert_eq!(
            same.repeated().unwrap().words(),
            "144 in each of 3 searches"
        );
        // One search is itself, with no repetitions (its document unchanged).
        let one = SearchDetail::gathered(vec![detail(144)]).unwrap();
        assert_eq!(one, detail(144));
        assert!(one.repeated().is_none());
        assert!(!serde_json::to_string(&one).unwrap().contains("repetitions"));
    }

    #[test]
    fn a_repeated_suite_answers_the_median_of_each_of_its_searches() {
        let rt = |play: u32, record: u32| RealTimeDetail {
            play: Some(RealTimeSearch {
                answer: play,
                limited_by: None,
                search: Some(detail(play)),
            }),
            record: Some(RealTimeSearch {
                answer: record,
                limited_by: None,
                search: Some(detail(record)),
            }),
            hdr: None,
        };
        let g = RealTimeDetail::gathered(vec![rt(100, 50), rt(90, 60), rt(95, 40)]).unwrap();
        assert_eq!(g.play.as_ref().unwrap().answer, 95);
        assert_eq!(g.record.as_ref().unwrap().answer, 50);
        let rep = g.play.unwrap().search.unwrap().repeated().unwrap();
        assert_eq!(rep.answers, [100, 90, 95]);
        assert!(g.hdr.is_none());
    }
}
