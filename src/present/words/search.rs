//! A search's findings in words: its first guess, its trail of probes, and the answer beside
//! the naive count (and, for a studio or a parallel butler, beside theirs).

use super::verdict::probe_verdict;
use crate::result::findings::{Finding, TrailStep, Way};
use crate::result::search::SearchLimit;
use crate::units::fmt_size;

/// The sentence of a finding of this kind (the router, `words`, sends only these).
pub(super) fn words(f: &Finding) -> String {
    match f {
        Finding::FirstGuess {
            files,
            way,
            chunk_bytes,
            round_robin_mb_s,
            sequential_mb_s,
        } => first_guess(*files, *way, *chunk_bytes, *round_robin_mb_s, *sequential_mb_s),
        Finding::ParallelGuess {
            queue_depth,
            read_mb_s,
            write_mb_s,
        } => format!(
            "the same with {queue_depth} requests in flight: {}",
            [("read", read_mb_s), ("write", write_mb_s)]
                .iter()
                .filter_map(|(w, v)| v.map(|v| format!("{w} {v:.0} MB/s")))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Finding::CacheAnsweredGuess => "the round robin beat the sequential transfer (a cache answered): the search starts from the sequential rate".into(),
        Finding::SearchTrail {
            label,
            probes,
            answer,
            confirmed,
            limited_by,
        } => {
            let confirmed = if *confirmed {
                " (confirmed)"
            } else {
                " (not confirmed)"
            };
            let limit = limited_by.map_or(String::new(), |w| {
                format!(", stopped at {}: the disk may carry more", w.words())
            });
            format!("{label}: {} -> {answer}{confirmed}{limit}", trail(probes))
        }
        Finding::RealTimeAnswer {
            tracks,
            naive_tracks,
            way,
            limited_by,
        } => real_time_answer(*tracks, *naive_tracks, *way, *limited_by),
        Finding::SharedStorage {
            clients,
            tracks_each,
            link_bound,
        } => format!(
            "shared storage: {clients} workstations × {tracks_each:.0} tracks = {:.0} tracks at once, each workstation as busy as this one; {}",
            f64::from(*clients) * tracks_each,
            if *link_bound {
                "each is held back by its own link, not by the storage"
            } else {
                "the storage's share is what holds each back"
            }
        ),
        Finding::SerialLeaves {
            queue_depth,
            serial_tracks,
            parallel_tracks,
        } => format!(
            "a serial butler leaves {:.0} tracks on the table: the parallel butler ({queue_depth} reads in flight) holds {parallel_tracks:.0}",
            (parallel_tracks - serial_tracks).max(0.0)
        ),
        other => unreachable!("{other:?} is worded elsewhere"),
    }
}

fn way_word(w: Way) -> &'static str {
    match w {
        Way::Read => "read",
        Way::Write => "write",
    }
}

fn trail(probes: &[TrailStep]) -> String {
    probes
        .iter()
        .map(|p| {
            format!(
                "{}{} {}",
                if p.confirmation { "confirm " } else { "" },
                p.count,
                probe_verdict(p.verdict, p.shortcoming)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a search's first guess came from: a round robin of files at the engine's chunk, beside
/// the sequential rate.
fn first_guess(
    files: u32,
    way: Way,
    chunk_bytes: u64,
    round_robin_mb_s: f64,
    sequential_mb_s: f64,
) -> String {
    let (done, w) = match way {
        Way::Read => ("read", "read"),
        Way::Write => ("written", "write"),
    };
    format!(
        "first guess from {files} files {done} round robin at {}: {round_robin_mb_s:.0} MB/s; sequential {w} at 1M: {sequential_mb_s:.0} MB/s",
        fmt_size(chunk_bytes)
    )
}

/// The real-time answer beside what the sequential rate alone would promise.
fn real_time_answer(
    tracks: f64,
    naive_tracks: f64,
    way: Way,
    limited_by: Option<SearchLimit>,
) -> String {
    match limited_by {
        Some(w) => format!(
            "at least {tracks:.0} tracks hold in real time (the search stopped at {}); the sequential {} rate alone would promise {naive_tracks:.0}",
            w.words(),
            way_word(way)
        ),
        None => format!(
            "{tracks:.0} tracks hold in real time; the sequential {} rate alone would promise {naive_tracks:.0} ({:.0}% of that)",
            way_word(way),
            100.0 * tracks / naive_tracks.max(f64::MIN_POSITIVE)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{self, Shortcoming};

    #[test]
    fn a_search_trail_says_why_each_probe_fell_short() {
        use verdict::Verdict::*;
        let step = |count, verdict, shortcoming| TrailStep {
            count,
            verdict,
            confirmation: false,
            shortcoming,
        };
        let t = trail(&[
            step(
                87,
                Marginal,
                Some(Shortcoming::DeviceBehind {
                    shortfall_pct: 3.1,
                    noise_pct: 0.4,
                }),
            ),
            step(100, Fail, Some(Shortcoming::Xruns { count: 2 })),
            step(
                60,
                TooShort,
                Some(Shortcoming::TooShort {
                    ran_s: 1.0,
                    needed_s: 4.0,
                }),
            ),
            step(79, Pass, None),
            // Older result documents kept no reason.
            step(83, Marginal, None),
        ]);
        assert_eq!(
            t,
            "87 marginal (device behind), 100 fail (xruns), 60 too short, 79 pass, 83 marginal"
        );
    }
}
