//! The thread backend's own measuring loop, as fio runs its psync jobs: each of `threads` workers
//! takes its next request from the pattern itself, performs it with a positional read or write
//! into its own buffer, checks what it read and records it, then takes the next. Nothing is
//! handed from one thread to another per request.
//!
//! The pool backend ([`super::pool`]) hands each request to an idle thread and its completion
//! back to the one measuring thread, which checks it: two wake-ups per request, and on this
//! 2-core machine a third of the samples in the scheduler, 0.79–0.86 of fio's 32 psync jobs
//! (docs/lab/classic-vs-fio.md). The classic workloads measure the thread backend with this loop; the
//! streaming engine, whose butler reads into its rings, still uses the pool.

use super::driver::{
    DirStats, DriveFile, DriveStats, Limits, Pattern, TIMELINE_STEP, check_completion, fill_write,
};
use super::{AlignedBuf, OpKind, completion_result};
use crate::content::FillState;
use crate::control::{Control, ProgressUnit};
use crate::error::{Error, Result};
use crate::platform::FileAt;
use crate::stats::thread_cpu_s;
use std::fs::File;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What every worker takes its next request from, under one lock held only while taking it.
struct Issue<'p> {
    pattern: &'p mut dyn Pattern,
    issued_bytes: u64,
    stopping: bool,
    interrupted: bool,
}

/// What one worker measured.
struct WorkerStats {
    read: DirStats,
    write: DirStats,
    cpu_s: f64,
    last_completion: Instant,
}

/// Runs `pattern` over `files` with `threads` workers, each with a buffer of `buf_len` bytes,
/// until it ends, a limit is reached, or the run is cancelled; `drive_files` names the files
/// (and their content ids) in the same order. The measuring thread shows progress and, in a
/// studio, keeps the timeline; the workers' CPU time is the run's.
#[allow(clippy::too_many_arguments)]
pub fn drive_threads(
    files: &[&File],
    drive_files: &[DriveFile],
    buf_len: usize,
    threads: usize,
    pattern: &mut dyn Pattern,
    limits: Limits,
    label: &str,
    ctl: &Control<'_>,
) -> Result<DriveStats> {
    let threads = threads.clamp(1, super::pool::MAX_THREADS);
    let bufs = (0..threads)
        .map(|_| AlignedBuf::try_new(buf_len))
        .collect::<Result<Vec<_>>>()?;
    let start = Instant::now();
    let deadline = limits.duration.map(|d| start + d);
    let issue = Mutex::new(Issue {
        pattern,
        issued_bytes: 0,
        stopping: false,
        interrupted: false,
    });
    // Totals so far, for progress and a studio's timeline; `failed` stops every worker.
    let (bytes_done, ops_done) = (AtomicU64::new(0), AtomicU64::new(0));
    let failed = AtomicBool::new(false);
    let running = AtomicU64::new(threads as u64);
    // The last worker to finish wakes the measuring thread, which otherwise sleeps between its
    // progress updates: a short transfer (one small file laid out) ends when its I/O does.
    let watcher = std::thread::current();
    let (total, unit) = match (limits.bytes, limits.duration) {
        (Some(b), _) => (b, ProgressUnit::Bytes),
        (None, Some(d)) => (d.as_millis() as u64, ProgressUnit::Millis),
        (None, None) => (0, ProgressUnit::Bytes),
    };
    ctl.progress.begin(label, total, unit);
    let mut timeline = Vec::new();
    let results: Vec<Result<WorkerStats>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (k, buf) in bufs.into_iter().enumerate() {
            let w = Worker {
                files,
                drive_files,
                issue: &issue,
                limits,
                deadline,
                label,
                cancel: ctl.cancel,
                bytes_done: &bytes_done,
                ops_done: &ops_done,
                failed: &failed,
                running: &running,
                watcher: &watcher,
            };
            let h = std::thread::Builder::new()
                .name(format!("trackbench-io-{k}"))
                .spawn_scoped(scope, move || w.run(buf, start));
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // The workers already started stop at their next request.
                    failed.store(true, Ordering::Relaxed);
                    running.fetch_sub((threads - k) as u64, Ordering::Relaxed);
                    let mut out: Vec<Result<WorkerStats>> =
                        vec![Err(Error::io("cannot start an I/O thread", e))];
                    out.extend(handles.into_iter().map(join));
                    return out;
                }
            }
        }
        timeline = watch(ctl, start, unit, &running, (&bytes_done, &ops_done));
        handles.into_iter().map(join).collect()
    });
    ctl.progress.end();
    let interrupted = issue.lock().map(|i| i.interrupted).unwrap_or(false);
    gathered(results, start, interrupted, timeline)
}

