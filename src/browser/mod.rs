//! `trackbench ui`: the browser face. A web server on 127.0.0.1 that serves one page (embedded
//! in the binary, nothing fetched from elsewhere) and runs what the page asks through the same
//! command path as the terminal: the page's choices become a command line, parsed by the same
//! parser, measured by the same session runner; the page watches it through the session's sink
//! (progress, ring fill, probes) over server-sent events.
//!
//! Only this user on this machine: bound to the loopback address, every request must carry the
//! random token the opened address holds, its Host must name this server (no DNS-rebinding name)
//! and its Origin, where a browser sends one, this page (no other web page can start a run or
//! read a result).

use crate::cli::{Cli, UiArgs};
use anyhow::{Context, Result};
use axum::Router;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use clap::Parser;
use serde::Deserialize;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use trackbench::control::{Live, Progress, ProgressUnit};
use trackbench::present;
use trackbench::store;

const PAGE: &str = include_str!("index.html");

/// How a measuring run ends, as the browser face hears it.
pub struct Done<'a> {
    /// The store's id for the result, where it was stored.
    pub stored: Option<i64>,
    /// The answer in words, as the terminal's summary says it.
    pub summary: Option<&'a str>,
    pub headline: &'a str,
    pub interrupted: bool,
    /// The error that stopped a workload.
    pub failure: Option<String>,
    pub warnings: &'a [String],
}

/// What the browser face is told of a run, beside its progress.
pub trait Observer: Progress + Sync {
    fn note(&self, note: &str);
    /// A workload finished: its name, its table as the terminal's `--wide` shows it, and its
    /// answer where it counts tracks or voices.
    fn section(&self, workload: &str, text: &str, answer: Option<&present::answer::Answer>);
    fn done(&self, done: &Done<'_>);
}

/// Runs a command line (the browser face's choices) as the terminal would, telling `observer`.
pub type Runner = fn(&[String], &AtomicBool, &dyn Observer) -> Result<ExitCode>;

/// One run's events, kept for a page that connects late, and sent to those connected.
pub struct Feed {
    log: Mutex<Vec<String>>,
    tx: broadcast::Sender<String>,
    last_position: Mutex<Option<Instant>>,
}

impl Feed {
    fn new() -> Feed {
        Feed {
            log: Mutex::new(Vec::new()),
            tx: broadcast::channel(1024).0,
            last_position: Mutex::new(None),
        }
    }

    fn push(&self, event: Value) {
        let text = event.to_string();
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.push(text.clone());
        // Nobody listening is not an error: the log keeps it.
        let _ = self.tx.send(text);
    }

    /// Everything so far from `from` on, and a receiver of what follows (no gap, no repeat).
    fn subscribe(&self, from: usize) -> (Vec<String>, broadcast::Receiver<String>) {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        (
            log.get(from..).map(<[String]>::to_vec).unwrap_or_default(),
            self.tx.subscribe(),
        )
    }
}

fn unit_word(u: ProgressUnit) -> &'static str {
    match u {
        ProgressUnit::Bytes => "bytes",
        ProgressUnit::Millis => "ms",
        ProgressUnit::Count => "count",
    }
}

impl Progress for Feed {
    fn begin(&self, label: &str, total: u64, unit: ProgressUnit) {
        self.push(
            json!({"type": "progress", "label": label, "total": total, "unit": unit_word(unit)}),
        );
    }
    fn set(&self, position: u64) {
        // The measuring thread reports often; a page needs a few a second.
        let mut last = self.last_position.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if last.is_some_and(|l| now.duration_since(l) < Duration::from_millis(200)) {
            return;
        }
        *last = Some(now);
        drop(last);
        self.push(json!({"type": "position", "at": position}));
    }
    fn end(&self) {
        self.push(json!({"type": "progress_end"}));
    }
    fn wants_live(&self) -> bool {
        true
    }
    fn live(&self, event: &Live) {
        let group = |g: Option<trackbench::control::GroupFill>| {
            g.map(|g| json!({"worst": g.worst, "mean": g.mean}))
        };
        self.push(match event {
            Live::Stream(s) => json!({
                "type": "stream",
                "t_ms": s.t_ms,
                "planned_ms": s.planned_ms,
                "play_tracks": s.play_tracks,
                "record_tracks": s.record_tracks,
                "play": group(s.play),
                "record": group(s.record),
                "margin": s.margin,
                "xruns": s.xruns,
                "read_bytes": s.read_bytes,
                "written_bytes": s.written_bytes,
                "read_p99_us": s.read_p99_us,
                "write_p99_us": s.write_p99_us,
            }),
            Live::Probe {
                count,
                verdict,
                confirmation,
            } => json!({
                "type": "probe",
                "count": count,
                "verdict": verdict,
                "confirmation": confirmation,
            }),
        });
    }
}

