//! A drive's own account of its health, where the system lets it be read: what could explain a
//! disk that answers fewer tracks than it did (reallocated and pending sectors, uncorrectable
//! errors, an NVMe drive's wear and media errors). Read with smartmontools' `smartctl --json`
//! when it is installed; a `smartctl` that is missing, lacks the privileges it needs, does not
//! know the device, takes too long or prints something unexpected gives a plain "not
//! available" with the reason, and the run goes on.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// What a drive said of its health, or why nothing could be read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// Why nothing was read ("smartctl is not installed", "permission denied" …); None when
    /// the drive answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// What answered: `smartctl 7.3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// `ATA`, `NVMe`, `SCSI`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// The drive's overall self-assessment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// ATA attribute 5 (a SCSI drive's grown defect list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reallocated_sectors: Option<u64>,
    /// ATA attribute 197.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_sectors: Option<u64>,
    /// ATA attributes 198 (offline uncorrectable) and 187 (reported uncorrect), the larger; a
    /// SCSI drive's uncorrected read and write errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncorrectable_errors: Option<u64>,
    /// An NVMe drive's estimate of its life used, in percent (may exceed 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentage_used: Option<u64>,
    /// An NVMe drive's media and data integrity errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_errors: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_on_hours: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<i64>,
}

impl Health {
    fn unavailable(why: impl Into<String>) -> Health {
        Health {
            unavailable: Some(why.into()),
            ..Health::default()
        }
    }

    /// The health in a few words: "not available: …", or its counters.
    pub fn words(&self) -> String {
        if let Some(why) = &self.unavailable {
            return format!("health not available: {why}");
        }
        let mut parts = Vec::new();
        if let Some(p) = self.passed {
            parts.push(if p {
                "self-assessment passed".to_string()
            } else {
                "self-assessment FAILED".to_string()
            });
        }
        let counts = [
            (self.reallocated_sectors, "sectors reallocated"),
            (self.pending_sectors, "pending"),
            (self.uncorrectable_errors, "uncorrectable errors"),
            (self.media_errors, "media errors"),
        ];
        for (v, what) in counts {
            if let Some(v) = v {
                parts.push(format!("{v} {what}"));
            }
        }
        if let Some(p) = self.percentage_used {
            parts.push(format!("{p}% of its rated life used"));
        }
        parts.join(", ")
    }

    /// What changed from `earlier` to this reading that could explain a slower disk, in words
    /// ("12 sectors reallocated since", "wear from 3% to 9%"); empty when nothing did.
    pub fn changes_since(&self, earlier: &Health) -> Vec<String> {
        let mut out = Vec::new();
        let grew = |now: Option<u64>, then: Option<u64>| match (now, then) {
            (Some(n), Some(t)) if n > t => Some(n - t),
            _ => None,
        };
        let counters = [
            (
                grew(self.reallocated_sectors, earlier.reallocated_sectors),
                "sectors reallocated",
            ),
            (
                grew(self.pending_sectors, earlier.pending_sectors),
                "sectors pending reallocation",
            ),
            (
                grew(self.uncorrectable_errors, earlier.uncorrectable_errors),
                "uncorrectable errors",
            ),
            (
                grew(self.media_errors, earlier.media_errors),
                "media errors",
            ),
        ];
        for (d, what) in counters {
            if let Some(d) = d {
                out.push(format!("{d} more {what}"));
            }
        }
        if let (Some(n), Some(t)) = (self.percentage_used, earlier.percentage_used)
            && n > t
        {
            out.push(format!("its wear went from {t}% to {n}% of its rated life"));
        }
        if earlier.passed == Some(true) && self.passed == Some(false) {
            out.push("its self-assessment now fails".into());
        }
        out
    }
}

/// Reads what `smartctl` can say of `device` (`/dev/sda`, `/dev/nvme0n1`), waiting at most
/// `timeout` for it.
pub fn read(device: &Path, timeout: Duration) -> Health {
    let child = std::process::Command::new("smartctl")
        .args([
            "--json",
            "--info",
            "--health",
            "--attributes",
            "--log=error",
            "-n",
            "standby",
        ])
        .arg(device)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Health::unavailable("smartctl is not installed (smartmontools)");
        }
        Err(e) => return Health::unavailable(format!("smartctl could not start: {e}")),
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Health::unavailable(format!(
                    "smartctl did not answer within {} s",
                    timeout.as_secs()
                ));
            }
        }
    }
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        use std::io::Read;
        let _ = o.read_to_string(&mut out);
    }
    parse(&out)
}

/// A number at `path` in `v`, where it is a non-negative integer.
fn uint(v: &Value, path: &[&str]) -> Option<u64> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_u64()
}

/// An ATA attribute's raw value by its id.
fn attribute(v: &Value, id: u64) -> Option<u64> {
    v.get("ata_smart_attributes")?
        .get("table")?
        .as_array()?
        .iter()
        .find(|a| a.get("id").and_then(Value::as_u64) == Some(id))?
        .get("raw")?
        .get("value")?
        .as_u64()
}

/// smartctl's version as it says it ("7.3").
fn version_of(tool: &Value) -> String {
    tool.get("version")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(Value::as_u64)
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(".")
        })
        .unwrap_or_default()
}

/// Why smartctl's JSON `v` holds no health: its command line or the device failed (bits 0-1
/// of its exit status), or it printed none of the sections health is read from; its own
/// message where it gave one.
fn refused(v: &Value, tool: &Value) -> Option<String> {
    let exit = uint(v, &["smartctl", "exit_status"]).unwrap_or(0);
    let data = [
        "smart_status",
        "ata_smart_attributes",
        "nvme_smart_health_information_log",
        "scsi_grown_defect_list",
    ]
    .iter()
    .any(|k| v.get(k).is_some());
    if exit & 0b11 == 0 && data {
        return None;
    }
    let message = tool
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.iter().find_map(|m| m.get("string")?.as_str()))
        .map(str::to_string);
    Some(message.unwrap_or_else(|| format!("smartctl exited with status {exit}")))
}

