//! `trackbench ui`, the browser face, as its users meet it: the real server on a free port, its
//! refusals over plain HTTP, and the page in a headless Chromium (WebDriver): a search on a
//! simulated device watched live to its answer and history entry, and a real run stopped midway.

use crate::common::{self, webdriver::Browser};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `trackbench ui`, stopped (as Ctrl-C stops it) when dropped.
pub(crate) struct Ui {
    child: Child,
    port: u16,
    pub(crate) token: String,
    _home: Option<tempfile::TempDir>,
    /// Kept open: the server's later lines go to it.
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Ui {
    fn start() -> Ui {
        let home = tempfile::tempdir().unwrap();
        let mut ui = Ui::serving(home.path());
        ui._home = Some(home);
        ui
    }

    /// The browser face on the store in `home` (its XDG_DATA_HOME).
    pub(crate) fn serving(home: &std::path::Path) -> Ui {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("trackbench"))
            .args(["ui", "--no-open"])
            .env("XDG_DATA_HOME", home)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("trackbench ui starts");
        let mut line = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("trackbench ui: ")
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        let rest = url.strip_prefix("http://127.0.0.1:").expect("loopback");
        let (port, token) = rest.split_once("/?token=").expect("a token in the address");
        Ui {
            child,
            port: port.parse().unwrap(),
            token: token.to_string(),
            _home: None,
            _stdout: stdout,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/?token={}", self.port, self.token)
    }

    /// One request with the headers given (Host included, as a browser would send it): the
    /// status, the header lines (lowercased) and the body.
    fn exchange(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: &str,
    ) -> (u16, String, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        for (k, v) in headers {
            req += &format!("{k}: {v}\r\n");
        }
        req += &format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap_or((out.as_str(), ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        (status, head.to_ascii_lowercase(), body.to_string())
    }

    /// [`Ui::exchange`]'s status and body.
    pub(crate) fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: &str,
    ) -> (u16, String) {
        let (status, _, body) = self.exchange(method, path, headers, body);
        (status, body)
    }

    pub(crate) fn host(&self) -> (&'static str, String) {
        ("Host", format!("127.0.0.1:{}", self.port))
    }

    fn token_header(&self) -> (&'static str, String) {
        ("X-Trackbench-Token", self.token.clone())
    }

    /// A request as the page makes it: Host, token, and the page's own Origin.
    pub(crate) fn api(&self, method: &str, path: &str, body: &str) -> (u16, Value) {
        let (status, text) = self.raw(
            method,
            path,
            &[
                self.host(),
                self.token_header(),
                ("Origin", format!("http://127.0.0.1:{}", self.port)),
            ],
            body,
        );
        let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, v)
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        // As Ctrl-C stops it (elsewhere, at once).
        // SAFETY: kill has no memory preconditions; the pid is our child's.
        #[cfg(unix)]
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGINT)
        };
        #[cfg(not(unix))]
        let _ = self.child.kill();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn ui_refuses_requests_without_its_token_host_or_origin_and_bad_input_in_the_clis_words() {
    let ui = Ui::start();
    let options = format!("/api/options?token={}", ui.token);
    // The page itself, with its token and nothing from elsewhere.
    let (s, page) = ui.raw("GET", &format!("/?token={}", ui.token), &[ui.host()], "");
    assert_eq!(s, 200);
    assert!(page.contains("<title>trackbench</title>"));
    assert!(
        !page.contains("https://") && !page.contains("http://"),
        "the page loads nothing from the network"
    );
    let (s, _) = ui.raw("GET", &options, &[ui.host()], "");
    assert_eq!(s, 200);
    let (_, head, _) = ui.exchange("GET", &options, &[ui.host()], "");
    assert!(
        head.contains("referrer-policy: no-referrer") && head.contains("x-frame-options: deny"),
        "{head}"
    );
    // No token, a wrong one, a rebinding name, another site's page.
    let (s, b) = ui.raw("GET", "/", &[ui.host()], "");
    assert!(s == 403 && b.contains("no token"), "{s} {b}");
    let (s, b) = ui.raw("GET", "/api/options?token=00", &[ui.host()], "");
    assert!(s == 403 && b.contains("wrong token"), "{s} {b}");
    let (s, b) = ui.raw(
        "GET",
        &options,
        &[("Host", format!("attacker.example:{}", ui.port))],
        "",
    );
    assert!(s == 403 && b.contains("Host"), "{s} {b}");
    let (s, b) = ui.raw(
        "POST",
        "/api/runs",
        &[
            ui.host(),
            ui.token_header(),
            ("Origin", "http://attacker.example".into()),
        ],
        r#"{"task":"play","device_model":"bw=50M"}"#,
    );
    assert!(s == 403 && b.contains("Origin"), "{s} {b}");
    let (s, b) = ui.api("GET", "/api/history", "");
    assert!(
        s == 200 && b.as_array().is_some_and(|a| a.is_empty()),
        "{s} {b}"
    );
    // Bad input: the CLI's own messages, and nothing written.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a file");
    std::fs::write(&file, b"x").unwrap();
    let cases = [
        (
            serde_json::json!({"task": "play", "target": dir.path().join("missing")}),
            "no such file",
        ),
        (
            serde_json::json!({"task": "play", "target": file}),
            "is a file",
        ),
        (
            serde_json::json!({"task": "play", "target": dir.path(), "format": "48k/25/mono"}),
            "invalid format \"48k/25/mono\"",
        ),
        (
            serde_json::json!({"task": "play", "target": dir.path(), "profile": "cubase-x"}),
            "invalid profile \"cubase-x\"",
        ),
        (
            serde_json::json!({"task": "sampler", "target": dir.path(), "max": 99999}),
            "invalid max-voices 99999",
        ),
        (
            serde_json::json!({"task": "format-disk", "target": dir.path()}),
            "invalid task",
        ),
    ];
    for (body, says) in cases {
        let (s, b) = ui.api("POST", "/api/runs", &body.to_string());
        assert!(
            s == 400 && b["error"].as_str().is_some_and(|e| e.contains(says)),
            "{body}: {s} {b}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the file the test made: {left:?}");
    // The target picker offers this user's folders and the system's, never another user's.
    #[cfg(unix)]
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let mine = dir.path().join("mine");
        let theirs = dir.path().join("theirs");
        std::fs::create_dir(&mine).unwrap();
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let q = dir.path().display().to_string();
        let (s, b) = ui.api(
            "GET",
            &format!("/api/dirs?path={}", q.replace('/', "%2F")),
            "",
        );
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["dirs"], serde_json::json!(["mine"]), "{b}");
        let (s, b) = ui.api(
            "POST",
            "/api/runs",
            &serde_json::json!({"task": "play", "target": theirs}).to_string(),
        );
        assert!(
            s == 400 && b.to_string().contains("another user's"),
            "{s} {b}"
        );
    }
    let (s, b) = ui.api("POST", "/api/runs/stop", "");
    assert!(s == 409 && b.to_string().contains("no run"), "{s} {b}");
}

