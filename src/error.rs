//! The library's typed errors: every variant names the bad value and, where it helps, what would be valid.

use crate::units::Invalid;
use std::path::PathBuf;

/// Everything that can go wrong while measuring.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting that cannot be used: names the flag, the value and what is accepted.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The result store could not be opened, read or written.
    #[error("result store {location}: {detail}")]
    Store { location: String, detail: String },
    #[error("{path}: no such file, directory or device")]
    NotFound { path: PathBuf },
    #[error("{path}: {reason}")]
    BadTarget { path: PathBuf, reason: String },
    #[error(
        "{path} is a {kind}: trackbench never writes to it; {what} needs a directory on a filesystem (read-only tests such as seek, zones, access and seq --mode read work here)"
    )]
    WriteRefused {
        path: PathBuf,
        kind: &'static str,
        what: String,
    },
    // The OS error is part of the message, not a `source`: printed with its chain, it would
    // appear twice.
    #[error("{path} is read-only: trackbench needs to write its test files there ({cause})")]
    ReadOnly {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "{path} is not writable by this user: trackbench needs to write its test files there ({cause}); choose a directory you may write to"
    )]
    NotWritable {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "{path} is in use by another trackbench run (pid {pid}); wait for it to finish or stop it"
    )]
    Locked { path: PathBuf, pid: String },
    #[error(
        "{path} is still being cleaned up by an interrupted run's cleaner (pid {pid}) after {waited_s} s; wait for it to finish, or stop it and run: trackbench clean {path}"
    )]
    Cleaning {
        path: PathBuf,
        pid: String,
        waited_s: u64,
    },
    #[error(
        "not enough free space on {path}: {} needed (with a margin), {} free; free some space or choose another target",
        crate::units::fmt_size(*needed),
        crate::units::fmt_size(*free)
    )]
    NoSpace {
        path: PathBuf,
        needed: u64,
        free: u64,
    },
    #[error(
        "{what} would pin {} of memory, more than {whose} allows ({}): use {fewer}, or allow more with --max-memory SIZE",
        crate::units::fmt_size(*needed),
        crate::units::fmt_size(*limit)
    )]
    Memory {
        what: String,
        needed: u64,
        limit: u64,
        whose: String,
        fewer: String,
    },
    #[error("{path} is too small for this test: {size} bytes, at least {needed} needed")]
    TooSmall {
        path: PathBuf,
        size: u64,
        needed: u64,
    },
    #[error("content check failed in {path} at byte {offset}: {detail}")]
    Verify {
        path: PathBuf,
        offset: u64,
        detail: String,
    },
    #[error("{op} of {len} bytes at offset {offset} in {path} returned {got} bytes")]
    ShortIo {
        op: &'static str,
        path: PathBuf,
        offset: u64,
        len: u64,
        got: u64,
    },
    #[error("{context}: {cause}")]
    Io {
        context: String,
        cause: std::io::Error,
    },
    #[error("the run was interrupted")]
    Interrupted,
    /// A buffer the run needs could not be allocated.
    #[error("cannot allocate {} of buffers: refused by the system or by this process's limits (ulimit -v, a control group's memory limit); ask for less (fewer tracks, files or requests in flight, smaller buffers), or use --max-memory to stay below what is there", crate::units::fmt_size(*bytes))]
    OutOfMemory { bytes: u64 },
    /// The ranks of a studio run could not work together (MPI).
    #[error("the ranks cannot work together: {detail}")]
    World { detail: String },
    /// Another rank of a studio run failed; every rank stops with its error.
    #[error("rank {rank} failed: {detail}")]
    RankFailed { rank: u32, detail: String },
    /// A chart of a report could not be drawn.
    #[error("cannot draw the chart \"{chart}\": {detail}")]
    Chart { chart: String, detail: String },
}

impl Error {
    /// An I/O error with a sentence saying what was being done.
    /// Whether the error is the kind a filesystem gives when the storage behind it stopped
    /// answering (a network share whose connection was lost, a disk that went away): not
    /// connected, a stale handle, an I/O error, a host or connection gone.
    pub fn is_storage_gone(&self) -> bool {
        let Error::Io { cause, .. } = self else {
            return false;
        };
        #[cfg(unix)]
        if let Some(code) = cause.raw_os_error() {
            return [
                libc::ENOTCONN,
                libc::ESTALE,
                libc::EIO,
                libc::EHOSTDOWN,
                libc::EHOSTUNREACH,
                libc::ECONNABORTED,
                libc::ECONNRESET,
                libc::ENODEV,
            ]
            .contains(&code);
        }
        matches!(
            cause.kind(),
            std::io::ErrorKind::NotConnected
                | std::io::ErrorKind::ConnectionAborted
                | std::io::ErrorKind::ConnectionReset
        )
    }

    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            cause: source,
        }
    }

    /// A bad setting.
    pub fn invalid(what: &'static str, value: impl ToString, expected: impl Into<String>) -> Self {
        Error::Invalid(Invalid::new(what, value, expected))
    }

    /// True when the error means the filesystem ran out of space (ENOSPC / EDQUOT).
    pub fn is_no_space(&self) -> bool {
        match self {
            Error::NoSpace { .. } => true,
            Error::Io { cause, .. } => matches!(
                cause.kind(),
                std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
            ),
            _ => false,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
