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
    let (hostname, kernel, os) = if ok {
        (
            field(&u.nodename),
            field(&u.release),
            format!("{} {}", field(&u.sysname), field(&u.machine)),
        )
    } else {
        ("unknown".into(), "unknown".into(), "unknown".into())
    };
    HostInfo {
        hostname,
        cpu_model,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
        kernel,
        os,
    }
}
