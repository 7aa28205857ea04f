//! `bounce`: an offline export, in the two stages of seed 001. Stage one renders T tracks of D
//! seconds as 32-bit float WAV files, written as a renderer produces them: one render block of
//! every track in turn, through the page cache, then every file made durable. Stage two reads
//! each track back cold, finds its peak, normalises it to full scale and writes it as 24-bit —
//! real conversion, its CPU included — each file made durable. Each stage's time, MB/s, and how
//! many times faster than real time.

use super::{Env, RunOutcome, Workload};
use crate::audio::{self, DATA_OFFSET, Format, SampleType};
use crate::control::Control;
use crate::datadir::DataDir;
use crate::error::{Error, Result};
use crate::fio::{self, FioJob};
use crate::io::{self, AlignedBuf, OpenMode};
use crate::platform::FileAt;
use crate::result::findings::Finding;
use crate::result::metrics as m;
use crate::result::{RunRow, Section, metric};
use crate::stats::thread_cpu_s;
use crate::units::fmt_size;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Frames of one track a renderer produces at a time.
pub const RENDER_BLOCK_FRAMES: u64 = 4096;

#[derive(Debug, Clone)]
pub struct Bounce {
    /// The session's rate and channels; the render is 32-bit float, the export 24-bit.
    pub format: Format,
    pub tracks: u32,
    pub duration: Duration,
}