/// Waits up to `secs` for `script` (a function body) to return true in the page.
fn wait_for(b: &Browser, script: &str, secs: u64, what: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        if b.eval(script) == Value::Bool(true) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let state = b.eval(
        "return document.getElementById('status').textContent + ' | ' + document.getElementById('error').textContent + ' | ' + document.getElementById('answer').textContent",
    );
    panic!("{what}: not within {secs} s ({state})");
}

#[test]
fn ui_refuses_other_pages_and_names_in_a_browser() {
    let ui = Ui::start();
    // rebind.test resolves to this machine, as a DNS-rebinding attacker's name would.
    let b = match Browser::start_with(&["--host-resolver-rules=MAP rebind.test 127.0.0.1"]) {
        Ok(b) => b,
        Err(why) => return common::missing("chromium", &why),
    };
    let body = "return document.body ? document.body.innerText : ''";
    // The address without its token.
    b.open_url(&format!("http://127.0.0.1:{}/", ui.port));
    let text = b.eval(body);
    assert!(
        text.as_str().unwrap().contains("refused: no token"),
        "{text}"
    );
    // The right token under another name: the Host is refused.
    b.open_url(&format!(
        "http://rebind.test:{}/?token={}",
        ui.port, ui.token
    ));
    let text = b.eval(body);
    assert!(text.as_str().unwrap().contains("refused: Host"), "{text}");
    // Another page (here a data: URL) that knows even the token cannot start a run: its
    // request carries its own Origin.
    b.open_url("data:text/html,<p>another page</p>");
    let sent = b.eval(&format!(
        "return fetch('http://127.0.0.1:{}/api/runs?token={}', {{method: 'POST', mode: 'no-cors',
             headers: {{'Content-Type': 'text/plain'}},
             body: JSON.stringify({{task: 'play', device_model: 'bw=50M'}})}})
           .then(() => 'sent', e => 'blocked: ' + e)",
        ui.port, ui.token
    ));
    assert!(sent.as_str().is_some(), "{sent}");
    let (s, v) = ui.api("GET", "/api/runs/current", "");
    assert_eq!(s, 200);
    assert_eq!(v["run"], Value::Null, "another page started a run: {v}");
}