/// The measuring thread's watch while workers run: progress every `PROGRESS_EVERY`, and in a
/// studio the timeline of bytes and requests done every `TIMELINE_STEP`, until the last worker
/// has finished (it wakes this thread). The timeline.
fn watch(
    ctl: &Control<'_>,
    start: Instant,
    unit: ProgressUnit,
    running: &AtomicU64,
    (bytes_done, ops_done): (&AtomicU64, &AtomicU64),
) -> Vec<(u64, u64)> {
    let mut timeline = Vec::new();
    let watch_timeline = !ctl.world.is_alone();
    let mut next_mark = start + TIMELINE_STEP;
    let mut last_progress = start;
    while running.load(Ordering::Acquire) > 0 {
        let now = Instant::now();
        if watch_timeline {
            while now >= next_mark {
                timeline.push((
                    bytes_done.load(Ordering::Relaxed),
                    ops_done.load(Ordering::Relaxed),
                ));
                next_mark += TIMELINE_STEP;
            }
        }
        if now - last_progress >= PROGRESS_EVERY {
            last_progress = now;
            ctl.progress.set(match unit {
                ProgressUnit::Bytes => bytes_done.load(Ordering::Relaxed),
                ProgressUnit::Millis => (now - start).as_millis() as u64,
                ProgressUnit::Count => ops_done.load(Ordering::Relaxed),
            });
        }
        let wake = if watch_timeline {
            next_mark.min(now + PROGRESS_EVERY)
        } else {
            now + PROGRESS_EVERY
        };
        std::thread::park_timeout(wake.saturating_duration_since(Instant::now()).max(TICK_MIN));
    }
    timeline
}

/// The workers' figures together: both ways' requests, their CPU time, and the run's length
/// to the last completion; the first worker's error, where one failed.
fn gathered(
    results: Vec<Result<WorkerStats>>,
    start: Instant,
    interrupted: bool,
    timeline: Vec<(u64, u64)>,
) -> Result<DriveStats> {
    let mut read = DirStats::default();
    let mut write = DirStats::default();
    let mut cpu_s = 0.0;
    let mut last = start;
    for r in results {
        let w = r?;
        read.merge(&w.read);
        write.merge(&w.write);
        cpu_s += w.cpu_s;
        last = last.max(w.last_completion);
    }
    Ok(DriveStats {
        read,
        write,
        elapsed: last - start,
        cpu_s,
        interrupted,
        timeline,
        stonewall: None,
    })
}

const PROGRESS_EVERY: Duration = Duration::from_millis(50);
const TICK_MIN: Duration = Duration::from_millis(1);

fn join(h: std::thread::ScopedJoinHandle<'_, Result<WorkerStats>>) -> Result<WorkerStats> {
    h.join().unwrap_or_else(|_| {
        Err(Error::io(
            "an I/O thread panicked",
            std::io::Error::other("panic"),
        ))
    })
}

/// One worker's view of the run.
struct Worker<'a, 'p> {
    files: &'a [&'a File],
    drive_files: &'a [DriveFile],
    issue: &'a Mutex<Issue<'p>>,
    limits: Limits,
    deadline: Option<Instant>,
    label: &'a str,
    cancel: &'a AtomicBool,
    bytes_done: &'a AtomicU64,
    ops_done: &'a AtomicU64,
    failed: &'a AtomicBool,
    running: &'a AtomicU64,
    watcher: &'a std::thread::Thread,
}

