//! How I/O is issued: aligned buffers, opening files uncached (O_DIRECT, F_NOCACHE or
//! FILE_FLAG_NO_BUFFERING; or a labelled fallback), the `IoBackend` trait with its synchronous,
//! io_uring (Linux) and thread-pool implementations, and the driver that keeps a pattern's
//! requests in flight and measures them.

pub mod aligned;
pub mod device_model;
pub mod driver;
pub mod patterns;
pub mod pool;
pub mod sync;
#[cfg(target_os = "linux")]
pub mod uring;
pub mod workers;

pub use aligned::AlignedBuf;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::path::Path;

/// Direction of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    Read,
    Write,
}

impl OpKind {
    /// "read" or "write", for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
        }
    }
}

/// One request handed to a backend: `len` bytes at `offset` of registered file `file`, into or out of
/// the backend's buffer `slot`, or of caller memory at `external` when it is not null (the
/// streaming engine reads straight into its rings). `slot` also names the request in completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    pub slot: u32,
    /// Caller memory (page aligned for O_DIRECT) that must stay valid until the completion.
    pub external: *mut u8,
}

/// A finished request: its slot and the kernel's answer (bytes moved, or a negative errno).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    pub result: i64,
}

/// One way of issuing I/O. A backend owns `queue_depth()` aligned buffers (slots) and a table of
/// open files; the caller never has more than `queue_depth()` requests outstanding.
pub trait IoBackend {
    fn name(&self) -> &'static str;
    fn queue_depth(&self) -> usize;
    fn slot(&self, slot: u32) -> &[u8];
    fn slot_mut(&mut self, slot: u32) -> &mut [u8];
    /// Queues a request. A synchronous backend performs it at once.
    fn submit(&mut self, op: Op) -> Result<()>;
    /// Sends queued requests to the kernel without waiting. A backend whose `submit` already
    /// does has nothing to do.
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    /// Sends queued requests to the kernel and waits until at least `min` have finished (fewer if
    /// fewer are outstanding), appending them to `out`.
    fn complete(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<()>;
    /// Waits for at least one completion, but not past `deadline_ns` on the waiter's clock: a
    /// waiter that must act then (run the audio tick in virtual time) names it. Real backends
    /// wait for a completion whatever the deadline; their tick runs on a thread of its own.
    fn complete_by(&mut self, _deadline_ns: Option<u64>, out: &mut Vec<Completion>) -> Result<()> {
        self.complete(1, out)
    }
}

/// A parallel backend's request slots: a buffer each, and how many requests are in flight.
pub struct Slots {
    bufs: Vec<AlignedBuf>,
    /// Requests queued and not yet completed.
    pub in_flight: usize,
}

impl Slots {
    /// `count` slots (at least one) of `buf_len` bytes each.
    pub fn new(count: usize, buf_len: usize) -> Result<Slots> {
        Ok(Slots {
            bufs: (0..count.max(1))
                .map(|_| AlignedBuf::try_new(buf_len))
                .collect::<Result<_>>()?,
            in_flight: 0,
        })
    }

    /// How many there are: the backend's queue depth.
    pub fn len(&self) -> usize {
        self.bufs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }

    pub fn buf(&self, slot: u32) -> &[u8] {
        &self.bufs[slot as usize]
    }

    pub fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        &mut self.bufs[slot as usize]
    }

    /// Where `op`'s data lands (caller memory, or its slot's buffer), after the checks a
    /// parallel backend makes before it queues a request: inside its slot's buffer, and no more
    /// in flight than there are slots.
    pub fn target(&mut self, op: &Op) -> *mut u8 {
        assert!(
            (op.slot as usize) < self.bufs.len()
                && (!op.external.is_null() || op.len as usize <= self.bufs[op.slot as usize].len()),
            "request outside its slot"
        );
        assert!(self.in_flight < self.bufs.len(), "more requests than slots");
        if op.external.is_null() {
            self.bufs[op.slot as usize].as_mut_ptr()
        } else {
            op.external
        }
    }

