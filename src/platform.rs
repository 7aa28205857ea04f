//! What differs by operating system, in one place: uncached I/O, dropping a file's cached pages,
//! preallocation, absolute-deadline sleeps and the real-time audio thread. Linux has the fast
//! paths (O_DIRECT, posix_fadvise, posix_fallocate, clock_nanosleep, SCHED_FIFO with mlockall);
//! macOS has F_NOCACHE, F_PREALLOCATE and the Mach time-constraint policy; each answer says what
//! it could do, so results never claim what a platform did not give.

use std::fs::File;

/// What `open_uncached` achieved on a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uncached {
    /// Reads and writes bypass the page cache.
    Yes,
    /// The filesystem refused (Linux: O_DIRECT on tmpfs, some network filesystems).
    Refused,
}

/// Extra `open(2)` flags for uncached I/O, where the platform takes them at open time.
#[cfg(target_os = "linux")]
pub const UNCACHED_OPEN_FLAGS: i32 = libc::O_DIRECT;
#[cfg(not(target_os = "linux"))]
pub const UNCACHED_OPEN_FLAGS: i32 = 0;

/// Turns the page cache off for an open file where the platform does it after opening (macOS:
/// `F_NOCACHE`, and read-ahead off with `F_RDAHEAD`, as a DAW streaming from disk would want).
#[cfg(target_os = "macos")]
pub fn after_open_uncached(file: &File) -> Uncached {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a valid descriptor with integer arguments.
    let nocache = unsafe { libc::fcntl(fd, libc::F_NOCACHE, 1) };
    // SAFETY: as above; read-ahead off is advice, its failure changes nothing measured.
    unsafe { libc::fcntl(fd, libc::F_RDAHEAD, 0) };
    if nocache == -1 {
        Uncached::Refused
    } else {
        Uncached::Yes
    }
}
#[cfg(not(target_os = "macos"))]
pub fn after_open_uncached(_file: &File) -> Uncached {
    Uncached::Yes
}

/// The platform's name for uncached I/O, for results and notes.
pub const UNCACHED_NAME: &str = if cfg!(target_os = "macos") {
    "F_NOCACHE"
} else {
    "O_DIRECT"
};

/// Whether `drop_pages` can drop a range of a file's cached pages here (Linux alone).
pub const CAN_DROP_PAGES: bool = cfg!(target_os = "linux");

/// Asks the kernel to drop the clean cached pages of `len` bytes at `offset` (0: to the end).
/// Returns false where the platform cannot drop a range (macOS: reads made with F_NOCACHE are
/// not cached in the first place).
pub fn drop_pages(file: &File, offset: u64, len: u64) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor; advice only.
        unsafe {
            libc::posix_fadvise(
                file.as_raw_fd(),
                offset as libc::off_t,
                len as libc::off_t,
                libc::POSIX_FADV_DONTNEED,
            ) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, offset, len);
        false
    }
}

/// Files from which `sync_files` writes back their whole filesystem at once rather than file by
/// file: below it, their own flushes cost less than a third of a second here (1.2 ms each),
/// and what other programs left dirty is not made to wait for.
pub const SYNC_WHOLE_FILESYSTEM_FROM: usize = 256;

/// Writes back the data and metadata of every file in `files` and waits until the device holds
/// them. Each file's own `sync_all` for a few; on Linux, for `SYNC_WHOLE_FILESYSTEM_FROM` files
/// or more, one `syncfs` for each filesystem they are on: one device flush each, where `fsync`
/// file by file flushes the device once a file (ext4 without a journal, on this project's
/// virtual disk: 10,000 test files took 11.7 s of 1.2 ms flushes, one `syncfs` 7.9 s; a journal
/// batches them). `syncfs` also writes back what other programs left dirty there, which would
/// otherwise be written back while a run measures.
pub fn sync_files(files: &[&File]) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if files.len() >= SYNC_WHOLE_FILESYSTEM_FROM {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        let mut synced: Vec<u64> = Vec::new();
        for f in files {
            let dev = f.metadata()?.dev();
            if synced.contains(&dev) {
                continue;
            }
            // SAFETY: a valid descriptor; syncfs only reads it.
            if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            synced.push(dev);
        }
        return Ok(());
    }
    files.iter().try_for_each(|f| f.sync_all())
}