/// A track's rendered audio: a deterministic signal of its own level (so normalising has
/// something to do), one render block long. Made before the clock starts — the render's CPU is
/// the plugins', not the disk's — and written again for every block, stamped with the block's
/// index in its first sample (so a misplaced block is caught).
pub fn render_base(track: u32, out: &mut [u8]) {
    // The track's level, 0.1 to 0.9 of full scale.
    let h = (u64::from(track).wrapping_add(1)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let level = 0.1 + 0.8 * ((h >> 40) as f32 / (1u64 << 24) as f32);
    let mut x = h | 1;
    for s in out.chunks_exact_mut(4) {
        // xorshift64: noise in [-1, 1), scaled to the track's level.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let u = f32::from_bits(0x3f80_0000 | ((x >> 41) as u32)) - 1.5;
        s.copy_from_slice(&(2.0 * u * level).to_le_bytes());
    }
}

/// Stamps block `block` of a track: its first sample is the index, as a float far below the
/// track's level.
pub fn stamp(block: u64, out: &mut [u8]) {
    out[..4].copy_from_slice(&((block % 1_000_000) as f32 * 1e-8).to_le_bytes());
}

impl Bounce {
    fn float_format(&self) -> Format {
        Format {
            bits: 32,
            sample_type: SampleType::Float,
            ..self.format
        }
    }

    fn out_format(&self) -> Format {
        Format {
            bits: 24,
            sample_type: SampleType::Int,
            ..self.format
        }
    }

    fn frames(&self) -> u64 {
        (self.duration.as_secs_f64() * f64::from(self.format.rate_hz)).round() as u64
    }

    /// Each rendered file's audio bytes.
    pub fn float_bytes(&self) -> u64 {
        self.frames() * self.float_format().bytes_per_frame()
    }

    fn out_bytes(&self) -> u64 {
        self.frames() * self.out_format().bytes_per_frame()
    }
}

/// How long a stage took, and the CPU it cost.
#[derive(Debug, Clone, Copy)]
struct Stage {
    secs: f64,
    cpu_s: f64,
}

/// New files of ours named `names` in the data directory, each to hold `len` bytes of audio
/// after its header: their paths.
fn new_files(dd: &mut DataDir, names: &[String], len: u64) -> Result<Vec<PathBuf>> {
    let items: Vec<(String, String, u64)> = names
        .iter()
        .map(|name| (name.clone(), format!("bounce:{name}"), DATA_OFFSET + len))
        .collect();
    Ok(dd
        .register_many(&items)?
        .into_iter()
        .map(|(path, _)| path)
        .collect())
}

impl Bounce {
    /// Stage one: one render block of every track in turn, as a renderer produces them, each
    /// track's blocks its base stamped with the block's number; then every file flushed. The
    /// stage, and the tracks' bases (what stage two checks it reads).
    fn render(&self, files: &[(PathBuf, File)], ctl: &Control<'_>) -> Result<(Stage, Vec<u8>)> {
        let ff = self.float_format();
        let float_len = self.float_bytes();
        let block_bytes = (RENDER_BLOCK_FRAMES * ff.bytes_per_frame()) as usize;
        let mut bases = vec![0u8; block_bytes * files.len()];
        for (t, base) in bases.chunks_exact_mut(block_bytes).enumerate() {
            render_base(t as u32, base);
        }
        let blocks = float_len.div_ceil(block_bytes as u64);
        ctl.progress.begin(
            "render (32-bit float)",
            float_len * files.len() as u64,
            crate::control::ProgressUnit::Bytes,
        );
        let cpu0 = thread_cpu_s();
        let started = Instant::now();
        for (path, f) in files {
            f.write_all_at(&audio::wav_header(&ff, float_len), 0)
                .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
        }
        let mut written = 0u64;
        for b in 0..blocks {
            if ctl.cancelled() {
                ctl.progress.end();
                return Err(Error::Interrupted);
            }
            let at = b * block_bytes as u64;
            let len = (float_len - at).min(block_bytes as u64) as usize;
            for (t, (path, f)) in files.iter().enumerate() {
                let block = &mut bases[t * block_bytes..t * block_bytes + len];
                stamp(b, block);
                f.write_all_at(block, DATA_OFFSET + at)
                    .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
                written += len as u64;
            }
            ctl.progress.set(written);
        }
        for (path, f) in files {
            f.sync_all()
                .map_err(|e| Error::io(format!("cannot flush {}", path.display()), e))?;
        }
        let stage = Stage {
            secs: started.elapsed().as_secs_f64(),
            cpu_s: thread_cpu_s() - cpu0,
        };
        ctl.progress.end();
        Ok((stage, bases))
    }

    /// Stage two: each track read back cold and checked against what stage one wrote (`bases`),
    /// normalised and written as 24-bit to `exports`, each flushed. The stage, and each track's
    /// peak.
    fn export(
        &self,
        files: &[(PathBuf, File)],
        exports: &[PathBuf],
        mut bases: Vec<u8>,
        ctl: &Control<'_>,
    ) -> Result<(Stage, Vec<f32>)> {
        let (float_len, out_len) = (self.float_bytes(), self.out_bytes());
        let of = self.out_format();
        let block_bytes = bases.len() / files.len().max(1);
        for (path, f) in files {
            crate::dataset::drop_file_pages(f, path)?;
        }
        let mut float = AlignedBuf::try_new(float_len.div_ceil(4096) as usize * 4096)?;
        let mut out = vec![0u8; DATA_OFFSET as usize + out_len as usize];
        ctl.progress.begin(
            "normalise to 24-bit",
            files.len() as u64,
            crate::control::ProgressUnit::Count,
        );
        let cpu0 = thread_cpu_s();
        let started = Instant::now();
        let mut peaks = Vec::with_capacity(files.len());
        for (t, ((path, f), out_path)) in files.iter().zip(exports).enumerate() {
            if ctl.cancelled() {
                ctl.progress.end();
                return Err(Error::Interrupted);
            }
            let data = &mut float[..float_len as usize];
            f.read_exact_at(data, DATA_OFFSET)
                .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
            let base = &mut bases[t * block_bytes..(t + 1) * block_bytes];
            check_render(path, data, base)?;
            let peak = audio::peak_f32(data);
            peaks.push(peak);
            out[..DATA_OFFSET as usize].copy_from_slice(&audio::wav_header(&of, out_len));
            audio::convert_f32_to_i24(
                data,
                audio::normalise_gain(peak),
                &mut out[DATA_OFFSET as usize..],
            );
            let o = io::open(out_path, OpenMode::ReadWrite, true)?.file;
            o.write_all_at(&out, 0)
                .and_then(|()| o.sync_all())
                .map_err(|e| Error::io(format!("cannot write {}", out_path.display()), e))?;
            ctl.progress.set(t as u64 + 1);
        }
        let stage = Stage {
            secs: started.elapsed().as_secs_f64(),
            cpu_s: thread_cpu_s() - cpu0,
        };
        ctl.progress.end();
        Ok((stage, peaks))
    }

    /// The export's rows (each stage's time, rate, speed against real time and CPU) and what
    /// it bounced.
    fn outcome(&self, render: Stage, export: Stage, peaks: &[f32]) -> RunOutcome {
        let n = u64::from(self.tracks);
        let (float_len, out_len) = (self.float_bytes(), self.out_bytes());
        let audio_s = n as f64 * self.duration.as_secs_f64();
        let row = |label: &str, stage: Stage, bytes: u64| {
            let secs = stage.secs.max(f64::MIN_POSITIVE);
            RunRow {
                label: label.into(),
                metrics: vec![
                    metric(&m::STAGE_S, stage.secs),
                    metric(&m::RATE_MB_PER_S, bytes as f64 / secs / 1e6),
                    metric(&m::X_REAL_TIME, audio_s / secs),
                    metric(&m::CPU_PCT, 100.0 * stage.cpu_s / secs),
                ],
            }
        };
        RunOutcome {
            cached: true,
            rows: vec![
                row(RENDER_ROW, render, n * float_len),
                row(EXPORT_ROW, export, n * (float_len + out_len)),
            ],
            findings: vec![Finding::Bounced {
                tracks: self.tracks,
                seconds: self.duration.as_secs_f64(),
                render_bytes: n * float_len,
                export_bytes: n * out_len,
                quietest: peaks.iter().copied().fold(f32::INFINITY, f32::min),
                loudest: peaks.iter().copied().fold(0.0, f32::max),
            }],
            ..RunOutcome::default()
        }
    }
}

/// Every block of a rendered track read back (`data`) is the track's `base` with its own stamp:
/// what stage one wrote.
fn check_render(path: &Path, data: &[u8], base: &mut [u8]) -> Result<()> {
    let block_bytes = base.len();
    for (b, got) in data.chunks(block_bytes).enumerate() {
        stamp(b as u64, base);
        if got != &base[..got.len()] {
            return Err(Error::Verify {
                path: path.to_path_buf(),
                offset: DATA_OFFSET + (b * block_bytes) as u64,
                detail: "the rendered audio read back is not what was written".into(),
            });
        }
    }
    Ok(())
}

impl Workload for Bounce {
    fn name(&self) -> &'static str {
        "bounce"
    }

    fn title(&self) -> String {
        format!(
            "Offline export: {} tracks of {} rendered as 32-bit float, then normalised to 24-bit",
            self.tracks,
            humantime::format_duration(self.duration)
        )
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "format": self.format,
            "tracks": self.tracks,
            "duration_s": self.duration.as_secs_f64(),
            "render_block_frames": RENDER_BLOCK_FRAMES,
            "render_bytes_per_file": self.float_bytes(),
            "export_bytes_per_file": self.out_bytes(),
        })
    }

    fn fio_jobs(
        &self,
        _target: &crate::target::TargetInfo,
        _io: &crate::io::IoSettings,
    ) -> Vec<FioJob> {
        let block = RENDER_BLOCK_FRAMES * self.float_format().bytes_per_frame();
        vec![
            FioJob::new(
                "bounce-render",
                format!(
                    "bounce, stage one: {} files of {} written one {} render block each in turn, through the page cache, then flushed",
                    self.tracks,
                    fmt_size(self.float_bytes()),
                    fmt_size(block)
                ),
            )
            .set("rw", "write")
            .set("bs", fio::size(block))
            .set("nrfiles", self.tracks)
            .set("filesize", self.float_bytes())
            .set("size", self.float_bytes() * u64::from(self.tracks))
            .set("filename_format", "trackbench-render.$filenum")
            .set("file_service_type", "roundrobin:1")
            .set("openfiles", self.tracks)
            .set("direct", 0)
            .set("end_fsync", 1),
        ]
    }

    fn run_once(&mut self, env: &mut Env<'_>, _run: u32) -> Result<RunOutcome> {
        let n = self.tracks as usize;
        let (float_len, out_len) = (self.float_bytes(), self.out_bytes());
        let render_names: Vec<String> = (0..n).map(|i| format!("render-{i:04}.wav")).collect();
        let out_names: Vec<String> = (0..n).map(|i| format!("bounce-{i:04}.wav")).collect();
        let all: Vec<&str> = render_names
            .iter()
            .chain(&out_names)
            .map(String::as_str)
            .collect();
        let (dd, ctl) = env.data_dir("bounce (it writes its files)")?;
        dd.ensure_space_replacing(n as u64 * (2 * DATA_OFFSET + float_len + out_len), &all)?;
        let mut files = Vec::with_capacity(n);
        for path in new_files(dd, &render_names, float_len)? {
            // Through the page cache, as a renderer writes.
            let f = io::open(&path, OpenMode::ReadWrite, true)?.file;
            files.push((path, f));
        }
        let (render, bases) = self.render(&files, ctl)?;
        dd.mark_complete_many(&render_names.iter().map(String::as_str).collect::<Vec<_>>())?;
        let exports = new_files(dd, &out_names, out_len)?;
        let (export, peaks) = self.export(&files, &exports, bases, ctl)?;
        dd.mark_complete_many(&out_names.iter().map(String::as_str).collect::<Vec<_>>())?;
        let outcome = self.outcome(render, export, &peaks);
        drop(files);
        if !dd.keep() {
            dd.delete_many(&all)?;
        }
        Ok(outcome)
    }

    fn findings(&self, s: &Section) -> Vec<Finding> {
        let x = |row: &str| {
            s.row(row)
                .and_then(|r| r.get(&m::X_REAL_TIME))
                .map(|f| f.spread.median)
        };
        match (x(RENDER_ROW), x(EXPORT_ROW)) {
            (Some(render), Some(export)) => vec![Finding::BounceSpeed {
                tracks: self.tracks,
                render_x: render,
                export_x: export,
            }],
            _ => Vec::new(),
        }
    }
}

/// The rows of a bounce.
pub const RENDER_ROW: &str = "render (32-bit float)";
pub const EXPORT_ROW: &str = "normalise to 24-bit";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_differ_by_track_and_block_and_stay_inside_full_scale() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        render_base(1, &mut a);
        render_base(2, &mut b);
        assert_ne!(a, b);
        let peak = audio::peak_f32(&a);
        assert!(peak > 0.05 && peak < 0.95, "{peak}");
        let mut again = vec![0u8; 4096];
        render_base(1, &mut again);
        assert_eq!(a, again, "deterministic");
        stamp(0, &mut a);
        stamp(1, &mut again);
        assert_ne!(a, again, "blocks differ by their stamp");
        assert!(f32::from_le_bytes([again[0], again[1], again[2], again[3]]) < 1e-6);
    }
}
