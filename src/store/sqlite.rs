//! The default store: an embedded SQLite database file (rusqlite, SQLite bundled: no system
//! library). Its tables are created and upgraded by numbered migrations, recorded in the
//! database's `user_version`.

use super::{Filter, Store, Stored, headline};
use crate::error::{Error, Result};
use crate::result::ResultDoc;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};

/// Migration N (1-based) brings a database from version N-1 to N. Append; never edit one that
/// has shipped.
const MIGRATIONS: &[&str] = &[
    // 1: results with their target and host in columns, sections and figures for queries, and
    // the whole document for rendering.
    "CREATE TABLE results (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        schema_version INTEGER NOT NULL,
        tool_version TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        command TEXT NOT NULL,
        target_path TEXT NOT NULL,
        target_kind TEXT NOT NULL,
        filesystem TEXT,
        mount_source TEXT,
        device_name TEXT,
        device_model TEXT,
        rotational INTEGER,
        host_name TEXT NOT NULL,
        host_cpu TEXT,
        host_kernel TEXT NOT NULL,
        cached INTEGER NOT NULL,
        interrupted INTEGER NOT NULL,
        headline TEXT NOT NULL,
        document TEXT NOT NULL
    );
    CREATE INDEX results_started ON results(started_at);
    CREATE TABLE sections (
        result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        workload TEXT NOT NULL,
        title TEXT NOT NULL,
        PRIMARY KEY (result_id, position)
    );
    CREATE INDEX sections_workload ON sections(workload);
    CREATE TABLE figures (
        result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
        section INTEGER NOT NULL,
        row_label TEXT NOT NULL,
        name TEXT NOT NULL,
        unit TEXT NOT NULL,
        median REAL NOT NULL,
        min REAL NOT NULL,
        max REAL NOT NULL,
        cv REAL NOT NULL
    );
    CREATE INDEX figures_name ON figures(name);",
];

pub struct Sqlite {
    path: PathBuf,
    conn: Connection,
}

