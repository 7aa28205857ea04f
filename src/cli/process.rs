//! What the binary sets up for the process before a command runs: the allocator that counts what
//! the audio tick allocates in its real-time loop, the open-file limit, and the handlers of
//! Ctrl-C and SIGTERM (a first stops the run, a second ends the process at once).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The system allocator, counting what the audio tick allocates inside its real-time loop, so
/// every streaming result can state that the number is zero.
struct CountingAlloc;

// SAFETY: forwards to the system allocator unchanged; the check reads a const-initialised
// thread-local and bumps an atomic, neither of which allocates.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        count_realtime_allocation();
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        count_realtime_allocation();
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        count_realtime_allocation();
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

fn count_realtime_allocation() {
    if trackbench::engine::real_time::in_realtime_loop() {
        trackbench::engine::real_time::REALTIME_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Exit status of a run stopped by Ctrl-C or SIGTERM, as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// What a second Ctrl-C prints before the process ends at once (set once the target is known).
pub static SECOND_SIGNAL_MESSAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

/// The first SIGINT or SIGTERM sets `cancel` (the run stops, saves its result marked
/// interrupted and removes its files); a second ends the process at once, saying what may be
/// left behind.
#[cfg(unix)]
pub fn install_interrupt_handlers(cancel: &Arc<AtomicBool>) {
    // Set by the first SIGINT or SIGTERM. One swap decides which signal is first: two signals
    // sent together may be handled at once on two threads, and each must not see the other
    // as not yet there.
    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal while the first is being handled ends the process at once, saying
        // what may be left behind.
        let seen = Arc::clone(&signalled);
        // SAFETY: the action only swaps an atomic, writes a prepared buffer and calls _exit,
        // all async-signal-safe.
        let _ = unsafe {
            signal_hook::low_level::register(sig, move || {
                if seen.swap(true, Ordering::SeqCst) {
                    let msg = SECOND_SIGNAL_MESSAGE
                        .get()
                        .map_or(&b"\nsecond interrupt: exiting now\n"[..], Vec::as_slice);
                    libc::write(2, msg.as_ptr().cast(), msg.len());
                    libc::_exit(i32::from(EXIT_INTERRUPTED));
                }
            })
        };
        let _ = signal_hook::flag::register(sig, Arc::clone(cancel));
    }
}

/// Windows: Ctrl-C and Ctrl-Break (and the console closing) through SetConsoleCtrlHandler, the
/// platform's own way; the same promise as on Unix.
#[cfg(windows)]
pub fn install_interrupt_handlers(cancel: &Arc<AtomicBool>) {
    use windows_sys::Win32::Foundation::{FALSE, TRUE};
    use windows_sys::Win32::System::Console::{
        CTRL_BREAK_EVENT, CTRL_C_EVENT, CTRL_CLOSE_EVENT, SetConsoleCtrlHandler,
    };
    static CANCEL: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    static SEEN: AtomicBool = AtomicBool::new(false);
    unsafe extern "system" fn handler(kind: u32) -> windows_sys::core::BOOL {
        if ![CTRL_C_EVENT, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT].contains(&kind) {
            return FALSE;
        }
        if SEEN.swap(true, Ordering::SeqCst) {
            let msg = SECOND_SIGNAL_MESSAGE
                .get()
                .map_or(&b"\nsecond interrupt: exiting now\n"[..], Vec::as_slice);
            let _ = std::io::Write::write_all(&mut std::io::stderr(), msg);
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        if let Some(c) = CANCEL.get() {
            c.store(true, Ordering::SeqCst);
        }
        TRUE
    }
    let _ = CANCEL.set(Arc::clone(cancel));
    // SAFETY: a handler with the signature the API expects, living for the whole program.
    unsafe { SetConsoleCtrlHandler(Some(handler), TRUE) };
}

/// Windows has no per-process limit of this kind.
#[cfg(windows)]
pub fn raise_open_file_limit() {}

/// Streaming thousands of tracks keeps one file open per track: lift the soft limit on open
/// files to the hard limit.
#[cfg(unix)]
pub fn raise_open_file_limit() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid out-pointer / in-pointer to an rlimit.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}
