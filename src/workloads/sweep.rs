//! `sweep`: N files read round robin at block sizes from 4K to 1M (DskBench, Echo Reporter): the
//! rate each block size sustains, the tracks that rate carries at the chosen format, and the buffer
//! RAM that block size costs per track and in total.

use super::{Env, RunOutcome, Workload, check_span};
use crate::dataset;
use crate::error::{Error, Result};
use crate::findings::Finding;
use crate::fio::{self, FioJob};
use crate::io::driver::Limits;
use crate::metrics as m;
use crate::result::{Section, metric};
use crate::units::{fmt_size, mb_per_s};
use crate::workloads::patterns::RoundRobin;
use std::time::Duration;

/// The block sizes DskBench and Echo Reporter stepped through, and a little beyond.
pub const DEFAULT_BLOCKS: [u32; 9] = [
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
];

#[derive(Debug, Clone)]
pub struct Sweep {
    pub files: u32,
    pub blocks: Vec<u32>,
    pub duration: Duration,
    /// Size of each file.
    pub file_size: u64,
    /// Seconds of audio a track's buffer holds (rounded up to whole blocks, at least two).
    pub buffer: Duration,
}

impl Sweep {
    /// Buffer bytes one track needs at `block`: `buffer` seconds of audio rounded up to whole blocks,
    /// never fewer than two (one being filled while the other plays).
    pub fn ram_per_track(&self, block: u32, bytes_per_second: u64) -> u64 {
        let want = (self.buffer.as_secs_f64() * bytes_per_second as f64).ceil() as u64;
        let blocks = want.div_ceil(u64::from(block)).max(2);
        blocks * u64::from(block)
    }
}

impl Workload for Sweep {
    fn name(&self) -> &'static str {
        "sweep"
    }
    fn title(&self) -> String {
        format!("{} files read round robin, by block size", self.files)
    }
    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "files": self.files,
            "block_bytes": self.blocks,
            "duration_s_each": self.duration.as_secs_f64(),
            "file_size_bytes": self.file_size,
            "buffer_s": self.buffer.as_secs_f64(),
        })
    }

    fn run_once(&mut self, env: &mut Env<'_>, _run: u32) -> Result<RunOutcome> {
        if self.files == 0 || self.files > 10_000 {
            return Err(Error::invalid("files", self.files, "1 to 10000"));
        }
        let (format, cached) = (env.format, env.io.cached);
        let (dd, ctl) = env.data_dir("sweep (it lays out its files)")?;
        let (spans, _) = dataset::ensure_wavs(
            dd,
            "sweep",
            self.files as usize,
            &format,
            self.file_size,
            cached,
            ctl,
        )?;
        let max_block = self.blocks.iter().copied().max().unwrap_or(4096);
        for s in &spans {
            check_span(s, u64::from(max_block))?;
        }
        let refs: Vec<_> = spans.iter().collect();
        let ranges: Vec<_> = spans.iter().map(|s| (s.start, s.end)).collect();
        let rate = format.bytes_per_second();
        let mut out = RunOutcome {
            direct_refused: spans.iter().any(|s| s.direct_refused),
            ..RunOutcome::default()
        };
        let cached = spans.iter().any(|s| s.cached);
        for &bs in &self.blocks {
            if env.ctl.cancelled() {
                out.interrupted = true;
                break;
            }
            let mut p = RoundRobin::new(&ranges, bs);
            let limits = Limits {
                duration: Some(self.duration),
                bytes: None,
            };
            let s = env.drive(
                &refs,
                &mut p,
                bs,
                limits,
                &format!("{} files at {}", self.files, fmt_size(bs.into())),
            )?;
            let tracks = (mb_per_s(s.bytes(), s.elapsed) * 1e6 / rate as f64).floor();
            let per_track = self.ram_per_track(bs, rate) as f64;
            out.push(
                fmt_size(bs.into()),
                cached,
                &s,
                vec![
                    metric(&m::BLOCK_BYTES, f64::from(bs)),
                    metric(&m::TRACKS, tracks),
                    metric(&m::RAM_PER_TRACK_BYTES, per_track),
                    metric(&m::RAM_TOTAL_BYTES, per_track * tracks),
                ],
            );
        }
        Ok(out)
    }

    fn fio_jobs(
        &self,
        _target: &crate::target::TargetInfo,
        _io: &crate::io::IoSettings,
    ) -> Vec<FioJob> {
        self.blocks
            .iter()
            .map(|&bs| {
                FioJob::new(
                    format!("sweep-{}", fio::size(bs.into())),
                    format!(
                        "sweep: {} files read round robin, one {} request each in turn",
                        self.files,
                        fmt_size(bs.into())
                    ),
                )
                .set("rw", "read")
                .set("bs", fio::size(bs.into()))
                .set("nrfiles", self.files)
                .set("filesize", fio::size(self.file_size))
                .set("size", fio::size(self.file_size * u64::from(self.files)))
                .set("filename_format", "trackbench-sweep.$filenum")
                .set("file_service_type", "roundrobin:1")
                .set("openfiles", self.files)
                .flag("time_based")
                .set("runtime", fio::secs(self.duration))
            })
            .collect()
    }

    fn findings(&self, s: &Section) -> Vec<Finding> {
        let best = s
            .rows
            .iter()
            .filter_map(|r| Some((r, r.get(&m::TRACKS)?.spread.median)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        best.map(|(row, tracks)| Finding::BestBlock {
            block: row.label.clone(),
            tracks,
            ram_bytes: row
                .get(&m::RAM_TOTAL_BYTES)
                .map_or(0.0, |f| f.spread.median) as u64,
            files: self.files,
        })
        .into_iter()
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ram_per_track_rounds_to_blocks_and_keeps_two() {
        let s = Sweep {
            files: 8,
            blocks: vec![],
            duration: Duration::from_secs(1),
            file_size: 0,
            buffer: Duration::from_secs(2),
        };
        // 2 s of 48k/24 mono = 288,000 bytes: 71 blocks of 4K (290,816), or two of 1M.
        assert_eq!(s.ram_per_track(4096, 144_000), 71 * 4096);
        assert_eq!(s.ram_per_track(1 << 20, 144_000), 2 << 20);
        assert_eq!(s.ram_per_track(256 << 10, 144_000), 2 * (256 << 10));
    }
}
