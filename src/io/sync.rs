//! The synchronous backend: pread/pwrite, one request at a time, as most DAWs' disk threads do.

use super::{AlignedBuf, Completion, IoBackend, Op, OpKind};
use crate::error::Result;
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};

pub struct SyncBackend {
    fds: Vec<RawFd>,
    buf: AlignedBuf,
    done: Option<Completion>,
}

impl SyncBackend {
    /// The files must stay open for the life of the backend.
    pub fn new(files: &[&File], buf_len: usize) -> Result<SyncBackend> {
        Ok(SyncBackend {
            fds: files.iter().map(|f| f.as_raw_fd()).collect(),
            buf: AlignedBuf::new(buf_len),
            done: None,
        })
    }
}

impl IoBackend for SyncBackend {
    fn name(&self) -> &'static str {
        "sync"
    }
    fn queue_depth(&self) -> usize {
        1
    }
    fn slot(&self, _slot: u32) -> &[u8] {
        &self.buf
    }
    fn slot_mut(&mut self, _slot: u32) -> &mut [u8] {
        &mut self.buf
    }

    fn submit(&mut self, op: Op) -> Result<()> {
        assert!(
            self.done.is_none(),
            "sync backend holds one request at a time"
        );
        let fd = self.fds[op.file as usize];
        let ptr = if op.external.is_null() {
            assert!(
                op.len as usize <= self.buf.len(),
                "request larger than its buffer"
            );
            self.buf.as_mut_ptr()
        } else {
            op.external
        };
        // SAFETY: ptr is valid for op.len bytes (the slot, or caller memory by the Op contract); fd is
        // open for the backend's life.
        let r = unsafe {
            match op.kind {
                OpKind::Read => libc::pread(fd, ptr.cast(), op.len as usize, op.offset as i64),
                OpKind::Write => libc::pwrite(fd, ptr.cast(), op.len as usize, op.offset as i64),
            }
        };
        let result = if r < 0 {
            -(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO) as i64)
        } else {
            r as i64
        };
        self.done = Some(Completion {
            slot: op.slot,
            result,
        });
        Ok(())
    }

    fn complete(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<()> {
        out.extend(self.done.take());
        Ok(())
    }
}