impl Observer for Feed {
    fn note(&self, note: &str) {
        self.push(json!({"type": "note", "text": note}));
    }
    fn section(&self, workload: &str, text: &str, answer: Option<&present::answer::Answer>) {
        self.push(json!({"type": "section", "workload": workload, "text": text, "answer": answer}));
    }
    fn done(&self, d: &Done<'_>) {
        self.push(json!({
            "type": "done",
            "stored": d.stored,
            "summary": d.summary,
            "headline": d.headline,
            "interrupted": d.interrupted,
            "failure": d.failure,
            "warnings": d.warnings,
        }));
    }
}

/// The run the page started, while it runs and after.
struct Current {
    number: u64,
    cancel: Arc<AtomicBool>,
    running: Arc<AtomicBool>,
    feed: Arc<Feed>,
}

struct App {
    token: String,
    port: u16,
    db: Option<String>,
    runner: Runner,
    current: Mutex<Option<Current>>,
    runs: Mutex<u64>,
}

impl App {
    fn allowed_hosts(&self) -> [String; 2] {
        [
            format!("127.0.0.1:{}", self.port),
            format!("localhost:{}", self.port),
        ]
    }
}

/// A refusal the page shows as it is: status and one sentence.
struct Refusal(StatusCode, String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1}))).into_response()
    }
}

fn refuse(status: StatusCode, message: impl Into<String>) -> Response {
    Refusal(status, message.into()).into_response()
}

fn failed(status: StatusCode) -> impl Fn(trackbench::error::Error) -> Refusal {
    move |e| Refusal(status, e.to_string())
}

use axum::Json;

/// Compares without stopping at the first difference (the token is a secret).
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn query_token(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .find_map(|kv| kv.strip_prefix("token="))
        .map(str::to_string)
}

/// Every request: this server's Host, this page's Origin (where sent), and the token.
async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let hosts = app.allowed_hosts();
    if !hosts.iter().any(|h| h == host) {
        return refuse(
            StatusCode::FORBIDDEN,
            format!(
                "refused: Host {host:?} is not this server (only {} or {})",
                hosts[0], hosts[1]
            ),
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !hosts.iter().any(|h| origin == format!("http://{h}")) {
            return refuse(
                StatusCode::FORBIDDEN,
                format!("refused: Origin {origin:?} is not this page"),
            );
        }
    }
    let token = headers
        .get("x-trackbench-token")
        .and_then(|t| t.to_str().ok())
        .map(str::to_string)
        .or_else(|| query_token(req.uri().query()));
    match token {
        Some(t) if same(&t, &app.token) => {
            let mut r = next.run(req).await;
            // The token is in the address: no page of ours hands it on, or is framed by another.
            let h = r.headers_mut();
            h.insert(
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            );
            h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
            h.insert(
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            );
            r
        }
        Some(_) => refuse(StatusCode::FORBIDDEN, "refused: wrong token"),
        None => refuse(
            StatusCode::FORBIDDEN,
            "refused: no token (open the address trackbench ui printed, token included)",
        ),
    }
}

async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        PAGE,
    )
        .into_response()
}

/// What the page offers: profiles, formats, and the default target.
async fn options() -> Json<Value> {
    use trackbench::engine::profile::{PROFILES, SAMPLER_PROFILES};
    let list = |p: &[(&str, &str)]| -> Vec<Value> {
        p.iter()
            .map(|(n, d)| json!({"name": n, "about": d}))
            .collect()
    };
    let home = dirs::home_dir()
        .or_else(|| std::env::current_dir().ok())
        .map(|p| p.display().to_string());
    Json(json!({
        "play_profiles": list(&PROFILES),
        "sampler_profiles": list(&SAMPLER_PROFILES),
        "formats": ["48k/24/mono", "44.1k/24/mono", "48k/32f/mono", "96k/24/mono", "48k/24/stereo", "44.1k/16/stereo"],
        "start": home,
    }))
}

#[derive(Deserialize)]
struct PathQuery {
    path: String,
}

