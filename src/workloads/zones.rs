//! `zones`: the transfer rate at evenly spaced points from the start to the end of a file or device
//! (outer to inner tracks of a disk: the inner ones are slower).

use super::{Env, RunOutcome, Workload, check_span};
use crate::error::Result;
use crate::io::OpKind;
use crate::io::driver::Limits;
use crate::metrics as m;
use crate::result::{Section, metric};
use crate::target::TargetKind;
use crate::units::fmt_size;
use crate::workloads::patterns::Sequential;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Zones {
    pub points: u32,
    pub block: u32,
    /// Most bytes read at each point (less when the span is small).
    pub bytes_per_point: u64,
    /// Most time spent at each point.
    pub duration: Duration,
    /// Size of the test file on a directory target.
    pub size: u64,
}

impl Workload for Zones {
    fn name(&self) -> &'static str {
        "zones"
    }
    fn title(&self) -> String {
        format!("Transfer rate at {} points from start to end", self.points)
    }
    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "points": self.points,
            "block_bytes": self.block,
            "bytes_per_point": self.bytes_per_point,
            "max_duration_s_per_point": self.duration.as_secs_f64(),
            "size_bytes": self.size,
        })
    }

    fn run_once(&mut self, env: &mut Env<'_>, _run: u32) -> Result<RunOutcome> {
        let span = env.span(self.size)?;
        let n = u64::from(self.points);
        let bs = u64::from(self.block);
        check_span(&span, n * bs)?;
        // Points spread so that the first reads the very start and the last ends at the very end.
        let per_point = (self.bytes_per_point.min(span.len() / n) / 4096 * 4096).max(bs);
        let stride = (span.len() - per_point) / (n - 1) / 4096 * 4096;
        let mut out = RunOutcome {
            direct_refused: span.direct_refused,
            ..RunOutcome::default()
        };
        out.notes
            .extend(layout_caveat(env.target.kind).map(str::to_string));
        for i in 0..n {
            if env.ctl.cancelled() {
                out.interrupted = true;
                break;
            }
            let start = if i + 1 == n {
                span.end - per_point
            } else {
                span.start + i * stride
            };
            let end = start + per_point;
            let mut p = Sequential::new(OpKind::Read, 0, start, end, self.block, true);
            let limits = Limits {
                duration: Some(self.duration),
                bytes: Some(per_point),
            };
            let pct = 100.0 * (start - span.start) as f64 / span.len() as f64;
            let label = format!("{:>2} at {:>3.0}%", i + 1, pct);
            let s = env.drive(
                &[&span],
                &mut p,
                self.block,
                limits,
                &format!("zone {}/{n}", i + 1),
            )?;
            out.push(
                label,
                span.cached,
                &s,
                vec![
                    metric(&m::POSITION_PCT, pct),
                    metric(&m::OFFSET_BYTES, (start - span.start) as f64),
                ],
            );
        }
        Ok(out)
    }

    fn notes(&self, s: &Section) -> Vec<String> {
        let mut n = Vec::new();
        let rates: Vec<f64> = s
            .rows
            .iter()
            .filter_map(|r| r.get(&m::RATE_MB_PER_S).map(|f| f.spread.median))
            .collect();
        if let (Some(first), Some(last)) = (rates.first(), rates.last())
            && *first > 0.0
        {
            n.push(format!(
                "the end runs at {:.0}% of the start's rate (up to {} per point, {} reads)",
                100.0 * last / first,
                fmt_size(self.bytes_per_point),
                fmt_size(self.block.into())
            ));
        }
        n
    }
}

/// A note for directory and file targets, where positions in a file are not positions on a surface.
pub fn layout_caveat(kind: TargetKind) -> Option<&'static str> {
    (kind != TargetKind::BlockDevice).then_some(
        "on a file, points follow the file's layout, which the filesystem chose; point zones at the device (read-only) for a true surface scan",
    )
}
