//! `load`: an orchestral template opening — every sample file of a library opened, its header
//! read and then its preload, as a sampler does when a template loads. Cold (the files' pages
//! dropped, reads O_DIRECT; with `--drop-caches`, as root, the whole page, dentry and inode cache
//! dropped first, which also makes `open()` cold) and warm (everything cached); one loader thread
//! (as most software loads) and a pool of Q. Total time, files/s, MB/s, and the time spent opening
//! against reading.

use super::{Env, RunOutcome, Workload};
use crate::audio::{DATA_OFFSET, Format};
use crate::content;
use crate::dataset::{self, Span};
use crate::engine::voices::library_lengths;
use crate::error::{Error, Result};
use crate::io::{self, AlignedBuf, OpenMode};
use crate::platform::FileAt;
use crate::result::findings::Finding;
use crate::result::metrics as m;
use crate::result::{Section, metric};
use crate::units::fmt_size;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Load {
    pub format: Format,
    /// The library: F samples of these lengths (the sampler's, so the two share files).
    pub library: super::sampler::LibrarySpec,
    /// Bytes of each sample read after its header (whole blocks).
    pub preload_bytes: u64,
    /// Loader threads of the parallel passes.
    pub threads: u32,
    /// Drop the whole page cache (and dentries and inodes) before each cold pass (root only).
    pub drop_caches: bool,
}

/// One pass: its time, and the summed time its threads spent opening and reading.
struct Pass {
    wall: Duration,
    open: Duration,
    read: Duration,
    bytes: u64,
}

/// What one loader thread did in a pass: its time opening and reading, its bytes, and when it
/// finished.
struct Loaded {
    open: Duration,
    read: Duration,
    bytes: u64,
    ended: Instant,
}

/// The library's files as a load sees them.
#[derive(Clone, Copy)]
struct Library<'a> {
    paths: &'a [PathBuf],
    /// Each file's content id.
    ids: &'a [u32],
    /// Each file's audio bytes.
    lens: &'a [u64],
}

/// How a pass reads.
#[derive(Clone, Copy, PartialEq)]
enum Temperature {
    Cold,
    Warm,
}