/// Marks a worker gone however it leaves, a panic included: a failure stops the others, and the
/// last one out wakes the measuring thread, which would otherwise wait for it for ever.
struct Leaving<'a> {
    failed: &'a AtomicBool,
    running: &'a AtomicU64,
    watcher: &'a std::thread::Thread,
    ok: bool,
}

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        if !self.ok {
            self.failed.store(true, Ordering::Relaxed);
        }
        if self.running.fetch_sub(1, Ordering::Release) == 1 {
            self.watcher.unpark();
        }
    }
}

impl Worker<'_, '_> {
    fn run(self, buf: AlignedBuf, start: Instant) -> Result<WorkerStats> {
        let mut leaving = Leaving {
            failed: self.failed,
            running: self.running,
            watcher: self.watcher,
            ok: false,
        };
        let r = self.work(buf, start);
        leaving.ok = r.is_ok();
        r
    }

    fn work(&self, mut buf: AlignedBuf, start: Instant) -> Result<WorkerStats> {
        let cpu0 = thread_cpu_s();
        let mut fill_state = FillState::default();
        let mut read = DirStats::default();
        let mut write = DirStats::default();
        let mut last_completion = start;
        while let Some(spec) = self.next(last_completion) {
            let f = &self.drive_files[spec.file as usize];
            let file = self.files[spec.file as usize];
            let len = spec.len as usize;
            let (t, r) = match spec.kind {
                OpKind::Write => {
                    fill_write(&spec, f, &mut buf[..len], &mut fill_state, self.label)?;
                    let t = Instant::now();
                    (t, file.write_at(&buf[..len], spec.offset))
                }
                OpKind::Read => {
                    // A read overwrites the buffer: the next write must lay its noise again.
                    fill_state = FillState::default();
                    let t = Instant::now();
                    (t, file.read_at(&mut buf[..len], spec.offset))
                }
            };
            let now = Instant::now();
            last_completion = now;
            let n = check_completion(&spec, f, completion_result(r), &buf, read.ops)?;
            match spec.kind {
                OpKind::Read => &mut read,
                OpKind::Write => &mut write,
            }
            .count(n, now - t);
            self.bytes_done.fetch_add(n, Ordering::Relaxed);
            self.ops_done.fetch_add(1, Ordering::Relaxed);
        }
        Ok(WorkerStats {
            read,
            write,
            cpu_s: thread_cpu_s() - cpu0,
            last_completion,
        })
    }

