//! Human-readable tables for the terminal: one per section, with the median of each figure and,
//! over several runs, its coefficient of variation.

use crate::result::metrics::{self as m, Def, Show};
use crate::result::{ResultDoc, Section};
use crate::units::fmt_size;
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

/// The figures each workload's table shows, in order.
pub(crate) fn columns(workload: &str) -> &'static [&'static Def] {
    match workload {
        "seq" => &[
            &m::RATE_MB_PER_S,
            &m::NAIVE_TRACKS,
            &m::LATENCY_US_P99,
            &m::CPU_PCT,
            &m::CPU_S_PER_GB,
        ],
        "seek" => &[
            &m::IOPS,
            &m::ACCESS_MS_MEAN,
            &m::LATENCY_US_P50,
            &m::LATENCY_US_P99,
            &m::LATENCY_US_P999,
            &m::ROTATIONAL_MS,
            &m::IMPLIED_SEEK_MS,
            &m::CPU_PCT,
        ],
        "access" => &[
            &m::RATE_MB_PER_S,
            &m::IOPS,
            &m::LATENCY_US_MEAN,
            &m::LATENCY_US_P99,
            &m::CPU_PCT,
        ],
        "mix" => &[
            &m::IOPS,
            &m::RATE_MB_PER_S,
            &m::READ_IOPS,
            &m::WRITE_IOPS,
            &m::LATENCY_US_P50,
            &m::LATENCY_US_P99,
            &m::CPU_PCT,
        ],
        "zones" => &[&m::RATE_MB_PER_S, &m::OFFSET_BYTES, &m::LATENCY_US_P99],
        "sweep" => &[
            &m::RATE_MB_PER_S,
            &m::IOPS,
            &m::TRACKS,
            &m::RAM_PER_TRACK_BYTES,
            &m::RAM_TOTAL_BYTES,
            &m::TRACKS_IN_MEMORY,
            &m::CPU_PCT,
        ],
        "play" | "record" | "hdr" | "realtime" => &[
            &m::TRACKS,
            &m::PLAY_TRACKS,
            &m::RECORD_TRACKS,
            &m::NAIVE_TRACKS,
            &m::XRUNS,
            &m::WORST_HEADROOM_PCT,
            &m::LOCATE_MS,
            &m::READ_MB_PER_S,
            &m::WRITE_MB_PER_S,
            &m::READ_LATENCY_US_P99,
            &m::WRITE_LATENCY_US_P99,
            &m::TICK_LATE_US_P99,
            &m::TICK_LATE_US_MAX,
            &m::PROBES,
            &m::RAM_BYTES,
            &m::TICK_CPU_PCT,
            &m::BUTLER_CPU_PCT,
            &m::BUTLER_CPU_WAIT_MS_MAX,
        ],
        "sampler" => &[
            &m::VOICES,
            &m::NAIVE_VOICES,
            &m::DROPOUTS,
            &m::FIRST_READ_SLACK_MS_P50,
            &m::FIRST_READ_SLACK_MS_P1,
            &m::FIRST_READ_SLACK_MS_MIN,
            &m::STREAMED_MB_PER_S,
            &m::WORST_HEADROOM_PCT,
            &m::READ_LATENCY_US_P99,
            &m::BUTLER_IDLE_PCT,
            &m::PRELOAD_RAM_BYTES,
            &m::RAM_BYTES,
            &m::PROBES,
            &m::TICK_LATE_US_MAX,
            &m::TICK_CPU_PCT,
            &m::BUTLER_CPU_PCT,
            &m::BUTLER_CPU_WAIT_MS_MAX,
        ],
        "bounce" => &[&m::STAGE_S, &m::RATE_MB_PER_S, &m::X_REAL_TIME, &m::CPU_PCT],
        "load" => &[
            &m::LOAD_S,
            &m::FILES_PER_S,
            &m::RATE_MB_PER_S,
            &m::OPEN_PCT,
            &m::OPEN_US_MEAN,
            &m::READ_US_MEAN,
        ],
        _ => &[&m::RATE_MB_PER_S, &m::IOPS],
    }
}

/// A column's header: the figure's own, except where a table names it for what it means there.
pub(crate) fn column_header(workload: &str, def: &Def) -> &'static str {
    match (workload, def.name) {
        ("seq", "naive_tracks") => "tracks (naive)",
        ("seek", "iops") => "seeks/s",
        _ => def.header,
    }
}

