//! `mix`: DiskTest's three measurements — 32K sequential read, 32K sequential write, and 8K random
//! requests of which 70% read and 30% write — as IOPS and MB/s.

use super::{Env, RunOutcome, Workload, check_span};
use crate::error::Result;
use crate::fio::{self, FioJob};
use crate::io::OpKind;
use crate::io::driver::{Limits, Pattern};
use crate::io::patterns::{Random, Sequential};
use crate::result::metric;
use crate::result::metrics as m;
use crate::units::fmt_size;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Mix {
    pub seq_block: u32,
    pub random_block: u32,
    /// Share of reads in the random phase, 0..=100.
    pub read_pct: u32,
    pub duration: Duration,
    pub size: u64,
}

impl Mix {
    fn fio(&self, target: &crate::target::TargetInfo) -> Vec<FioJob> {
        let job = |name: &str, what: String, rw: &str, bs: u32| {
            let j = FioJob::new(format!("mix-{name}"), format!("mix: {what}"))
                .set("rw", rw)
                .set("bs", fio::size(bs.into()))
                .flag("time_based")
                .set("runtime", fio::secs(self.duration));
            fio::single_file(j, target, self.size)
        };
        let (sb, rb) = (self.seq_block, self.random_block);
        vec![
            job(
                "seq-read",
                format!("{} sequential read", fmt_size(sb.into())),
                "read",
                sb,
            ),
            job(
                "seq-write",
                format!("{} sequential write", fmt_size(sb.into())),
                "write",
                sb,
            ),
            job(
                "random",
                format!("{} random, {}% read", fmt_size(rb.into()), self.read_pct),
                "randrw",
                rb,
            )
            .set("rwmixread", self.read_pct)
            .set("norandommap", 1),
        ]
    }
}

impl Workload for Mix {
    fn name(&self) -> &'static str {
        "mix"
    }
    fn title(&self) -> String {
        format!(
            "DiskTest mix: {} sequential read and write, {} random {}% read",
            fmt_size(self.seq_block.into()),
            fmt_size(self.random_block.into()),
            self.read_pct
        )
    }
    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "seq_block_bytes": self.seq_block,
            "random_block_bytes": self.random_block,
            "read_pct": self.read_pct,
            "duration_s_each": self.duration.as_secs_f64(),
            "size_bytes": self.size,
        })
    }

    fn fio_jobs(
        &self,
        target: &crate::target::TargetInfo,
        _io: &crate::io::IoSettings,
    ) -> Vec<FioJob> {
        self.fio(target)
    }

    fn run_once(&mut self, env: &mut Env<'_>, run: u32) -> Result<RunOutcome> {
        env.data_dir("mix (it writes)")?;
        let span = env.span(self.size)?;
        check_span(&span, 2 * u64::from(self.seq_block.max(self.random_block)))?;
        let mut out = RunOutcome {
            direct_refused: span.direct_refused,
            ..RunOutcome::default()
        };
        let (sb, rb) = (self.seq_block, self.random_block);
        let phases: [(String, u32, Box<dyn Pattern>); 3] = [
            (
                format!("{} sequential read", fmt_size(sb.into())),
                sb,
                Box::new(Sequential::new(
                    OpKind::Read,
                    0,
                    span.start,
                    span.end,
                    sb,
                    true,
                )),
            ),
            (
                format!("{} sequential write", fmt_size(sb.into())),
                sb,
                Box::new(Sequential::new(
                    OpKind::Write,
                    0,
                    span.start,
                    span.end,
                    sb,
                    true,
                )),
            ),
            (
                format!("{} random {}% read", fmt_size(rb.into()), self.read_pct),
                rb,
                Box::new(Random::new(
                    0,
                    span.start,
                    span.end,
                    rb,
                    f64::from(self.read_pct) / 100.0,
                    0xd15c + u64::from(run),
                )),
            ),
        ];
        for (label, bs, mut p) in phases {
            if env.ctl.cancelled() {
                out.interrupted = true;
                break;
            }
            let limits = Limits {
                duration: Some(self.duration),
                bytes: None,
            };
            let s = env.drive(&[&span], p.as_mut(), bs, limits, &label)?;
            let secs = s.elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
            let extra = vec![
                metric(&m::READ_IOPS, s.read.ops as f64 / secs),
                metric(&m::WRITE_IOPS, s.write.ops as f64 / secs),
            ];
            out.push(label, span.cached, &s, extra);
        }
        Ok(out)
    }
}
