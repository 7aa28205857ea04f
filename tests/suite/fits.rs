//! Every command's default output as a musician meets it in a terminal 100 columns wide, and
//! 80: no line longer than the terminal, and a count of tracks or voices said first in words.
//! `--wide` keeps every column and explanation whole.

use assert_cmd::Command;
use std::path::Path;

/// The binary with its store in `home`, at `columns` columns.
fn tb_at(home: &Path, columns: usize) -> Command {
    let mut c = Command::cargo_bin("trackbench").expect("binary built");
    c.env("XDG_DATA_HOME", home)
        .env("COLUMNS", columns.to_string());
    c
}

/// Runs `args` at `columns`, asserts it succeeded and fits, and returns what it printed.
fn fitted(home: &Path, columns: usize, args: &[&str]) -> String {
    let out = tb_at(home, columns).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in text.lines() {
        assert!(
            line.chars().count() <= columns,
            "{args:?} at {columns} columns printed a line of {}:\n{line}\n\n{text}",
            line.chars().count()
        );
    }
    text
}

/// The counting commands: their answer comes first, in words, before the table.
#[test]
fn every_counting_command_fits_and_answers_first_in_words() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().to_str().unwrap();
    let home = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["play", p, "--find-max", "--device-model", "bw=200M,lat=2ms"],
            "The simulated device (bw=200M,lat=2ms) plays 555 mono tracks of 48 kHz/24-bit at once",
        ),
        (
            &[
                "record",
                p,
                "--find-max",
                "--device-model",
                "bw=150M,lat=1ms",
            ],
            "The simulated device (bw=150M,lat=1ms) records ",
        ),
        (
            &["hdr", p, "--find-max", "--device-model", "bw=120M,lat=2ms"],
            " while recording ",
        ),
        (
            &[
                "sampler",
                p,
                "--find-max",
                "--device-model",
                "nvme",
                "--files",
                "100",
                "--max-voices",
                "300",
            ],
            "streams ",
        ),
        (
            &["play", p, "--tracks", "6", "--duration", "2s"],
            "This folder played 6 mono tracks of 48 kHz/24-bit",
        ),
        (
            &[
                "sampler",
                p,
                "--voices",
                "10",
                "--files",
                "40",
                "--lengths",
                "1s..2s",
                "--duration",
                "2s",
            ],
            "This folder streamed 10 stereo voices of 48 kHz/24-bit",
        ),
    ];
    for (i, (args, answer)) in cases.iter().enumerate() {
        let columns = if i % 2 == 0 { 100 } else { 80 };
        let text = fitted(home.path(), columns, args);
        let words = text.replace("\n  ", " ");
        assert!(words.contains(answer), "{args:?}: {answer:?} in\n{text}");
        // The answer, what it depends on and how sure it is come before the table.
        let table = text.find('┌').unwrap();
        for first in ["depends on: ", "how sure: "] {
            assert!(
                text.find(first).is_some_and(|at| at < table),
                "{args:?}: {first:?} before the table:\n{text}"
            );
        }
        assert!(!text.contains(" 0 tracks"), "{text}");
    }
    // A simulated device is the target, never the folder's disk.
    let sim = fitted(home.path(), 80, &["show", "1"]);
    assert!(
        sim.starts_with("target: simulated device bw=200M,lat=2ms"),
        "{sim}"
    );
    assert!(!sim.contains("free"), "nothing of the folder's disk: {sim}");
    let history = fitted(home.path(), 100, &["history"]);
    assert!(history.contains("simulated: bw=200M,lat=2ms"), "{history}");
    // The report's first screen: the answer as a card, before any section's tables.
    let out = tempfile::tempdir().unwrap();
    let r = out.path().join("r.html");
    fitted(home.path(), 80, &["report", "1", "-o", r.to_str().unwrap()]);
    let html = std::fs::read_to_string(&r).unwrap();
    let card = html.find("<div class=\"card\">").expect("an answer card");
    let first_section = html.find("<section id=\"s0\">").unwrap();
    assert!(card < first_section, "the card comes first");
    let first = &html[card..first_section];
    assert!(
        first.contains("The simulated device (bw=200M,lat=2ms) plays 555 mono tracks")
            && first.contains("Depends on: ")
            && first.contains("How sure: ")
            && first.contains("How this was measured"),
        "{first}"
    );
    // --wide keeps the whole rule and every column.
    let wide = tb_at(home.path(), 80)
        .args(["show", "1", "--wide"])
        .output()
        .unwrap();
    let wide = String::from_utf8_lossy(&wide.stdout);
    assert!(
        wide.contains("each probe ran up to") && wide.contains("probes"),
        "{wide}"
    );
    assert!(wide.lines().any(|l| l.chars().count() > 100), "{wide}");
}

/// The classic commands and the stored ones.
#[test]
fn every_other_command_fits_at_100_and_80_columns() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().to_str().unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("r.html");
    let cases: [&[&str]; 10] = [
        &["seq", p, "--size", "8M"],
        &["watch", p, "--only", "seq"],
        &["seek", p, "--duration", "200ms", "--size", "8M"],
        &["access", p, "--duration", "200ms", "--size", "8M"],
        &["mix", p, "--duration", "200ms", "--size", "8M"],
        &[
            "zones",
            p,
            "--points",
            "4",
            "--size",
            "8M",
            "--duration",
            "100ms",
        ],
        &[
            "sweep",
            p,
            "--files",
            "2",
            "--blocks",
            "4K,64K,1M",
            "--duration",
            "200ms",
        ],
        &["load", p, "--files", "20", "--lengths", "1s..2s"],
        &["bounce", p, "--tracks", "4", "--duration", "2s"],
        &["clean", p],
    ];
    for (i, args) in cases.iter().enumerate() {
        fitted(home.path(), if i % 2 == 0 { 80 } else { 100 }, args);
    }
    for columns in [100, 80] {
        fitted(home.path(), columns, &["history"]);
        fitted(home.path(), columns, &["show", "1"]);
        fitted(home.path(), columns, &["compare", "1", "1"]);
        fitted(
            home.path(),
            columns,
            &["report", "2", "-o", report.to_str().unwrap()],
        );
        fitted(home.path(), columns, &["--help"]);
        fitted(home.path(), columns, &["play", "--help"]);
        fitted(home.path(), columns, &["watch", "--help"]);
    }
}
