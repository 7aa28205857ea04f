//! The network-share fixture: a folder served by an sshd of the test's own in a network
//! namespace, mounted here with sshfs (FUSE) over a veth link whose rate `tc` caps both ways,
//! so that what crosses it queues as on a studio's network. Needs root, sshd, sshfs, `ip` and
//! `tc`; as an ordinary user, or without them, the test is skipped with the reason printed
//! (a failure where CI requires it: `TRACKBENCH_TEST_REQUIRE` names `sshfs`).

use super::capped::sh;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicU32 = AtomicU32::new(0);

pub struct Share {
    pub dir: tempfile::TempDir,
    /// Where the share is mounted here.
    pub mnt: PathBuf,
    /// The served folder, as the server sees it.
    pub served: PathBuf,
    netns: String,
    veth: String,
    /// The link's /24: the server is .2 in it, this side .1.
    subnet: String,
    addr: String,
    port: u16,
    sshfs: Option<Child>,
}

impl Share {
    /// A share over a link capped at `mbit` megabits a second each way, or why there is none.
    pub fn start(mbit: u32) -> Result<Share, String> {
        if !trackbench::platform::is_root() {
            return Err("the network namespace and the mount need root".into());
        }
        for (tool, path) in [
            ("sshd", "/usr/sbin/sshd"),
            ("sshfs", "/usr/bin/sshfs"),
            ("ip", "/usr/sbin/ip"),
            ("tc", "/usr/sbin/tc"),
            ("ssh-keygen", "/usr/bin/ssh-keygen"),
        ] {
            if !Path::new(path).exists()
                && sh("sh", &["-c", &format!("command -v {tool}")]).is_err()
            {
                return Err(format!("no {tool}"));
            }
        }
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let id = (std::process::id() % 1000) * 10 + n % 10;
        let dir = tempfile::Builder::new()
            .prefix("tb-share-")
            .tempdir_in("/tmp")
            .map_err(|e| e.to_string())?;
        let mut s = Share {
            mnt: dir.path().join("mnt"),
            served: dir.path().join("served"),
            netns: format!("tbshare{id}"),
            veth: format!("tbsh{id}"),
            subnet: format!("10.{}.{}", 100 + id / 250 % 100, id % 250),
            addr: format!("10.{}.{}.2", 100 + id / 250 % 100, id % 250),
            port: 2200,
            sshfs: None,
            dir,
        };
        std::fs::create_dir(&s.mnt).map_err(|e| e.to_string())?;
        std::fs::create_dir(&s.served).map_err(|e| e.to_string())?;
        s.link(mbit)?;
        s.serve()?;
        s.mount()?;
        Ok(s)
    }

    /// The namespace, the veth pair between it and here, and the cap on both ends.
    fn link(&self, mbit: u32) -> Result<(), String> {
        let peer = format!("{}p", self.veth);
        let host_addr = format!("{}.1", self.subnet);
        let ns = |args: &[&str]| {
            let mut a = vec!["netns", "exec", &self.netns];
            a.extend_from_slice(args);
            sh("ip", &a)
        };
        let rate = format!("{mbit}mbit");
        sh("ip", &["netns", "add", &self.netns])?;
        sh(
            "ip",
            &[
                "link", "add", &self.veth, "type", "veth", "peer", "name", &peer,
            ],
        )?;
        sh("ip", &["link", "set", &peer, "netns", &self.netns])?;
        sh(
            "ip",
            &["addr", "add", &format!("{host_addr}/24"), "dev", &self.veth],
        )?;
        sh("ip", &["link", "set", &self.veth, "up"])?;
        ns(&[
            "ip",
            "addr",
            "add",
            &format!("{}/24", self.addr),
            "dev",
            &peer,
        ])?;
        ns(&["ip", "link", "set", &peer, "up"])?;
        ns(&["ip", "link", "set", "lo", "up"])?;
        let tbf = [
            "root", "tbf", "rate", &rate, "burst", "64kb", "latency", "200ms",
        ];
        let mut host = vec!["qdisc", "add", "dev", &self.veth];
        host.extend_from_slice(&tbf);
        sh("tc", &host)?;
        let mut far = vec!["tc", "qdisc", "add", "dev", &peer];
        far.extend_from_slice(&tbf);
        ns(&far)?;
        Ok(())
    }