#[test]
fn ui_in_a_browser_watches_a_search_live_to_its_answer_and_stops_a_real_run() {
    let ui = Ui::start();
    let b = match Browser::start() {
        Ok(b) => b,
        Err(why) => return common::missing("chromium", &why),
    };
    b.open_url(&ui.url());
    wait_for(
        &b,
        "return document.getElementById('profile').options.length > 0",
        20,
        "the page loads its options",
    );
    // The drives offered to start from: at least the one the system is on.
    wait_for(
        &b,
        "return document.querySelectorAll('#places .place').length >= 1",
        20,
        "the drives and shares",
    );
    // A search on a simulated device, chosen and started from the page.
    b.eval(
        "document.getElementById('model').value = 'bw=50M';
         document.getElementById('task').value = 'play';
         document.getElementById('task').dispatchEvent(new Event('change'));
         document.getElementById('start').click();",
    );
    // The live chart moves: ring fill points arrive and probes are shown as they end.
    wait_for(
        &b,
        "return document.querySelectorAll('#probes .probe').length >= 2",
        60,
        "probes appear live",
    );
    // The chart is drawn on the page's next frame, which a loaded machine may delay past the
    // probes' list: wait for it as for the rest.
    wait_for(
        &b,
        "const c = document.getElementById('fill'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
         let blue = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 80 && d[i+2] > 180 && d[i+3] > 0) blue++;
         return blue > 50;",
        10,
        "the fill chart drew",
    );
    wait_for(
        &b,
        "return document.getElementById('report-link') !== null",
        120,
        "the answer",
    );
    let answer = b.eval("return document.getElementById('answer').textContent");
    assert!(
        answer.as_str().is_some_and(|a| a.contains("tracks")),
        "{answer}"
    );
    // The answer is a card: the count, its verdict, the sentence naming the simulated device,
    // the figures that decide; the method behind "How this was measured", closed; nothing
    // scrolls sideways.
    let card = b.eval(
        "const c = document.querySelector('.answer-card'); if (!c) return null;
         const d = c.querySelector('details');
         return {count: c.querySelector('.count').firstChild.textContent,
                 verdict: c.querySelector('.verdict').textContent,
                 sentence: c.querySelector('.sentence').textContent,
                 figures: c.querySelectorAll('dt').length,
                 method: d.querySelector('summary').textContent, open: d.open,
                 text: d.querySelector('pre').textContent,
                 fits: c.scrollWidth <= c.clientWidth + 1};",
    );
    assert!(
        card["count"]
            .as_str()
            .is_some_and(|c| c.parse::<u32>().is_ok_and(|n| n > 0)),
        "{card}"
    );
    assert_eq!(card["verdict"], "confirmed", "{card}");
    assert!(
        card["sentence"]
            .as_str()
            .is_some_and(|t| t.starts_with("The simulated device (bw=50M) plays ")),
        "{card}"
    );
    assert!(card["figures"].as_u64().unwrap_or(0) >= 3, "{card}");
    assert_eq!(card["method"], "How this was measured", "{card}");
    assert_eq!(card["open"], false, "{card}");
    assert!(
        card["text"]
            .as_str()
            .is_some_and(|t| t.contains("each probe ran up to")),
        "the method keeps the whole rule: {card}"
    );
    assert_eq!(card["fits"], true, "{card}");
    let probes = b.eval(
        "return [...document.querySelectorAll('#probes .probe')].map(p => p.textContent).join(', ')",
    );
    assert!(probes.as_str().unwrap().contains("(confirm)"), "{probes}");
    wait_for(
        &b,
        "return document.querySelectorAll('#history tbody tr').length === 1",
        20,
        "the history entry",
    );
    // The report of the stored result opens, with its charts.
    let (s, v) = ui.api("GET", "/api/history", "");
    assert_eq!(s, 200);
    let id = v[0]["id"].as_i64().unwrap();
    let (s, html) = ui.raw(
        "GET",
        &format!("/report?id={id}&token={}", ui.token),
        &[ui.host()],
        "",
    );
    assert!(s == 200 && html.contains("<svg"), "{s}");

    // A real run on a folder, stopped midway from the page: saved, marked interrupted, its
    // files removed.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().display().to_string();
    b.eval(&format!(
        "document.getElementById('model').value = '';
         document.getElementById('target').value = {};
         document.getElementById('max').value = '16';
         document.getElementById('start').click();",
        serde_json::to_string(&target).unwrap()
    ));
    wait_for(
        &b,
        "return document.getElementById('count').textContent === '16'",
        120,
        "the real run streams",
    );
    // A page opened while it runs (a reload, a second tab) follows it.
    b.open_url(&ui.url());
    wait_for(
        &b,
        "return document.getElementById('stop').disabled === false && document.getElementById('count').textContent === '16'",
        60,
        "a reloaded page follows the run",
    );
    // Its reads' latency, once the rings refill.
    wait_for(
        &b,
        "return document.getElementById('latency').textContent !== '–'",
        60,
        "the real run's latency",
    );
    b.eval("document.getElementById('stop').click()");
    wait_for(
        &b,
        "return document.getElementById('status').textContent === 'Stopped.'",
        60,
        "the run stops",
    );
    let answer = b.eval("return document.getElementById('answer').textContent");
    assert!(
        answer
            .as_str()
            .is_some_and(|a| a.contains("Stopped before the end")),
        "{answer}"
    );
    // A stopped search is no count: a card, if the search got that far, says so.
    let counts = b.eval(
        "return [...document.querySelectorAll('.answer-card .count')].map(c => c.firstChild.textContent)",
    );
    assert!(
        counts
            .as_array()
            .is_some_and(|c| c.iter().all(|c| c != "0")),
        "{counts}"
    );
    common::wait_clean(Path::new(&target));
    wait_for(
        &b,
        "return document.querySelectorAll('#history tbody tr').length === 2 && document.querySelector('#history tbody tr').textContent.includes('interrupted')",
        20,
        "the interrupted run in the history",
    );
    // Two results chosen and compared.
    b.eval(
        "document.querySelectorAll('#history input').forEach(c => { c.checked = true; });
         document.getElementById('history').dispatchEvent(new Event('change'));",
    );
    assert_eq!(
        b.eval("return document.getElementById('compare').disabled"),
        Value::Bool(false)
    );
    let (s, v) = ui.api("GET", "/api/history", "");
    assert_eq!(s, 200);
    let ids: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].to_string())
        .collect();
    let (s, html) = ui.raw(
        "GET",
        &format!("/compare?ids={}&token={}", ids.join(","), ui.token),
        &[ui.host()],
        "",
    );
    assert!(s == 200 && html.contains("trackbench comparison"), "{s}");

    let errors: Vec<_> = b
        .console()
        .into_iter()
        .filter(|(level, _)| level == "SEVERE")
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
}