/// A table as every one here is drawn: fitted to the terminal's width when it has one. A
/// terminal that says it is a few columns wide (the pseudo-terminal an MPI launcher gives its
/// ranks says 0) would squeeze every column to one character: such a table is drawn whole.
fn table() -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if t.width().is_some_and(|w| w < 40) {
        t.set_content_arrangement(ContentArrangement::Disabled);
    }
    t
}

/// One section as a titled table with its notes.
pub fn section(s: &Section) -> String {
    let cols: Vec<_> = columns(&s.workload)
        .iter()
        .filter(|def| s.rows.iter().any(|r| r.get(def).is_some()))
        .collect();
    let mut t = table();
    let mut header = vec![String::new()];
    header.extend(
        cols.iter()
            .map(|def| column_header(&s.workload, def).to_string()),
    );
    t.set_header(header);
    for row in &s.rows {
        let mut cells = vec![row.label.clone()];
        for def in &cols {
            let show = def.show;
            cells.push(match row.get(def) {
                None => "-".to_string(),
                Some(f) => {
                    let v = f.spread.median;
                    let mut text = super::shown(def, v);
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
    for f in &s.findings {
        out.push_str(&format!("  • {}\n", super::words::words(f)));
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
        // Where the filesystem lives: its device (Linux, macOS), else its mount point or
        // volume (Windows); unknown is left out rather than guessed.
        let on = t
            .mount_source
            .clone()
            .or_else(|| t.mount_point.as_ref().map(|p| p.display().to_string()));
        parts.push(match on {
            Some(on) => format!("{fs} on {on}"),
            None => fs.clone(),
        });
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
        "target: {}\nhost:   {}, {} CPUs{}, {}{}\n",
        parts.join(", "),
        h.cpu_model.as_deref().unwrap_or("unknown CPU"),
        h.cpus,
        h.memory_bytes
            .map(|m| format!(", {} RAM", fmt_size(m)))
            .unwrap_or_default(),
        // "Linux x86_64" with kernel "6.18.44" reads "Linux 6.18.44"; an unknown kernel
        // (Windows) is left out.
        h.os.split_whitespace().next().unwrap_or("unknown system"),
        if h.kernel == "unknown" {
            String::new()
        } else {
            format!(" {}", h.kernel)
        }
    )
}

/// Stored results as `history` lists them.
pub fn history(rows: &[crate::store::Stored]) -> String {
    let mut t = table();
    t.set_header([
        "id",
        "started (UTC)",
        "target",
        "device",
        "workloads",
        "headline",
    ]);
    for r in rows {
        let headline = super::summary::stored_headline(r);
        let headline = if r.interrupted {
            format!("{headline} (interrupted)")
        } else {
            headline
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
    fn extension(&self) -> &'static str {
        "txt"
    }
    fn render(&self, doc: &ResultDoc) -> crate::error::Result<String> {
        Ok(document(doc))
    }
}

/// A studio run: how many workstations, each section's answer for the studio, and every
/// host's row (None for one computer).
pub fn studio(doc: &ResultDoc) -> Option<String> {
    let intro = super::studio::intro(doc)?;
    let mut out = format!("{intro}\n");
    for sec in super::studio::sections(doc) {
        out.push_str(&format!("\n{}\n  {}\n", sec.title, sec.words));
        if !sec.totals.is_empty() {
            out.push_str(&format!(
                "  the storage delivered, all hosts together: {}\n",
                super::studio::total_words(&sec.totals)
            ));
        }
        if !sec.hosts.is_empty() {
            let (header, rows) = super::studio::table(&sec);
            // Figures are right-aligned; the rank, host, role and verdict read as words.
            let words = header
                .iter()
                .position(|h| h == "verdict")
                .map_or(2, |p| p + 1);
            let mut t = table();
            t.set_header(header);
            for r in rows {
                t.add_row(r);
            }
            for c in t.column_iter_mut().skip(words) {
                c.set_cell_alignment(CellAlignment::Right);
            }
            out.push_str(&format!("{t}\n"));
        }
    }
    Some(out)
}

/// The whole document: header, every section, the studio's rows, the suite's summary, and
/// warnings.
pub fn document(doc: &ResultDoc) -> String {
    let mut out = header(doc);
    for s in &doc.sections {
        out.push('\n');
        out.push_str(&section(s));
    }
    if let Some(st) = studio(doc) {
        out.push('\n');
        out.push_str(&st);
    }
    if let Some(summary) = super::summary::summary(doc) {
        out.push('\n');
        out.push_str(&summary);
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