    /// The buffers, for a backend that registers them with the kernel.
    pub fn bufs_mut(&mut self) -> &mut [AlignedBuf] {
        &mut self.bufs
    }
}

/// Which backend to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// pread/pwrite, one request at a time.
    Sync,
    /// io_uring with up to `qd` requests in flight (Linux).
    Uring,
    /// A pool of threads doing positional I/O with up to `qd` requests in flight: the parallel
    /// backend where io_uring is absent.
    Threads,
}

impl BackendKind {
    /// The platform's parallel backend: io_uring on Linux, the thread pool elsewhere.
    pub const PARALLEL: BackendKind = if cfg!(target_os = "linux") {
        BackendKind::Uring
    } else {
        BackendKind::Threads
    };
}

/// How a workload issues its I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoSettings {
    pub backend: BackendKind,
    pub queue_depth: u32,
    /// Measure through the page cache on purpose.
    pub cached: bool,
}

impl Default for IoSettings {
    fn default() -> Self {
        IoSettings {
            backend: BackendKind::Sync,
            queue_depth: 1,
            cached: false,
        }
    }
}

impl IoSettings {
    /// The largest queue depth accepted.
    pub const MAX_QD: u32 = 4096;

    /// Checks the combination, naming what is wrong.
    pub fn validate(&self) -> Result<()> {
        if self.queue_depth == 0 || self.queue_depth > Self::MAX_QD {
            return Err(Error::invalid(
                "queue depth",
                self.queue_depth,
                format!("1 to {}", Self::MAX_QD),
            ));
        }
        if self.backend == BackendKind::Sync && self.queue_depth > 1 {
            return Err(Error::invalid(
                "queue depth",
                self.queue_depth,
                "1 with --backend sync (pread/pwrite issue one request at a time); use --backend uring (Linux) or threads for deeper queues",
            ));
        }
        Ok(())
    }

    /// Builds the backend over `files`, with one buffer of `buf_len` bytes per queue slot.
    pub fn build(&self, files: &[&File], buf_len: usize) -> Result<Box<dyn IoBackend>> {
        self.validate()?;
        Ok(match self.backend {
            BackendKind::Sync => Box::new(sync::SyncBackend::new(files, buf_len)?),
            #[cfg(target_os = "linux")]
            BackendKind::Uring => Box::new(uring::UringBackend::new(
                files,
                buf_len,
                self.queue_depth as usize,
            )?),
            #[cfg(not(target_os = "linux"))]
            BackendKind::Uring => {
                return Err(Error::invalid(
                    "backend",
                    "uring",
                    "sync or threads: io_uring is Linux's",
                ));
            }
            BackendKind::Threads => Box::new(pool::PoolBackend::new(
                files,
                buf_len,
                self.queue_depth as usize,
            )?),
        })
    }

    /// Runs `pattern` over `files` (named, with their content ids, by `drive_files`) with these
    /// settings and one buffer of `buf_len` bytes per request in flight: the thread backend as
    /// workers that each issue, check and record their own requests ([`workers`]), the others
    /// through the one measuring loop ([`driver::drive`]).
    #[allow(clippy::too_many_arguments)]
    pub fn drive(
        &self,
        files: &[&File],
        drive_files: &[driver::DriveFile],
        buf_len: usize,
        pattern: &mut dyn driver::Pattern,
        limits: driver::Limits,
        label: &str,
        ctl: &crate::control::Control<'_>,
    ) -> Result<driver::DriveStats> {
        if self.backend == BackendKind::Threads {
            self.validate()?;
            return workers::drive_threads(
                files,
                drive_files,
                buf_len,
                self.queue_depth as usize,
                pattern,
                limits,
                label,
                ctl,
            );
        }
        let mut backend = self.build(files, buf_len)?;
        driver::drive(backend.as_mut(), drive_files, pattern, limits, label, ctl)
    }
}

/// An open file and whether the page cache is in the way.
#[derive(Debug)]
pub struct Opened {
    pub file: File,
    /// True when reads and writes go through the page cache (asked for, or O_DIRECT refused).
    pub cached: bool,
    /// Set when O_DIRECT was wanted but refused by the filesystem.
    pub direct_refused: bool,
}

