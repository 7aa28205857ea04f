//! The memory a run may pin: request buffers and streaming rings are allocated before the clock
//! starts and touched page by page, so a run that asks for more than the machine has would be
//! killed halfway (leaving its files behind) or push the system into swap. Every workload
//! computes what it will pin and asks the budget first.

use crate::error::{Error, Result};

/// The share of RAM a run may pin unless told otherwise.
pub const DEFAULT_SHARE: f64 = 0.5;

/// Assumed RAM where /proc/meminfo cannot be read.
const UNKNOWN_RAM: u64 = 8 << 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    /// Bytes a run may pin.
    pub limit: u64,
    /// The machine's RAM, if known.
    pub ram: Option<u64>,
    /// Set with --max-memory rather than the default share.
    pub chosen: bool,
}

impl MemoryBudget {
    /// Half of this machine's RAM.
    pub fn default_for(ram: Option<u64>) -> MemoryBudget {
        MemoryBudget {
            limit: (ram.unwrap_or(UNKNOWN_RAM) as f64 * DEFAULT_SHARE) as u64,
            ram,
            chosen: false,
        }
    }

    /// A limit the user chose: at least 1 MiB, at most all of RAM.
    pub fn chosen(limit: u64, ram: Option<u64>) -> Result<MemoryBudget> {
        let most = ram.unwrap_or(u64::MAX);
        if limit < 1 << 20 || limit > most {
            return Err(Error::invalid(
                "max-memory",
                crate::units::fmt_size(limit),
                format!(
                    "from 1M to the machine's RAM ({})",
                    ram.map_or("unknown".into(), crate::units::fmt_size)
                ),
            ));
        }
        Ok(MemoryBudget {
            limit,
            ram,
            chosen: true,
        })
    }

    /// Refuses `bytes` of `what` above the limit, naming what would help.
    pub fn check(&self, what: &str, bytes: u64, fewer: &str) -> Result<()> {
        if bytes <= self.limit {
            return Ok(());
        }
        Err(Error::Memory {
            what: what.to_string(),
            needed: bytes,
            limit: self.limit,
            whose: if self.chosen {
                "the --max-memory limit".into()
            } else {
                format!(
                    "half of the {} of memory this process may use (RAM, its control groups' limits and its own address-space limit, ulimit -v)",
                    self.ram.map_or("(unknown)".into(), crate::units::fmt_size)
                )
            },
            fewer: fewer.to_string(),
        })
    }
}

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget::default_for(usable_ram())
    }
}

/// The memory this process may use: the machine's RAM, or less where its control group is
/// limited (a container, a systemd slice): a run sized to the machine's RAM would be killed by
/// the group's limit halfway.
pub fn usable_ram() -> Option<u64> {
    let ram = crate::host::inspect().memory_bytes;
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|c| cgroup_limit(&c, std::path::Path::new("/sys/fs/cgroup")));
    [ram, cgroup, address_space_room()]
        .into_iter()
        .flatten()
        .min()
}

/// What this process may still map under its own limits (`ulimit -v`: RLIMIT_AS, and
/// RLIMIT_DATA), less what it has mapped already; None when neither is set. Beyond it an
/// allocation fails however much RAM is free: a ring asked for there would abort the run.
#[cfg(unix)]
fn address_space_room() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    // Kilobytes in /proc/self/status; unknown (not Linux) counts as nothing mapped yet.
    let used = |field: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    let limit = |res| {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        let ok = unsafe { libc::getrlimit(res, &mut r) } == 0;
        (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
    };
    [
        limit(libc::RLIMIT_AS).map(|l| l.saturating_sub(used("VmSize:"))),
        limit(libc::RLIMIT_DATA).map(|l| l.saturating_sub(used("VmData:"))),
    ]
    .into_iter()
    .flatten()
    .min()
}

#[cfg(not(unix))]
fn address_space_room() -> Option<u64> {
    None
}

/// The tightest memory limit of the control groups in `/proc/self/cgroup` (v2 `memory.max`,
/// v1 `memory.limit_in_bytes`), their parents included; None when unlimited or unknown.
fn cgroup_limit(proc_cgroup: &str, root: &std::path::Path) -> Option<u64> {
    let mut best: Option<u64> = None;
    for line in proc_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (dir, file) = match controllers {
            "" => (root.to_path_buf(), "memory.max"),
            c if c.split(',').any(|x| x == "memory") => {
                (root.join("memory"), "memory.limit_in_bytes")
            }
            _ => continue,
        };
        // The group and each of its parents: the tightest limit applies.
        let mut p = dir.join(path.trim_start_matches('/'));
        loop {
            if let Some(v) = std::fs::read_to_string(p.join(file))
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                // v1 writes "no limit" as a huge page-rounded number.
                .filter(|&v| v < 1 << 60)
            {
                best = Some(best.map_or(v, |b| b.min(v)));
            }
            if p == dir || !p.pop() {
                break;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_groups_memory_limit_is_found_v1_and_v2() {
        let t = tempfile::tempdir().unwrap();
        let v2 = t.path().join("a/b");
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::write(t.path().join("a/memory.max"), "1073741824\n").unwrap();
        std::fs::write(v2.join("memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_limit("0::/a/b\n", t.path()), Some(1 << 30));
        let v1 = t.path().join("memory/slice");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("memory.limit_in_bytes"), "536870912\n").unwrap();
        std::fs::write(
            t.path().join("memory/memory.limit_in_bytes"),
            "9223372036854771712\n",
        )
        .unwrap();
        assert_eq!(
            cgroup_limit("4:memory:/slice\n1:cpu:/\n", t.path()),
            Some(512 << 20)
        );
        assert_eq!(cgroup_limit("1:cpu:/\n", t.path()), None);
    }

    #[test]
    fn refuses_above_the_limit_and_says_what_helps() {
        let b = MemoryBudget::default_for(Some(8 << 30));
        assert_eq!(b.limit, 4 << 30);
        assert!(b.check("x", 4 << 30, "fewer").is_ok());
        let e = b
            .check("request buffers", 256 << 30, "a smaller --qd")
            .unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("256G") && s.contains("4G") && s.contains("8G"),
            "{s}"
        );
        assert!(
            s.contains("a smaller --qd") && s.contains("--max-memory"),
            "{s}"
        );
        let c = MemoryBudget::chosen(6 << 30, Some(8 << 30)).unwrap();
        assert!(c.check("x", 5 << 30, "").is_ok());
        assert!(
            c.check("x", 7 << 30, "")
                .unwrap_err()
                .to_string()
                .contains("--max-memory limit")
        );
        assert!(MemoryBudget::chosen(9 << 30, Some(8 << 30)).is_err());
        assert!(MemoryBudget::chosen(0, Some(8 << 30)).is_err());
    }
}