impl Load {
    /// Loads every file: open, read the header, read the preload, check both, close; `threads`
    /// at a time, each taking the next file.
    fn pass(
        &self,
        lib: &Library<'_>,
        temp: Temperature,
        threads: u32,
        env: &Env<'_>,
        label: &str,
    ) -> Result<Pass> {
        let next = AtomicUsize::new(0);
        let files = lib.paths.len();
        env.ctl
            .progress
            .begin(label, files as u64, crate::control::ProgressUnit::Count);
        let started = Instant::now();
        let results: Vec<Result<Loaded>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads.max(1))
                .map(|_| s.spawn(|| self.loader(lib, temp, &next, env.ctl.cancel)))
                .collect();
            // The loaders' progress, from here: the progress sink is this thread's.
            while !handles.iter().all(|h| h.is_finished()) {
                env.ctl
                    .progress
                    .set(next.load(Ordering::Relaxed).min(files) as u64);
                std::thread::sleep(Duration::from_millis(50));
            }
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::io(
                            "a loader thread failed",
                            std::io::Error::other("panic"),
                        ))
                    })
                })
                .collect()
        });
        env.ctl.progress.end();
        let mut pass = Pass {
            wall: Duration::ZERO,
            open: Duration::ZERO,
            read: Duration::ZERO,
            bytes: 0,
        };
        for r in results {
            let l = r?;
            pass.open += l.open;
            pass.read += l.read;
            pass.bytes += l.bytes;
            pass.wall = pass.wall.max(l.ended - started);
        }
        Ok(pass)
    }

    /// One loader thread: takes the next file until none is left, and loads it.
    fn loader(
        &self,
        lib: &Library<'_>,
        temp: Temperature,
        next: &AtomicUsize,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Loaded> {
        let mut buf = AlignedBuf::try_new((DATA_OFFSET + self.preload_bytes) as usize)?;
        let (mut open, mut read, mut bytes) = (Duration::ZERO, Duration::ZERO, 0u64);
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= lib.paths.len() {
                break;
            }
            let (o, r, b) = self.load_file(lib, i, &mut buf, temp == Temperature::Cold)?;
            (open, read, bytes) = (open + o, read + r, bytes + b);
        }
        // When this loader finished: the pass ends with the last one, not when the progress
        // loop next looks.
        Ok(Loaded {
            open,
            read,
            bytes,
            ended: Instant::now(),
        })
    }

    /// Loads file `i` of `lib` into `buf` (uncached where `direct`): opens it, reads its
    /// header, then its preload (a sampler parses one before the other), and checks both:
    /// every block's tag, and the noise of one block, a different one each file, as every
    /// classic read is checked. The time opening and reading took, and the bytes read.
    fn load_file(
        &self,
        lib: &Library<'_>,
        i: usize,
        buf: &mut AlignedBuf,
        direct: bool,
    ) -> Result<(Duration, Duration, u64)> {
        let path = &lib.paths[i];
        let cannot_read = |e| Error::io(format!("cannot read {}", path.display()), e);
        let t = Instant::now();
        let f = io::open(path, OpenMode::ReadOnly, !direct)?;
        let t1 = Instant::now();
        let head = &mut buf[..DATA_OFFSET as usize];
        f.file.read_exact_at(head, 0).map_err(cannot_read)?;
        let n = self.preload_bytes.min(lib.lens[i]) as usize;
        let body = &mut buf[DATA_OFFSET as usize..DATA_OFFSET as usize + n];
        f.file
            .read_exact_at(body, DATA_OFFSET)
            .map_err(cannot_read)?;
        let read = t1.elapsed();
        if &buf[..4] != b"RIFF" && &buf[..4] != b"RF64" {
            return Err(Error::Verify {
                path: path.clone(),
                offset: 0,
                detail: "no WAV header".into(),
            });
        }
        let body = &buf[DATA_OFFSET as usize..DATA_OFFSET as usize + n];
        content::verify(body, lib.ids[i], DATA_OFFSET, false).map_err(|m| Error::Verify {
            path: path.clone(),
            offset: m.offset,
            detail: m.detail,
        })?;
        let (k, len) = content::noise_sample(n, i as u64);
        let piece = &body[k.min(n)..(k + len).min(n)];
        if let Some(off) = content::noise_mismatch(piece, DATA_OFFSET + k as u64) {
            return Err(Error::Verify {
                path: path.clone(),
                offset: off,
                detail: "tag is right but the noise differs (corrupted data)".into(),
            });
        }
        Ok((t1 - t, read, DATA_OFFSET + n as u64))
    }

    /// Makes the next pass cold: every file's pages dropped, and with `--drop-caches` the whole
    /// cache (after a sync, so dirty pages go too). Returns what was done.
    fn chill(&self, spans: &[Span]) -> Result<&'static str> {
        crate::dataset::drop_all_cached(spans)?;
        if cfg!(windows) {
            return Ok(
                "reads bypass the cache (FILE_FLAG_NO_BUFFERING), so they come from the device; directory entries and file records may still be cached, so open() may be warm",
            );
        }
        if !crate::platform::CAN_DROP_PAGES {
            return Ok(
                "the files' pages could not be dropped on this platform: reads bypass the cache (F_NOCACHE) but pages cached before may still serve them, so cold means after a reboot or `sudo purge`",
            );
        }
        if self.drop_caches {
            // SAFETY: sync has no preconditions.
            #[cfg(unix)]
            unsafe {
                libc::sync()
            };
            std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| {
                Error::io(
                    "--drop-caches: cannot write /proc/sys/vm/drop_caches (it needs root)",
                    e,
                )
            })?;
            return Ok("the whole page, dentry and inode cache dropped (open() cold too)");
        }
        Ok(
            "each file's pages dropped (posix_fadvise); directory entries and inodes may still be cached, so open() may be warm",
        )
    }
}

/// A pass's row label: "cold · 1 thread", "warm · 8 threads".
fn pass_label(temp: Temperature, threads: u32) -> String {
    let temp = if temp == Temperature::Cold {
        "cold"
    } else {
        "warm"
    };
    let s = if threads == 1 { "" } else { "s" };
    format!("{temp} · {threads} thread{s}")
}

