//! `zones`: the transfer rate at evenly spaced points from the start to the end of a file or device
//! (outer to inner tracks of a disk: the inner ones are slower).

use super::{Env, RunOutcome, Workload, check_span};
use crate::error::Result;
use crate::fio::{self, FioJob};
use crate::io::OpKind;
use crate::io::driver::Limits;
use crate::io::patterns::Sequential;
use crate::result::findings::Finding;
use crate::result::metrics as m;
use crate::result::{Section, metric};
use crate::target::TargetKind;
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

/// Bytes read at each of `n` points of a span of `len` bytes, and the stride between their starts:
/// spread so that the first reads the very start and the last ends at the very end.
fn points(len: u64, n: u64, bs: u64, bytes_per_point: u64) -> (u64, u64) {
    let per_point = (bytes_per_point.min(len / n) / 4096 * 4096).max(bs);
    let stride = len.saturating_sub(per_point) / (n - 1) / 4096 * 4096;
    (per_point, stride)
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
        let (per_point, stride) = points(span.len(), n, bs, self.bytes_per_point);
        let mut out = RunOutcome {
            direct_refused: span.direct_refused,
            ..RunOutcome::default()
        };
        if env.target.kind != TargetKind::BlockDevice {
            // On a file, positions in it are not positions on a surface.
            out.findings.push(Finding::FileLayout);
        }
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

    fn fio_jobs(
        &self,
        target: &crate::target::TargetInfo,
        _io: &crate::io::IoSettings,
    ) -> Vec<FioJob> {
        let span = match target.kind {
            TargetKind::Directory => self.size,
            _ => target.size_bytes.unwrap_or(self.size),
        };
        let n = u64::from(self.points.max(2));
        let bs = u64::from(self.block);
        let (per_point, stride) = points(span, n, bs, self.bytes_per_point);
        (0..n)
            .map(|i| {
                let start = if i + 1 == n {
                    span - per_point
                } else {
                    i * stride
                };
                let j = FioJob::new(
                    format!("zone-{}", i + 1),
                    format!(
                        "zones: point {} of {n}, at {:.0}% of the span",
                        i + 1,
                        100.0 * start as f64 / span.max(1) as f64
                    ),
                )
                .set("rw", "read")
                .set("bs", fio::size(bs))
                .set("offset", start)
                .set("size", per_point)
                .set("runtime", fio::secs(self.duration));
                fio::single_file(j, target, self.size)
            })
            .collect()
    }

    fn findings(&self, s: &Section) -> Vec<Finding> {
        let rates: Vec<f64> = s
            .rows
            .iter()
            .filter_map(|r| r.get(&m::RATE_MB_PER_S).map(|f| f.spread.median))
            .collect();
        match (rates.first(), rates.last()) {
            (Some(first), Some(last)) if *first > 0.0 => vec![Finding::ZoneFalloff {
                end_pct: 100.0 * last / first,
                per_point_bytes: self.bytes_per_point,
                block_bytes: self.block.into(),
            }],
            _ => Vec::new(),
        }
    }
}
