//! A private PostgreSQL server for a test: initdb into a temporary directory, started on a free
//! port of 127.0.0.1 with trust authentication, stopped and removed when dropped. Debian's
//! `postgresql` package provides the programs (`.ci/run` installs it); as root they run as its
//! `postgres` user, since PostgreSQL refuses to run as root.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Server {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
    databases: u32,
}

/// The newest PostgreSQL's programs: Debian's /usr/lib/postgresql/N/bin, else the PATH.
fn bindir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, b)) = versions.pop() {
        return Some(b);
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p).find(|d| d.join("initdb").exists() && d.join("pg_ctl").exists())
    })
}

fn uid_of(user: &str) -> Option<u32> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd
        .lines()
        .find(|l| l.starts_with(&format!("{user}:")))
        .and_then(|l| l.split(':').nth(2))
        .and_then(|u| u.parse().ok())
}

impl Server {
    /// Starts a server, or says why it cannot (no PostgreSQL installed).
    pub fn start() -> Result<Server, String> {
        let bin = bindir().ok_or("no PostgreSQL programs (initdb, pg_ctl) found")?;
        let root = trackbench::platform::is_root();
        let dir = tempfile::Builder::new()
            .prefix("tb-postgres-")
            .tempdir_in("/tmp")
            .map_err(|e| e.to_string())?;
        if root {
            let uid = uid_of("postgres").ok_or("running as root and there is no postgres user")?;
            #[cfg(unix)]
            std::os::unix::fs::chown(dir.path(), Some(uid), None)
                .map_err(|e| format!("chown: {e}"))?;
            #[cfg(not(unix))]
            let _ = uid;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let s = Server {
            dir,
            bin,
            port,
            as_postgres: root,
            databases: 0,
        };
        let data = s.dir.path().join("data");
        s.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        )?;
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            s.port,
            s.dir.path().display()
        );
        let log = s.dir.path().join("log");
        s.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-o",
                &opts,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "start",
            ],
        )
        .map_err(|e| format!("{e}\n{}", std::fs::read_to_string(&log).unwrap_or_default()))?;
        Ok(s)
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let path = self.bin.join(program);
        let mut c = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        let out = c
            .args(args)
            .output()
            .map_err(|e| format!("{program}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{program} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    /// A new, empty database of its own; returns its URL.
    pub fn database(&mut self) -> String {
        self.databases += 1;
        let name = format!("tb{}", self.databases);
        self.run(
            "createdb",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                &name,
            ],
        )
        .expect("createdb");
        self.url(&name)
    }

    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = self.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        );
    }
}
