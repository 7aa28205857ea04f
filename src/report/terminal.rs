//! Human-readable tables for the terminal: one per section, with the median of each figure and,
//! over several runs, its coefficient of variation.

use crate::metrics::{self as m, Def, Show};
use crate::result::{ResultDoc, Section};
use crate::units::{fmt_figure, fmt_size};
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

/// A column: a declared figure under the header this table gives it.
struct C(&'static Def, &'static str);

/// The columns each workload's table shows, in order.
fn columns(workload: &str) -> &'static [C] {
    match workload {
        "seq" => &[
            C(&m::RATE_MB_PER_S, "MB/s"),
            C(&m::NAIVE_TRACKS, "tracks (naive)"),
            C(&m::LATENCY_US_P99, "p99 ms"),
            C(&m::CPU_PCT, "CPU %"),
            C(&m::CPU_S_PER_GB, "CPU s/GB"),
        ],
        "seek" => &[
            C(&m::IOPS, "seeks/s"),
            C(&m::ACCESS_MS_MEAN, "access ms"),
            C(&m::LATENCY_US_P50, "p50 ms"),
            C(&m::LATENCY_US_P99, "p99 ms"),
            C(&m::LATENCY_US_P999, "p99.9 ms"),
            C(&m::ROTATIONAL_MS, "rotation ms"),
            C(&m::IMPLIED_SEEK_MS, "seek ms"),
            C(&m::CPU_PCT, "CPU %"),
        ],
        "access" => &[
            C(&m::RATE_MB_PER_S, "MB/s"),
            C(&m::IOPS, "IOPS"),
            C(&m::LATENCY_US_MEAN, "mean ms"),
            C(&m::LATENCY_US_P99, "p99 ms"),
            C(&m::CPU_PCT, "CPU %"),
        ],
        "mix" => &[
            C(&m::IOPS, "IOPS"),
            C(&m::RATE_MB_PER_S, "MB/s"),
            C(&m::READ_IOPS, "read IOPS"),
            C(&m::WRITE_IOPS, "write IOPS"),
            C(&m::LATENCY_US_P50, "p50 ms"),
            C(&m::LATENCY_US_P99, "p99 ms"),
            C(&m::CPU_PCT, "CPU %"),
        ],
        "zones" => &[
            C(&m::RATE_MB_PER_S, "MB/s"),
            C(&m::OFFSET_BYTES, "offset"),
            C(&m::LATENCY_US_P99, "p99 ms"),
        ],
        "sweep" => &[
            C(&m::RATE_MB_PER_S, "MB/s"),
            C(&m::IOPS, "IOPS"),
            C(&m::TRACKS, "tracks"),
            C(&m::RAM_PER_TRACK_BYTES, "RAM/track"),
            C(&m::RAM_TOTAL_BYTES, "RAM total"),
            C(&m::CPU_PCT, "CPU %"),
        ],
        "play" | "record" | "hdr" | "realtime" => &[
            C(&m::TRACKS, "tracks"),
            C(&m::PLAY_TRACKS, "play N"),
            C(&m::RECORD_TRACKS, "record M"),
            C(&m::NAIVE_TRACKS, "naive"),
            C(&m::XRUNS, "xruns"),
            C(&m::WORST_HEADROOM_PCT, "worst headroom %"),
            C(&m::LOCATE_MS, "locate ms"),
            C(&m::READ_MB_PER_S, "read MB/s"),
            C(&m::WRITE_MB_PER_S, "write MB/s"),
            C(&m::READ_LATENCY_US_P99, "read p99 ms"),
            C(&m::WRITE_LATENCY_US_P99, "write p99 ms"),
            C(&m::TICK_LATE_US_P99, "tick late p99 µs"),
            C(&m::TICK_LATE_US_MAX, "tick late max µs"),
            C(&m::PROBES, "probes"),
            C(&m::RAM_BYTES, "RAM"),
            C(&m::TICK_CPU_PCT, "tick CPU %"),
            C(&m::BUTLER_CPU_PCT, "butler CPU %"),
        ],
        _ => &[C(&m::RATE_MB_PER_S, "MB/s"), C(&m::IOPS, "IOPS")],
    }
}

/// One section as a titled table with its notes.
pub fn section(s: &Section) -> String {
    let cols: Vec<_> = columns(&s.workload)
        .iter()
        .filter(|C(def, _)| s.rows.iter().any(|r| r.get(def).is_some()))
        .collect();
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    let mut header = vec![String::new()];
    header.extend(cols.iter().map(|C(_, h)| h.to_string()));
    t.set_header(header);
    for row in &s.rows {
        let mut cells = vec![row.label.clone()];
        for C(def, _) in &cols {
            let show = def.show;
            cells.push(match row.get(def) {
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

/// Stored results as `history` lists them.
pub fn history(rows: &[crate::store::Stored]) -> String {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header([
            "id",
            "started (UTC)",
            "target",
            "device",
            "workloads",
            "headline",
        ]);
    for r in rows {
        let headline = if r.interrupted {
            format!("{} (interrupted)", r.headline)
        } else {
            r.headline.clone()
        };
        t.add_row([
            r.id.to_string(),
            r.started_at
                .replace('T', " ")
                .trim_end_matches('Z')
                .to_string(),
            r.target.clone(),
            r.device.clone(),
            r.workloads.join(", "),
            headline,
        ]);
    }
    format!("{t}\n")
}

/// Tables for a terminal: header, a table per section, warnings.
pub struct Terminal;

impl super::Presenter for Terminal {
    fn name(&self) -> &'static str {
        "terminal"
    }
    fn render(&self, doc: &ResultDoc) -> crate::error::Result<String> {
        Ok(document(doc))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_of_an_older_schema_renders_under_the_current_columns() {
        // Schema 3 named seq's naive count `tracks_naive`.
        let old = serde_json::json!({
            "workload": "seq", "title": "Sequential transfer", "settings": {}, "cached": false,
            "interrupted": false, "runs": 1, "notes": [],
            "rows": [{"label": "read", "figures": [
                {"name": "rate_mb_per_s", "unit": "MB/s", "median": 1234.5, "min": 1234.5,
                 "max": 1234.5, "cv": 0.0, "runs": [1234.5]},
                {"name": "tracks_naive", "unit": "tracks", "median": 8573.0, "min": 8573.0,
                 "max": 8573.0, "cv": 0.0, "runs": [8573.0]}]}]
        });
        let s: Section = serde_json::from_value(old).unwrap();
        let text = section(&s);
        assert!(text.contains("tracks (naive)"), "{text}");
        assert!(text.contains("8573"), "{text}");
        assert!(text.contains("1234"), "{text}");
    }
}
