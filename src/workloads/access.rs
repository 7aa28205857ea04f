//! `access`: same-sector, sequential and random reads at one transfer size, side by side, as
//! SCSIbench showed them: what the cache gives, what streaming gets, what head movement costs.

use super::{Env, RunOutcome, Workload, check_span};
use crate::error::Result;
use crate::fio::{self, FioJob};
use crate::io::OpKind;
use crate::io::driver::{Limits, OpSpec, Pattern};
use crate::io::patterns::{Random, SameSector, Sequential};
use crate::result::Section;
use crate::result::findings::Finding;
use crate::result::metrics as m;
use crate::units::fmt_size;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Access {
    pub block: u32,
    /// Time spent on each of the three patterns.
    pub duration: Duration,
    pub size: u64,
}

pub const SAME: &str = "same sector";
pub const SEQUENTIAL: &str = "sequential";
pub const RANDOM: &str = "random";

impl Workload for Access {
    fn name(&self) -> &'static str {
        "access"
    }
    fn title(&self) -> String {
        format!(
            "Same-sector, sequential and random reads of {}",
            fmt_size(self.block.into())
        )
    }
    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "block_bytes": self.block,
            "duration_s_each": self.duration.as_secs_f64(),
            "size_bytes": self.size,
        })
    }

    fn run_once(&mut self, env: &mut Env<'_>, run: u32) -> Result<RunOutcome> {
        let span = env.span(self.size)?;
        check_span(&span, 2 * u64::from(self.block))?;
        let mut out = RunOutcome {
            direct_refused: span.direct_refused,
            ..RunOutcome::default()
        };
        let bs = self.block;
        let mut patterns: [(&str, Box<dyn Pattern>); 3] = [
            (
                SAME,
                Box::new(SameSector(OpSpec {
                    kind: OpKind::Read,
                    file: 0,
                    offset: span.start,
                    len: bs,
                })),
            ),
            (
                SEQUENTIAL,
                Box::new(Sequential::new(
                    OpKind::Read,
                    0,
                    span.start,
                    span.end,
                    bs,
                    true,
                )),
            ),
            (
                RANDOM,
                Box::new(Random::new(
                    0,
                    span.start,
                    span.end,
                    bs,
                    1.0,
                    0xacce55 + u64::from(run),
                )),
            ),
        ];
        for (label, p) in patterns.iter_mut() {
            if env.ctl.cancelled() {
                out.interrupted = true;
                break;
            }
            let limits = Limits {
                duration: Some(self.duration),
                bytes: None,
            };
            let s = env.drive(&[&span], p.as_mut(), bs, limits, &format!("{label} reads"))?;
            out.push(*label, span.cached, &s, vec![]);
        }
        Ok(out)
    }

    fn fio_jobs(
        &self,
        target: &crate::target::TargetInfo,
        _io: &crate::io::IoSettings,
    ) -> Vec<FioJob> {
        let bs = fio::size(self.block.into());
        let job = |name: &str, what: &str, rw: &str| {
            let j = FioJob::new(
                format!("access-{name}"),
                format!("access: {what} reads of {}", fmt_size(self.block.into())),
            )
            .set("rw", rw)
            .set("bs", &bs)
            .flag("time_based")
            .set("runtime", fio::secs(self.duration));
            fio::single_file(j, target, self.size)
        };
        vec![
            // One block's region, read over and over.
            job("same-sector", SAME, "read").set("size", &bs),
            job("sequential", SEQUENTIAL, "read"),
            job("random", RANDOM, "randread").set("norandommap", 1),
        ]
    }

    fn findings(&self, s: &Section) -> Vec<Finding> {
        let rate = |l: &str| {
            s.row(l)
                .and_then(|r| r.get(&m::RATE_MB_PER_S))
                .map(|f| f.spread.median)
        };
        match (rate(SAME), rate(SEQUENTIAL), rate(RANDOM)) {
            (Some(a), Some(b), Some(c)) if b > 0.0 => vec![Finding::RelativeToSequential {
                same_sector_pct: 100.0 * a / b,
                random_pct: 100.0 * c / b,
            }],
            _ => Vec::new(),
        }
    }
}
