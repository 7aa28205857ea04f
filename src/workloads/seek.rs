//! `seek`: random reads at queue depth 1 over the whole span of a file or a raw device (seeker):
//! seeks per second and the random access time with its percentiles; with the spindle speed, the
//! rotational share and the seek time it implies.

use super::{Env, RunOutcome, Workload, check_span};
use crate::error::Result;
use crate::fio::{self, FioJob};
use crate::io::driver::Limits;
use crate::io::patterns::Random;
use crate::result::findings::Finding;
use crate::result::metrics as m;
use crate::result::{Section, metric};
use crate::units::fmt_size;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Seek {
    pub block: u32,
    pub duration: Duration,
    /// Size of the test file on a directory target.
    pub size: u64,
    pub rpm: Option<u32>,
}

impl Seek {
    /// Average rotational latency of a disk spinning at `rpm`: half a turn.
    pub fn rotational_ms(rpm: u32) -> f64 {
        30_000.0 / f64::from(rpm)
    }
}

impl Workload for Seek {
    fn name(&self) -> &'static str {
        "seek"
    }
    fn title(&self) -> String {
        format!("Random access, {} reads", fmt_size(self.block.into()))
    }
    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "block_bytes": self.block,
            "duration_s": self.duration.as_secs_f64(),
            "size_bytes": self.size,
            "rpm": self.rpm,
        })
    }

    fn run_once(&mut self, env: &mut Env<'_>, run: u32) -> Result<RunOutcome> {
        let span = env.span(self.size)?;
        check_span(&span, 2 * u64::from(self.block))?;
        let mut p = Random::new(
            0,
            span.start,
            span.end,
            self.block,
            1.0,
            0x5eec + u64::from(run),
        );
        let limits = Limits {
            duration: Some(self.duration),
            bytes: None,
        };
        let s = env.drive(&[&span], &mut p, self.block, limits, "random reads")?;
        let l = s.read.latency.summary();
        let mut extra = vec![
            metric(&m::SPAN_BYTES, span.len() as f64),
            metric(&m::ACCESS_MS_MEAN, l.mean_us / 1000.0),
        ];
        if let Some(rpm) = self.rpm {
            let rot = Self::rotational_ms(rpm);
            extra.push(metric(&m::ROTATIONAL_MS, rot));
            extra.push(metric(
                &m::IMPLIED_SEEK_MS,
                (l.mean_us / 1000.0 - rot).max(0.0),
            ));
        }
        let mut out = RunOutcome {
            direct_refused: span.direct_refused,
            ..RunOutcome::default()
        };
        out.push(
            format!("random {}", fmt_size(self.block.into())),
            span.cached,
            &s,
            extra,
        );
        Ok(out)
    }

    fn fio_jobs(
        &self,
        target: &crate::target::TargetInfo,
        _io: &crate::io::IoSettings,
    ) -> Vec<FioJob> {
        let j = FioJob::new(
            "seek",
            format!(
                "seek: random {} reads over the whole span for {}",
                fmt_size(self.block.into()),
                humantime::format_duration(self.duration)
            ),
        )
        .set("rw", "randread")
        .set("bs", fio::size(self.block.into()))
        .set("norandommap", 1)
        .flag("time_based")
        .set("runtime", fio::secs(self.duration));
        vec![fio::single_file(j, target, self.size)]
    }

    fn findings(&self, s: &Section) -> Vec<Finding> {
        let access = s
            .rows
            .first()
            .and_then(|r| r.get(&m::ACCESS_MS_MEAN))
            .map(|a| a.spread.median);
        let (Some(access_ms), Some(rpm)) = (access, self.rpm) else {
            return Vec::new();
        };
        let half_turn_ms = Self::rotational_ms(rpm);
        vec![if access_ms < half_turn_ms {
            Finding::NoPlatterWait {
                access_ms,
                rpm,
                half_turn_ms,
            }
        } else {
            Finding::RotationShare {
                access_ms,
                rpm,
                half_turn_ms,
            }
        }]
    }
}
