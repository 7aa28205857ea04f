//! Where results are kept so that they can be found and compared again: one trait, one file per
//! database. Every result document goes in whole (so it renders later exactly as it did), with
//! the target, the host and every figure in columns a query can use.

pub mod sqlite;

use crate::error::{Error, Result};
use crate::metrics::{self as m, Def};
use crate::result::ResultDoc;
use crate::units::fmt_figure;
use std::path::PathBuf;

/// A result database.
pub trait Store {
    /// Where it is, for messages.
    fn location(&self) -> String;
    /// Keeps `doc`; returns its id.
    fn save(&mut self, doc: &ResultDoc) -> Result<i64>;
    /// Stored results that match `filter`, newest first.
    fn history(&mut self, filter: &Filter) -> Result<Vec<Stored>>;
    /// The document stored as `id`.
    fn load(&mut self, id: i64) -> Result<ResultDoc>;
}

/// Which stored results `history` lists. Text filters match any part, ignoring case.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// The target's path.
    pub target: Option<String>,
    /// The device's name or model, or the filesystem's source.
    pub device: Option<String>,
    /// A workload the result ran (exact name: seq, play, realtime, …).
    pub workload: Option<String>,
    /// Started on or after this date or time (RFC 3339, or YYYY-MM-DD).
    pub since: Option<String>,
    /// At most this many (0: all).
    pub limit: u32,
}

/// One stored result, as `history` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub id: i64,
    pub started_at: String,
    pub target: String,
    pub device: String,
    pub workloads: Vec<String>,
    pub headline: String,
    pub interrupted: bool,
}

/// The store used when none is named: `$XDG_DATA_HOME/trackbench/results.sqlite`, or under
/// `~/.local/share` where XDG_DATA_HOME is not set.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(base.join("trackbench").join("results.sqlite"))
}

/// Opens the store `db` names (a file path; `None` for the default one), creating it and its
/// tables on first use.
pub fn open(db: Option<&str>) -> Result<Box<dyn Store>> {
    match db {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            Err(Error::Store {
                location: url.to_string(),
                detail: "PostgreSQL stores are not supported by this version; use a file path (an SQLite database)".into(),
            })
        }
        Some(path) => Ok(Box::new(sqlite::Sqlite::open(&PathBuf::from(path))?)),
        None => {
            let path = default_path().ok_or_else(|| Error::Store {
                location: "(default)".into(),
                detail: "neither XDG_DATA_HOME nor HOME is set: name one with --db PATH, or use --no-store".into(),
            })?;
            Ok(Box::new(sqlite::Sqlite::open(&path)?))
        }
    }
}

/// The figure a result is known by, in a few words: the real-time answer where there is one,
/// else the first section's main figure.
pub fn headline(doc: &ResultDoc) -> String {
    const MAIN: [&Def; 3] = [&m::TRACKS, &m::RATE_MB_PER_S, &m::IOPS];
    for s in &doc.sections {
        for row in &s.rows {
            if let Some((def, f)) = MAIN.iter().find_map(|d| row.get(d).map(|f| (*d, f))) {
                let what = if s.workload == "realtime" || row.label.starts_with(&s.workload) {
                    row.label.clone()
                } else {
                    format!("{} {}", s.workload, row.label)
                };
                // A streaming row's label already says its count and verdict ("4 tracks: PASS").
                let line = if def.name == m::TRACKS.name && row.label.contains("tracks") {
                    what
                } else {
                    format!("{what}: {} {}", fmt_figure(f.spread.median), def.unit)
                };
                let simulated = s.settings.get("device_model").is_some_and(|d| !d.is_null());
                return if simulated {
                    format!("{line} (simulated device)")
                } else {
                    line
                };
            }
        }
    }
    if doc.sections.is_empty() {
        "no figures".into()
    } else {
        doc.sections[0].title.clone()
    }
}
