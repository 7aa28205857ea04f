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

/// How the terminal's text is laid out: the width it fits in, and whether every column and
/// every explanation is shown whole (`--wide`, as a file or a pipe gets it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    /// Columns the text fits in (tables, wrapped lines); unbounded for `--wide`.
    pub width: usize,
    pub wide: bool,
}

impl View {
    /// The width assumed where the terminal does not say.
    pub const DEFAULT_WIDTH: usize = 100;
    /// Text that fits `width` columns (at least 40): the deciding columns of each table, long
    /// explanations in one line that says where the whole one is.
    pub fn fitted(width: usize) -> View {
        View {
            width: width.max(40),
            wide: false,
        }
    }
    /// Every column and every explanation whole, each line as long as it is.
    pub fn wide() -> View {
        View {
            width: usize::MAX,
            wide: true,
        }
    }

    /// `text` wrapped to the view's width, its first line after `first`, the rest indented by
    /// `rest` (a wide view leaves it one line).
    pub fn wrap(&self, text: &str, first: &str, rest: &str) -> String {
        if self.wide {
            return format!("{first}{text}\n");
        }
        let opts = textwrap::Options::new(self.width)
            .initial_indent(first)
            .subsequent_indent(rest)
            .word_splitter(textwrap::WordSplitter::NoHyphenation)
            .break_words(true);
        let mut out = textwrap::fill(text, opts);
        out.push('\n');
        out
    }
}

impl Default for View {
    fn default() -> View {
        View::fitted(View::DEFAULT_WIDTH)
    }
}

/// The columns a fitted table keeps: the count, whether it held, the safety left and the
/// memory it takes (for the streaming workloads); the rest are in `--wide`, the JSON document
/// and the report.
fn fitted_columns(workload: &str) -> &'static [&'static Def] {
    match workload {
        "play" | "record" | "hdr" | "realtime" => &[
            &m::TRACKS,
            &m::PLAY_TRACKS,
            &m::RECORD_TRACKS,
            &m::NAIVE_TRACKS,
            &m::XRUNS,
            &m::WORST_HEADROOM_PCT,
            &m::RAM_BYTES,
        ],
        "sampler" => &[
            &m::VOICES,
            &m::NAIVE_VOICES,
            &m::DROPOUTS,
            &m::WORST_HEADROOM_PCT,
            &m::PRELOAD_RAM_BYTES,
            &m::RAM_BYTES,
        ],
        "seek" => &[
            &m::IOPS,
            &m::ACCESS_MS_MEAN,
            &m::LATENCY_US_P50,
            &m::LATENCY_US_P99,
            &m::ROTATIONAL_MS,
            &m::IMPLIED_SEEK_MS,
        ],
        "mix" => &[
            &m::IOPS,
            &m::RATE_MB_PER_S,
            &m::LATENCY_US_P50,
            &m::LATENCY_US_P99,
            &m::CPU_PCT,
        ],
        "sweep" => &[
            &m::RATE_MB_PER_S,
            &m::IOPS,
            &m::TRACKS,
            &m::RAM_PER_TRACK_BYTES,
            &m::RAM_TOTAL_BYTES,
            &m::TRACKS_IN_MEMORY,
        ],
        other => columns(other),
    }
}

/// A table as every one here is drawn. A fitted view draws it within its width, wrapping
/// cells; a wide one fits it to the terminal when it has one (a terminal that says it is a few
/// columns wide, as the pseudo-terminal an MPI launcher gives its ranks says 0, would squeeze
/// every column to one character: such a table is drawn whole).
fn table(view: &View) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if view.wide {
        if t.width().is_some_and(|w| w < 40) {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    } else {
        t.set_width(u16::try_from(view.width).unwrap_or(u16::MAX));
    }
    t
}

