//! Reports as users get them: `run` writes its HTML report, `report` renders stored results and
//! files (HTML or Markdown), `compare -o` writes a comparison page, and every page opens in a
//! real browser (headless Chromium) with every chart drawn, no console message, no network and
//! no script; screenshots are kept under target/report-screenshots for a person to look at.

use crate::common;

use common::tb;
use common::webdriver::Browser;
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(schema: u32, name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("schema-{schema}"))
        .join(name)
}

fn screenshots() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("report-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// What a page is checked for: at least `charts` charts, each kind in `kinds` among them.
struct Expect<'a> {
    charts: usize,
    kinds: &'a [&'a str],
}

/// Opens `page`, checks that every chart is drawn (an SVG of real size holding its marks), that
/// the console stayed silent and nothing was fetched or run, and keeps a screenshot.
fn check_in_browser(b: &Browser, page: &Path, expect: Expect<'_>) {
    b.console();
    b.open(page);
    let v = b.eval(
        r#"return {
            charts: [...document.querySelectorAll('figure.chart')].map(f => {
                const s = f.querySelector('svg');
                const r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
                return {kind: f.dataset.chart, width: r.width, height: r.height,
                        marks: s ? s.querySelectorAll('polyline,path,rect,circle,line').length : 0,
                        texts: s ? s.querySelectorAll('text').length : 0,
                        caption: f.querySelector('figcaption') ? f.querySelector('figcaption').textContent : ''};
            }),
            resources: performance.getEntriesByType('resource').length,
            scripts: document.scripts.length,
            title: document.title
        };"#,
    );
    let charts = v["charts"].as_array().unwrap();
    assert!(
        charts.len() >= expect.charts,
        "{}: {} charts, expected at least {}: {v}",
        page.display(),
        charts.len(),
        expect.charts
    );
    for c in charts {
        assert!(
            c["width"].as_f64().unwrap() > 300.0 && c["height"].as_f64().unwrap() > 100.0,
            "{}: a chart without size: {c}",
            page.display()
        );
        assert!(
            c["marks"].as_u64().unwrap() >= 8 && c["texts"].as_u64().unwrap() >= 3,
            "{}: a chart with nothing drawn: {c}",
            page.display()
        );
        assert!(!c["caption"].as_str().unwrap().is_empty(), "{c}");
    }
    for k in expect.kinds {
        assert!(
            charts.iter().any(|c| c["kind"] == *k),
            "{}: no {k} chart: {v}",
            page.display()
        );
    }
    assert_eq!(v["resources"], 0, "{}: fetched something", page.display());
    assert_eq!(v["scripts"], 0, "{}: holds a script", page.display());
    assert!(
        v["title"].as_str().unwrap().starts_with("trackbench"),
        "{v}"
    );
    let console = b.console();
    assert!(
        console.is_empty(),
        "{}: the console said {console:?}",
        page.display()
    );
    let name = page.file_stem().unwrap().to_string_lossy().into_owned();
    b.screenshot(&screenshots().join(format!("{name}.png")));
}

