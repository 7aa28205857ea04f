//! Human-readable tables for the terminal: one per section, with the median of each figure and,
//! over several runs, its coefficient of variation.

use crate::result::{ResultDoc, Section};
use crate::units::{fmt_figure, fmt_size};
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

/// How a figure is shown in a column.
#[derive(Clone, Copy)]
enum Show {
    /// The value times a factor.
    Num(f64),
    /// A byte count in K/M/G.
    Size,
}

/// The columns each workload's table shows, in order: figure name, header, rendering.
fn columns(workload: &str) -> &'static [(&'static str, &'static str, Show)] {
    use Show::*;
    match workload {
        "seq" => &[
            ("rate_mb_per_s", "MB/s", Num(1.0)),
            ("tracks_naive", "tracks (naive)", Num(1.0)),
            ("latency_us_p99", "p99 ms", Num(0.001)),
            ("cpu_pct", "CPU %", Num(1.0)),
            ("cpu_s_per_gb", "CPU s/GB", Num(1.0)),
        ],
        "seek" => &[
            ("iops", "seeks/s", Num(1.0)),
            ("access_ms_mean", "access ms", Num(1.0)),
            ("latency_us_p50", "p50 ms", Num(0.001)),
            ("latency_us_p99", "p99 ms", Num(0.001)),
            ("latency_us_p999", "p99.9 ms", Num(0.001)),
            ("rotational_ms", "rotation ms", Num(1.0)),
            ("implied_seek_ms", "seek ms", Num(1.0)),
            ("cpu_pct", "CPU %", Num(1.0)),
        ],
        "access" => &[
            ("rate_mb_per_s", "MB/s", Num(1.0)),
            ("iops", "IOPS", Num(1.0)),
            ("latency_us_mean", "mean ms", Num(0.001)),
            ("latency_us_p99", "p99 ms", Num(0.001)),
            ("cpu_pct", "CPU %", Num(1.0)),
        ],
        "mix" => &[
            ("iops", "IOPS", Num(1.0)),
            ("rate_mb_per_s", "MB/s", Num(1.0)),
            ("read_iops", "read IOPS", Num(1.0)),
            ("write_iops", "write IOPS", Num(1.0)),
            ("latency_us_p50", "p50 ms", Num(0.001)),
            ("latency_us_p99", "p99 ms", Num(0.001)),
            ("cpu_pct", "CPU %", Num(1.0)),
        ],
        "zones" => &[
            ("rate_mb_per_s", "MB/s", Num(1.0)),
            ("offset_bytes", "offset", Size),
            ("latency_us_p99", "p99 ms", Num(0.001)),
        ],
        "sweep" => &[
            ("rate_mb_per_s", "MB/s", Num(1.0)),
            ("iops", "IOPS", Num(1.0)),
            ("tracks", "tracks", Num(1.0)),
            ("ram_per_track_bytes", "RAM/track", Size),
            ("ram_total_bytes", "RAM total", Size),
            ("cpu_pct", "CPU %", Num(1.0)),
        ],
        "play" | "record" | "hdr" | "realtime" => &[
            ("tracks", "tracks", Num(1.0)),
            ("play_tracks", "play N", Num(1.0)),
            ("record_tracks", "record M", Num(1.0)),
            ("naive_tracks", "naive", Num(1.0)),
            ("xruns", "xruns", Num(1.0)),
            ("worst_headroom_pct", "worst headroom %", Num(1.0)),
            ("locate_ms", "locate ms", Num(1.0)),
            ("read_mb_per_s", "read MB/s", Num(1.0)),
            ("write_mb_per_s", "write MB/s", Num(1.0)),
            ("read_latency_us_p99", "read p99 ms", Num(0.001)),
            ("write_latency_us_p99", "write p99 ms", Num(0.001)),
            ("tick_late_us_p99", "tick late p99 µs", Num(1.0)),
            ("tick_late_us_max", "tick late max µs", Num(1.0)),
            ("probes", "probes", Num(1.0)),
            ("ram_bytes", "RAM", Size),
            ("tick_cpu_pct", "tick CPU %", Num(1.0)),
            ("butler_cpu_pct", "butler CPU %", Num(1.0)),
        ],
        _ => &[
            ("rate_mb_per_s", "MB/s", Num(1.0)),
            ("iops", "IOPS", Num(1.0)),
        ],
    }
}

