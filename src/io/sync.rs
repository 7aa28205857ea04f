//! The synchronous backend: positional reads and writes (pread/pwrite), one request at a time, as most DAWs' disk threads do.

use super::{AlignedBuf, Completion, IoBackend, Op, OpKind};
use crate::error::Result;
use crate::platform::{FileAt, RawFile, borrow_raw, raw_file};
use std::fs::File;

pub struct SyncBackend {
    fds: Vec<RawFile>,
    buf: AlignedBuf,
    done: Option<Completion>,
    /// Reads are issued as consecutive calls of at most this many bytes (None: one call).
    read_calls: Option<usize>,
}

impl SyncBackend {
    /// The files must stay open for the life of the backend.
    pub fn new(files: &[&File], buf_len: usize) -> Result<SyncBackend> {
        Ok(SyncBackend {
            fds: files.iter().map(|f| raw_file(f)).collect(),
            buf: AlignedBuf::try_new(buf_len)?,
            done: None,
            read_calls: None,
        })
    }

    /// Reads in consecutive calls of at most `bytes` each, one after another, as a program
    /// reading through a library's small buffer does (the kernel's read-ahead sees that stream).
    pub fn with_read_calls(mut self, bytes: Option<u64>) -> SyncBackend {
        self.read_calls = bytes.map(|b| b.max(1) as usize);
        self
    }
}

/// Reads `buf` at `offset` in calls of at most `piece` bytes; stops early at the end of the
/// file, and returns what was read (or the first error).
fn read_in_calls(
    file: &impl FileAt,
    buf: &mut [u8],
    offset: u64,
    piece: usize,
) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        let end = (done + piece).min(buf.len());
        let n = file.read_at(&mut buf[done..end], offset + done as u64)?;
        if n == 0 {
            break;
        }
        done += n;
    }
    Ok(done)
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
                OpKind::Read => match self.read_calls {
                    Some(piece) => read_in_calls(
                        &*file,
                        std::slice::from_raw_parts_mut(ptr, len),
                        op.offset,
                        piece,
                    ),
                    None => file.read_at(std::slice::from_raw_parts_mut(ptr, len), op.offset),
                },
                OpKind::Write => file.write_at(std::slice::from_raw_parts(ptr, len), op.offset),
            }
        };
        let result = super::completion_result(r);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Reading in small calls gives the same bytes as one call, ends at the end of the file,
    /// and a request larger than the rest of the file returns what is there.
    #[test]
    fn reads_in_calls_match_one_read() {
        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        f.write_all(&data).unwrap();
        let mut whole = SyncBackend::new(&[&f], 65536).unwrap();
        let mut pieces = SyncBackend::new(&[&f], 65536)
            .unwrap()
            .with_read_calls(Some(8190));
        for (offset, len) in [(0u64, 65536u32), (12_345, 40_000), (90_000, 20_000)] {
            let op = Op {
                kind: OpKind::Read,
                file: 0,
                offset,
                len,
                slot: 0,
                external: std::ptr::null_mut(),
            };
            let mut got = Vec::new();
            for b in [&mut whole, &mut pieces] {
                b.submit(op).unwrap();
                let mut c = Vec::new();
                b.complete(1, &mut c).unwrap();
                let n = c[0].result as usize;
                got.push(b.slot(0)[..n].to_vec());
            }
            let end = (offset as usize + len as usize).min(data.len());
            assert_eq!(got[0], &data[offset as usize..end]);
            assert_eq!(got[1], got[0], "at {offset}+{len}");
        }
    }
}