impl Sqlite {
    /// Opens (creating where missing) the database at `path` and brings its tables up to date.
    pub fn open(path: &Path) -> Result<Sqlite> {
        let location = path.display().to_string();
        let fail = |detail: String| Error::Store {
            location: location.clone(),
            detail,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && !parent.exists()
        {
            std::fs::create_dir_all(parent)
                .map_err(|e| fail(format!("cannot create {}: {e}", parent.display())))?;
        }
        if path.is_dir() {
            return Err(fail(
                "is a directory: name a database file, e.g. results.sqlite".into(),
            ));
        }
        let mut conn = Connection::open(path).map_err(|e| fail(e.to_string()))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .and_then(|()| conn.pragma_update(None, "foreign_keys", true))
            .map_err(|e| fail(e.to_string()))?;
        migrate(&mut conn).map_err(fail)?;
        Ok(Sqlite {
            path: path.to_path_buf(),
            conn,
        })
    }

    fn err(&self, e: impl std::fmt::Display) -> Error {
        Error::Store {
            location: self.location(),
            detail: e.to_string(),
        }
    }
}

/// The schema version this build knows.
pub fn schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Brings the tables up to this build's version; the error is what went wrong, for the caller
/// to say where.
fn migrate(conn: &mut Connection) -> std::result::Result<(), String> {
    let have: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| format!("not an SQLite database trackbench can use ({e})"))?;
    if have > schema_version() {
        return Err(format!(
            "written by a newer trackbench (store schema {have}; this one knows up to {}): update trackbench, or use another --db",
            schema_version()
        ));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(have as usize) {
        let tx = conn.transaction().map_err(|e| e.to_string())?;
        tx.execute_batch(sql)
            .and_then(|()| tx.pragma_update(None, "user_version", i as i64 + 1))
            .and_then(|()| tx.commit())
            .map_err(|e| format!("upgrading to store schema {}: {e}", i + 1))?;
    }
    Ok(())
}

/// `YYYY-MM-DD` or RFC 3339, as the text the documents' timestamps compare with.
fn since_bound(since: &str) -> Result<String> {
    let full = if since.len() == 10 {
        format!("{since}T00:00:00Z")
    } else {
        since.to_string()
    };
    humantime::parse_rfc3339_weak(&full)
        .map(|t| humantime::format_rfc3339_seconds(t).to_string())
        .map_err(|_| {
            Error::invalid(
                "since",
                since,
                "a date (2026-11-23) or a time (2026-11-23T14:00:00Z)",
            )
        })
}

impl Store for Sqlite {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn save(&mut self, doc: &ResultDoc) -> Result<i64> {
        let document = serde_json::to_string(doc).map_err(|e| self.err(e))?;
        let command = serde_json::to_string(&doc.command).map_err(|e| self.err(e))?;
        let t = &doc.target;
        let dev = t.device.as_ref();
        let tx = self.conn.transaction().map_err(|e| Error::Store {
            location: self.path.display().to_string(),
            detail: e.to_string(),
        })?;
        let id = (|| -> rusqlite::Result<i64> {
            tx.execute(
                "INSERT INTO results (schema_version, tool_version, started_at, finished_at,
                    command, target_path, target_kind, filesystem, mount_source, device_name,
                    device_model, rotational, host_name, host_cpu, host_kernel, cached,
                    interrupted, headline, document)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                    ?17, ?18, ?19)",
                params![
                    doc.schema_version,
                    doc.tool.version,
                    doc.started_at,
                    doc.finished_at,
                    command,
                    t.path.to_string_lossy(),
                    t.kind.describe(),
                    t.fs_type,
                    t.mount_source,
                    dev.map(|d| d.name.clone()),
                    dev.and_then(|d| d.model.clone()),
                    dev.and_then(|d| d.rotational),
                    doc.host.hostname,
                    doc.host.cpu_model,
                    doc.host.kernel,
                    doc.cached,
                    doc.interrupted,
                    headline(doc),
                    document,
                ],
            )?;
            let id = tx.last_insert_rowid();
            for (i, s) in doc.sections.iter().enumerate() {
                tx.execute(
                    "INSERT INTO sections (result_id, position, workload, title)
                     VALUES (?1, ?2, ?3, ?4)",
                    params![id, i as i64, s.workload, s.title],
                )?;
                for row in &s.rows {
                    for f in &row.figures {
                        tx.execute(
                            "INSERT INTO figures (result_id, section, row_label, name, unit,
                                median, min, max, cv)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                            params![
                                id,
                                i as i64,
                                row.label,
                                f.name,
                                f.unit,
                                f.spread.median,
                                f.spread.min,
                                f.spread.max,
                                f.spread.cv
                            ],
                        )?;
                    }
                }
            }
            Ok(id)
        })()
        .map_err(|e| Error::Store {
            location: self.path.display().to_string(),
            detail: e.to_string(),
        })?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(id)
    }

    fn history(&mut self, f: &Filter) -> Result<Vec<Stored>> {
        let since = f.since.as_deref().map(since_bound).transpose()?;
        let like = |s: &Option<String>| s.as_ref().map(|s| format!("%{s}%"));
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.started_at, r.target_path,
                    COALESCE(r.device_model, r.device_name, r.mount_source, ''),
                    (SELECT group_concat(workload, ',') FROM
                        (SELECT workload FROM sections WHERE result_id = r.id ORDER BY position)),
                    r.headline, r.interrupted
                 FROM results r
                 WHERE (?1 IS NULL OR r.target_path LIKE ?1)
                   AND (?2 IS NULL OR r.device_name LIKE ?2 OR r.device_model LIKE ?2
                        OR r.mount_source LIKE ?2)
                   AND (?3 IS NULL OR EXISTS (SELECT 1 FROM sections s
                        WHERE s.result_id = r.id AND s.workload = ?3))
                   AND (?4 IS NULL OR r.started_at >= ?4)
                 ORDER BY r.started_at DESC, r.id DESC
                 LIMIT ?5",
            )
            .map_err(|e| self.err(e))?;
        let limit = if f.limit == 0 { -1 } else { i64::from(f.limit) };
        let rows = stmt
            .query_map(
                params![like(&f.target), like(&f.device), f.workload, since, limit],
                |r| {
                    let workloads: Option<String> = r.get(4)?;
                    Ok(Stored {
                        id: r.get(0)?,
                        started_at: r.get(1)?,
                        target: r.get(2)?,
                        device: r.get(3)?,
                        workloads: workloads
                            .map(|w| w.split(',').map(str::to_string).collect())
                            .unwrap_or_default(),
                        headline: r.get(5)?,
                        interrupted: r.get(6)?,
                    })
                },
            )
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>());
        rows.map_err(|e| self.err(e))
    }

    fn load(&mut self, id: i64) -> Result<ResultDoc> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT document FROM results WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let text = text.ok_or_else(|| {
            Error::invalid(
                "result id",
                id,
                "the id of a stored result (trackbench history lists them)",
            )
        })?;
        serde_json::from_str(&text)
            .map_err(|e| self.err(format!("result {id} cannot be read back: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;
    use crate::result::{Figure, Row, Section};
    use crate::stats::Spread;
    use crate::target::{TargetInfo, TargetKind};

    fn doc(path: &str, workload: &str, started: &str, mb: f64) -> ResultDoc {
        let target = TargetInfo {
            path: path.into(),
            kind: TargetKind::Directory,
            fs_type: Some("ext4".into()),
            mount_point: None,
            mount_options: None,
            mount_source: Some("/dev/vda".into()),
            device: None,
            total_bytes: None,
            free_bytes: None,
            size_bytes: None,
        };
        let host = HostInfo {
            hostname: "studio".into(),
            cpu_model: None,
            cpus: 2,
            memory_bytes: None,
            kernel: "6.1".into(),
            os: "linux".into(),
        };
        let mut d = ResultDoc::new(vec!["trackbench".into(), workload.into()], target, host);
        d.started_at = started.into();
        d.push(Section {
            workload: workload.into(),
            title: "t".into(),
            settings: serde_json::json!({}),
            cached: false,
            interrupted: false,
            runs: 1,
            rows: vec![Row {
                label: "read".into(),
                figures: vec![Figure {
                    name: "rate_mb_per_s".into(),
                    unit: "MB/s".into(),
                    spread: Spread::of(&[mb]),
                }],
            }],
            notes: vec![],
            extra: None,
        });
        d
    }

    #[test]
    fn results_are_kept_listed_newest_first_filtered_and_read_back_whole() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("sub/results.sqlite");
        let mut s = Sqlite::open(&path).unwrap();
        let a = doc("/mnt/ssd", "seq", "2026-11-20T10:00:00Z", 500.0);
        let b = doc("/mnt/hdd", "zones", "2026-11-22T10:00:00Z", 120.0);
        let ia = s.save(&a).unwrap();
        let ib = s.save(&b).unwrap();
        assert_ne!(ia, ib);
        let all = s.history(&Filter::default()).unwrap();
        assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), [ib, ia]);
        assert_eq!(all[1].workloads, ["seq"]);
        assert_eq!(all[1].headline, "seq read: 500 MB/s");
        assert_eq!(all[1].device, "/dev/vda");
        let f = |target: Option<&str>, workload: Option<&str>, since: Option<&str>| Filter {
            target: target.map(Into::into),
            workload: workload.map(Into::into),
            since: since.map(Into::into),
            ..Filter::default()
        };
        let ids = |s: &mut Sqlite, f: Filter| -> Vec<i64> {
            s.history(&f).unwrap().iter().map(|r| r.id).collect()
        };
        assert_eq!(ids(&mut s, f(Some("SSD"), None, None)), [ia]);
        assert_eq!(ids(&mut s, f(None, Some("zones"), None)), [ib]);
        assert_eq!(ids(&mut s, f(None, None, Some("2026-11-21"))), [ib]);
        assert!(ids(&mut s, f(None, Some("play"), None)).is_empty());
        let limited = Filter {
            limit: 1,
            ..Filter::default()
        };
        assert_eq!(ids(&mut s, limited), [ib]);
        assert!(s.history(&f(None, None, Some("yesterday"))).is_err());
        assert_eq!(s.load(ia).unwrap(), a);
        let e = s.load(99).unwrap_err().to_string();
        assert!(e.contains("99") && e.contains("history"), "{e}");
        drop(s);
        // Reopened: the migrations do not run twice; the data is there.
        let mut s = Sqlite::open(&path).unwrap();
        assert_eq!(s.history(&Filter::default()).unwrap().len(), 2);
    }

    #[test]
    fn a_database_from_a_newer_trackbench_or_not_a_database_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("r.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            c.pragma_update(None, "user_version", schema_version() + 1)
                .unwrap();
        }
        let e = Sqlite::open(&path).err().unwrap().to_string();
        assert!(
            e.contains("newer trackbench") && e.contains("r.sqlite"),
            "{e}"
        );
        let junk = t.path().join("junk");
        std::fs::write(&junk, vec![7u8; 8192]).unwrap();
        let e = Sqlite::open(&junk).err().unwrap().to_string();
        assert!(e.contains("junk"), "{e}");
        let e = Sqlite::open(t.path()).err().unwrap().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }
}
