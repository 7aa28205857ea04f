//! The result store's tables and queries, written once for every SQL database: a backend
//! (`sqlite.rs`, `postgres.rs`) supplies a [`Connection`] that runs statements and says how its
//! dialect spells a few types; migrations, saving, `history` and loading live here.

use super::{Filter, Store, Stored};
use crate::error::{Error, Result};
use crate::result::ResultDoc;

/// A statement parameter or a column value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Real(f64),
    Text(Option<String>),
    Bool(Option<bool>),
}

impl Value {
    fn int(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            _ => 0,
        }
    }
    fn text(&self) -> String {
        match self {
            Value::Text(t) => t.clone().unwrap_or_default(),
            _ => String::new(),
        }
    }
    fn bool(&self) -> bool {
        matches!(self, Value::Bool(Some(true)))
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(Some(s.to_string()))
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(Some(s))
    }
}
impl From<Option<String>> for Value {
    fn from(s: Option<String>) -> Value {
        Value::Text(s)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Real(f)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(Some(b))
    }
}
impl From<Option<bool>> for Value {
    fn from(b: Option<bool>) -> Value {
        Value::Bool(b)
    }
}

/// The type of a column a query reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Text,
    Bool,
}

/// How a database spells what differs between dialects.
pub struct Dialect {
    /// An auto-numbered primary key.
    pub id: &'static str,
    pub int: &'static str,
    pub real: &'static str,
    pub bool: &'static str,
    /// The aggregate that joins strings (`group_concat`, `string_agg`).
    pub join_agg: &'static str,
}

/// One open database. Statements use `$1`, `$2` … for parameters.
pub trait Connection {
    fn dialect(&self) -> &'static Dialect;
    /// Runs statements without results (several, separated by `;`, when `params` is empty).
    fn execute(&mut self, sql: &str, params: &[Value]) -> std::result::Result<(), String>;
    /// Runs a query and reads its columns as `kinds`.
    fn query(
        &mut self,
        sql: &str,
        params: &[Value],
        kinds: &[Kind],
    ) -> std::result::Result<Vec<Vec<Value>>, String>;
    /// The schema version the database is at (0 when new).
    fn schema_version(&mut self) -> std::result::Result<i64, String>;
    /// Records the version a migration brought it to (inside that migration's transaction).
    fn set_schema_version(&mut self, v: i64) -> std::result::Result<(), String>;
}

/// Migration N (1-based) brings a database from version N-1 to N, in the placeholders of
/// [`Dialect`]: `{id}`, `{int}`, `{real}`, `{bool}`. Append; never edit one that has shipped.
const MIGRATIONS: &[&str] = &[
    // 1: results with their target and host in columns, sections and figures for queries, and
    // the whole document for rendering.
    "CREATE TABLE results (
        id {id},
        schema_version {int} NOT NULL,
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
        rotational {bool},
        host_name TEXT NOT NULL,
        host_cpu TEXT,
        host_kernel TEXT NOT NULL,
        cached {bool} NOT NULL,
        interrupted {bool} NOT NULL,
        headline TEXT NOT NULL,
        document TEXT NOT NULL
    );
    CREATE INDEX results_started ON results(started_at);
    CREATE TABLE sections (
        result_id {int} NOT NULL REFERENCES results(id) ON DELETE CASCADE,
        position {int} NOT NULL,
        workload TEXT NOT NULL,
        title TEXT NOT NULL,
        PRIMARY KEY (result_id, position)
    );
    CREATE INDEX sections_workload ON sections(workload);
    CREATE TABLE figures (
        result_id {int} NOT NULL REFERENCES results(id) ON DELETE CASCADE,
        section {int} NOT NULL,
        row_label TEXT NOT NULL,
        name TEXT NOT NULL,
        unit TEXT NOT NULL,
        median {real} NOT NULL,
        min {real} NOT NULL,
        max {real} NOT NULL,
        cv {real} NOT NULL
    );
    CREATE INDEX figures_name ON figures(name);",
];

/// The store schema this build knows.
pub fn schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

