//! Where results are kept so that they can be found and compared again: one trait, one file per
//! database, and a registry ([`KINDS`]) that picks one from what `--db` names. Every result
//! document goes in whole (so it renders later exactly as it did), with the target, the host and
//! every figure in columns a query can use; the tables and queries are `sql.rs`'s.

pub mod postgres;
pub mod sql;
pub mod sqlite;

use crate::error::{Error, Result};
use crate::result::ResultDoc;
use std::path::PathBuf;

/// A result database.
pub trait Store {
    /// Where it is, for messages.
    fn location(&self) -> String;
    /// Keeps `doc`; returns its id.
    fn save(&mut self, doc: &ResultDoc, headline: &str) -> Result<i64>;
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
    /// The headline saved with it, as the build that ran it worded it.
    pub headline: String,
    pub interrupted: bool,
    /// Its document, where it reads back: a presenter words its headline anew from it
    /// (`present::summary::stored_headline`).
    pub document: Option<ResultDoc>,
}

/// The store used when none is named: `$XDG_DATA_HOME/trackbench/results.sqlite` wherever
/// XDG_DATA_HOME is set (an absolute path), else in the platform's data directory: Linux
/// `~/.local/share`, macOS `~/Library/Application Support`, Windows `%APPDATA%`.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(dirs::data_dir)?;
    Some(base.join("trackbench").join("results.sqlite"))
}

/// One kind of database a store can live in.
pub struct StoreKind {
    pub name: &'static str,
    /// Whether a `--db` value names a database of this kind.
    pub accepts: fn(&str) -> bool,
    pub open: fn(&str) -> Result<Box<dyn Store>>,
}

/// Every kind of store, the first that accepts a `--db` value opens it. A file path is SQLite's.
pub const KINDS: &[StoreKind] = &[
    StoreKind {
        name: "PostgreSQL",
        accepts: postgres::is_url,
        open: |url| Ok(Box::new(postgres::open(url)?)),
    },
    StoreKind {
        name: "SQLite",
        accepts: |_| true,
        open: |path| Ok(Box::new(sqlite::open(std::path::Path::new(path))?)),
    },
];

/// Opens the store `db` names (`None`: the default SQLite file), creating its tables on first
/// use.
pub fn open(db: Option<&str>) -> Result<Box<dyn Store>> {
    match db {
        Some(db) => {
            let kind = KINDS
                .iter()
                .find(|k| (k.accepts)(db))
                .expect("SQLite accepts every path");
            (kind.open)(db)
        }
        None => {
            let path = default_path().ok_or_else(|| Error::Store {
                location: "(default)".into(),
                detail: "no data directory (XDG_DATA_HOME, or the platform's: HOME or APPDATA unset): name one with --db PATH, or use --no-store".into(),
            })?;
            Ok(Box::new(sqlite::open(&path)?))
        }
    }
}