/// Whether `meta` belongs to another user (not this one, not the system's): such directories
/// are never offered, nor measured from the page.
#[cfg(unix)]
fn others(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    meta.uid() != me && meta.uid() != 0
}

#[cfg(not(unix))]
fn others(_meta: &std::fs::Metadata) -> bool {
    false
}

/// The target as the page shows it: what it is, its space and device, and warnings.
async fn target_info(Query(q): Query<PathQuery>) -> Response {
    let path = PathBuf::from(&q.path);
    match inspect_for_page(&path) {
        Ok(v) => Json(v).into_response(),
        Err(e) => refuse(StatusCode::BAD_REQUEST, e),
    }
}

fn inspect_for_page(path: &Path) -> std::result::Result<Value, String> {
    let t = trackbench::target::inspect(path).map_err(|e| e.to_string())?;
    if t.kind != trackbench::target::TargetKind::Directory {
        return Err(format!(
            "{} is a {}: the page measures folders (it writes test files there)",
            path.display(),
            t.kind.describe()
        ));
    }
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if others(&meta) {
        return Err(format!(
            "{} is another user's directory: choose one of your own",
            path.display()
        ));
    }
    let mut warnings = Vec::new();
    // The system disk: where the operating system itself lives.
    let system_root = if cfg!(windows) { "C:\\" } else { "/" };
    if let (Ok(sys), Some(source)) = (
        trackbench::target::inspect(Path::new(system_root)),
        t.mount_source.as_ref(),
    ) && sys.mount_source.as_ref() == Some(source)
    {
        warnings.push(format!(
            "this is the system disk ({source}): other programs' reads and writes share it, and test files take its space while the run lasts"
        ));
    }
    if let (Some(free), Some(total)) = (t.free_bytes, t.total_bytes)
        && total > 0
        && (free as f64) < 0.1 * total as f64
    {
        warnings.push(format!(
            "almost full: {} free of {}; a full disk is slower, and a search needs room for its tracks",
            trackbench::units::fmt_size(free),
            trackbench::units::fmt_size(total)
        ));
    }
    let device = t.device.as_ref().map(|d| {
        [d.model.clone(), Some(d.name.clone())]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" · ")
    });
    Ok(json!({
        "path": t.path.display().to_string(),
        "fs": t.fs_type,
        "source": t.mount_source,
        "device": device,
        "free_bytes": t.free_bytes,
        "total_bytes": t.total_bytes,
        "free": t.free_bytes.map(trackbench::units::fmt_size),
        "total": t.total_bytes.map(trackbench::units::fmt_size),
        "warnings": warnings,
    }))
}

/// The drives and shares the page offers to start from, each as the target picker shows it.
async fn places() -> Json<Value> {
    let list = tokio::task::spawn_blocking(|| {
        trackbench::target::storage_places()
            .iter()
            .filter_map(|p| inspect_for_page(p).ok())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    Json(Value::Array(list))
}

/// The run going, if any: a page opened (or reloaded) while one runs follows it.
async fn current(State(app): State<Arc<App>>) -> Json<Value> {
    let c = app.current.lock().unwrap_or_else(|e| e.into_inner());
    Json(match c.as_ref() {
        Some(c) => json!({"run": c.number, "running": c.running.load(Ordering::Relaxed)}),
        None => json!({"run": null, "running": false}),
    })
}

/// The folders in `path` the page may offer: this user's and the system's, not hidden.
async fn list_dirs(Query(q): Query<PathQuery>) -> Response {
    let path = PathBuf::from(&q.path);
    let rd = match std::fs::read_dir(&path) {
        Ok(r) => r,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, format!("{}: {e}", path.display())),
    };
    let mut dirs: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter(|e| std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir() && !others(&m)))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    Json(json!({
        "path": path.display().to_string(),
        "parent": path.parent().map(|p| p.display().to_string()),
        "dirs": dirs,
    }))
    .into_response()
}

#[derive(Deserialize)]
struct StartRequest {
    target: Option<String>,
    /// play, record, sampler or run.
    task: String,
    profile: Option<String>,
    format: Option<String>,
    /// A simulated device ("what if"), instead of a folder.
    device_model: Option<String>,
    /// Ask for no more than this many (a search's --max-tracks).
    max: Option<u32>,
}