fn render(sql: &str, d: &Dialect) -> String {
    sql.replace("{id}", d.id)
        .replace("{int}", d.int)
        .replace("{real}", d.real)
        .replace("{bool}", d.bool)
        .replace("{join_agg}", d.join_agg)
}

/// Brings the tables up to this build's version, each migration in a transaction of its own;
/// a database written by a newer trackbench is refused, not changed. The error is what went
/// wrong, for the caller to say where.
pub fn migrate(c: &mut dyn Connection) -> std::result::Result<(), String> {
    let have = c.schema_version()?;
    if have > schema_version() {
        return Err(format!(
            "written by a newer trackbench (store schema {have}; this one knows up to {}): update trackbench, or use another --db",
            schema_version()
        ));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(have.max(0) as usize) {
        let step = (|| {
            c.execute("BEGIN", &[])?;
            c.execute(&render(sql, c.dialect()), &[])?;
            c.set_schema_version(i as i64 + 1)?;
            c.execute("COMMIT", &[])
        })();
        if let Err(e) = step {
            let _ = c.execute("ROLLBACK", &[]);
            return Err(format!("upgrading to store schema {}: {e}", i + 1));
        }
    }
    Ok(())
}

/// A store over any SQL [`Connection`].
pub struct SqlStore<C: Connection> {
    pub conn: C,
    /// Where it is, for messages (a path, or a URL without its password).
    pub location: String,
}

impl<C: Connection> SqlStore<C> {
    /// Opens the store over `conn`, bringing its tables up to date.
    pub fn new(mut conn: C, location: String) -> Result<SqlStore<C>> {
        migrate(&mut conn).map_err(|detail| Error::Store {
            location: location.clone(),
            detail,
        })?;
        Ok(SqlStore { conn, location })
    }

    fn err(&self, detail: impl std::fmt::Display) -> Error {
        Error::Store {
            location: self.location.clone(),
            detail: detail.to_string(),
        }
    }

    /// What the device column holds: the disk's model, or the simulated device run against.
    fn device_model(t: &crate::target::TargetInfo) -> Option<String> {
        match &t.simulated {
            Some(n) => Some(format!("simulated: {n}")),
            None => t.device.as_ref().and_then(|d| d.model.clone()),
        }
    }

    fn insert(
        &mut self,
        doc: &ResultDoc,
        headline: &str,
        document: String,
    ) -> std::result::Result<i64, String> {
        let command = serde_json::to_string(&doc.command).map_err(|e| e.to_string())?;
        let t = &doc.target;
        let dev = t.device.as_ref();
        let row = self.conn.query(
            "INSERT INTO results (schema_version, tool_version, started_at, finished_at,
                command, target_path, target_kind, filesystem, mount_source, device_name,
                device_model, rotational, host_name, host_cpu, host_kernel, cached,
                interrupted, headline, document)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                $17, $18, $19)
             RETURNING id",
            &[
                i64::from(doc.schema_version).into(),
                doc.tool.version.as_str().into(),
                doc.started_at.as_str().into(),
                doc.finished_at.as_str().into(),
                command.into(),
                t.path.to_string_lossy().into_owned().into(),
                t.kind.describe().into(),
                t.fs_type.clone().into(),
                t.mount_source.clone().into(),
                dev.map(|d| d.name.clone()).into(),
                Self::device_model(t).into(),
                dev.and_then(|d| d.rotational).into(),
                doc.host.hostname.as_str().into(),
                doc.host.cpu_model.clone().into(),
                doc.host.kernel.as_str().into(),
                doc.cached.into(),
                doc.interrupted.into(),
                headline.into(),
                document.into(),
            ],
            &[Kind::Int],
        )?;
        let id = row
            .first()
            .and_then(|r| r.first())
            .map(Value::int)
            .ok_or("the database gave no id for the new result")?;
        for (i, s) in doc.sections.iter().enumerate() {
            self.conn.execute(
                "INSERT INTO sections (result_id, position, workload, title)
                 VALUES ($1, $2, $3, $4)",
                &[
                    id.into(),
                    (i as i64).into(),
                    s.workload.as_str().into(),
                    s.title.as_str().into(),
                ],
            )?;
            for row in &s.rows {
                for f in &row.figures {
                    self.conn.execute(
                        "INSERT INTO figures (result_id, section, row_label, name, unit,
                            median, min, max, cv)
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                        &[
                            id.into(),
                            (i as i64).into(),
                            row.label.as_str().into(),
                            f.name.as_str().into(),
                            f.unit.as_str().into(),
                            f.spread.median.into(),
                            f.spread.min.into(),
                            f.spread.max.into(),
                            f.spread.cv.into(),
                        ],
                    )?;
                }
            }
        }
        Ok(id)
    }
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

