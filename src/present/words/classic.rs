//! The classic measurements' findings in words (seq, sweep, zones, seek, access).

use crate::result::findings::Finding;
use crate::units::fmt_size;

/// The sentence of a finding of this kind (the router, `words`, sends only these).
pub(super) fn words(f: &Finding) -> String {
    match f {
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
        other => unreachable!("{other:?} is worded elsewhere"),
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
