//! How the figures were measured, in words: through the page cache or not, on a platform
//! that keeps pages, with a real-time thread or not, on a busy machine.

use crate::result::findings::Finding;

/// The sentence of a finding of this kind (the router, `words`, sends only these).
pub(super) fn words(f: &Finding) -> String {
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
        Finding::NotRealTime { reason } => {
            format!("{reason}: the tick ran anyway, and its lateness is reported")
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
        other => unreachable!("{other:?} is worded elsewhere"),
    }
}