impl<C: Connection> Store for SqlStore<C> {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn save(&mut self, doc: &ResultDoc, headline: &str) -> Result<i64> {
        let document = serde_json::to_string(doc).map_err(|e| self.err(e))?;
        self.conn.execute("BEGIN", &[]).map_err(|e| self.err(e))?;
        match self
            .insert(doc, headline, document)
            .and_then(|id| self.conn.execute("COMMIT", &[]).map(|()| id))
        {
            Ok(id) => Ok(id),
            Err(e) => {
                let _ = self.conn.execute("ROLLBACK", &[]);
                Err(self.err(e))
            }
        }
    }

    fn history(&mut self, f: &Filter) -> Result<Vec<Stored>> {
        let since = f.since.as_deref().map(since_bound).transpose()?;
        let like = |s: &Option<String>| Value::Text(s.as_ref().map(|s| format!("%{s}%")));
        let limit = if f.limit == 0 {
            i64::MAX
        } else {
            i64::from(f.limit)
        };
        let sql = render(
            "SELECT r.id, r.started_at, r.target_path,
                COALESCE(r.device_model, r.device_name, r.mount_source, ''),
                (SELECT {join_agg}(s.workload, ',' ORDER BY s.position) FROM sections s
                    WHERE s.result_id = r.id),
                r.headline, r.interrupted, r.document
             FROM results r
             WHERE (CAST($1 AS TEXT) IS NULL OR lower(r.target_path) LIKE lower($1))
               AND (CAST($2 AS TEXT) IS NULL OR lower(r.device_name) LIKE lower($2)
                    OR lower(r.device_model) LIKE lower($2)
                    OR lower(r.mount_source) LIKE lower($2))
               AND (CAST($3 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM sections s
                    WHERE s.result_id = r.id AND s.workload = $3))
               AND (CAST($4 AS TEXT) IS NULL OR r.started_at >= $4)
             ORDER BY r.started_at DESC, r.id DESC
             LIMIT $5",
            self.conn.dialect(),
        );
        let rows = self
            .conn
            .query(
                &sql,
                &[
                    like(&f.target),
                    like(&f.device),
                    f.workload.clone().into(),
                    since.into(),
                    limit.into(),
                ],
                &[
                    Kind::Int,
                    Kind::Text,
                    Kind::Text,
                    Kind::Text,
                    Kind::Text,
                    Kind::Text,
                    Kind::Bool,
                    Kind::Text,
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(rows
            .into_iter()
            .map(|r| Stored {
                id: r[0].int(),
                started_at: r[1].text(),
                target: r[2].text(),
                device: r[3].text(),
                workloads: Some(r[4].text())
                    .filter(|w| !w.is_empty())
                    .map(|w| w.split(',').map(str::to_string).collect())
                    .unwrap_or_default(),
                headline: r[5].text(),
                interrupted: r[6].bool(),
                document: serde_json::from_str::<ResultDoc>(&r[7].text()).ok(),
            })
            .collect())
    }

    fn load(&mut self, id: i64) -> Result<ResultDoc> {
        let rows = self
            .conn
            .query(
                "SELECT document FROM results WHERE id = $1",
                &[id.into()],
                &[Kind::Text],
            )
            .map_err(|e| self.err(e))?;
        let text = rows.first().and_then(|r| r.first()).ok_or_else(|| {
            Error::invalid(
                "result id",
                id,
                "the id of a stored result (trackbench history lists them)",
            )
        })?;
        serde_json::from_str(&text.text())
            .map_err(|e| self.err(format!("result {id} cannot be read back: {e}")))
    }
}