/// Advises the kernel that `file` is read at random (no read-ahead, the reads exactly as asked)
/// or, with `random` false, as usual (the device's read-ahead again); false where the platform
/// cannot. On Linux the advice belongs to the open file, and reads under it leave the
/// read-ahead state of a fresh file: the next read after them starts its window from the
/// smallest size, as a program's first reads of a file do.
pub fn advise_random(file: &File, random: bool) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let advice = if random {
            libc::POSIX_FADV_RANDOM
        } else {
            libc::POSIX_FADV_NORMAL
        };
        // SAFETY: a valid descriptor; advice only.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, advice) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, random);
        false
    }
}

/// Allocates `len` bytes of `file` on disk now, so later writes do not allocate.
pub fn preallocate(file: &File, len: u64) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor; the range is the caller's file.
        let r = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::from_raw_os_error(r))
        }
    }
    #[cfg(target_os = "macos")]
    {
        use std::os::fd::AsRawFd;
        let mut store = libc::fstore_t {
            fst_flags: libc::F_ALLOCATEALL,
            fst_posmode: libc::F_PEOFPOSMODE,
            fst_offset: 0,
            fst_length: len as libc::off_t,
            fst_bytesalloc: 0,
        };
        // SAFETY: a valid descriptor and a valid fstore_t.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_PREALLOCATE, &mut store) } == -1 {
            return Err(std::io::Error::last_os_error());
        }
        // F_PREALLOCATE reserves blocks; the length is set as posix_fallocate would.
        if file.metadata()?.len() < len {
            file.set_len(len)?;
        }
        Ok(())
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        if file.metadata()?.len() < len {
            file.set_len(len)?;
        }
        Ok(())
    }
}

/// Nanoseconds of the monotonic clock.
pub fn monotonic_ns() -> u64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out-pointer; CLOCK_MONOTONIC exists on Linux and macOS.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
    #[cfg(not(unix))]
    {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    }
}

/// Returns at or after `deadline_ns` of `monotonic_ns`: Linux sleeps to the absolute deadline
/// (clock_nanosleep with TIMER_ABSTIME, so sleeps do not drift); elsewhere it sleeps for what
/// remains, again until the deadline has passed.
pub fn sleep_until(deadline_ns: u64) {
    #[cfg(target_os = "linux")]
    {
        // The field types as the C library declares them (musl's time_t is changing width).
        let ts = libc::timespec {
            tv_sec: (deadline_ns / 1_000_000_000) as _,
            tv_nsec: (deadline_ns % 1_000_000_000) as _,
        };
        // Interrupted sleeps (signals) are resumed until the deadline.
        // SAFETY: ts is valid; the remainder pointer may be null with TIMER_ABSTIME.
        while unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        } == libc::EINTR
        {}
    }
    #[cfg(not(target_os = "linux"))]
    loop {
        let now = monotonic_ns();
        if now >= deadline_ns {
            break;
        }
        std::thread::sleep(std::time::Duration::from_nanos(deadline_ns - now));
    }
}

/// How many searches keep memory locked from one of their runs to the next ([`MemoryLockHold`]).
static LOCK_HOLDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Memory is locked (Linux: an mlockall of `go_realtime` not yet undone).
static MEMORY_LOCKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// While one lives, the memory a run's audio thread locked stays locked when the run ends, and
/// the next run's lock only adds what is new: a search's probes share their rings, and locking
/// 8 GiB of them and undoing it again cost 0.9 and 0.8 s a probe on this machine, where keeping
/// them locked and re-locking costs about half of the first. The last hold to go unlocks.
#[must_use = "memory stays locked between runs only while the hold lives"]
pub struct MemoryLockHold {
    _private: (),
}

/// Keeps memory locked between runs until the returned hold is dropped (see [`MemoryLockHold`]).
pub fn hold_memory_lock() -> MemoryLockHold {
    LOCK_HOLDS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    MemoryLockHold { _private: () }
}

impl Drop for MemoryLockHold {
    fn drop(&mut self) {
        use std::sync::atomic::Ordering::SeqCst;
        if LOCK_HOLDS.fetch_sub(1, SeqCst) == 1 && MEMORY_LOCKED.swap(false, SeqCst) {
            unlock_all();
        }
    }
}