    /// An sshd of the fixture's own in the namespace: its own host key, root's login by a
    /// key made for this share only, the internal sftp server.
    fn serve(&mut self) -> Result<(), String> {
        let d = self.dir.path();
        for k in ["hostkey", "clientkey"] {
            sh(
                "ssh-keygen",
                &[
                    "-q",
                    "-t",
                    "ed25519",
                    "-N",
                    "",
                    "-f",
                    d.join(k).to_str().unwrap(),
                ],
            )?;
        }
        std::fs::copy(d.join("clientkey.pub"), d.join("authorized_keys"))
            .map_err(|e| e.to_string())?;
        let config = format!(
            "Port {port}\nListenAddress {addr}\nHostKey {d}/hostkey\nAuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin yes\nPasswordAuthentication no\nStrictModes no\nUsePAM no\nPidFile {d}/sshd.pid\nSubsystem sftp internal-sftp\n",
            port = self.port,
            addr = self.addr,
            d = d.display()
        );
        std::fs::write(d.join("sshd_config"), config).map_err(|e| e.to_string())?;
        let _ = std::fs::create_dir_all("/run/sshd");
        sh(
            "ip",
            &[
                "netns",
                "exec",
                &self.netns,
                "/usr/sbin/sshd",
                "-f",
                d.join("sshd_config").to_str().unwrap(),
                "-E",
                d.join("sshd.log").to_str().unwrap(),
            ],
        )?;
        Ok(())
    }

    fn mounted(&self) -> bool {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let m = self.mnt.to_string_lossy().to_string();
        mounts
            .lines()
            .any(|l| l.split(' ').nth(1) == Some(m.as_str()))
    }

    /// Mounts the share with sshfs in the foreground (its process is the fixture's child).
    pub fn mount(&mut self) -> Result<(), String> {
        let d = self.dir.path();
        let child = Command::new("sshfs")
            .arg("-f")
            .arg("-p")
            .arg(self.port.to_string())
            .arg("-o")
            .arg(format!(
                "IdentityFile={}/clientkey,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,ConnectTimeout=10",
                d.display()
            ))
            .arg(format!("root@{}:{}", self.addr, self.served.display()))
            .arg(&self.mnt)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("sshfs: {e}"))?;
        self.sshfs = Some(child);
        let t = Instant::now();
        while !self.mounted() {
            if t.elapsed() > Duration::from_secs(20) {
                return Err("sshfs did not mount the share within 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// The connection lost as a network goes: the sshfs process killed, the mount left not
    /// answering until it is taken down.
    pub fn lose(&mut self) {
        if let Some(mut c) = self.sshfs.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The share back: the dead mount taken down, mounted again.
    pub fn reconnect(&mut self) -> Result<(), String> {
        self.lose();
        let _ = sh("fusermount", &["-u", "-z", self.mnt.to_str().unwrap()]);
        self.mount()
    }

    /// What the server holds in the served folder.
    pub fn served_entries(&self) -> Vec<String> {
        std::fs::read_dir(&self.served)
            .map(|r| {
                r.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        self.lose();
        let _ = sh("fusermount", &["-u", "-z", self.mnt.to_str().unwrap_or("")]);
        if let Ok(pid) = std::fs::read_to_string(self.dir.path().join("sshd.pid")) {
            let _ = sh("kill", &[pid.trim()]);
        }
        let _ = sh("ip", &["netns", "del", &self.netns]);
        let _ = sh("ip", &["link", "del", &self.veth]);
    }
}
