//! `seq`: sustained sequential write and read of one large WAV file (hdparm -t, DskBench's single
//! big file), with the naive track count the rate would suggest.

use super::{Env, RunOutcome, Workload, check_span};
use crate::dataset;
use crate::error::Result;
use crate::fio::{self, FioJob};
use crate::io::OpKind;
use crate::io::driver::Limits;
use crate::io::patterns::Sequential;
use crate::result::findings::Finding;
use crate::result::metrics as m;
use crate::result::{Section, metric};
use crate::target::TargetKind;
use crate::units::fmt_size;
use serde::{Deserialize, Serialize};

/// Which directions to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeqMode {
    Read,
    Write,
    Both,
}

#[derive(Debug, Clone)]
pub struct Seq {
    pub block: u32,
    /// Bytes written, and read (at most the size of a file or device target).
    pub size: u64,
    pub mode: SeqMode,
}

impl Workload for Seq {
    fn name(&self) -> &'static str {
        "seq"
    }
    fn title(&self) -> String {
        format!(
            "Sequential transfer, {} requests over {}",
            fmt_size(self.block.into()),
            fmt_size(self.size)
        )
    }
    fn settings(&self) -> serde_json::Value {
        serde_json::json!({ "block_bytes": self.block, "size_bytes": self.size, "mode": self.mode })
    }

    fn run_once(&mut self, env: &mut Env<'_>, _run: u32) -> Result<RunOutcome> {
        let mut out = RunOutcome::default();
        let rate = env.format.bytes_per_second() as f64;
        let tracks = |mb_s: f64| metric(&m::NAIVE_TRACKS, (mb_s * 1e6 / rate).floor());
        let mut written = None;
        if self.mode != SeqMode::Read {
            let format = env.format;
            let io = env.io_for(Some(self.size.div_ceil(u64::from(self.block))), self.block)?;
            // Whole frames and pages, and at least --size: the read finds all of it (a file of
            // 1M rounded down held less than its one 1M block).
            let size = self
                .size
                .next_multiple_of(crate::audio::lcm(4096, format.bytes_per_frame()));
            let (dd, ctl) = env.data_dir("seq --mode write")?;
            let (span, s) = dataset::write_wav(
                dd,
                "seq.wav",
                &format!("seq:{}", self.size),
                &format,
                size,
                self.block,
                &io,
                "sequential write",
                ctl,
            )?;
            let mb = crate::units::mb_per_s(s.bytes(), s.elapsed);
            out.push("write", span.cached, &s, vec![tracks(mb)]);
            out.direct_refused |= span.direct_refused;
            written = Some(span);
        }
        if self.mode != SeqMode::Write && !env.ctl.cancelled() {
            let span = match written {
                Some(s) => s,
                None => env.span(self.size)?,
            };
            check_span(&span, u64::from(self.block))?;
            // A file or device smaller than --size is read whole, and labelled as what it is.
            self.size = self.size.min(span.len());
            let mut p = Sequential::new(OpKind::Read, 0, span.start, span.end, self.block, true);
            let limits = Limits {
                bytes: Some(self.size.min(span.len())),
                duration: None,
            };
            let s = env.drive(&[&span], &mut p, self.block, limits, "sequential read")?;
            let mb = crate::units::mb_per_s(s.bytes(), s.elapsed);
            out.push("read", span.cached, &s, vec![tracks(mb)]);
            out.direct_refused |= span.direct_refused;
        }
        Ok(out)
    }

    fn fio_jobs(
        &self,
        target: &crate::target::TargetInfo,
        io: &crate::io::IoSettings,
    ) -> Vec<FioJob> {
        let mut jobs = Vec::new();
        let bs = fio::size(self.block.into());
        if self.mode != SeqMode::Read {
            let mut j = FioJob::new(
                "seq-write",
                format!(
                    "seq: sequential write of {} in {} requests",
                    fmt_size(self.size),
                    fmt_size(self.block.into())
                ),
            )
            .set("rw", "write")
            .set("bs", &bs);
            if io.cached {
                // trackbench's figure includes flushing what the page cache still holds.
                j = j.set("end_fsync", 1);
            }
            jobs.push(fio::single_file(j, target, self.size));
        }
        if self.mode != SeqMode::Write {
            let j = FioJob::new(
                "seq-read",
                format!(
                    "seq: sequential read of {} in {} requests",
                    fmt_size(self.size),
                    fmt_size(self.block.into())
                ),
            )
            .set("rw", "read")
            .set("bs", &bs)
            .set("size", fio::size(self.size));
            jobs.push(fio::single_file(j, target, self.size));
        }
        jobs
    }

    fn findings(&self, s: &Section) -> Vec<Finding> {
        s.row("read")
            .and_then(|r| r.get(&m::NAIVE_TRACKS))
            .map(|r| Finding::NaiveCount {
                tracks: r.spread.median,
            })
            .into_iter()
            .collect()
    }
}

/// The default mode for a target: both directions on a directory, reading only elsewhere.
pub fn default_mode(kind: TargetKind) -> SeqMode {
    if kind == TargetKind::Directory {
        SeqMode::Both
    } else {
        SeqMode::Read
    }
}