/// Whether memory is locked now (Linux: by a run's audio thread, kept by a hold or in a run).
#[cfg(all(test, target_os = "linux"))]
fn memory_locked() -> bool {
    MEMORY_LOCKED.load(std::sync::atomic::Ordering::SeqCst)
}

/// What the audio thread was granted.
pub struct RealTimeGrant {
    /// Real-time scheduling and locked memory (where the platform locks it) both granted.
    pub granted: bool,
    /// Memory was locked (Linux), whether or not the scheduling was granted: release it with
    /// [`release_memory`] when the run ends.
    pub memory_locked: bool,
    /// What was refused, in words.
    pub refused: Option<String>,
    /// Held for the thread's life (macOS, Windows: the crate's handle).
    #[cfg(any(target_os = "macos", target_os = "windows"))]
    _handle: Option<audio_thread_priority::RtPriorityHandle>,
}

/// SCHED_FIFO priority of the audio thread on Linux: above JACK's default 10 clients' helpers,
/// below PipeWire's 88 data loop, like a DAW's engine thread.
#[cfg(target_os = "linux")]
const TICK_PRIORITY: i32 = 70;

/// Makes the calling thread an audio thread for `period_frames` at `rate_hz`: Linux SCHED_FIFO
/// and mlockall; macOS the Mach time-constraint policy and Windows MMCSS "Pro Audio", both
/// through `audio_thread_priority`. Says what was refused.
pub fn go_realtime(period_frames: u32, rate_hz: u32) -> RealTimeGrant {
    #[cfg(target_os = "linux")]
    {
        let _ = (period_frames, rate_hz);
        let mut refused = Vec::new();
        // SAFETY: a plain C struct; all-zero is a valid value.
        let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
        param.sched_priority = TICK_PRIORITY;
        // SAFETY: plain syscalls on the calling thread with valid arguments.
        let r =
            unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
        if r != 0 {
            refused.push(format!(
                "SCHED_FIFO refused ({})",
                std::io::Error::from_raw_os_error(r)
            ));
        }
        // SAFETY: as above. Memory a held lock kept locked is only walked again (and what was
        // allocated since is locked as well).
        let memory_locked = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0;
        if memory_locked {
            MEMORY_LOCKED.store(true, std::sync::atomic::Ordering::SeqCst);
        } else {
            refused.push(format!(
                "mlockall refused ({})",
                std::io::Error::last_os_error()
            ));
        }
        RealTimeGrant {
            granted: refused.is_empty(),
            memory_locked,
            refused: (!refused.is_empty()).then(|| refused.join("; ")),
        }
    }
    #[cfg(any(target_os = "macos", target_os = "windows"))]
    {
        match audio_thread_priority::promote_current_thread_to_real_time(period_frames, rate_hz) {
            Ok(h) => RealTimeGrant {
                granted: true,
                memory_locked: false,
                refused: None,
                _handle: Some(h),
            },
            Err(e) => RealTimeGrant {
                granted: false,
                memory_locked: false,
                refused: Some(format!("real-time priority refused ({e})")),
                _handle: None,
            },
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "windows")))]
    {
        let _ = (period_frames, rate_hz);
        RealTimeGrant {
            granted: false,
            memory_locked: false,
            refused: Some("no real-time priority on this platform".into()),
        }
    }
}

/// Ends a run's lock on memory (`go_realtime`'s mlockall on Linux). Under a
/// [`MemoryLockHold`] what is locked stays locked, and what is allocated until the next run is
/// locked as it is first touched rather than all at once as it is mapped (the next run's rings
/// are touched on every CPU while the files are laid out); else everything is unlocked.
pub fn release_memory() {
    use std::sync::atomic::Ordering::SeqCst;
    if !MEMORY_LOCKED.load(SeqCst) {
        return;
    }
    // Where a limit on locked memory applies, a mapping locked as it is made could be refused
    // (an allocation failing between probes): there everything is unlocked, as without a hold.
    #[cfg(target_os = "linux")]
    if LOCK_HOLDS.load(SeqCst) > 0
        && locking_is_unlimited()
        // SAFETY: plain syscall with valid flags; only changes how later mappings are locked.
        && unsafe { libc::mlockall(libc::MCL_FUTURE | libc::MCL_ONFAULT) } == 0
    {
        return;
    }
    if MEMORY_LOCKED.swap(false, SeqCst) {
        unlock_all();
    }
}

