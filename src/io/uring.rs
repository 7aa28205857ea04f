//! The io_uring backend: up to `queue_depth` requests in flight, with registered buffers and files
//! where the kernel allows them (fewer page pins and file lookups per request), and, where the
//! kernel has it (6.1), completions run only when the measuring thread asks for them
//! (`DEFER_TASKRUN`, as fio sets up its rings) instead of interrupting it as they arrive.

use super::{Completion, IoBackend, Op, OpKind, Slots};
use crate::error::{Error, Result};
use io_uring::{IoUring, opcode, squeue, types};
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};

pub struct UringBackend {
    ring: IoUring,
    fds: Vec<RawFd>,
    slots: Slots,
    fixed_files: bool,
    fixed_bufs: bool,
    queued: usize,
    /// Set up disabled, so that the thread that first submits becomes its only issuer (a ring
    /// with deferred task work serves one thread): enabled then.
    disabled: bool,
}

/// A ring whose completions are posted when its one issuing thread waits for them, as fio's
/// are (`COOP_TASKRUN | SINGLE_ISSUER | DEFER_TASKRUN`), created disabled so that the issuer
/// is the thread that enables it; a plain ring where the kernel lacks these (before 6.1).
fn new_ring(entries: u32) -> std::io::Result<(IoUring, bool)> {
    match IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_r_disabled()
        .build(entries)
    {
        Ok(ring) => Ok((ring, true)),
        Err(_) => IoUring::new(entries).map(|ring| (ring, false)),
    }
}

impl UringBackend {
    /// The files must stay open for the life of the backend.
    pub fn new(files: &[&File], buf_len: usize, queue_depth: usize) -> Result<UringBackend> {
        let entries = (queue_depth.max(1) as u32).next_power_of_two();
        let (ring, disabled) = new_ring(entries).map_err(|e| {
            Error::io(
                format!("cannot set up io_uring with {entries} entries (use --backend sync where io_uring is unavailable)"),
                e,
            )
        })?;
        let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
        let mut slots = Slots::new(queue_depth, buf_len)?;
        let fixed_files = !fds.is_empty() && ring.submitter().register_files(&fds).is_ok();
        let iovecs: Vec<libc::iovec> = slots
            .bufs_mut()
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: the buffers live as long as the ring (both are fields of self, and the ring is
        // dropped first because it is declared first); they are never reallocated.
        // Registration can fail under a small RLIMIT_MEMLOCK; plain reads then work as well.
        let fixed_bufs = unsafe { ring.submitter().register_buffers(&iovecs).is_ok() };
        Ok(UringBackend {
            ring,
            fds,
            slots,
            fixed_files,
            fixed_bufs,
            queued: 0,
            disabled,
        })
    }

    fn entry(&mut self, op: Op) -> squeue::Entry {
        let external = !op.external.is_null();
        let buf = self.slots.target(&op);
        let idx = op.slot as u16;
        let fixed = self.fixed_bufs && !external;
        macro_rules! build {
            ($fd:expr) => {
                match (op.kind, fixed) {
                    (OpKind::Read, true) => opcode::ReadFixed::new($fd, buf, op.len, idx)
                        .offset(op.offset)
                        .build(),
                    (OpKind::Read, false) => opcode::Read::new($fd, buf, op.len)
                        .offset(op.offset)
                        .build(),
                    (OpKind::Write, true) => opcode::WriteFixed::new($fd, buf, op.len, idx)
                        .offset(op.offset)
                        .build(),
                    (OpKind::Write, false) => opcode::Write::new($fd, buf, op.len)
                        .offset(op.offset)
                        .build(),
                }
            };
        }
        let e = if self.fixed_files {
            build!(types::Fixed(op.file))
        } else {
            build!(types::Fd(self.fds[op.file as usize]))
        };
        e.user_data(u64::from(op.slot))
    }

    fn enter(&mut self, want: usize) -> Result<()> {
        if self.disabled {
            self.ring
                .submitter()
                .register_enable_rings()
                .map_err(|e| Error::io("cannot enable the io_uring ring", e))?;
            self.disabled = false;
        }
        loop {
            match self.ring.submitter().submit_and_wait(want) {
                Ok(n) => {
                    self.queued -= n.min(self.queued);
                    return Ok(());
                }
                // A signal (Ctrl-C) interrupts the wait; the caller checks its cancel flag after.
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {
                    if want == 0 {
                        return Ok(());
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    // Completion queue full: reap before submitting more.
                    return Ok(());
                }
                Err(e) => return Err(Error::io("io_uring submit failed", e)),
            }
        }
    }
}

impl IoBackend for UringBackend {
    fn name(&self) -> &'static str {
        "uring"
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
        let entry = self.entry(op);
        // SAFETY: the entry points into a buffer owned by self that stays untouched until its
        // completion is reaped (the caller owns the slot discipline).
        while unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.enter(0)?;
        }
        self.queued += 1;
        self.slots.in_flight += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.queued > 0 {
            self.enter(0)?;
        }
        Ok(())
    }

    fn complete(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<()> {
        let want = min.min(self.slots.in_flight);
        let mut got = 0;
        loop {
            let before = out.len();
            for cqe in self.ring.completion() {
                out.push(Completion {
                    slot: cqe.user_data() as u32,
                    result: i64::from(cqe.result()),
                });
            }
            let n = out.len() - before;
            got += n;
            self.slots.in_flight -= n;
            if got >= want && self.ring.submission().is_empty() {
                return Ok(());
            }
            self.enter(want.saturating_sub(got))?;
        }
    }
}