/// One section as the terminal shows it: its title, its answer (for a count of tracks or
/// voices: in words first, then what it depends on and how sure it is), its table, its notes.
/// `doc` is the run the section belongs to (its target, format, and whether it was stopped).
pub fn section(doc: &ResultDoc, s: &Section, view: &View) -> String {
    let shown = if view.wide {
        columns(&s.workload)
    } else {
        fitted_columns(&s.workload)
    };
    let present = |defs: &[&Def]| -> Vec<&'static Def> {
        columns(&s.workload)
            .iter()
            .copied()
            .filter(|def| defs.iter().any(|d| d.name == def.name))
            .filter(|def| s.rows.iter().any(|r| r.get(def).is_some()))
            .collect()
    };
    let cols = present(shown);
    let hidden: Vec<&str> = present(columns(&s.workload))
        .into_iter()
        .filter(|d| !cols.iter().any(|c| c.name == d.name))
        .map(|d| column_header(&s.workload, d))
        .collect();
    let mut out = String::new();
    let mut title = s.title.clone();
    if s.cached {
        title.push_str("  [cached]");
    }
    if s.interrupted {
        title.push_str("  [interrupted]");
    }
    out.push_str(&view.wrap(&title, "", "  "));
    let answer = super::answer::of(doc, s);
    if let Some(a) = &answer {
        out.push_str(&view.wrap(&a.sentence, "  ", "  "));
        out.push_str(&view.wrap(&a.depends_on, "  depends on: ", "    "));
        out.push_str(&view.wrap(&a.how_sure, "  how sure: ", "    "));
    }
    let unanswered = super::answer::unanswered_rows(doc, s);
    out.push_str(&figures_table(s, &cols, &unanswered, view).to_string());
    out.push('\n');
    if !hidden.is_empty() {
        let which = if hidden.len() <= 3 {
            hidden.join(", ")
        } else {
            format!("{} more columns", hidden.len())
        };
        out.push_str(&view.wrap(
            &format!("--wide shows {which}; so do --json and the report"),
            "  ",
            "  ",
        ));
    }
    if s.runs > 1 {
        out.push_str(&format!(
            "  median of {} runs; ± is the coefficient of variation\n",
            s.runs
        ));
    }
    for f in &s.findings {
        if view.wide {
            out.push_str(&format!("  • {}\n", super::words::words(f)));
        } else if let Some(w) = super::words::fitted(f, answer.is_some()) {
            out.push_str(&view.wrap(&w, "  • ", "    "));
        }
    }
    out
}