/// A pass's row: its time, files and bytes a second, and the share and mean of the time spent
/// opening and reading `files` files.
fn pass_row(label: String, p: &Pass, files: usize) -> crate::result::RunRow {
    let secs = p.wall.as_secs_f64().max(f64::MIN_POSITIVE);
    let busy = (p.open + p.read).as_secs_f64().max(f64::MIN_POSITIVE);
    crate::result::RunRow {
        label,
        metrics: vec![
            metric(&m::LOAD_S, secs),
            metric(&m::FILES_PER_S, files as f64 / secs),
            metric(&m::RATE_MB_PER_S, p.bytes as f64 / secs / 1e6),
            metric(&m::OPEN_PCT, 100.0 * p.open.as_secs_f64() / busy),
            metric(&m::OPEN_US_MEAN, p.open.as_secs_f64() * 1e6 / files as f64),
            metric(&m::READ_US_MEAN, p.read.as_secs_f64() * 1e6 / files as f64),
        ],
    }
}

impl Workload for Load {
    fn name(&self) -> &'static str {
        "load"
    }

    fn title(&self) -> String {
        format!(
            "Template load: {} sample files, header and {} preload each, 1 and {} loader threads",
            self.library.files,
            fmt_size(self.preload_bytes),
            self.threads
        )
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "format": self.format,
            "library": self.library,
            "preload_bytes": self.preload_bytes,
            "threads": self.threads,
            "drop_caches": self.drop_caches,
        })
    }

    fn run_once(&mut self, env: &mut Env<'_>, _run: u32) -> Result<RunOutcome> {
        let l = self.library;
        let lens = library_lengths(l.files, l.min_s, l.max_s, &self.format, l.seed);
        let format = self.format;
        let (dd, ctl) = env.data_dir("load (it lays out its sample library)")?;
        let (spans, _) = dataset::ensure_wav_set(dd, "sample", &lens, &format, false, ctl)?;
        let paths: Vec<PathBuf> = spans.iter().map(|s| s.path.clone()).collect();
        let ids: Vec<u32> = spans.iter().map(|s| s.content_id.unwrap_or(0)).collect();
        let lib = Library {
            paths: &paths,
            ids: &ids,
            lens: &lens,
        };
        let mut out = RunOutcome::default();
        let mut cold_how = "";
        for (temp, threads) in [
            (Temperature::Cold, 1),
            (Temperature::Cold, self.threads),
            (Temperature::Warm, 1),
            (Temperature::Warm, self.threads),
        ] {
            if env.ctl.cancelled() {
                out.interrupted = true;
                break;
            }
            match temp {
                Temperature::Cold => cold_how = self.chill(&spans)?,
                Temperature::Warm if threads == 1 => {
                    // Everything into the page cache first: a warm load finds it there.
                    self.pass(
                        &lib,
                        Temperature::Warm,
                        self.threads,
                        env,
                        "warming the cache",
                    )?;
                }
                Temperature::Warm => {}
            }
            let label = pass_label(temp, threads);
            let p = match self.pass(&lib, temp, threads, env, &label) {
                Err(Error::Interrupted) => {
                    out.interrupted = true;
                    break;
                }
                r => r?,
            };
            out.rows.push(pass_row(label, &p, paths.len()));
        }
        // What the next workload finds: not this pass's cache.
        crate::dataset::drop_all_cached(&spans)?;
        out.findings.push(Finding::ColdMeans {
            how: cold_how.to_string(),
        });
        Ok(out)
    }

    fn findings(&self, s: &Section) -> Vec<Finding> {
        let get = |row: &str| {
            s.row(row)
                .and_then(|r| r.get(&m::LOAD_S))
                .map(|f| f.spread.median)
        };
        let threads = self.threads;
        let par = |t: &str| format!("{t} · {threads} threads");
        match (
            get("cold · 1 thread"),
            get(&par("cold")),
            get("warm · 1 thread"),
        ) {
            (Some(cold), Some(cold_par), Some(warm)) => vec![Finding::TemplateLoad {
                files: self.library.files,
                cold_s: cold,
                cold_parallel_s: cold_par,
                warm_s: warm,
                threads,
            }],
            _ => Vec::new(),
        }
    }
}
