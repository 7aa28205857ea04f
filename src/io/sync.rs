//! The synchronous backend: positional reads and writes (pread/pwrite), one request at a time, as most DAWs' disk threads do.

use super::{AlignedBuf, Completion, IoBackend, Op, OpKind};
use crate::error::Result;
use crate::platform::{FileAt, RawFile, borrow_raw, raw_file};
use std::fs::File;

pub struct SyncBackend {
    fds: Vec<RawFile>,
    buf: AlignedBuf,
    done: Option<Completion>,
}

impl SyncBackend {
    /// The files must stay open for the life of the backend.
    pub fn new(files: &[&File], buf_len: usize) -> Result<SyncBackend> {
        Ok(SyncBackend {
            fds: files.iter().map(|f| raw_file(f)).collect(),
            buf: AlignedBuf::try_new(buf_len)?,
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
        // SAFETY: the file is open for the backend's life (the caller's promise).
        let file = unsafe { borrow_raw(fd) };
        let len = op.len as usize;
        // SAFETY: ptr is valid for op.len bytes (the slot, or caller memory by the Op contract)
        // and nobody else touches it until the completion is reaped.
        let r = unsafe {
            match op.kind {
                OpKind::Read => file.read_at(std::slice::from_raw_parts_mut(ptr, len), op.offset),
                OpKind::Write => file.write_at(std::slice::from_raw_parts(ptr, len), op.offset),
            }
        };
        let result = match r {
            Ok(n) => n as i64,
            Err(e) => -i64::from(e.raw_os_error().unwrap_or(5)),
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
