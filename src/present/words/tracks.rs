//! A streaming run's findings in words (play, record, hdr): why it did not pass, what it had
//! to spare, what the device read.

use super::verdict::shortcoming;
use crate::result::findings::Finding;
use crate::units::fmt_size;

/// The sentence of a finding of this kind (the router, `words`, sends only these).
pub(super) fn words(f: &Finding) -> String {
    match f {
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
        Finding::LongLocate { locate_ms } => {
            let d = std::time::Duration::from_secs((locate_ms / 1000.0).round() as u64);
            format!(
                "the locate (filling every ring before playback starts) took {}: pressing play in a session like this would hang that long before a sound",
                humantime::format_duration(d)
            )
        }
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
        Finding::StoppedEarly { after_s } => {
            format!("stopped after {after_s:.1} s, as soon as the run could no longer pass")
        }
        other => unreachable!("{other:?} is worded elsewhere"),
    }
}
