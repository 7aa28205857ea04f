//! Findings in words: the one place that turns a [`Finding`] into the sentence every presenter
//! (terminal, HTML, Markdown) shows.

use crate::result::findings::{Finding, TrailStep, Way};
use crate::units::fmt_size;
use crate::verdict::{self, Shortcoming, evidence, windows};

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

/// A probe's verdict and, where it did not pass, why in a few words: "marginal (rings
/// draining)". For a search's trail and the report's probe table.
pub(crate) fn probe_verdict(verdict: verdict::Verdict, shortcoming: Option<Shortcoming>) -> String {
    let word = verdict.word().to_lowercase();
    match shortcoming {
        // A too-short probe's verdict already says why.
        Some(s) if verdict != verdict::Verdict::Pass && s.is_failure() => {
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
fn shortcoming(s: &Shortcoming, first_xrun_ms: Option<f64>, margin_in_s: Option<f64>) -> String {
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
    }
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The sentence a finding stands for.
pub fn words(f: &Finding) -> String {
    match f {
        Finding::MemoryFilesystem { filesystem } => format!(
            "{filesystem} keeps files in memory: these figures are RAM speed, not a disk's, and are labelled cached"
        ),
        Finding::DirectRefused { filesystem } => format!(
            "O_DIRECT is not supported by this filesystem ({filesystem}): measured through the page cache; figures are labelled cached"
        ),
        Finding::CachedOnPurpose => {
            "measured through the page cache (--cached): figures include caching".into()
        }
        Finding::ThroughPageCache { profile } => format!(
            "profile {profile} reads and writes through the page cache, as the program does; its read-ahead is part of the cost"
        ),
        Finding::PageCacheSearchUnchecked { profile } => format!(
            "profile {profile}'s search has been checked against its program on a device capped in MB/s (it errs below or above there with the device's read-ahead) but not on one capped in I/Os per second (a disk with heads, many NAS): there ardour-medium's search answered 224 and 536 tracks where Ardour played 90 and dropped out at 120, and a single 30 s run of 200 tracks, which locates as the program does, failed; on such a device, check the answer with a single run (play --tracks N --profile {profile} --duration 60s)"
        ),
        Finding::PageCacheSearchLocatedBothWays { profile } => format!(
            "profile {profile}'s search confirms its answer in runs located as its program locates (serially, in the program's own read calls) and probes between them located quickly: through the page cache the locate sets the kernel's read-ahead, and either way alone answered wrong (the quick one too high on a device capped in I/Os per second, the program's too high on one capped in MB/s); the answer passed both ways. Against Ardour at 160 I/Os per second ardour-medium's search answered 94 and 106 tracks where Ardour played 96 and dropped out at 100"
        ),
        Finding::PageCacheSearchConfirmedLong { profile, confirm_s } => format!(
            "profile {profile}'s search probes with a quick locate that leaves the kernel's read-ahead as its program's locate does, and confirms its answer in runs of {confirm_s:.0} s located as the program locates: through the page cache the read-ahead runs ahead of every ring, and a short run of a count the device cannot carry can pass on that lead (ardour-small passed 153 tracks in 12 s on a device capped at 145.8 and failed at 16 s)"
        ),
        Finding::PagesKept { profile } => format!(
            "this platform cannot drop a file's cached pages (only Linux can): profile {profile}'s runs may read from RAM what an earlier run of the same files left cached, so its answer may be above what the disk carries"
        ),
        Finding::FirstRunOutlier { row, deviation_pct } => format!(
            "{row}: the first run was {:.0}% {} than the rest — a cache warming up? consider discarding it",
            deviation_pct.abs(),
            if *deviation_pct > 0.0 {
                "higher"
            } else {
                "lower"
            }
        ),
        Finding::NaiveCount { tracks } => format!(
            "{tracks:.0} tracks is what the sequential read rate alone predicts; streaming many files at once gets fewer (see sweep)"
        ),
        Finding::BestBlock {
            block,
            tracks,
            ram_bytes,
            files,
        } => format!(
            "most tracks at {block}: {tracks:.0}, needing {} of buffers; tracks are what {files} files round robin sustain, not a real-time guarantee",
            fmt_size(*ram_bytes)
        ),
        Finding::BuffersBeyondMemory {
            blocks,
            ram_bytes,
            limit_bytes,
        } => format!(
            "at {}, the tracks counted would need {} of buffers, more than the {} this process may pin (half of its memory, or --max-memory): that many cannot stream here, and \"fit in memory\" is what can",
            and_list(blocks),
            and_list(&ram_bytes.iter().map(|&b| fmt_size(b)).collect::<Vec<_>>()),
            fmt_size(*limit_bytes)
        ),
        Finding::ZoneFalloff {
            end_pct,
            per_point_bytes,
            block_bytes,
        } => format!(
            "the end runs at {end_pct:.0}% of the start's rate (up to {} per point, {} reads)",
            fmt_size(*per_point_bytes),
            fmt_size(*block_bytes)
        ),
        Finding::FileLayout => "on a file, points follow the file's layout, which the filesystem chose; point zones at the device (read-only) for a true surface scan".into(),
        Finding::NoPlatterWait {
            access_ms,
            rpm,
            half_turn_ms,
        } => format!(
            "the {access_ms:.2} ms access time is shorter than half a turn at {rpm} rpm ({half_turn_ms:.2} ms): these reads did not wait for a platter (flash, or a cache in front of the disk)"
        ),
        Finding::RotationShare {
            access_ms,
            rpm,
            half_turn_ms,
        } => format!(
            "at {rpm} rpm, half a turn takes {half_turn_ms:.2} ms: {:.0}% of the {access_ms:.2} ms access time; the rest ({:.2} ms) is seek and transfer",
            100.0 * half_turn_ms / access_ms.max(f64::MIN_POSITIVE),
            (access_ms - half_turn_ms).max(0.0)
        ),
        Finding::RelativeToSequential {
            same_sector_pct,
            random_pct,
        } => format!(
            "relative to sequential: same sector {same_sector_pct:.0}%, random {random_pct:.0}% — the gap is head movement (or, on flash, request overhead)"
        ),
        Finding::RingRaised {
            asked_s,
            min_chunks,
            chunk_bytes,
            ring_bytes,
            ring_s,
        } => format!(
            "--buffer {asked_s}s was raised: a ring of this engine holds at least {min_chunks} chunks of {}, so each ring holds {} = {ring_s:.2} s",
            fmt_size(*chunk_bytes),
            fmt_size(*ring_bytes)
        ),
        Finding::NotRealTime { reason } => {
            format!("{reason}: the tick ran anyway, and its lateness is reported")
        }
        Finding::LongLocate { locate_ms } => {
            let d = std::time::Duration::from_secs((locate_ms / 1000.0).round() as u64);
            format!(
                "the locate (filling every ring before playback starts) took {}: pressing play in a session like this would hang that long before a sound",
                humantime::format_duration(d)
            )
        }
        Finding::LateTick { max_us, period_us } => format!(
            "the audio tick woke up to {max_us:.0} µs late (period {period_us:.0} µs): scheduling trouble on this machine, not the disk"
        ),
        Finding::ButlerWaitedForCpu {
            max_ms,
            total_ms,
            ran_s,
            budget_ms,
            failed,
        } => format!(
            "the butler's thread, ready to read, waited up to {max_ms:.0} ms for a CPU ({total_ms:.0} ms in all over {ran_s:.1} s; what it keeps buffered ahead lasts {budget_ms:.0} ms): the machine was busy{}",
            if *failed {
                ", so the run may have failed on the CPU, not the disk: run it again on a quiet machine"
            } else {
                ", and the run passed anyway"
            }
        ),
        Finding::DidNotPass {
            shortcoming: s,
            first_xrun_ms,
            margin_in_s,
        } => shortcoming(s, *first_xrun_ms, *margin_in_s),
        Finding::DrainWithinOneHold {
            shortfall_pct,
            hold_ms,
            one_hold_pct,
            idle_pct,
        } => format!(
            "the rings fell behind by {shortfall_pct:.1}% of the demand, no more than one hold of {hold_ms:.0} ms accounts for (up to {one_hold_pct:.1}%), and the butler was idle {idle_pct:.0}% of the time: a stall the rings rode out, not a device short of the rate"
        ),
        Finding::SpareCapacity { idle_pct } => format!(
            "the butler was idle {idle_pct:.1}% of the steady part of the run: the device had that much to spare"
        ),
        Finding::ReadAmplification {
            device_read_bytes,
            read_bytes,
            played_bytes,
            ratio,
            direct,
        } => format!(
            "the device read {} while {}: read amplification {ratio:.2}x{}",
            fmt_size(*device_read_bytes),
            if *read_bytes > 0 {
                format!(
                    "the butler read {} for the tracks (which played {}, the first ring from the prefill)",
                    fmt_size(*read_bytes),
                    fmt_size(*played_bytes)
                )
            } else {
                format!("the tracks played {}", fmt_size(*played_bytes))
            },
            if *direct {
                " (O_DIRECT: the device reads what the butler asks, and other readers of the device count too)"
            } else {
                " (through the page cache: the kernel's read-ahead is part of what the program costs)"
            }
        ),
        Finding::StoppedEarly { after_s } => format!(
            "stopped after {after_s:.1} s, as soon as the run could no longer pass"
        ),
        Finding::FirstGuess {
            files,
            way,
            chunk_bytes,
            round_robin_mb_s,
            sequential_mb_s,
        } => {
            let (done, w) = match way {
                Way::Read => ("read", "read"),
                Way::Write => ("written", "write"),
            };
            format!(
                "first guess from {files} files {done} round robin at {}: {round_robin_mb_s:.0} MB/s; sequential {w} at 1M: {sequential_mb_s:.0} MB/s",
                fmt_size(*chunk_bytes)
            )
        }
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
        } => format!(
            "{label}: {} -> {answer}{}{}",
            trail(probes),
            if *confirmed {
                " (confirmed)"
            } else {
                " (not confirmed)"
            },
            limited_by.map_or(String::new(), |w| format!(
                ", stopped at {}: the disk may carry more",
                w.words()
            ))
        ),
        Finding::InPhaseWave {
            slack_s,
            cycle_s,
            share_pct,
        } => format!(
            "tracks starting in phase all ask for a refill on the same tick, and each must get it within {slack_s:.2} s (before its ring passes the margin) instead of within a refill cycle of {cycle_s:.2} s: these rings let a session in phase use at most {share_pct:.0}% of what the disk streams; bigger rings (--buffer) or --stagger show the rest"
        ),
        Finding::RealTimeAnswer {
            tracks,
            naive_tracks,
            way,
            limited_by,
        } => match limited_by {
            Some(w) => format!(
                "at least {tracks:.0} tracks hold in real time (the search stopped at {}); the sequential {} rate alone would promise {naive_tracks:.0}",
                w.words(),
                way_word(*way)
            ),
            None => format!(
                "{tracks:.0} tracks hold in real time; the sequential {} rate alone would promise {naive_tracks:.0} ({:.0}% of that)",
                way_word(*way),
                100.0 * tracks / naive_tracks.max(f64::MIN_POSITIVE)
            ),
        },
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
        Finding::ProbeRule {
            probe_s,
            ring_s,
            simulated,
            head_start_s,
            steady,
        } => {
            let first_ring = format!(
                "one ring ({ring_s:.2} s{})",
                if *head_start_s > 0.0 {
                    format!(
                        ", its first {head_start_s:.2} s, before any ring has room for a read, counted as played: {} start where the first refills fall due",
                        if steady.is_some() { "confirmations" } else { "probes" }
                    )
                } else {
                    String::new()
                }
            );
            let rule = format!(
                "{}, with no xrun, no ring below the margin, no drain, {} (spare capacity measured, not assumed)",
                windows::steady_words(),
                windows::spare_words(*simulated)
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
                        windows::early_fail_idle_pct(*simulated)
                    )),
                    q.warmup_s
                ),
            }
        }
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
        Finding::InstrumentLoad {
            samples,
            preload_bytes,
            load_ms,
        } => format!(
            "the instrument load read the preloads of {samples} samples ({}) in {} before the clock started ({:.0} MB/s)",
            fmt_size(*preload_bytes),
            crate::units::fmt_micros(load_ms * 1000.0),
            *preload_bytes as f64 / (load_ms / 1000.0).max(f64::MIN_POSITIVE) / 1e6
        ),
        Finding::Voices {
            voices,
            notes,
            steals,
            seconds,
            preload_ms,
            slack_min_ms,
            late,
        } => format!(
            "{voices} voices played {notes} notes in {seconds:.1} s ({steals} stolen by note-ons); every first read had {preload_ms:.0} ms (the preload) to land{}",
            match (slack_min_ms, late) {
                (_, l) if *l > 0 => format!(": {l} landed late"),
                (Some(m), _) => format!(": the tightest landed with {m:.1} ms to spare"),
                _ => String::new(),
            }
        ),
        Finding::VoicesAnswer {
            voices,
            naive_voices,
            notes_per_s,
            limited_by,
        } => match limited_by {
            Some(w) => format!(
                "at least {voices:.0} voices stream without a dropout at {notes_per_s} notes/s (the search stopped at {}); the sequential read rate alone would promise {naive_voices:.0}",
                w.words()
            ),
            None => format!(
                "{voices:.0} voices stream without a dropout at {notes_per_s} notes/s; the sequential read rate alone would promise {naive_voices:.0} ({:.0}% of that)",
                100.0 * voices / naive_voices.max(f64::MIN_POSITIVE)
            ),
        },
        Finding::SamplerHoldsFor {
            profile,
            format,
            preload_bytes,
            read_bytes,
            samples,
            notes_per_s,
            simulated,
        } => format!(
            "the answer holds for: {profile} at {format}, {} preload, {} reads, {samples} samples, {notes_per_s} note-ons/s; a probe passes only with no dropout, every first read and ring above the margin, and the butler idle at least {}% of the steady part",
            fmt_size(*preload_bytes),
            fmt_size(*read_bytes),
            evidence::spare_min_pct(*simulated)
        ),
        Finding::ColdMeans { how } => format!("cold: {how}"),
        Finding::Bounced {
            tracks,
            seconds,
            render_bytes,
            export_bytes,
            quietest,
            loudest,
        } => format!(
            "{tracks} tracks of {seconds:.0} s: {} rendered in blocks of {} frames per track in turn, {} exported; peaks from {:.1} to {:.1} dBFS were normalised to full scale",
            fmt_size(*render_bytes),
            crate::workloads::bounce::RENDER_BLOCK_FRAMES,
            fmt_size(*export_bytes),
            20.0 * f64::from(quietest.max(1e-9)).log10(),
            20.0 * f64::from(loudest.max(1e-9)).log10()
        ),
        Finding::BounceSpeed {
            tracks,
            render_x,
            export_x,
        } => format!(
            "{tracks} tracks render {render_x:.0} times faster than real time and normalise to 24-bit {export_x:.0} times faster"
        ),
        Finding::TemplateLoad {
            files,
            cold_s,
            cold_parallel_s,
            warm_s,
            threads,
        } => format!(
            "a template of {files} samples loads in {} s cold with one loader thread, {} s with {threads}, and {} s when the files are cached",
            crate::units::fmt_figure(*cold_s),
            crate::units::fmt_figure(*cold_parallel_s),
            crate::units::fmt_figure(*warm_s)
        ),
        Finding::Of { search, finding } => format!("{search}: {}", words(finding)),
        Finding::Text { text } => text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// docs/result-schema.md lists every figure and every kind of finding the code can write.
    #[test]
    fn the_schema_document_names_every_figure_and_finding() {
        let doc = include_str!("../../docs/result-schema.md");
        for d in crate::result::metrics::ALL {
            assert!(
                doc.contains(&format!("`{}`", d.name)),
                "{} is not described",
                d.name
            );
        }
        let kinds = [
            Finding::CachedOnPurpose,
            Finding::FileLayout,
            Finding::CacheAnsweredGuess,
            Finding::TryCompareParallel,
            Finding::SuiteRule,
        ];
        for f in kinds {
            let v = serde_json::to_value(&f).unwrap();
            let k = v["kind"].as_str().unwrap();
            assert!(doc.contains(&format!("`{k}`")), "{k} is not described");
        }
        // Every kind the enum has, from its source: the variants are its `///`-documented
        // entries, written in snake_case in the document.
        let src = include_str!("../result/findings.rs");
        let body = &src[src.find("pub enum Finding {").unwrap()..];
        let body = &body[..body.find("\n}\n").unwrap()];
        let mut found = 0;
        for line in body.lines() {
            let t = line.trim();
            let Some(name) = t
                .strip_suffix(" {")
                .or_else(|| t.strip_suffix(','))
                .filter(|n| n.chars().next().is_some_and(char::is_uppercase))
                .map(|n| n.split([' ', '{']).next().unwrap_or(n))
            else {
                continue;
            };
            let mut snake = String::new();
            for (i, c) in name.chars().enumerate() {
                if c.is_uppercase() && i > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            }
            assert!(
                doc.contains(&format!("`{snake}`")),
                "{snake} is not described"
            );
            found += 1;
        }
        assert!(
            found >= 33,
            "read {found} kinds of finding from findings.rs"
        );
    }
}
