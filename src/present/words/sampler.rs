//! The sampler's findings in words: the instrument load, the voices and their first reads,
//! and the answer.

use crate::result::findings::Finding;
use crate::units::fmt_size;
use crate::verdict::evidence;

/// The sentence of a finding of this kind (the router, `words`, sends only these).
pub(super) fn words(f: &Finding) -> String {
    match f {
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
        other => unreachable!("{other:?} is worded elsewhere"),
    }
}
