//! Parsing and printing of sizes, durations and rates the way users type and read them.

use std::time::Duration;

/// A value a user typed that cannot be used: what it was for, the value as typed, and what
/// would be valid. The library's errors carry it (`Error::Invalid`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid {what} {value:?}: {expected}")]
pub struct Invalid {
    pub what: &'static str,
    pub value: String,
    pub expected: String,
}

impl Invalid {
    pub fn new(what: &'static str, value: impl ToString, expected: impl Into<String>) -> Self {
        Invalid {
            what,
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}

/// Parses a byte size: `4096`, `64K`, `256KiB`, `1M`, `1.5G`. K, M, G are binary (1024-based),
/// as block sizes always are.
pub fn parse_size(what: &'static str, s: &str) -> Result<u64, Invalid> {
    parse_size::Config::new()
        .with_binary()
        .parse_size(s.trim())
        .map_err(|_| Invalid::new(what, s, "a size such as 4096, 64K, 256KiB, 1M or 2G"))
}

/// Parses a duration: `10s`, `500ms`, `2m`, or a bare number of seconds (`2.5`).
pub fn parse_duration(what: &'static str, s: &str) -> Result<Duration, Invalid> {
    let t = s.trim();
    if let Ok(secs) = t.parse::<f64>() {
        // Beyond u64::MAX seconds there is no Duration (from_secs_f64 would panic).
        if let Ok(d) = Duration::try_from_secs_f64(secs) {
            return Ok(d);
        }
    } else if let Ok(d) = humantime::parse_duration(t) {
        return Ok(d);
    }
    Err(Invalid::new(
        what,
        s,
        "a duration such as 10s, 500ms, 2m or 2.5 (seconds)",
    ))
}

/// A byte count in binary units for block sizes and memory: `4K`, `256K`, `1M`, `1.5G`.
pub fn fmt_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("T", 1 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
    ];
    for (name, unit) in UNITS {
        if bytes >= unit {
            let v = bytes as f64 / unit as f64;
            return if bytes.is_multiple_of(unit) {
                format!("{}{name}", bytes / unit)
            } else if v >= 100.0 {
                format!("{v:.0}{name}")
            } else {
                format!("{v:.1}{name}")
            };
        }
    }
    format!("{bytes}B")
}

/// A figure with as many decimals as its size deserves (three significant digits or so).
pub fn fmt_figure(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "-".to_string()
    } else if a >= 1000.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else if a == 0.0 {
        "0".to_string()
    } else {
        format!("{v:.2e}")
    }
}

/// A time in microseconds as a chart axis shows it: `80 µs`, `1.5 ms`, `2 s`.
pub fn fmt_micros(us: f64) -> String {
    let trim = |v: f64| {
        if v >= 10.0 || v == v.trunc() {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    };
    if us >= 1e6 {
        format!("{} s", trim(us / 1e6))
    } else if us >= 1e3 {
        format!("{} ms", trim(us / 1e3))
    } else {
        format!("{} µs", trim(us))
    }
}

/// Bytes per second in decimal megabytes per second, as fio and drive makers quote them.
pub fn mb_per_s(bytes: u64, elapsed: Duration) -> f64 {
    let s = elapsed.as_secs_f64();
    if s <= 0.0 {
        0.0
    } else {
        bytes as f64 / s / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary() {
        assert_eq!(parse_size("chunk", "4096").unwrap(), 4096);
        assert_eq!(parse_size("chunk", "64K").unwrap(), 65536);
        assert_eq!(parse_size("chunk", "256KiB").unwrap(), 262144);
        assert_eq!(parse_size("chunk", "1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("chunk", "2g").unwrap(), 2 << 30);
        let e = parse_size("chunk", "fast").unwrap_err().to_string();
        assert!(e.contains("\"fast\"") && e.contains("64K"), "{e}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("d", "10s").unwrap(), Duration::from_secs(10));
        assert_eq!(
            parse_duration("d", "500ms").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(
            parse_duration("d", "2.5").unwrap(),
            Duration::from_millis(2500)
        );
        assert!(parse_duration("d", "-1").is_err());
        assert!(parse_duration("d", "soon").is_err());
    }

    #[test]
    fn micros() {
        assert_eq!(fmt_micros(80.0), "80 µs");
        assert_eq!(fmt_micros(1500.0), "1.5 ms");
        assert_eq!(fmt_micros(2e6), "2 s");
        assert_eq!(fmt_micros(2.5), "2.5 µs");
    }

    #[test]
    fn printing() {
        assert_eq!(fmt_size(4096), "4K");
        assert_eq!(fmt_size(1 << 20), "1M");
        assert_eq!(fmt_size(1536 << 10), "1.5M");
        assert_eq!(fmt_size(100), "100B");
        assert_eq!(fmt_figure(1234.5), "1234");
        assert_eq!(fmt_figure(12.345), "12.35");
        assert_eq!(mb_per_s(2_000_000, Duration::from_secs(2)), 1.0);
    }
}
