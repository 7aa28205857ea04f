//! The default store: an embedded SQLite database file (rusqlite, SQLite bundled: no system
//! library). The tables and queries are `sql.rs`'s; the schema version is the database's
//! `user_version`.

use super::sql::{Connection, Dialect, Kind, SqlStore, Value};
use crate::error::{Error, Result};
use rusqlite::types::ToSqlOutput;
use std::path::Path;

const SQLITE: Dialect = Dialect {
    id: "INTEGER PRIMARY KEY AUTOINCREMENT",
    int: "INTEGER",
    real: "REAL",
    bool: "INTEGER",
    join_agg: "group_concat",
};

/// An open SQLite database.
pub struct Db(rusqlite::Connection);

/// The store in an SQLite file.
pub type Sqlite = SqlStore<Db>;

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
    let conn = rusqlite::Connection::open(path).map_err(|e| fail(e.to_string()))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .and_then(|()| conn.pragma_update(None, "foreign_keys", true))
        .map_err(|e| fail(e.to_string()))?;
    SqlStore::new(Db(conn), location)
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Value::Int(i) => i.to_sql(),
            Value::Real(f) => f.to_sql(),
            Value::Text(t) => t.to_sql(),
            Value::Bool(b) => b.to_sql(),
        }
    }
}

/// `$N` parameters as SQLite numbers them (`?N`).
fn numbered(sql: &str) -> String {
    sql.replace('$', "?")
}

impl Connection for Db {
    fn dialect(&self) -> &'static Dialect {
        &SQLITE
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> std::result::Result<(), String> {
        if params.is_empty() {
            return self.0.execute_batch(sql).map_err(|e| e.to_string());
        }
        self.0
            .execute(&numbered(sql), rusqlite::params_from_iter(params))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[Value],
        kinds: &[Kind],
    ) -> std::result::Result<Vec<Vec<Value>>, String> {
        let mut stmt = self.0.prepare(&numbered(sql)).map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(params), |r| {
                kinds
                    .iter()
                    .enumerate()
                    .map(|(i, k)| {
                        Ok(match k {
                            Kind::Int => Value::Int(r.get(i)?),
                            Kind::Text => Value::Text(r.get(i)?),
                            Kind::Bool => Value::Bool(r.get(i)?),
                        })
                    })
                    .collect::<rusqlite::Result<Vec<Value>>>()
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>());
        rows.map_err(|e| e.to_string())
    }

    fn schema_version(&mut self) -> std::result::Result<i64, String> {
        self.0
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| format!("not an SQLite database trackbench can use ({e})"))
    }

    fn set_schema_version(&mut self, v: i64) -> std::result::Result<(), String> {
        self.0
            .pragma_update(None, "user_version", v)
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;
    use crate::result::{Figure, ResultDoc, Row, Section};
    use crate::stats::Spread;
    use crate::store::sql::schema_version;
    use crate::store::{Filter, Store};
    use crate::target::{TargetInfo, TargetKind};

    fn doc(path: &str, workload: &str, started: &str, mb: f64) -> ResultDoc {
        let target = TargetInfo {
            fs_type: Some("ext4".into()),
            mount_source: Some("/dev/vda".into()),
            ..TargetInfo::bare(path.into(), TargetKind::Directory)
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
            findings: vec![],
            detail: None,
        });
        d
    }

    #[test]
    fn results_are_kept_listed_newest_first_filtered_and_read_back_whole() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("sub/results.sqlite");
        let mut s = open(&path).unwrap();
        let a = doc("/mnt/ssd", "seq", "2026-11-20T10:00:00Z", 500.0);
        let b = doc("/mnt/hdd", "zones", "2026-11-22T10:00:00Z", 120.0);
        let ia = s.save(&a, &crate::present::summary::headline(&a)).unwrap();
        let ib = s.save(&b, &crate::present::summary::headline(&b)).unwrap();
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
        let mut s = open(&path).unwrap();
        assert_eq!(s.history(&Filter::default()).unwrap().len(), 2);
    }

    #[test]
    fn a_database_from_a_newer_trackbench_or_not_a_database_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("r.sqlite");
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.pragma_update(None, "user_version", schema_version() + 1)
                .unwrap();
        }
        let e = open(&path).err().unwrap().to_string();
        assert!(
            e.contains("newer trackbench") && e.contains("r.sqlite"),
            "{e}"
        );
        let junk = t.path().join("junk");
        std::fs::write(&junk, vec![7u8; 8192]).unwrap();
        let e = open(&junk).err().unwrap().to_string();
        assert!(e.contains("junk"), "{e}");
        let e = open(t.path()).err().unwrap().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }

    /// A run saved by an earlier build, whose search stopped at the suite's limit, reads
    /// "at least" in `history` as a new one does: the store gives back its document, from which
    /// the presenter words the headline.
    #[test]
    fn history_words_an_earlier_builds_result_as_this_build_does() {
        let t = tempfile::tempdir().unwrap();
        let mut s = open(&t.path().join("results.sqlite")).unwrap();
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/schema-5/run.json"
        );
        let doc: ResultDoc =
            serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
        let id = s
            .save(&doc, &crate::present::summary::headline(&doc))
            .unwrap();
        // What the build that saved it wrote, before a limit said "at least".
        s.conn
            .execute(
                "UPDATE results SET headline = 'playback: 1000 tracks' WHERE id = $1",
                &[id.into()],
            )
            .unwrap();
        let listed = s.history(&Filter::default()).unwrap();
        let worded = |r| crate::present::summary::stored_headline(r);
        assert_eq!(worded(&listed[0]), "playback: at least 1000 tracks");
        // A document that cannot be read back keeps the saved words.
        s.conn
            .execute(
                "UPDATE results SET document = '{' WHERE id = $1",
                &[id.into()],
            )
            .unwrap();
        assert_eq!(
            worded(&s.history(&Filter::default()).unwrap()[0]),
            "playback: 1000 tracks"
        );
    }
}
