//! The portable parallel backend: up to `queue_depth` requests in flight, carried out by a pool
//! of threads doing positional reads and writes (`pread`/`pwrite`, or `ReadFile`/`WriteFile`
//! at an offset on Windows). It is the parallel backend where io_uring is absent (macOS,
//! Windows), and `--backend threads` on Linux for comparison. A request is handed to an idle
//! thread at once: with as many threads as the queue depth (up to `MAX_THREADS`), every
//! request in flight is in the kernel, as with io_uring.
//!
//! The streaming engine's butler uses it, reading into its rings and checking on its own
//! thread. The classic workloads' transfers do not: there the thread backend runs as
//! [`super::workers`], threads that each take, perform and check their own requests, without
//! the two hand-offs per request this pool makes.

use super::{Completion, IoBackend, Op, OpKind, Slots};
use crate::error::{Error, Result};
use crate::platform::FileAt;
use std::fs::File;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Threads the pool starts at most: beyond this, requests wait for a thread (a deeper queue is
/// then deeper only in the pool, not in the kernel, and the backend says so in its name).
pub const MAX_THREADS: usize = 64;

/// A request as a worker sees it: where its memory is, as an address (the caller keeps it
/// valid and untouched until the completion is reaped, by the `Op` contract).
struct Job {
    file: usize,
    kind: OpKind,
    offset: u64,
    len: usize,
    addr: usize,
    slot: u32,
}

pub struct PoolBackend {
    slots: Slots,
    jobs: Option<Sender<Job>>,
    done: Receiver<Completion>,
    workers: Vec<JoinHandle<()>>,
}

impl PoolBackend {
    /// The files are duplicated for the workers; the originals may close when the caller likes.
    pub fn new(files: &[&File], buf_len: usize, queue_depth: usize) -> Result<PoolBackend> {
        let files: Vec<File> = files
            .iter()
            .map(|f| f.try_clone())
            .collect::<std::io::Result<_>>()
            .map_err(|e| Error::io("cannot share the files with the I/O threads", e))?;
        let files = Arc::new(files);
        let (jobs_tx, jobs_rx) = channel::<Job>();
        let jobs_rx = Arc::new(Mutex::new(jobs_rx));
        let (done_tx, done_rx) = channel::<Completion>();
        let threads = queue_depth.clamp(1, MAX_THREADS);
        let mut workers = Vec::with_capacity(threads);
        for k in 0..threads {
            let (files, jobs, done) = (Arc::clone(&files), Arc::clone(&jobs_rx), done_tx.clone());
            let w = std::thread::Builder::new()
                .name(format!("trackbench-io-{k}"))
                .spawn(move || worker(&files, &jobs, &done))
                .map_err(|e| Error::io("cannot start an I/O thread", e))?;
            workers.push(w);
        }
        Ok(PoolBackend {
            slots: Slots::new(queue_depth, buf_len)?,
            jobs: Some(jobs_tx),
            done: done_rx,
            workers,
        })
    }
}

fn worker(files: &[File], jobs: &Mutex<Receiver<Job>>, done: &Sender<Completion>) {
    loop {
        // The lock is held only while taking a job, never during the I/O.
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        let result = positional(&files[job.file], &job);
        if done
            .send(Completion {
                slot: job.slot,
                result,
            })
            .is_err()
        {
            return;
        }
    }
}

/// One positional transfer: bytes moved, or the negative OS error code.
fn positional(file: &File, job: &Job) -> i64 {
    let r = match job.kind {
        OpKind::Read => {
            // SAFETY: `addr` is valid for `len` bytes and untouched by anyone else until this
            // request's completion is reaped (the `Op` contract).
            let buf = unsafe { std::slice::from_raw_parts_mut(job.addr as *mut u8, job.len) };
            file.read_at(buf, job.offset)
        }
        OpKind::Write => {
            // SAFETY: as above, read-only.
            let buf = unsafe { std::slice::from_raw_parts(job.addr as *const u8, job.len) };
            file.write_at(buf, job.offset)
        }
    };
    super::completion_result(r)
}

impl IoBackend for PoolBackend {
    fn name(&self) -> &'static str {
        "threads"
    }
    fn queue_depth(&self) -> usize {
        self.slots.len()
    }
    fn slot(&self, slot: u32) -> &[u8] {
        self.slots.buf(slot)
    }
    fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        self.slots.buf_mut(slot)
    }

    fn submit(&mut self, op: Op) -> Result<()> {
        let addr = self.slots.target(&op) as usize;
        let job = Job {
            file: op.file as usize,
            kind: op.kind,
            offset: op.offset,
            len: op.len as usize,
            addr,
            slot: op.slot,
        };
        let sent = self.jobs.as_ref().is_some_and(|tx| tx.send(job).is_ok());
        if !sent {
            return Err(Error::io(
                "the I/O threads have stopped",
                std::io::Error::from(std::io::ErrorKind::BrokenPipe),
            ));
        }
        self.slots.in_flight += 1;
        Ok(())
    }

    fn complete(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<()> {
        let want = min.min(self.slots.in_flight);
        let mut got = 0;
        while got < want {
            match self.done.recv() {
                Ok(c) => {
                    out.push(c);
                    got += 1;
                }
                Err(e) => {
                    return Err(Error::io(
                        "the I/O threads have stopped",
                        std::io::Error::other(e),
                    ));
                }
            }
        }
        while let Ok(c) = self.done.try_recv() {
            out.push(c);
            got += 1;
        }
        self.slots.in_flight -= got;
        Ok(())
    }
}

