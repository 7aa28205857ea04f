//! Every figure trackbench measures, declared once: its name in the result document, its unit,
//! how a presenter shows it, and which way is better. Workloads emit values of these; the
//! terminal, the summary and any report look them up here, never by a name typed again.

/// Which way a figure is better, for comparisons and charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    More,
    Less,
    /// A description of the run (a size, an offset, a count of probes), not a score.
    Neither,
}

/// How a presenter shows a figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Show {
    /// The value times a factor (µs shown in ms: 0.001).
    Num(f64),
    /// A byte count in K/M/G.
    Size,
}

/// One declared figure.
#[derive(Debug, PartialEq)]
pub struct Def {
    /// The name in the result document.
    pub name: &'static str,
    pub unit: &'static str,
    /// A short column header.
    pub header: &'static str,
    pub show: Show,
    pub better: Better,
    /// Names this figure had in older result documents.
    pub aliases: &'static [&'static str],
}

macro_rules! defs {
    ($($id:ident: $name:literal, $unit:literal, $header:literal, $show:expr, $better:ident $(, [$($alias:literal),*])?;)*) => {
        $(
            pub const $id: Def = Def {
                name: $name,
                unit: $unit,
                header: $header,
                show: $show,
                better: Better::$better,
                aliases: &[$($($alias),*)?],
            };
        )*
        /// Every declared figure.
        pub const ALL: &[&Def] = &[$(&$id),*];
    };
}

use Show::{Num, Size};

const MS_FROM_US: Show = Num(0.001);
const PLAIN: Show = Num(1.0);