/// One section as a titled table with its notes.
pub fn section(s: &Section) -> String {
    let cols: Vec<_> = columns(&s.workload)
        .iter()
        .filter(|(name, _, _)| s.rows.iter().any(|r| r.figure(name).is_some()))
        .collect();
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    let mut header = vec![String::new()];
    header.extend(cols.iter().map(|(_, h, _)| h.to_string()));
    t.set_header(header);
    for row in &s.rows {
        let mut cells = vec![row.label.clone()];
        for (name, _, show) in &cols {
            cells.push(match row.figure(name) {
                None => "-".to_string(),
                Some(f) => {
                    let v = f.spread.median;
                    let mut text = match show {
                        Show::Num(k) => fmt_figure(v * k),
                        Show::Size => fmt_size(v as u64),
                    };
                    if f.spread.runs.len() > 1
                        && f.spread.median != 0.0
                        && !matches!(show, Show::Size)
                    {
                        text.push_str(&format!(" ±{:.1}%", 100.0 * f.spread.cv));
                    }
                    text
                }
            });
        }
        t.add_row(cells);
    }
    for i in 1..=cols.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = String::new();
    let mut title = s.title.clone();
    if s.cached {
        title.push_str("  [cached]");
    }
    if s.interrupted {
        title.push_str("  [interrupted]");
    }
    out.push_str(&title);
    out.push('\n');
    out.push_str(&t.to_string());
    out.push('\n');
    if s.runs > 1 {
        out.push_str(&format!(
            "  median of {} runs; ± is the coefficient of variation\n",
            s.runs
        ));
    }
    for n in &s.notes {
        out.push_str(&format!("  • {n}\n"));
    }
    out
}

/// A line describing the target and the machine.
pub fn header(doc: &ResultDoc) -> String {
    let t = &doc.target;
    let mut parts = vec![format!(
        "{} ({})",
        t.path.display(),
        match t.kind {
            crate::target::TargetKind::Directory => "directory",
            crate::target::TargetKind::File => "file",
            crate::target::TargetKind::BlockDevice => "block device",
        }
    )];
    if let Some(fs) = &t.fs_type {
        parts.push(format!(
            "{fs} on {}",
            t.mount_source.as_deref().unwrap_or("?")
        ));
    }
    if let Some(d) = &t.device {
        let mut s = d.name.clone();
        if let Some(m) = &d.model {
            s.push_str(&format!(" \"{m}\""));
        }
        if let Some(r) = d.rotational {
            s.push_str(if r {
                ", rotational"
            } else {
                ", non-rotational"
            });
        }
        if let Some(sch) = &d.scheduler {
            s.push_str(&format!(", scheduler {sch}"));
        }
        parts.push(s);
    }
    if let Some(free) = t.free_bytes {
        parts.push(format!("{} free", fmt_size(free)));
    }
    if let Some(size) = t.size_bytes {
        parts.push(format!("{} size", fmt_size(size)));
    }
    let h = &doc.host;
    format!(
        "target: {}\nhost:   {}, {} CPUs{}, Linux {}\n",
        parts.join(", "),
        h.cpu_model.as_deref().unwrap_or("unknown CPU"),
        h.cpus,
        h.memory_bytes
            .map(|m| format!(", {} RAM", fmt_size(m)))
            .unwrap_or_default(),
        h.kernel
    )
}

/// The whole document: header, every section, and warnings.
pub fn document(doc: &ResultDoc) -> String {
    let mut out = header(doc);
    for s in &doc.sections {
        out.push('\n');
        out.push_str(&section(s));
    }
    for w in &doc.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}