    /// The next request, or `None` once the pattern ends, a limit is reached, the run is
    /// cancelled or another worker failed. `now` is this worker's last completion: recent enough
    /// for the deadline.
    fn next(&self, now: Instant) -> Option<super::driver::OpSpec> {
        let mut is = self.issue.lock().ok()?;
        if is.stopping {
            return None;
        }
        if self.cancel.load(Ordering::Relaxed) {
            is.interrupted = true;
            is.stopping = true;
            return None;
        }
        if self.failed.load(Ordering::Relaxed)
            || self.limits.bytes.is_some_and(|b| is.issued_bytes >= b)
            || self.deadline.is_some_and(|d| now >= d)
        {
            is.stopping = true;
            return None;
        }
        let Some(spec) = is.pattern.next_op() else {
            is.stopping = true;
            return None;
        };
        is.issued_bytes += u64::from(spec.len);
        Some(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::NoProgress;
    use crate::io::driver::OpSpec;
    use std::io::{Read, Seek, SeekFrom, Write};
    use std::sync::Mutex as StdMutex;

    /// Plays back a fixed list of requests, in order.
    struct Script(std::vec::IntoIter<OpSpec>);
    impl Pattern for Script {
        fn next_op(&mut self) -> Option<OpSpec> {
            self.0.next()
        }
    }

    fn seq(kind: OpKind, end: u64, bs: u32) -> Script {
        Script(
            (0..end / u64::from(bs))
                .map(|i| OpSpec {
                    kind,
                    file: 0,
                    offset: i * u64::from(bs),
                    len: bs,
                })
                .collect::<Vec<_>>()
                .into_iter(),
        )
    }

    /// One file of `len` zero bytes in a temporary directory, tagged as trackbench's media
    /// `content_id` or a user's (`None`).
    struct Fixture {
        _dir: tempfile::TempDir,
        file: std::fs::File,
        df: DriveFile,
    }

    impl Fixture {
        fn new(len: u64, content_id: Option<u32>) -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("media");
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
                .unwrap();
            file.set_len(len).unwrap();
            Fixture {
                _dir: dir,
                file,
                df: DriveFile { path, content_id },
            }
        }

        /// `pattern` with `threads` workers and buffers of `buf_len`, in `world`.
        fn drive_in(
            &self,
            world: &dyn crate::studio::World,
            (buf_len, threads): (usize, usize),
            pattern: &mut dyn Pattern,
            limits: Limits,
            cancelled: bool,
        ) -> Result<DriveStats> {
            let cancel = AtomicBool::new(cancelled);
            let ctl = Control {
                cancel: &cancel,
                progress: &NoProgress,
                world,
            };
            let df = std::slice::from_ref(&self.df);
            drive_threads(
                &[&self.file],
                df,
                buf_len,
                threads,
                pattern,
                limits,
                "t",
                &ctl,
            )
        }

        fn drive(
            &self,
            shape: (usize, usize),
            pattern: &mut dyn Pattern,
            limits: Limits,
        ) -> Result<DriveStats> {
            self.drive_in(&crate::studio::Alone, shape, pattern, limits, false)
        }
    }

    #[test]
    fn workers_write_tagged_media_then_read_it_back_checked_and_counted() {
        let len = 4u64 << 20;
        let fx = Fixture::new(len, Some(7));
        let mut w = seq(OpKind::Write, len, 65536);
        let s = fx.drive((65536, 8), &mut w, Limits::default()).unwrap();
        assert_eq!((s.write.ops, s.write.bytes, s.read.ops), (64, len, 0));
        assert_eq!(s.write.latency.count(), 64);
        // What the eight workers wrote is every block's own content, wherever each went.
        let mut all = vec![0u8; len as usize];
        (&fx.file).seek(SeekFrom::Start(0)).unwrap();
        (&fx.file).read_exact(&mut all).unwrap();
        crate::content::verify(&all, 7, 0, true).unwrap();

        // Reads stop at the byte limit, each counted once.
        let mut r = seq(OpKind::Read, len, 4096);
        let lim = Limits {
            bytes: Some(1 << 20),
            duration: None,
        };
        let s = fx.drive((4096, 32), &mut r, lim).unwrap();
        assert_eq!((s.read.ops, s.read.bytes), (256, 1 << 20));
        assert_eq!(s.read.latency.count(), 256);
        assert!(!s.interrupted && s.cpu_s > 0.0);

        // A corrupted tag fails the run with its block named, and stops the other workers.
        (&fx.file).seek(SeekFrom::Start(3 * 4096 + 9)).unwrap();
        (&fx.file).write_all(&[0x5a; 4]).unwrap();
        let mut r = seq(OpKind::Read, len, 4096);
        let e = fx.drive((4096, 4), &mut r, Limits::default()).unwrap_err();
        assert!(matches!(e, Error::Verify { offset: 12288, .. }), "{e}");
    }

    #[test]
    fn a_users_file_is_never_written_and_a_short_read_is_an_error() {
        let fx = Fixture::new(1 << 20, None);
        let mut w = seq(OpKind::Write, 1 << 20, 4096);
        let e = fx.drive((4096, 4), &mut w, Limits::default()).unwrap_err();
        assert!(matches!(e, Error::WriteRefused { .. }), "{e}");
        let mut all = vec![1u8; 1 << 20];
        (&fx.file).read_exact(&mut all).unwrap();
        assert!(all.iter().all(|&b| b == 0), "nothing written");
        // A read past the end of the file comes back short.
        let mut past = Script(
            vec![OpSpec {
                kind: OpKind::Read,
                file: 0,
                offset: (1 << 20) - 2048,
                len: 4096,
            }]
            .into_iter(),
        );
        let e = fx
            .drive((4096, 2), &mut past, Limits::default())
            .unwrap_err();
        assert!(matches!(e, Error::ShortIo { got: 2048, .. }), "{e}");
    }

    #[test]
    fn a_cancelled_run_issues_nothing_and_a_duration_ends_the_run() {
        let fx = Fixture::new(1 << 20, None);
        let mut r = seq(OpKind::Read, 1 << 20, 4096);
        let s = fx
            .drive_in(
                &crate::studio::Alone,
                (4096, 4),
                &mut r,
                Limits::default(),
                true,
            )
            .unwrap();
        assert!(s.interrupted);
        assert_eq!(s.ops(), 0);

        /// Reads the same block for ever.
        struct Forever;
        impl Pattern for Forever {
            fn next_op(&mut self) -> Option<OpSpec> {
                Some(OpSpec {
                    kind: OpKind::Read,
                    file: 0,
                    offset: 0,
                    len: 4096,
                })
            }
        }
        let lim = Limits {
            duration: Some(Duration::from_millis(200)),
            bytes: None,
        };
        let s = fx.drive((4096, 3), &mut Forever, lim).unwrap();
        assert!(!s.interrupted && s.read.ops > 0);
        assert!(s.elapsed >= Duration::from_millis(200), "{:?}", s.elapsed);
    }

    #[test]
    fn a_worker_that_panics_ends_the_run_with_an_error_not_a_hang() {
        let fx = Fixture::new(1 << 20, None);
        /// A request larger than the workers' buffers, after a few good ones.
        struct Oversized(u32);
        impl Pattern for Oversized {
            fn next_op(&mut self) -> Option<OpSpec> {
                self.0 += 1;
                Some(OpSpec {
                    kind: OpKind::Read,
                    file: 0,
                    offset: 0,
                    len: if self.0 > 5 { 8192 } else { 4096 },
                })
            }
        }
        let e = fx
            .drive((4096, 3), &mut Oversized(0), Limits::default())
            .unwrap_err();
        assert!(e.to_string().contains("panicked"), "{e}");
    }

    #[test]
    fn a_studio_rank_keeps_a_timeline_of_what_its_workers_did() {
        /// A world of two whose gathers nobody calls here: only `is_alone` matters.
        struct Two;
        impl crate::studio::World for Two {
            fn rank(&self) -> u32 {
                0
            }
            fn size(&self) -> u32 {
                2
            }
            fn all_gather(
                &self,
                mine: &[u8],
                _cancel: &AtomicBool,
            ) -> crate::error::Result<Vec<Vec<u8>>> {
                Ok(vec![mine.to_vec(), mine.to_vec()])
            }
        }
        let fx = Fixture::new(1 << 20, None);
        let calls = StdMutex::new(0u64);
        /// Reads block after block, slowly enough to span several timeline steps.
        struct Slow<'a>(&'a StdMutex<u64>);
        impl Pattern for Slow<'_> {
            fn next_op(&mut self) -> Option<OpSpec> {
                let mut n = self.0.lock().ok()?;
                *n += 1;
                std::thread::sleep(Duration::from_millis(2));
                (*n <= 40).then_some(OpSpec {
                    kind: OpKind::Read,
                    file: 0,
                    offset: 0,
                    len: 4096,
                })
            }
        }
        let s = fx
            .drive_in(&Two, (4096, 2), &mut Slow(&calls), Limits::default(), false)
            .unwrap();
        assert_eq!(s.read.ops, 40);
        assert!(s.timeline.len() >= 5, "{:?}", s.timeline);
        assert!(s.timeline.windows(2).all(|w| w[0].1 <= w[1].1));
        assert!(s.timeline.last().is_some_and(|&(_, ops)| ops <= 40));
    }
}