defs! {
    // Classic transfers.
    RATE_MB_PER_S: "rate_mb_per_s", "MB/s", "MB/s", PLAIN, More;
    IOPS: "iops", "IOPS", "IOPS", PLAIN, More;
    READ_IOPS: "read_iops", "IOPS", "read IOPS", PLAIN, More;
    WRITE_IOPS: "write_iops", "IOPS", "write IOPS", PLAIN, More;
    LATENCY_US_MEAN: "latency_us_mean", "µs", "mean ms", MS_FROM_US, Less;
    LATENCY_US_P50: "latency_us_p50", "µs", "p50 ms", MS_FROM_US, Less;
    LATENCY_US_P99: "latency_us_p99", "µs", "p99 ms", MS_FROM_US, Less;
    LATENCY_US_P999: "latency_us_p999", "µs", "p99.9 ms", MS_FROM_US, Less;
    CPU_PCT: "cpu_pct", "% of a core", "CPU %", PLAIN, Less;
    CPU_S_PER_GB: "cpu_s_per_gb", "CPU s/GB", "CPU s/GB", PLAIN, Less;
    // A studio's ranks: what each did while all were still running (ior's stonewalling).
    STONEWALL_MB_PER_S: "stonewall_mb_per_s", "MB/s", "MB/s all running", PLAIN, More;
    STONEWALL_IOPS: "stonewall_iops", "IOPS", "IOPS all running", PLAIN, More;
    // Seeks and zones.
    ACCESS_MS_MEAN: "access_ms_mean", "ms", "access ms", PLAIN, Less;
    ROTATIONAL_MS: "rotational_ms", "ms", "rotation ms", PLAIN, Neither;
    IMPLIED_SEEK_MS: "implied_seek_ms", "ms", "seek ms", PLAIN, Less;
    SPAN_BYTES: "span_bytes", "bytes", "span", Size, Neither;
    OFFSET_BYTES: "offset_bytes", "bytes", "offset", Size, Neither;
    POSITION_PCT: "position_pct", "%", "position %", PLAIN, Neither;
    // Tracks.
    TRACKS: "tracks", "tracks", "tracks", PLAIN, More;
    // What throughput divided by the track rate promises (the figure trackbench corrects).
    NAIVE_TRACKS: "naive_tracks", "tracks", "naive", PLAIN, More, ["tracks_naive"];
    PLAY_TRACKS: "play_tracks", "tracks", "play N", PLAIN, More;
    RECORD_TRACKS: "record_tracks", "tracks", "record M", PLAIN, More;
    // Sweep.
    BLOCK_BYTES: "block_bytes", "bytes", "block", Size, Neither;
    RAM_PER_TRACK_BYTES: "ram_per_track_bytes", "bytes", "RAM/track", Size, Less;
    RAM_TOTAL_BYTES: "ram_total_bytes", "bytes", "RAM total", Size, Less;
    // The tracks whose buffers fit in the memory this process may pin (`MemoryBudget`).
    TRACKS_IN_MEMORY: "tracks_in_memory", "tracks", "fit in memory", PLAIN, More;
    // Streaming.
    XRUNS: "xruns", "xruns", "xruns", PLAIN, Less;
    UNDERRUNS: "underruns", "xruns", "underruns", PLAIN, Less;
    OVERRUNS: "overruns", "xruns", "overruns", PLAIN, Less;
    WORST_HEADROOM_PCT: "worst_headroom_pct", "%", "worst headroom %", PLAIN, More;
    SHORTFALL_PCT: "shortfall_pct", "%", "shortfall %", PLAIN, Less;
    LOCATE_MS: "locate_ms", "ms", "locate ms", PLAIN, Less;
    READ_MB_PER_S: "read_mb_per_s", "MB/s", "read MB/s", PLAIN, More;
    WRITE_MB_PER_S: "write_mb_per_s", "MB/s", "write MB/s", PLAIN, More;
    READ_LATENCY_US_P99: "read_latency_us_p99", "µs", "read p99 ms", MS_FROM_US, Less;
    WRITE_LATENCY_US_P99: "write_latency_us_p99", "µs", "write p99 ms", MS_FROM_US, Less;
    READ_AMPLIFICATION: "read_amplification", "x", "read amplification", PLAIN, Neither;
    TICK_LATE_US_P50: "tick_late_us_p50", "µs", "tick late p50 µs", PLAIN, Less;
    TICK_LATE_US_P99: "tick_late_us_p99", "µs", "tick late p99 µs", PLAIN, Less;
    TICK_LATE_US_MAX: "tick_late_us_max", "µs", "tick late max µs", PLAIN, Less;
    TICK_CPU_PCT: "tick_cpu_pct", "% of a core", "tick CPU %", PLAIN, Less;
    BUTLER_CPU_PCT: "butler_cpu_pct", "% of a core", "butler CPU %", PLAIN, Less;
    BUTLER_IDLE_PCT: "butler_idle_pct", "%", "butler idle %", PLAIN, More;
    // The longest the butler's thread, ready to run, waited for a CPU (the kernel's run delay).
    BUTLER_CPU_WAIT_MS_MAX: "butler_cpu_wait_ms_max", "ms", "butler CPU wait max ms", PLAIN, Less;
    RAM_BYTES: "ram_bytes", "bytes", "RAM", Size, Neither;
    PROBES: "probes", "runs", "probes", PLAIN, Neither;
    // Sampler.
    VOICES: "voices", "voices", "voices", PLAIN, More;
    // Sequential MB/s ÷ what a voice streams: the count a video-style benchmark promises.
    NAIVE_VOICES: "naive_voices", "voices", "naive", PLAIN, More;
    DROPOUTS: "dropouts", "periods", "dropouts", PLAIN, Less;
    // A note's first read: how long before its preload ran out it landed.
    FIRST_READ_SLACK_MS_P50: "first_read_slack_ms_p50", "ms", "slack p50 ms", PLAIN, More;
    // The slack 99% of first reads had at least.
    FIRST_READ_SLACK_MS_P1: "first_read_slack_ms_p1", "ms", "slack p1 ms", PLAIN, More;
    FIRST_READ_SLACK_MS_MIN: "first_read_slack_ms_min", "ms", "slack min ms", PLAIN, More;
    STREAMED_MB_PER_S: "streamed_mb_per_s", "MB/s", "streamed MB/s", PLAIN, Neither;
    PRELOAD_RAM_BYTES: "preload_ram_bytes", "bytes", "preload RAM", Size, Neither;
    NOTES: "notes", "notes", "notes", PLAIN, Neither;
    // Template load.
    LOAD_S: "load_s", "s", "time s", PLAIN, Less;
    FILES_PER_S: "files_per_s", "files/s", "files/s", PLAIN, More;
    // The loader threads' time spent in open(), as a share of their time opening and reading.
    OPEN_PCT: "open_pct", "%", "opening %", PLAIN, Neither;
    OPEN_US_MEAN: "open_us_mean", "µs", "open µs", PLAIN, Less;
    READ_US_MEAN: "read_us_mean", "µs", "read µs", PLAIN, Less;
    // Offline export.
    STAGE_S: "stage_s", "s", "time s", PLAIN, Less;
    X_REAL_TIME: "x_real_time", "x", "x real time", PLAIN, More;
}

/// The declared figure a result document names `name` (its current name or an older one).
pub fn lookup(name: &str) -> Option<&'static Def> {
    ALL.iter()
        .copied()
        .find(|d| d.name == name || d.aliases.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_is_declared_once_under_a_plain_name() {
        for (i, d) in ALL.iter().enumerate() {
            assert!(
                d.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{}",
                d.name
            );
            for other in &ALL[i + 1..] {
                assert_ne!(d.name, other.name);
                assert!(!other.aliases.contains(&d.name), "{}", d.name);
            }
            assert_eq!(lookup(d.name), Some(*d));
        }
        assert_eq!(lookup("tracks_naive"), Some(&NAIVE_TRACKS));
        assert_eq!(lookup("no_such_figure"), None);
    }
}
