//! `clean`: removes trackbench's data left by `--keep` or a killed run; and the hand-over of an
//! interrupted run's files, with its lock, to a `clean` of their own.

use anyhow::{Result, bail};
use std::path::Path;
use std::process::ExitCode;
use trackbench::datadir::{self, DataDir};
use trackbench::target::{self, TargetKind};
use trackbench::units::fmt_size;

/// The gate an interrupted run holds while its result is saved: its cleaner starts removing
/// its files once the gate is dropped (or the run has exited).
#[cfg(unix)]
pub type Gate = std::io::PipeWriter;
#[cfg(windows)]
pub type Gate = ();

/// Hands an interrupted run's data directory, lock included, to a `trackbench clean` of its
/// own (its own process group: a second Ctrl-C at the terminal does not stop it) and returns
/// its pid; where that cannot start, cleans here.
///
/// The cleaner holds the lock at once but removes the files only once the returned gate, the
/// write end of a pipe it reads, is closed: by dropping it when the run's result is saved, or
/// by this process's exit, however it exits (a second Ctrl-C among the ways); and at most
/// `CLEANER_WAITS_FOR_RUN` after it starts. The removal's discards (most of a second for a 1 GB
/// file on ext4 mounted with `discard`) would otherwise queue ahead of the run's last writes,
/// the store's and the JSON's syncs, and took its exit past a second.
#[cfg(unix)]
pub fn hand_over(
    d: DataDir,
    target: &Path,
    rank: Option<u32>,
) -> Result<(Option<u32>, Option<Gate>)> {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    if d.keep() {
        d.close()?;
        return Ok((None, None));
    }
    let fd = d.detach_lock()?;
    // Both ends close on exec (std's pipe); the cleaner's copy of the read end is kept open
    // below. Without a pipe the cleaner starts at once.
    let gate = std::io::pipe().ok();
    let spawned = std::env::current_exe().and_then(|exe| {
        let mut c = std::process::Command::new(exe);
        c.arg("clean")
            .arg(target)
            .arg("--inherited-lock")
            .arg(fd.to_string());
        if let Some(r) = rank {
            c.arg("--rank").arg(r.to_string());
        }
        if let Some((read, _)) = &gate {
            let read = read.as_raw_fd();
            c.arg("--after-exit").arg(read.to_string());
            // SAFETY: runs in the child between fork and exec; fcntl is async-signal-safe.
            unsafe {
                c.pre_exec(move || {
                    if libc::fcntl(read, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        // The cleaner is no rank of the job: it must not see the launcher's variables.
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if k.starts_with("OMPI_") || k.starts_with("PMIX_") || k.starts_with("PMI_") {
                c.env_remove(&*k);
            }
        }
        c.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
    });
    // Our read end closes here; the cleaner holds its own.
    let gate = gate.map(|(_read, write)| write);
    match spawned {
        Ok(child) => {
            // SAFETY: our copy of the handed-over descriptor; the cleaner holds its own.
            unsafe { libc::close(fd) };
            Ok((Some(child.id()), gate))
        }
        Err(_) => {
            let t = target::inspect(target)?;
            DataDir::adopt(&t.path, rank, fd)?.close()?;
            Ok((None, None))
        }
    }
}

/// Windows: a lock handle cannot be handed to a child as a descriptor is, so the interrupted
/// run removes its files itself before it exits.
#[cfg(windows)]
pub fn hand_over(
    d: DataDir,
    _target: &Path,
    _rank: Option<u32>,
) -> Result<(Option<u32>, Option<()>)> {
    d.close()?;
    Ok((None, None))
}

/// How long a cleaner waits for the run that handed it its files to exit before it removes
/// them anyway (a run's last writes, its store on a slow server among them, take longer only
/// when something is wrong).
#[cfg(unix)]
const CLEANER_WAITS_FOR_RUN: std::time::Duration = std::time::Duration::from_secs(30);

/// Waits until the pipe read end `fd` reads end of file (every writer has closed it, by exiting
/// among other ways) or `limit` has passed, then closes it.
#[cfg(unix)]
fn wait_for_writers_to_exit(fd: i32, limit: std::time::Duration) {
    let start = std::time::Instant::now();
    let mut byte = 0u8;
    loop {
        let left = limit.saturating_sub(start.elapsed());
        if left.is_zero() {
            break;
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n == 0
            || (n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted)
        {
            continue;
        }
        if n < 0 || p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            break;
        }
        // Readable: end of file, or a byte nobody meant to send (read it and wait on).
        // SAFETY: reads at most one byte into `byte`.
        if unsafe { libc::read(fd, (&raw mut byte).cast(), 1) } <= 0 {
            break;
        }
    }
    // SAFETY: the descriptor was handed to this process for this wait alone.
    unsafe { libc::close(fd) };
}

pub fn clean(
    path: &Path,
    inherited_lock: Option<i32>,
    rank: Option<u32>,
    after_exit: Option<i32>,
) -> Result<ExitCode> {
    let t = target::inspect(path)?;
    if t.kind != TargetKind::Directory {
        bail!(
            "{} is a {}: only directories hold trackbench data",
            path.display(),
            t.kind.describe()
        );
    }
    if let Some(fd) = inherited_lock {
        // The interrupted run's own cleanup, handed over with its lock: the directory is
        // marked as the cleaner's at once, its files removed once that run has exited.
        #[cfg(unix)]
        {
            let d = DataDir::adopt(&t.path, rank, fd)?;
            if let Some(gate) = after_exit {
                wait_for_writers_to_exit(gate, CLEANER_WAITS_FOR_RUN);
            }
            d.close()?;
        }
        #[cfg(windows)]
        {
            let _ = (rank, after_exit);
            bail!("--inherited-lock {fd}: a lock is handed over only on Unix");
        }
        #[cfg(unix)]
        return Ok(ExitCode::SUCCESS);
    }
    let c = datadir::clean(&t.path)?;
    for n in &c.notes {
        println!("note: {n}");
    }
    if c.removed.is_empty() && c.foreign.is_empty() && !t.path.join(datadir::DIR_NAME).exists() {
        println!("nothing to clean in {}", t.path.display());
    } else {
        let bytes: u64 = c.removed.iter().map(|r| r.1).sum();
        println!(
            "removed {} file(s), {} from {}",
            c.removed.len(),
            fmt_size(bytes),
            t.path.join(datadir::DIR_NAME).display()
        );
        if !c.foreign.is_empty() {
            println!(
                "left alone (not created by trackbench): {}",
                c.foreign.join(", ")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(all(test, unix))]
mod tests {
    use super::wait_for_writers_to_exit;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    /// A pipe's ends as descriptors this test owns.
    fn pipe() -> [i32; 2] {
        use std::os::fd::IntoRawFd;
        let (read, write) = std::io::pipe().expect("a pipe");
        [read.into_raw_fd(), write.into_raw_fd()]
    }

    /// A cleaner removes an interrupted run's files only once that run has exited (its write
    /// end closed), and a stray byte on the pipe does not end the wait early.
    #[test]
    fn a_cleaner_waits_for_the_run_to_exit() {
        let [read, write] = pipe();
        let closed = Arc::new(AtomicBool::new(false));
        let c = closed.clone();
        let writer = std::thread::spawn(move || {
            // SAFETY: writes one byte from a valid buffer to our pipe's write end.
            assert_eq!(unsafe { libc::write(write, b"x".as_ptr().cast(), 1) }, 1);
            std::thread::sleep(Duration::from_millis(200));
            c.store(true, Ordering::SeqCst);
            // SAFETY: the write end is this thread's to close.
            unsafe { libc::close(write) };
        });
        wait_for_writers_to_exit(read, Duration::from_secs(60));
        assert!(
            closed.load(Ordering::SeqCst),
            "the wait ended before the writer closed"
        );
        writer.join().unwrap();
    }

    /// A run that does not exit holds its files back for the limit only.
    #[test]
    fn a_cleaner_waits_no_longer_than_its_limit() {
        let [read, write] = pipe();
        let start = Instant::now();
        wait_for_writers_to_exit(read, Duration::from_millis(300));
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(300), "{waited:?}");
        // SAFETY: our write end.
        unsafe { libc::close(write) };
    }
}
