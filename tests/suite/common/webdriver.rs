//! A headless Chromium driven through ChromeDriver's WebDriver protocol, for tests that open a
//! report as a user would: load the page, run a check in it, read the browser's console, take a
//! screenshot. Debian's `chromium` and `chromium-driver` provide them (`.ci/run` installs both).
//! Plain HTTP/1.1 over a socket to ChromeDriver on 127.0.0.1: no client crate needed.

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    _profile: tempfile::TempDir,
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.exists())
    })
}

/// One HTTP exchange with ChromeDriver; the reply's JSON `value`.
fn call(port: u16, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(120)))
        .map_err(|e| e.to_string())?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    // ChromeDriver may keep the connection open: read what the header announces, no more.
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed before the header".into());
        }
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    let mut body = raw[head_end..].to_vec();
    let read_more = |body: &mut Vec<u8>, s: &mut TcpStream| -> Result<(), String> {
        let mut b = [0u8; 65536];
        let n = s.read(&mut b).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed mid-body".into());
        }
        body.extend_from_slice(&b[..n]);
        Ok(())
    };
    let body = if let Some(len) = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        while body.len() < len {
            read_more(&mut body, &mut s)?;
        }
        String::from_utf8_lossy(&body[..len]).into_owned()
    } else if head.contains("transfer-encoding: chunked") {
        let mut out = Vec::new();
        let mut at = 0;
        loop {
            let line_end = loop {
                if let Some(i) = body[at..].windows(2).position(|w| w == b"\r\n") {
                    break at + i;
                }
                read_more(&mut body, &mut s)?;
            };
            let size = String::from_utf8_lossy(&body[at..line_end])
                .trim()
                .to_string();
            let n = usize::from_str_radix(&size, 16).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            let start = line_end + 2;
            while body.len() < start + n + 2 {
                read_more(&mut body, &mut s)?;
            }
            out.extend_from_slice(&body[start..start + n]);
            at = start + n + 2;
        }
        String::from_utf8_lossy(&out).into_owned()
    } else {
        while read_more(&mut body, &mut s).is_ok() {}
        String::from_utf8_lossy(&body).into_owned()
    };
    let v: Value = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
    if let Some(err) = v["value"].get("error") {
        return Err(format!("{err}: {}", v["value"]["message"]));
    }
    Ok(v["value"].clone())
}

impl Browser {
    /// Starts ChromeDriver and a headless Chromium session, or says why it cannot.
    pub fn start() -> Result<Browser, String> {
        Browser::start_with(&[])
    }

    /// [`Browser::start`] with more Chromium flags (`--host-resolver-rules=…`).
    pub fn start_with(extra: &[&str]) -> Result<Browser, String> {
        let driver_bin = which("chromedriver").ok_or("no chromedriver on the PATH")?;
        let chromium = ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .find_map(|n| which(n))
            .ok_or("no chromium on the PATH")?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let driver = Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("chromedriver: {e}"))?;
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut b = Browser {
            driver,
            port,
            session: String::new(),
            _profile: profile,
        };
        let start = Instant::now();
        while call(port, "GET", "/status", None).is_err() {
            if start.elapsed() > Duration::from_secs(20) {
                return Err("chromedriver did not answer within 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // The flags this closed machine needs: no background connections, no sandbox as root.
        let mut args: Vec<String> = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ]
        .iter()
        .chain(extra)
        .map(|a| a.to_string())
        .collect();
        args.push(format!("--user-data-dir={}", b._profile.path().display()));
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": args
            },
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        let v = call(port, "POST", "/session", Some(&caps))?;
        b.session = v["sessionId"]
            .as_str()
            .ok_or_else(|| format!("no session: {v}"))?
            .to_string();
        Ok(b)
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        call(
            self.port,
            method,
            &format!("/session/{}{path}", self.session),
            body,
        )
        .unwrap_or_else(|e| panic!("webdriver {method} {path}: {e}"))
    }

    /// Opens a file in the browser.
    pub fn open(&self, file: &Path) {
        let url = format!("file://{}", file.display());
        self.call("POST", "/url", Some(&json!({ "url": url })));
    }

    /// Opens an address in the browser.
    pub fn open_url(&self, url: &str) {
        self.call("POST", "/url", Some(&json!({ "url": url })));
    }

    /// Runs `script` (a function body) in the page and returns what it returns.
    pub fn eval(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(&json!({"script": script, "args": []})),
        )
    }

    /// The browser console's messages since the last call: (level, message).
    pub fn console(&self) -> Vec<(String, String)> {
        let v = self.call("POST", "/se/log", Some(&json!({"type": "browser"})));
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|e| {
                        (
                            e["level"].as_str().unwrap_or("").to_string(),
                            e["message"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A screenshot of the whole page, as PNG, into `to`.
    pub fn screenshot(&self, to: &Path) {
        let h = self
            .eval("return document.documentElement.scrollHeight")
            .as_u64()
            .unwrap_or(2000)
            .min(30_000);
        self.call(
            "POST",
            "/window/rect",
            Some(&json!({"width": 1100, "height": h + 120})),
        );
        let b64 = self.call("GET", "/screenshot", None);
        let png = base64_decode(b64.as_str().unwrap_or_default());
        std::fs::write(to, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = call(
                self.port,
                "DELETE",
                &format!("/session/{}", self.session),
                None,
            );
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let digits: Vec<u32> = s.bytes().filter_map(val).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for c in digits.chunks(4) {
        let n = c.iter().fold(0u32, |acc, d| acc << 6 | d) << (6 * (4 - c.len()));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..c.len() - 1]);
    }
    out
}