/// How to open a file for measuring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    ReadOnly,
    /// Read and write an existing file of ours (created by the data directory, which alone
    /// creates files; a link in its place is refused).
    ReadWrite,
}

/// The error an open refused for uncached I/O returns (Unix EINVAL; Windows
/// ERROR_INVALID_PARAMETER).
const EINVAL: i32 = if cfg!(windows) { 87 } else { 22 };

/// Opens `path` with O_DIRECT (macOS: F_NOCACHE; Windows: FILE_FLAG_NO_BUFFERING and
/// FILE_FLAG_WRITE_THROUGH) unless `cached`; where the filesystem refuses O_DIRECT (tmpfs, some
/// network filesystems) it opens buffered and says so, so every figure can be labelled "cached".
pub fn open(path: &Path, mode: OpenMode, cached: bool) -> Result<Opened> {
    let build = |direct: bool| open_file(path, mode, direct);
    if cached {
        let file = build(false).map_err(|e| open_error(path, e))?;
        return Ok(Opened {
            file,
            cached: true,
            direct_refused: false,
        });
    }
    match build(true) {
        Ok(file) => Ok(Opened {
            file,
            cached: false,
            direct_refused: false,
        }),
        Err(e) if e.raw_os_error() == Some(EINVAL) => {
            let file = build(false).map_err(|e| open_error(path, e))?;
            Ok(Opened {
                file,
                cached: true,
                direct_refused: true,
            })
        }
        Err(e) => Err(open_error(path, e)),
    }
}

/// Opens `path` (`direct`: uncached), never following a link where it may write; a filesystem
/// that takes the uncached open but refuses uncached I/O is `EINVAL`, as one that refuses the
/// open itself.
fn open_file(path: &Path, mode: OpenMode, direct: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true);
    if mode == OpenMode::ReadWrite {
        o.write(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = libc::O_CLOEXEC;
        if mode == OpenMode::ReadWrite {
            flags |= libc::O_NOFOLLOW;
        }
        if direct {
            flags |= crate::platform::UNCACHED_OPEN_FLAGS;
        }
        o.custom_flags(flags);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::{
            FILE_FLAG_NO_BUFFERING, FILE_FLAG_OPEN_REPARSE_POINT, FILE_FLAG_WRITE_THROUGH,
        };
        let mut flags = 0;
        if mode == OpenMode::ReadWrite {
            // The link itself, never its target: refused below as not a file.
            flags |= FILE_FLAG_OPEN_REPARSE_POINT;
        }
        if direct {
            flags |= FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH;
        }
        o.custom_flags(flags);
    }
    let file = o.open(path)?;
    #[cfg(windows)]
    if mode == OpenMode::ReadWrite && file.metadata()?.file_type().is_symlink() {
        return Err(std::io::Error::other(
            "a link where trackbench's file should be",
        ));
    }
    if direct && crate::platform::after_open_uncached(&file) == crate::platform::Uncached::Refused {
        return Err(std::io::Error::from_raw_os_error(EINVAL));
    }
    Ok(file)
}

fn open_error(path: &Path, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound {
            path: path.to_path_buf(),
        },
        _ => Error::io(format!("cannot open {}", path.display()), e),
    }
}

/// A positional transfer's outcome as a completion carries it: bytes moved, or the negative OS
/// error code (EIO where the error has none).
pub fn completion_result(r: std::io::Result<usize>) -> i64 {
    match r {
        Ok(n) => n as i64,
        Err(e) => -i64::from(e.raw_os_error().unwrap_or(5)),
    }
}

/// Converts a completion's result into bytes moved, or the error it stands for.
pub fn completion_bytes(result: i64, what: impl FnOnce() -> String) -> Result<u64> {
    if result < 0 {
        Err(Error::io(
            what(),
            std::io::Error::from_raw_os_error((-result) as i32),
        ))
    } else {
        Ok(result as u64)
    }
}
