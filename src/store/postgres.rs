//! A store on a PostgreSQL server, shared by a studio's machines (`--db postgres://…`): the
//! same tables and queries as every store (`sql.rs`), through the synchronous `postgres` client
//! (pure Rust, no system library). The schema version is kept in a table of its own.

use super::sql::{Connection, Dialect, Kind, SqlStore, Value};
use crate::error::{Error, Result};
use postgres::types::ToSql;
use std::time::Duration;

const POSTGRES: Dialect = Dialect {
    id: "BIGSERIAL PRIMARY KEY",
    int: "BIGINT",
    real: "DOUBLE PRECISION",
    bool: "BOOLEAN",
    join_agg: "string_agg",
};

/// How long to wait for a server before the store gives up (the run never waits on it longer).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether `db` names a PostgreSQL database.
pub fn is_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// An open connection to a PostgreSQL server.
pub struct Db(postgres::Client);

/// The store on a PostgreSQL server.
pub type Postgres = SqlStore<Db>;

/// `url` without its password, for messages.
fn shown(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let user = &url[s + 3..at];
            match user.split_once(':') {
                Some((name, _)) => format!("{}{name}:***{}", &url[..s + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// Connects to the database `url` names and brings its tables up to date.
pub fn open(url: &str) -> Result<Postgres> {
    let location = shown(url);
    let fail = |detail: String| Error::Store {
        location: location.clone(),
        detail,
    };
    let mut config: postgres::Config = url.parse().map_err(|e| {
        fail(format!(
            "not a PostgreSQL connection URL ({e}): e.g. postgres://user:password@host/database"
        ))
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    let client = config
        .connect(postgres::NoTls)
        .map_err(|e| fail(format!("cannot connect: {}", error_text(&e))))?;
    SqlStore::new(Db(client), location)
}

/// A client error with its cause (the server's message, a refused connection).
fn error_text(e: &postgres::Error) -> String {
    match (e.as_db_error(), std::error::Error::source(e)) {
        (Some(db), _) => db.message().to_string(),
        (None, Some(cause)) => format!("{e}: {cause}"),
        (None, None) => e.to_string(),
    }
}

fn params(values: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    values
        .iter()
        .map(|v| -> &(dyn ToSql + Sync) {
            match v {
                Value::Int(i) => i,
                Value::Real(f) => f,
                Value::Text(t) => t,
                Value::Bool(b) => b,
            }
        })
        .collect()
}

impl Connection for Db {
    fn dialect(&self) -> &'static Dialect {
        &POSTGRES
    }

    fn execute(&mut self, sql: &str, values: &[Value]) -> std::result::Result<(), String> {
        if values.is_empty() {
            return self.0.batch_execute(sql).map_err(|e| error_text(&e));
        }
        self.0
            .execute(sql, &params(values))
            .map(|_| ())
            .map_err(|e| error_text(&e))
    }

    fn query(
        &mut self,
        sql: &str,
        values: &[Value],
        kinds: &[Kind],
    ) -> std::result::Result<Vec<Vec<Value>>, String> {
        let rows = self
            .0
            .query(sql, &params(values))
            .map_err(|e| error_text(&e))?;
        rows.iter()
            .map(|r| {
                kinds
                    .iter()
                    .enumerate()
                    .map(|(i, k)| {
                        Ok(match k {
                            Kind::Int => Value::Int(r.try_get(i)?),
                            Kind::Text => Value::Text(r.try_get(i)?),
                            Kind::Bool => Value::Bool(r.try_get(i)?),
                        })
                    })
                    .collect::<std::result::Result<Vec<Value>, postgres::Error>>()
                    .map_err(|e| error_text(&e))
            })
            .collect()
    }

    fn schema_version(&mut self) -> std::result::Result<i64, String> {
        self.0
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS trackbench_schema (version BIGINT NOT NULL);
                 INSERT INTO trackbench_schema (version)
                    SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM trackbench_schema)",
            )
            .and_then(|()| {
                self.0
                    .query_one("SELECT max(version) FROM trackbench_schema", &[])
            })
            .and_then(|r| r.try_get::<_, i64>(0))
            .map_err(|e| format!("cannot read the store's schema version: {}", error_text(&e)))
    }

    fn set_schema_version(&mut self, v: i64) -> std::result::Result<(), String> {
        self.0
            .execute("UPDATE trackbench_schema SET version = $1", &[&v])
            .map(|_| ())
            .map_err(|e| error_text(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_not_shown_and_bad_urls_are_named() {
        assert_eq!(
            shown("postgres://studio:secret@db.local/tb"),
            "postgres://studio:***@db.local/tb"
        );
        assert_eq!(shown("postgres://db.local/tb"), "postgres://db.local/tb");
        assert!(is_url("postgresql://x/y") && !is_url("results.sqlite"));
        let e = open("postgres://db.local:port/tb")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not a PostgreSQL connection URL"), "{e}");
        // Nothing listens on port 1: refused at once, said so.
        let e = open("postgres://u@127.0.0.1:1/tb")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("cannot connect") && e.contains("127.0.0.1"),
            "{e}"
        );
    }
}