/// The command line the page's choices stand for.
fn command_for(r: &StartRequest, db: Option<&str>) -> std::result::Result<Vec<String>, String> {
    let mut a: Vec<String> = vec!["trackbench".into(), r.task.clone()];
    let model = r.device_model.as_deref().filter(|m| !m.trim().is_empty());
    match r.task.as_str() {
        "play" | "record" | "sampler" | "run" => {}
        other => {
            return Err(format!(
                "invalid task {other:?}: one of play, record, sampler, run"
            ));
        }
    }
    match (&r.target, model) {
        (_, Some(_)) if r.task == "run" => {
            return Err("the whole suite measures a real folder, not a simulated device".into());
        }
        (Some(t), None) if !t.trim().is_empty() => a.push(t.clone()),
        (_, None) => return Err("choose a folder to measure".into()),
        (_, Some(_)) => {}
    }
    if r.task != "run" {
        a.push("--find-max".into());
        if let Some(p) = r.profile.as_deref().filter(|p| !p.is_empty()) {
            a.extend(["--profile".into(), p.to_string()]);
        }
        if let Some(m) = model {
            a.extend(["--device-model".into(), m.to_string()]);
        }
        if let Some(m) = r.max {
            let flag = if r.task == "sampler" {
                "--max-voices"
            } else {
                "--max-tracks"
            };
            a.extend([flag.into(), m.to_string()]);
        }
    } else {
        // The report is the page's to show, from the store.
        a.push("--no-report".into());
    }
    if let Some(f) = r.format.as_deref().filter(|f| !f.is_empty()) {
        a.extend(["--format".into(), f.to_string()]);
    }
    if let Some(d) = db {
        a.extend(["--db".into(), d.to_string()]);
    }
    Ok(a)
}

async fn start(State(app): State<Arc<App>>, Json(r): Json<StartRequest>) -> Response {
    let args = match command_for(&r, app.db.as_deref()) {
        Ok(a) => a,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, e),
    };
    // The terminal's parser says what is wrong with a value, in the terminal's words.
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let text = e.render().to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            return refuse(StatusCode::BAD_REQUEST, first.to_string());
        }
    };
    let model = r
        .device_model
        .as_deref()
        .is_some_and(|m| !m.trim().is_empty());
    if !model
        && let Some(t) = &r.target
        && let Err(e) = inspect_for_page(Path::new(t))
    {
        return refuse(StatusCode::BAD_REQUEST, e);
    }
    // Values the parser accepts but the workload refuses (a format, a profile) are refused
    // here too, before anything is written.
    if let Err(e) = crate::cli::check(&cli.command) {
        return refuse(StatusCode::BAD_REQUEST, format!("{e:#}"));
    }
    let mut current = app.current.lock().unwrap_or_else(|e| e.into_inner());
    if current
        .as_ref()
        .is_some_and(|c| c.running.load(Ordering::Relaxed))
    {
        return refuse(
            StatusCode::CONFLICT,
            "a run is going: stop it or wait for its answer",
        );
    }
    let number = {
        let mut n = app.runs.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        *n
    };
    let c = Current {
        number,
        cancel: Arc::new(AtomicBool::new(false)),
        running: Arc::new(AtomicBool::new(true)),
        feed: Arc::new(Feed::new()),
    };
    c.feed
        .push(json!({"type": "started", "run": number, "command": args.join(" ")}));
    let (feed, cancel, running, runner) = (
        Arc::clone(&c.feed),
        Arc::clone(&c.cancel),
        Arc::clone(&c.running),
        app.runner,
    );
    let spawned = std::thread::Builder::new()
        .name(format!("ui-run-{number}"))
        .spawn(move || {
            let code = match runner(&args, &cancel, &*feed) {
                Ok(code) => code == ExitCode::SUCCESS,
                Err(e) => {
                    feed.push(json!({"type": "error", "message": format!("{e:#}")}));
                    false
                }
            };
            running.store(false, Ordering::Relaxed);
            feed.push(
                json!({"type": "end", "ok": code, "interrupted": cancel.load(Ordering::Relaxed)}),
            );
        });
    if let Err(e) = spawned {
        return refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot start the run: {e}"),
        );
    }
    *current = Some(c);
    Json(json!({"run": number})).into_response()
}

async fn stop(State(app): State<Arc<App>>) -> Response {
    let current = app.current.lock().unwrap_or_else(|e| e.into_inner());
    match current.as_ref() {
        Some(c) if c.running.load(Ordering::Relaxed) => {
            c.cancel.store(true, Ordering::Relaxed);
            Json(json!({"stopping": c.number})).into_response()
        }
        _ => refuse(StatusCode::CONFLICT, "no run is going"),
    }
}