/// Whether no limit applies to the memory this process locks: RLIMIT_MEMLOCK is unlimited, or
/// it holds CAP_IPC_LOCK (bit 14 of its effective capabilities), as root usually does.
#[cfg(target_os = "linux")]
fn locking_is_unlimited() -> bool {
    // SAFETY: a plain C struct filled by getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: valid resource and pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) } == 0
        && r.rlim_cur == libc::RLIM_INFINITY
    {
        return true;
    }
    const CAP_IPC_LOCK: u32 = 14;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let caps = s
                .lines()
                .find_map(|l| l.strip_prefix("CapEff:"))?
                .trim()
                .to_owned();
            u64::from_str_radix(&caps, 16).ok()
        })
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0)
}

fn unlock_all() {
    #[cfg(target_os = "linux")]
    // SAFETY: no arguments; undoing mlockall is always allowed.
    unsafe {
        libc::munlockall();
    }
}

/// Positional reads and writes that leave the file position alone, on every platform (Unix
/// `pread`/`pwrite`; Windows `ReadFile`/`WriteFile` at an offset).
pub trait FileAt {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize>;
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize>;

    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Writes all of `buf` at `offset`.
    fn write_all_at(&self, mut buf: &[u8], mut offset: u64) -> std::io::Result<()> {
        while !buf.is_empty() {
            match self.write_at(buf, offset) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl FileAt for File {
    #[cfg(unix)]
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
    #[cfg(unix)]
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        std::os::unix::fs::FileExt::write_at(self, buf, offset)
    }
    #[cfg(windows)]
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(self, buf, offset)
    }
    #[cfg(windows)]
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        std::os::windows::fs::FileExt::seek_write(self, buf, offset)
    }
}

/// An open file's OS handle, kept by backends that issue I/O on files their caller owns.
#[cfg(unix)]
pub type RawFile = std::os::fd::RawFd;
#[cfg(windows)]
pub type RawFile = std::os::windows::io::RawHandle;

#[cfg(unix)]
pub fn raw_file(f: &File) -> RawFile {
    std::os::fd::AsRawFd::as_raw_fd(f)
}
#[cfg(windows)]
pub fn raw_file(f: &File) -> RawFile {
    std::os::windows::io::AsRawHandle::as_raw_handle(f)
}

/// The file behind `raw` for one call, never closed here.
///
/// # Safety
/// `raw` must be open for as long as the returned value is used.
pub unsafe fn borrow_raw(raw: RawFile) -> std::mem::ManuallyDrop<File> {
    #[cfg(unix)]
    // SAFETY: the caller keeps the descriptor open; ManuallyDrop never closes it.
    unsafe {
        std::mem::ManuallyDrop::new(<File as std::os::fd::FromRawFd>::from_raw_fd(raw))
    }
    #[cfg(windows)]
    // SAFETY: as above, for a handle.
    unsafe {
        std::mem::ManuallyDrop::new(
            <File as std::os::windows::io::FromRawHandle>::from_raw_handle(raw),
        )
    }
}

/// What names a file on its filesystem: (device or volume, inode or file index).
pub fn identity_of_file(f: &File) -> std::io::Result<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata()?;
        Ok((m.dev(), m.ino()))
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{
            BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
        };
        // SAFETY: a plain C struct; all-zero is valid, and the call fills it.
        let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: a valid open handle and a valid out-pointer.
        if unsafe { GetFileInformationByHandle(f.as_raw_handle(), &mut info) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((
            u64::from(info.dwVolumeSerialNumber),
            (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
        ))
    }
}

/// `identity_of_file` of what `path` names, a final link itself rather than its target.
pub fn identity_of_path(path: &std::path::Path) -> std::io::Result<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path)?;
        Ok((m.dev(), m.ino()))
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::{
            FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
        };
        let f = std::fs::OpenOptions::new()
            .access_mode(0)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
            .open(path)?;
        identity_of_file(&f)
    }
}