/// A section's figures as a table of `cols`, the median of each (with its spread over runs).
/// The rows of a search stopped before its answer (`unanswered`: label, count in words) show
/// their count in words and no other figure but the naive count.
fn figures_table(
    s: &Section,
    cols: &[&Def],
    unanswered: &[(String, String)],
    view: &View,
) -> Table {
    let mut t = table(view);
    let mut header = vec![String::new()];
    header.extend(
        cols.iter()
            .map(|def| column_header(&s.workload, def).to_string()),
    );
    t.set_header(header);
    for row in &s.rows {
        let mut cells = vec![row.label.clone()];
        let open = unanswered.iter().find(|(label, _)| *label == row.label);
        for (i, def) in cols.iter().enumerate() {
            if let Some((_, count)) = open
                && !def.name.starts_with("naive")
            {
                cells.push(if i == 0 { count.clone() } else { "-".into() });
                continue;
            }
            cells.push(match row.get(def) {
                None => "-".to_string(),
                Some(f) => {
                    let mut text = super::shown(def, f.spread.median);
                    if f.spread.runs.len() > 1
                        && f.spread.median != 0.0
                        && !matches!(def.show, Show::Size)
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
    t
}

/// What the target line says of the target: the path and its kind, the filesystem and where it
/// lives, the disk, the space; or the simulated device, which is what a run against it measured.
fn target_parts(t: &crate::target::TargetInfo) -> Vec<String> {
    if let Some(name) = &t.simulated {
        return vec![format!(
            "simulated device {name} (nothing of {} was measured)",
            t.path.display()
        )];
    }
    let kind = match t.kind {
        crate::target::TargetKind::Directory => "directory",
        crate::target::TargetKind::File => "file",
        crate::target::TargetKind::BlockDevice => "block device",
    };
    let mut parts = vec![format!("{} ({kind})", t.path.display())];
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
    parts
}

/// A line describing the target and the machine.
pub fn header(doc: &ResultDoc, view: &View) -> String {
    let h = &doc.host;
    let host = format!(
        "{}, {} CPUs{}, {}{}",
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
    );
    let mut out = view.wrap(
        &target_parts(&doc.target).join(", "),
        "target: ",
        "        ",
    );
    out.push_str(&view.wrap(&host, "host:   ", "        "));
    out
}

/// `text` cut to `max` characters, its start replaced by "…" (a path's end says most).
fn cut_start(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let tail: String = text.chars().skip(n + 1 - max).collect();
    format!("…{tail}")
}

/// Stored results as `history` lists them: a fitted view puts the device under the target
/// (a long path cut from its start) and leaves out the workloads, which the headline names.
/// `marks` names the results where a disk's series stepped ("▼15% playback"), beside their
/// headline.
pub fn history(
    rows: &[crate::store::Stored],
    marks: &std::collections::HashMap<i64, String>,
    view: &View,
) -> String {
    let mut t = table(view);
    if view.wide {
        t.set_header([
            "id",
            "started (UTC)",
            "target",
            "device",
            "workloads",
            "headline",
        ]);
    } else {
        t.set_header(["id", "started (UTC)", "target, device", "headline"]);
    }
    for r in rows {
        let headline = super::summary::stored_headline(r);
        let mut headline = if r.interrupted {
            format!("{headline} (interrupted)")
        } else {
            headline
        };
        if let Some(m) = marks.get(&r.id) {
            headline.push_str(&format!(" {m}"));
        }
        let started = r
            .started_at
            .replace('T', " ")
            .trim_end_matches('Z')
            .to_string();
        if view.wide {
            t.add_row([
                r.id.to_string(),
                started,
                r.target.clone(),
                r.device.clone(),
                r.workloads.join(", "),
                headline,
            ]);
        } else {
            let place = format!("{}\n{}", cut_start(&r.target, 28), cut_start(&r.device, 28));
            t.add_row([r.id.to_string(), started, place, headline]);
        }
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
    /// A file keeps every figure: the wide view.
    fn render(&self, doc: &ResultDoc) -> crate::error::Result<String> {
        Ok(document(doc, &View::wide()))
    }
}

/// A studio run: how many workstations, each section's answer for the studio, and every
/// host's row (None for one computer).
pub fn studio(doc: &ResultDoc, view: &View) -> Option<String> {
    let intro = super::studio::intro(doc)?;
    let mut out = view.wrap(&intro, "", "  ");
    for sec in super::studio::sections(doc) {
        out.push('\n');
        out.push_str(&view.wrap(&sec.title, "", "  "));
        out.push_str(&view.wrap(&sec.words, "  ", "  "));
        if !sec.totals.is_empty() {
            out.push_str(&view.wrap(
                &super::studio::total_words(&sec.totals),
                "  the storage delivered, all hosts together: ",
                "    ",
            ));
        }
        if !sec.hosts.is_empty() {
            let (header, rows) = super::studio::table(&sec);
            // Figures are right-aligned; the rank, host, role and verdict read as words.
            let words = header
                .iter()
                .position(|h| h == "verdict")
                .map_or(2, |p| p + 1);
            let mut t = table(view);
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
pub fn document(doc: &ResultDoc, view: &View) -> String {
    let mut out = header(doc, view);
    for s in &doc.sections {
        out.push('\n');
        out.push_str(&section(doc, s, view));
    }
    if let Some(st) = studio(doc, view) {
        out.push('\n');
        out.push_str(&st);
    }
    if let Some(summary) = super::summary::summary(doc) {
        out.push('\n');
        out.push_str(&wrap_lines(&summary, view));
    }
    for w in &doc.warnings {
        out.push_str(&view.wrap(w, "warning: ", "  "));
    }
    out
}

/// Lines of text each wrapped to the view, a wrapped line's rest indented two more than it.
pub fn wrap_lines(text: &str, view: &View) -> String {
    text.lines()
        .map(|l| {
            let body = l.trim_start();
            let indent = &l[..l.len() - body.len()];
            view.wrap(body, indent, &format!("{indent}  "))
        })
        .collect()
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
        let doc = ResultDoc::new(
            vec![],
            crate::target::inspect(std::path::Path::new(".")).unwrap(),
            crate::host::inspect(),
        );
        let text = section(&doc, &s, &View::wide());
        assert!(text.contains("tracks (naive)"), "{text}");
        assert!(text.contains("8573"), "{text}");
        assert!(text.contains("1234"), "{text}");
    }
}
