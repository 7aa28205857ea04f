//! `sweep`: N files read round robin at block sizes from 4K to 1M (DskBench, Echo Reporter): the
//! rate each block size sustains, the tracks that rate carries at the chosen format, and the buffer
//! RAM that block size costs per track and in total.

use super::{Env, RunOutcome, Workload, check_span};
use crate::dataset;
use crate::error::{Error, Result};
use crate::fio::{self, FioJob};
use crate::io::driver::Limits;
use crate::io::patterns::RoundRobin;
use crate::result::findings::Finding;
use crate::result::metrics as m;
use crate::result::{Section, metric};
use crate::units::{fmt_size, mb_per_s};
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
    /// The memory this process may pin (`MemoryBudget::limit`), once a run has measured: what
    /// the buffers of the tracks counted are held against.
    pub memory_limit: Option<u64>,
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
        let limit = env.memory.limit;
        self.memory_limit = Some(limit);
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
                    metric(
                        &m::TRACKS_IN_MEMORY,
                        tracks.min((limit as f64 / per_track.max(1.0)).floor()),
                    ),
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
        let mut f: Vec<Finding> = best_block(s)
            .map(|(row, tracks)| Finding::BestBlock {
                block: row.label.clone(),
                tracks,
                ram_bytes: (tracks * row.median(&m::RAM_PER_TRACK_BYTES).unwrap_or(0.0)) as u64,
                files: self.files,
            })
            .into_iter()
            .collect();
        let beyond: Vec<&crate::result::Row> = s
            .rows
            .iter()
            .filter(|r| {
                let fit = r.median(&m::TRACKS_IN_MEMORY);
                fit.zip(r.median(&m::TRACKS)).is_some_and(|(f, t)| f < t)
            })
            .collect();
        if let (Some(limit_bytes), false) = (self.memory_limit, beyond.is_empty()) {
            f.push(Finding::BuffersBeyondMemory {
                blocks: beyond.iter().map(|r| r.label.clone()).collect(),
                ram_bytes: beyond
                    .iter()
                    .map(|r| r.median(&m::RAM_TOTAL_BYTES).unwrap_or(0.0) as u64)
                    .collect(),
                limit_bytes,
            });
        }
        f
    }
}

/// The block size that carries the most tracks whose buffers fit in memory, and that count
/// (documents before `tracks_in_memory`: the most tracks).
pub fn best_block(s: &Section) -> Option<(&crate::result::Row, f64)> {
    s.rows
        .iter()
        .filter_map(|r| {
            let fit = r
                .median(&m::TRACKS_IN_MEMORY)
                .or_else(|| r.median(&m::TRACKS))?;
            Some((r, fit))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
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
            memory_limit: None,
        };
        // 2 s of 48k/24 mono = 288,000 bytes: 71 blocks of 4K (290,816), or two of 1M.
        assert_eq!(s.ram_per_track(4096, 144_000), 71 * 4096);
        assert_eq!(s.ram_per_track(1 << 20, 144_000), 2 << 20);
        assert_eq!(s.ram_per_track(256 << 10, 144_000), 2 * (256 << 10));
    }

    /// A sweep's section: rows of (block, tracks, RAM per track) with the figures `run_once`
    /// gives them against a memory limit of `limit`.
    fn section(limit: u64, rows: &[(&str, f64, f64)]) -> Section {
        use crate::result::{Figure, Row};
        use crate::stats::Spread;
        let fig = |def: &m::Def, v: f64| Figure {
            name: def.name.into(),
            unit: def.unit.into(),
            spread: Spread::of(&[v]),
        };
        Section {
            workload: "sweep".into(),
            title: "sweep".into(),
            settings: serde_json::json!({}),
            cached: false,
            interrupted: false,
            runs: 1,
            rows: rows
                .iter()
                .map(|&(label, tracks, per)| Row {
                    label: label.into(),
                    figures: vec![
                        fig(&m::TRACKS, tracks),
                        fig(&m::RAM_PER_TRACK_BYTES, per),
                        fig(&m::RAM_TOTAL_BYTES, tracks * per),
                        fig(
                            &m::TRACKS_IN_MEMORY,
                            tracks.min((limit as f64 / per).floor()),
                        ),
                    ],
                })
                .collect(),
            findings: vec![],
            detail: None,
        }
    }

    #[test]
    fn the_most_tracks_are_those_whose_buffers_fit_and_the_rest_are_said() {
        // As `run` measured on this machine: 13185 tracks at 256K (512K each), 12887 at 1M
        // (2M each, 25.2G), against the 11.7G this process may pin.
        let limit = 11_700_000_000;
        let s = section(
            limit,
            &[
                ("4K", 604.0, 290_816.0),
                ("256K", 13185.0, 524_288.0),
                ("1M", 12887.0, 2_097_152.0),
            ],
        );
        let w = Sweep {
            files: 8,
            blocks: vec![],
            duration: Duration::from_secs(1),
            file_size: 0,
            buffer: Duration::from_secs(2),
            memory_limit: Some(limit),
        };
        let f = w.findings(&s);
        assert!(
            matches!(&f[0], Finding::BestBlock { block, tracks, .. } if block == "256K" && *tracks == 13185.0),
            "{f:?}"
        );
        assert!(
            matches!(&f[1], Finding::BuffersBeyondMemory { blocks, limit_bytes, .. }
                if blocks == &["1M".to_string()] && *limit_bytes == limit),
            "{f:?}"
        );
        // With less memory, 1M's count that fits (a quarter of 256K's per track) loses, and
        // 256K is counted at what fits too.
        let limit = 4_000_000_000;
        let s = section(
            limit,
            &[("256K", 13185.0, 524_288.0), ("1M", 12887.0, 2_097_152.0)],
        );
        let (row, tracks) = best_block(&s).expect("rows");
        assert_eq!((row.label.as_str(), tracks), ("256K", 7629.0));
    }
}
