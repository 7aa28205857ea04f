//! The machine a result was measured on: CPU, memory, kernel, host name.

use serde::{Deserialize, Serialize};
use std::fs;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub cpu_model: Option<String>,
    pub cpus: usize,
    pub memory_bytes: Option<u64>,
    pub kernel: String,
    pub os: String,
}

pub fn inspect() -> HostInfo {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let memory_bytes = fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    let (hostname, kernel, os) = system_names();
    let memory_bytes = memory_bytes.or_else(total_memory);
    let cpu_model = cpu_model.or_else(cpu_brand);
    HostInfo {
        hostname,
        cpu_model,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
        kernel,
        os,
    }
}

/// Host name, kernel release and "system machine", from uname(2) on Unix.
#[cfg(unix)]
fn system_names() -> (String, String, String) {
    // SAFETY: a plain C struct; all-zero is valid.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a valid out-pointer.
    let ok = unsafe { libc::uname(&mut u) } == 0;
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    if ok {
        (
            field(&u.nodename),
            field(&u.release),
            format!("{} {}", field(&u.sysname), field(&u.machine)),
        )
    } else {
        ("unknown".into(), "unknown".into(), "unknown".into())
    }
}

/// Host name and "Windows machine"; the kernel's version stays unknown (Windows reports a
/// compatibility version to programs that do not declare theirs).
#[cfg(windows)]
fn system_names() -> (String, String, String) {
    let hostname = std::env::var("COMPUTERNAME").unwrap_or_else(|_| "unknown".into());
    (
        hostname,
        "unknown".into(),
        format!("Windows {}", std::env::consts::ARCH),
    )
}

/// Physical memory where /proc/meminfo is absent: sysctl hw.memsize (macOS),
/// GlobalMemoryStatusEx (Windows).
fn total_memory() -> Option<u64> {
    #[cfg(target_os = "macos")]
    {
        let mut bytes: u64 = 0;
        let mut len = std::mem::size_of::<u64>();
        // SAFETY: a NUL-terminated name and an out-buffer of the length given.
        let r = unsafe {
            libc::sysctlbyname(
                c"hw.memsize".as_ptr(),
                (&mut bytes as *mut u64).cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        (r == 0).then_some(bytes)
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
        // SAFETY: a plain C struct; all-zero is valid once its length is set.
        let mut m: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
        m.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
        // SAFETY: a valid, sized out-pointer.
        (unsafe { GlobalMemoryStatusEx(&mut m) } != 0).then_some(m.ullTotalPhys)
    }
    #[cfg(not(any(target_os = "macos", windows)))]
    {
        None
    }
}

/// The CPU's name where /proc/cpuinfo is absent: sysctl machdep.cpu.brand_string (macOS), the
/// PROCESSOR_IDENTIFIER Windows sets for every process.
fn cpu_brand() -> Option<String> {
    #[cfg(target_os = "macos")]
    {
        let mut buf = [0u8; 256];
        let mut len = buf.len();
        // SAFETY: a NUL-terminated name and an out-buffer of the length given.
        let r = unsafe {
            libc::sysctlbyname(
                c"machdep.cpu.brand_string".as_ptr(),
                buf.as_mut_ptr().cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        (r == 0).then(|| {
            let end = buf[..len].iter().position(|&b| b == 0).unwrap_or(len);
            String::from_utf8_lossy(&buf[..end]).trim().to_string()
        })
    }
    #[cfg(windows)]
    {
        std::env::var("PROCESSOR_IDENTIFIER").ok()
    }
    #[cfg(not(any(target_os = "macos", windows)))]
    {
        None
    }
}