impl Drop for PoolBackend {
    fn drop(&mut self) {
        // Requests still in flight finish before their buffers go: the threads drain the queue,
        // then see it closed.
        self.jobs.take();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_and_writes_land_where_asked_with_many_in_flight() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let data: Vec<u8> = (0..64 * 4096u32).map(|i| (i % 251) as u8).collect();
        f.write_all(&data).unwrap();
        let mut b = PoolBackend::new(&[&f], 4096, 8).unwrap();
        assert_eq!(b.name(), "threads");
        for slot in 0..8u32 {
            b.submit(Op {
                kind: OpKind::Read,
                file: 0,
                offset: u64::from(slot) * 3 * 4096,
                len: 4096,
                slot,
                external: std::ptr::null_mut(),
            })
            .unwrap();
        }
        let mut out = Vec::new();
        b.complete(8, &mut out).unwrap();
        assert_eq!(out.len(), 8);
        for c in &out {
            assert_eq!(c.result, 4096);
            let off = c.slot as usize * 3 * 4096;
            assert_eq!(b.slot(c.slot), &data[off..off + 4096]);
        }
        // A write from caller memory, then read back.
        let mut mine = crate::io::AlignedBuf::new(4096);
        mine.fill(7);
        b.submit(Op {
            kind: OpKind::Write,
            file: 0,
            offset: 4096,
            len: 4096,
            slot: 0,
            external: mine.as_mut_ptr(),
        })
        .unwrap();
        out.clear();
        b.complete(1, &mut out).unwrap();
        assert_eq!(
            out,
            vec![Completion {
                slot: 0,
                result: 4096
            }]
        );
        let back = std::fs::read(&path).unwrap();
        assert!(back[4096..8192].iter().all(|&x| x == 7));
        // A failure comes back as a negative error code, not a panic.
        drop(b);
        let ro = std::fs::File::open(&path).unwrap();
        let mut b = PoolBackend::new(&[&ro], 4096, 2).unwrap();
        b.submit(Op {
            kind: OpKind::Write,
            file: 0,
            offset: 0,
            len: 4096,
            slot: 1,
            external: std::ptr::null_mut(),
        })
        .unwrap();
        out.clear();
        b.complete(1, &mut out).unwrap();
        assert_eq!(out[0].slot, 1);
        assert!(out[0].result < 0, "{:?}", out[0]);
    }
}