/// Bytes a file occupies on disk (Unix: its blocks; Windows: its length, which is what a
/// non-sparse file there holds).
pub fn allocated_bytes(m: &std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::blocks(m) * 512
    }
    #[cfg(not(unix))]
    {
        m.len()
    }
}

/// Whether the process runs as root (Unix effective uid 0). Windows: false; what root alone may
/// do here (drop the whole page cache) is Linux's.
pub fn is_root() -> bool {
    #[cfg(unix)]
    // SAFETY: geteuid has no preconditions.
    unsafe {
        libc::geteuid() == 0
    }
    #[cfg(not(unix))]
    {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Kilobytes of the process's memory resident and locked now (`Locked` of smaps_rollup:
    /// `VmLck` counts a mapping locked on fault whole as it is mapped).
    fn locked_kb() -> u64 {
        std::fs::read_to_string("/proc/self/smaps_rollup")
            .ok()
            .and_then(|s| {
                let l = s.lines().find(|l| l.starts_with("Locked:"))?.to_owned();
                l.split_whitespace().nth(1)?.parse().ok()
            })
            .unwrap_or(0)
    }

    /// Kilobytes resident and locked in the mapping that holds `addr` (its `Locked` in smaps).
    fn locked_kb_at(addr: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let mut inside = false;
        for l in smaps.lines() {
            let range = l.split_whitespace().next().and_then(|r| r.split_once('-'));
            if let Some((from, to)) = range
                && let (Ok(from), Ok(to)) = (
                    usize::from_str_radix(from, 16),
                    usize::from_str_radix(to, 16),
                )
            {
                inside = (from..to).contains(&addr);
            } else if inside && l.starts_with("Locked:") {
                return l
                    .split_whitespace()
                    .nth(1)
                    .and_then(|k| k.parse().ok())
                    .unwrap_or(0);
            }
        }
        0
    }

    /// A run's audio thread as `stream::real` runs it: locks, then releases when it ends.
    fn one_run() -> bool {
        std::thread::spawn(|| {
            let g = go_realtime(256, 48_000);
            if g.memory_locked {
                release_memory();
            }
            g.memory_locked
        })
        .join()
        .expect("the run's thread")
    }

    /// Under a hold, a run's lock outlives the run and the next run's adds to it; the last hold
    /// unlocks. Without one, a run unlocks as it ends. Where mlockall is refused (not root), or
    /// a limit on locked memory applies, nothing stays locked after a run either way.
    #[test]
    fn a_hold_keeps_a_runs_locked_memory_until_the_search_ends() {
        // What is locked is the whole process's, and so are the holds: beside it, this test
        // binary's searches (every `capacity::find_max` takes a hold) kept memory locked when
        // this test had let go of its own, in two of eight runs here. So it runs alone, in a
        // process of its own: this binary again, with only this test.
        const ALONE: &str = "TRACKBENCH_MEMORY_LOCK_TEST_ALONE";
        if std::env::var_os(ALONE).is_none() {
            let name = "platform::tests::a_hold_keeps_a_runs_locked_memory_until_the_search_ends";
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", name, "--test-threads=1"])
                .env(ALONE, "1")
                .output()
                .unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(out.status.success(), "{said}");
            assert!(said.contains("1 passed"), "the test ran alone: {said}");
            return;
        }
        let hold = hold_memory_lock();
        if !one_run() || !locking_is_unlimited() {
            assert_eq!(
                locked_kb(),
                0,
                "nothing kept locked where it is refused or limited"
            );
            assert!(!memory_locked());
            drop(hold);
            return;
        }
        assert!(
            memory_locked() && locked_kb() > 0,
            "kept locked between runs"
        );
        // Memory mapped between runs is locked as it is touched, not as it is mapped.
        let mut v: Vec<u8> = Vec::with_capacity(64 << 20);
        let at = v.as_ptr() as usize;
        assert!(locked_kb_at(at) < 1024, "not locked as it is mapped");
        v.resize(64 << 20, 1);
        assert!(locked_kb_at(at) >= 64 * 1024, "locked as it is touched");
        assert!(one_run(), "locked again");
        drop(hold);
        assert!(!memory_locked());
        assert_eq!(locked_kb(), 0, "the last hold unlocks");
        drop(v);
        assert!(one_run());
        assert_eq!(locked_kb(), 0, "a run without a hold unlocks as it ends");
    }
}