/// The newcomer's path: `run` in a folder stores its result and writes its report into the
/// current directory; history, show, report and compare work on it; the report opens in a
/// browser with every chart drawn.
#[test]
fn a_newcomers_run_stores_its_result_and_writes_a_report_a_browser_draws_whole() {
    // The newcomer's run, shared with as_a_newcomer.rs's test of its document and summary.
    let run = common::newcomer_run();
    let (home, target) = (&run.home, &run.target);
    let tbh = || {
        let mut c = tb();
        c.env("XDG_DATA_HOME", home);
        c
    };
    let (stdout, stderr) = (&run.stdout, &run.stderr);
    assert!(run.success, "{stderr}");
    assert!(stderr.contains("stored as result 1"), "{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("report: trackbench-report-"))
        .unwrap_or_else(|| panic!("no report line: {stdout}"));
    let name = line["report: ".len()..].split(' ').next().unwrap();
    let page = target.join(name);
    assert!(page.is_file(), "{}", page.display());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("This folder plays"), "the summary leads");
    // Nothing to fetch: no script, no link or source beyond the SVG namespace.
    let outside = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(
        !html.contains("<script") && !outside.contains("http://") && !outside.contains("https://")
    );
    // The only things left in the folder: the report asked for. No test data.
    let left: Vec<_> = std::fs::read_dir(target)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, [name.to_string()], "{left:?}");

    tbh()
        .args(["history", "--wide"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 result(s)").and(predicate::str::contains("realtime")));
    tbh().args(["show", "1"]).assert().success().stdout(
        predicate::str::contains("Summary (48k/24/mono")
            .and(predicate::str::contains("Sweep").or(predicate::str::contains("round robin"))),
    );
    tbh()
        .args(["compare", "1", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("(100%)"));
    let md = tbh().args(["report", "1", "--markdown"]).output().unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.starts_with("# trackbench: playback"), "{md}");
    assert!(md.contains("| 4K |") && md.contains("```text"), "{md}");
    let again = run.dir.join("again.html");
    tbh()
        .args(["report", "1", "-o"])
        .arg(&again)
        .assert()
        .success()
        .stdout(predicate::str::contains("again.html"));

    let b = match Browser::start() {
        Ok(b) => b,
        Err(why) => return common::missing("chromium", &why),
    };
    check_in_browser(
        &b,
        &page,
        Expect {
            // The headline, three track searches and the sampler's, the load and the export,
            // six latency distributions, the zones curve and the sweep's two.
            charts: 16,
            kinds: &[
                "headline",
                "probes",
                "latency",
                "zones",
                "sweep-rate",
                "sweep-tracks",
                "load",
                "bounce",
            ],
        },
    );
}

/// Reports of every kind of result, old documents among them, and a comparison page.
#[test]
fn reports_of_every_kind_open_in_a_browser_with_every_chart_drawn() {
    let t = tempfile::tempdir().unwrap();
    let render = |src: PathBuf, name: &str| -> PathBuf {
        let out = t.path().join(name);
        tb().args(["report"])
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
        out
    };
    let pages = [
        (
            render(fixture(5, "play.json"), "play.html"),
            Expect {
                charts: 3,
                kinds: &["fill", "latency", "lateness"],
            },
        ),
        (
            render(fixture(5, "hdr.json"), "hdr.html"),
            Expect {
                charts: 3,
                kinds: &["fill", "latency"],
            },
        ),
        (
            render(fixture(5, "play-find-max-sim.json"), "search.html"),
            Expect {
                charts: 2,
                kinds: &["headline", "probes"],
            },
        ),
        (
            render(fixture(5, "sampler.json"), "sampler.html"),
            Expect {
                charts: 4,
                kinds: &["slack", "fill", "latency", "lateness"],
            },
        ),
        (
            render(
                fixture(5, "sampler-find-max-sim.json"),
                "sampler-search.html",
            ),
            Expect {
                charts: 2,
                kinds: &["headline", "probes"],
            },
        ),
        (
            render(fixture(5, "load.json"), "load.html"),
            Expect {
                charts: 1,
                kinds: &["load"],
            },
        ),
        (
            render(fixture(5, "bounce.json"), "bounce.html"),
            Expect {
                charts: 1,
                kinds: &["bounce"],
            },
        ),
        (
            // Schema 1: no real-time section, no histograms; what it has is drawn.
            render(fixture(1, "run.json"), "run-schema-1.html"),
            Expect {
                charts: 3,
                kinds: &["zones", "sweep-rate", "sweep-tracks"],
            },
        ),
        (
            render(fixture(2, "play.json"), "play-schema-2.html"),
            Expect {
                charts: 1,
                kinds: &["fill"],
            },
        ),
    ];
    let compare = t.path().join("compare.html");
    tb().args(["compare", "--unfair", "-o"])
        .arg(&compare)
        .arg(fixture(4, "run.json"))
        .arg(fixture(5, "run.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains("compare.html"));
    let html = std::fs::read_to_string(&compare).unwrap();
    assert!(html.contains("trackbench comparison") && html.contains("(100%)"));
    let b = match Browser::start() {
        Ok(b) => b,
        Err(why) => return common::missing("chromium", &why),
    };
    for (page, expect) in pages {
        check_in_browser(&b, &page, expect);
    }
    check_in_browser(
        &b,
        &compare,
        Expect {
            charts: 5,
            kinds: &["compare"],
        },
    );
}

#[test]
fn report_names_what_it_cannot_use() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("xdg");
    let tbh = || {
        let mut c = tb();
        c.env("XDG_DATA_HOME", &home);
        c
    };
    tbh().args(["report", "7"]).assert().failure().stderr(
        predicate::str::contains("\"7\"").and(predicate::str::contains("trackbench history")),
    );
    let junk = t.path().join("junk.json");
    std::fs::write(&junk, "{}").unwrap();
    tbh()
        .arg("report")
        .arg(&junk)
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "junk.json is not a trackbench result document",
        ));
    tbh()
        .arg("report")
        .arg(fixture(5, "play.json"))
        .arg("-o")
        .arg(t.path())
        .assert()
        .failure()
        .stderr(predicate::str::contains("it is a directory"));
    // Every presenter is a format of `report`; text formats go to standard output.
    tbh()
        .arg("report")
        .arg(fixture(5, "play.json"))
        .args(["--to", "pdf"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "invalid format \"pdf\": one of terminal, json, html, markdown",
        ));
    let out = tbh()
        .arg("report")
        .arg(fixture(3, "play.json"))
        .args(["--to", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 3, "a document is rendered as it is");
    tbh()
        .arg("report")
        .arg(fixture(5, "play.json"))
        .args(["--to", "terminal"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("Real-time playback")
                .and(predicate::str::contains("8 tracks: PASS")),
        );
    // Without -o: a file named for the result, in the current directory.
    tbh()
        .current_dir(t.path())
        .arg("report")
        .arg(fixture(5, "play.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains("trackbench-report-play.html"));
    assert!(t.path().join("trackbench-report-play.html").is_file());
    // A report that cannot be written is refused before anything is measured.
    let d = t.path().join("disk");
    std::fs::create_dir(&d).unwrap();
    let started = std::time::Instant::now();
    tbh()
        .args([
            "seq",
            d.to_str().unwrap(),
            "--size",
            "8M",
            "-q",
            "--report",
            "/nonexistent/r.html",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "cannot hold the report (--report)",
        ));
    assert!(started.elapsed().as_secs() < 5);
    // Any measuring command writes one when asked; the JSON and the report agree.
    let page = t.path().join("seq.html");
    let json = t.path().join("seq.json");
    tbh()
        .args(["seq", d.to_str().unwrap(), "--size", "8M", "-q", "--report"])
        .arg(&page)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(v["sections"][0]["title"].as_str().unwrap()));
    assert!(
        html.contains("data-chart=\"latency\""),
        "classic runs keep their histograms"
    );
    assert!(!d.join("trackbench-data").exists());
}