#[derive(Deserialize)]
struct EventsQuery {
    from: Option<usize>,
}

/// The current run's events: what happened so far, then as it happens.
async fn events(
    State(app): State<Arc<App>>,
    Query(q): Query<EventsQuery>,
) -> Sse<impl tokio_stream::Stream<Item = std::result::Result<Event, Infallible>>> {
    let (tx, rx) = tokio::sync::mpsc::channel::<String>(256);
    let feed = app
        .current
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|c| Arc::clone(&c.feed));
    if let Some(feed) = feed {
        let (backlog, mut live) = feed.subscribe(q.from.unwrap_or(0));
        tokio::spawn(async move {
            for e in backlog {
                if tx.send(e).await.is_err() {
                    return;
                }
            }
            loop {
                match live.recv().await {
                    Ok(e) => {
                        if tx.send(e).await.is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }
    Sse::new(ReceiverStream::new(rx).map(|e| Ok(Event::default().data(e))))
        .keep_alive(KeepAlive::default())
}

fn open_store(app: &App) -> std::result::Result<Box<dyn store::Store>, Refusal> {
    store::open(app.db.as_deref()).map_err(failed(StatusCode::INTERNAL_SERVER_ERROR))
}

async fn history(State(app): State<Arc<App>>) -> std::result::Result<Json<Value>, Refusal> {
    let rows = open_store(&app)?
        .history(&store::Filter {
            limit: 100,
            ..Default::default()
        })
        .map_err(failed(StatusCode::INTERNAL_SERVER_ERROR))?;
    let marks = trackbench::watch::series::marks(&rows);
    Ok(Json(
        rows.iter()
            .map(|r| {
                json!({
                    "stepped": marks.by_id.get(&r.id),
                    "id": r.id,
                    "started_at": r.started_at,
                    "target": r.target,
                    "device": r.device,
                    "workloads": r.workloads,
                    "headline": trackbench::present::summary::stored_headline(r),
                    "interrupted": r.interrupted,
                })
            })
            .collect(),
    ))
}

#[derive(Deserialize)]
struct IdQuery {
    id: i64,
}

/// A stored result's report, the same HTML file `trackbench report` writes.
async fn report_page(
    State(app): State<Arc<App>>,
    Query(q): Query<IdQuery>,
) -> std::result::Result<Html<String>, Refusal> {
    let mut store = open_store(&app)?;
    let doc = store.load(q.id).map_err(failed(StatusCode::NOT_FOUND))?;
    trackbench::watch::series::report_with_history(store.as_mut(), &doc, q.id)
        .map(Html)
        .map_err(failed(StatusCode::INTERNAL_SERVER_ERROR))
}

#[derive(Deserialize)]
struct IdsQuery {
    ids: String,
}

/// Stored results side by side, as `trackbench compare --output` writes them.
async fn compare_page(
    State(app): State<Arc<App>>,
    Query(q): Query<IdsQuery>,
) -> std::result::Result<Html<String>, Refusal> {
    let ids: Vec<i64> = q
        .ids
        .split(',')
        .map(|s| s.trim().parse::<i64>())
        .collect::<std::result::Result<_, _>>()
        .ok()
        .filter(|v: &Vec<i64>| v.len() >= 2)
        .ok_or_else(|| {
            Refusal(
                StatusCode::BAD_REQUEST,
                format!(
                    "invalid ids {:?}: two or more result ids, comma separated",
                    q.ids
                ),
            )
        })?;
    let mut s = open_store(&app)?;
    let docs = ids
        .iter()
        .map(|&id| s.load(id).map(|d| (format!("#{id}"), d)))
        .collect::<trackbench::error::Result<Vec<_>>>()
        .map_err(failed(StatusCode::NOT_FOUND))?;
    let unfair = present::compare::unfair_differences(&docs);
    present::compare::html(&docs, &unfair)
        .map(Html)
        .map_err(failed(StatusCode::INTERNAL_SERVER_ERROR))
}

async fn not_found() -> Response {
    refuse(StatusCode::NOT_FOUND, "no such page")
}

/// A random token: 32 bytes from the operating system, as hex.
fn token() -> Result<String> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| anyhow::anyhow!("no randomness for the token: {e}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Opens `url` in the default browser; says so where it cannot.
fn open_browser(url: &str) -> std::io::Result<()> {
    let mut c = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut c = std::process::Command::new("cmd");
        c.args(["/C", "start", ""]);
        c
    } else {
        std::process::Command::new("xdg-open")
    };
    c.arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
}

/// The page and its API, each request checked by [`guard`] first.
fn routes(app: &Arc<App>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/options", get(options))
        .route("/api/target", get(target_info))
        .route("/api/dirs", get(list_dirs))
        .route("/api/places", get(places))
        .route("/api/runs/current", get(current))
        .route("/api/runs", post(start))
        .route("/api/runs/stop", post(stop))
        .route("/api/events", get(events))
        .route("/api/history", get(history))
        .route("/report", get(report_page))
        .route("/compare", get(compare_page))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(Arc::clone(app), guard))
        .with_state(Arc::clone(app))
}

/// Says where the page is, and opens it in the default browser where asked. A closed stdout (a
/// launcher that read the address and went) must not stop the server.
fn announce(url: &str, open: bool) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "trackbench ui: {url}");
    let _ = writeln!(out, "(this computer only; Ctrl-C stops it)");
    if open && let Err(e) = open_browser(url) {
        let _ = writeln!(
            out,
            "could not open a browser ({e}): open the address above in one"
        );
    }
    let _ = out.flush();
}

/// Serves the page until interrupted (Ctrl-C stops a run first, as in the terminal: its result
/// is saved, marked interrupted, and its files removed).
pub fn serve(a: &UiArgs, cancel: &AtomicBool, runner: Runner) -> Result<ExitCode> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", a.port))
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", a.port))?;
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    let app = Arc::new(App {
        token: token()?,
        port,
        db: a.store.db.clone(),
        runner,
        current: Mutex::new(None),
        runs: Mutex::new(0),
    });
    let url = format!("http://127.0.0.1:{port}/?token={}", app.token);
    let router = routes(&app);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the web server")?;
    announce(&url, !a.no_open);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    rt.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let server = tokio::spawn(
            axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = stop_rx.await;
                })
                .into_future(),
        );
        // Ctrl-C: stop the run (it saves and cleans up), then the server.
        while !cancel.load(Ordering::Relaxed) && !server.is_finished() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let running = {
            let c = app.current.lock().unwrap_or_else(|e| e.into_inner());
            c.as_ref().map(|c| {
                c.cancel.store(true, Ordering::Relaxed);
                Arc::clone(&c.running)
            })
        };
        if let Some(r) = running {
            while r.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        let _ = stop_tx.send(());
        server
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?
    })
    .context("the web server failed")?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(task: &str) -> StartRequest {
        StartRequest {
            target: Some("/tmp/x".into()),
            task: task.into(),
            profile: Some("ardour-medium".into()),
            format: Some("48k/24/mono".into()),
            device_model: None,
            max: None,
        }
    }

    #[test]
    fn the_pages_choices_become_the_terminals_command_line() {
        assert_eq!(
            command_for(&req("play"), None).unwrap().join(" "),
            "trackbench play /tmp/x --find-max --profile ardour-medium --format 48k/24/mono"
        );
        let mut r = req("run");
        r.profile = None;
        assert_eq!(
            command_for(&r, Some("/tmp/db.sqlite")).unwrap().join(" "),
            "trackbench run /tmp/x --no-report --format 48k/24/mono --db /tmp/db.sqlite"
        );
        let mut r = req("sampler");
        r.device_model = Some("bw=200M".into());
        r.max = Some(50);
        r.profile = None;
        r.format = None;
        assert_eq!(
            command_for(&r, None).unwrap().join(" "),
            "trackbench sampler --find-max --device-model bw=200M --max-voices 50"
        );
        assert!(
            command_for(&req("erase"), None)
                .unwrap_err()
                .contains("invalid task")
        );
        let mut r = req("run");
        r.device_model = Some("bw=1G".into());
        assert!(command_for(&r, None).is_err());
    }

    #[test]
    fn the_token_is_long_random_hex_and_compared_whole() {
        let (a, b) = (token().unwrap(), token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(same(&a, &a.clone()));
        assert!(!same(&a, &b));
        assert!(!same(&a, &a[..63]));
        assert_eq!(query_token(Some("x=1&token=abc")), Some("abc".into()));
        assert_eq!(query_token(Some("x=1")), None);
    }
}