/// What `smartctl --json` printed, read: the counters that could explain a slower disk, or
/// why there are none (its own error message, where it printed one).
pub fn parse(json: &str) -> Health {
    let Ok(v) = serde_json::from_str::<Value>(json) else {
        return Health::unavailable("smartctl printed something other than its JSON");
    };
    let Some(tool) = v.get("smartctl") else {
        return Health::unavailable("smartctl's JSON has no `smartctl` section");
    };
    if let Some(why) = refused(&v, tool) {
        return Health::unavailable(why);
    }
    let version = version_of(tool);
    let nvme = v.get("nvme_smart_health_information_log");
    let scsi_uncorrected = ["read", "write"]
        .iter()
        .filter_map(|w| {
            uint(
                &v,
                &["scsi_error_counter_log", w, "total_uncorrected_errors"],
            )
        })
        .reduce(|a, b| a + b);
    Health {
        unavailable: None,
        source: Some(format!("smartctl {version}")),
        protocol: v
            .get("device")
            .and_then(|d| d.get("protocol"))
            .and_then(Value::as_str)
            .map(str::to_string),
        model: v
            .get("model_name")
            .and_then(Value::as_str)
            .map(str::to_string),
        serial: v
            .get("serial_number")
            .and_then(Value::as_str)
            .map(str::to_string),
        passed: v
            .get("smart_status")
            .and_then(|s| s.get("passed"))
            .and_then(Value::as_bool),
        reallocated_sectors: attribute(&v, 5).or_else(|| uint(&v, &["scsi_grown_defect_list"])),
        pending_sectors: attribute(&v, 197),
        uncorrectable_errors: attribute(&v, 198)
            .into_iter()
            .chain(attribute(&v, 187))
            .max()
            .or(scsi_uncorrected),
        percentage_used: nvme.and_then(|n| n.get("percentage_used")?.as_u64()),
        media_errors: nvme.and_then(|n| n.get("media_errors")?.as_u64()),
        power_on_hours: uint(&v, &["power_on_time", "hours"]),
        temperature_c: v
            .get("temperature")
            .and_then(|t| t.get("current"))
            .and_then(Value::as_i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HDD: &str = include_str!("../tests/fixtures/smartctl/hdd.json");
    const SATA_SSD: &str = include_str!("../tests/fixtures/smartctl/sata-ssd.json");
    const NVME: &str = include_str!("../tests/fixtures/smartctl/nvme.json");
    const NO_DEVICE: &str = include_str!("../tests/fixtures/smartctl/unknown-device.json");

    #[test]
    fn an_hdd_says_its_reallocated_pending_and_uncorrectable_sectors() {
        let h = parse(HDD);
        assert_eq!(h.unavailable, None, "{h:?}");
        assert_eq!(h.protocol.as_deref(), Some("ATA"));
        assert_eq!(h.passed, Some(true));
        assert_eq!(h.reallocated_sectors, Some(12));
        assert_eq!(h.pending_sectors, Some(3));
        assert_eq!(h.uncorrectable_errors, Some(2));
        assert_eq!(h.power_on_hours, Some(36055));
        assert_eq!(h.temperature_c, Some(36));
        assert_eq!(h.percentage_used, None);
        assert_eq!(h.source.as_deref(), Some("smartctl 7.3"));
    }

    #[test]
    fn a_sata_ssd_and_an_nvme_drive_say_theirs() {
        let s = parse(SATA_SSD);
        assert_eq!(
            (s.reallocated_sectors, s.pending_sectors),
            (Some(0), Some(0))
        );
        assert_eq!(s.uncorrectable_errors, Some(0));
        let n = parse(NVME);
        assert_eq!(n.protocol.as_deref(), Some("NVMe"));
        assert_eq!((n.percentage_used, n.media_errors), (Some(7), Some(0)));
        assert_eq!(n.reallocated_sectors, None);
        assert_eq!(n.power_on_hours, Some(870));
        assert!(
            n.words().contains("7% of its rated life used"),
            "{}",
            n.words()
        );
    }

    #[test]
    fn what_cannot_be_read_is_not_available_with_the_reason() {
        let h = parse(NO_DEVICE);
        assert!(
            h.unavailable
                .as_deref()
                .is_some_and(|w| w.contains("Unable to detect device type")),
            "{h:?}"
        );
        for junk in [
            "",
            "not json",
            "{}",
            "[1,2]",
            r#"{"smartctl": {"exit_status": 2}}"#,
        ] {
            let h = parse(junk);
            assert!(h.unavailable.is_some(), "{junk}: {h:?}");
            assert!(h.words().starts_with("health not available"), "{junk}");
        }
        let missing = read(Path::new("/dev/null"), Duration::from_secs(10));
        assert!(missing.unavailable.is_some(), "{missing:?}");
    }

    #[test]
    fn changes_that_could_explain_a_slower_disk_are_named() {
        let then = parse(HDD);
        let mut now = then.clone();
        now.reallocated_sectors = Some(24);
        assert_eq!(now.changes_since(&then), ["12 more sectors reallocated"]);
        let n = parse(NVME);
        let mut later = n.clone();
        later.percentage_used = Some(9);
        assert_eq!(
            later.changes_since(&n),
            ["its wear went from 7% to 9% of its rated life"]
        );
        assert!(then.changes_since(&then).is_empty());
    }
}
