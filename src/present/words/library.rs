//! The template load's and the offline export's findings in words.

use crate::result::findings::Finding;
use crate::units::fmt_size;

/// The sentence of a finding of this kind (the router, `words`, sends only these).
pub(super) fn words(f: &Finding) -> String {
    match f {
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
        other => unreachable!("{other:?} is worded elsewhere"),
    }
}
