//! Result documents written by earlier trackbench versions, one set per schema version
//! (tests/fixtures/schema-N: made by the build that last wrote schema N, see docs/result-schema.md),
//! still load and render in every format.

use std::path::PathBuf;
use trackbench::present::{self, PRESENTERS};
use trackbench::result::{Detail, ResultDoc};

fn fixtures() -> Vec<(PathBuf, ResultDoc)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for v in 1..=trackbench::result::SCHEMA_VERSION {
        let dir = root.join(format!("schema-{v}"));
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("no fixtures for schema {v} in {}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .collect();
        names.sort();
        assert!(!names.is_empty(), "no fixtures for schema {v}");
        for p in names {
            let text = std::fs::read_to_string(&p).unwrap();
            let doc: ResultDoc = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} does not load: {e}", p.display()));
            assert_eq!(doc.schema_version, v, "{}", p.display());
            out.push((p, doc));
        }
    }
    out
}

#[test]
fn every_schema_versions_documents_load_with_their_detail() {
    for (p, doc) in fixtures() {
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(!doc.sections.is_empty(), "{}", p.display());
        for s in &doc.sections {
            assert!(!s.rows.is_empty(), "{}: {}", p.display(), s.workload);
            let detail = s.detail.as_ref();
            match (name, s.workload.as_str()) {
                ("play.json" | "hdr.json", _) => assert!(
                    matches!(detail, Some(Detail::Stream(o)) if !o.fill.is_empty()),
                    "{}: a streaming run keeps its telemetry",
                    p.display()
                ),
                ("sampler.json", _) => assert!(
                    matches!(detail, Some(Detail::Sampler(o)) if o.notes > 0 && !o.fill.is_empty()),
                    "{}: a sampler run keeps its telemetry",
                    p.display()
                ),
                ("play-find-max-sim.json" | "sampler-find-max-sim.json", _) => assert!(
                    matches!(detail, Some(Detail::Search(d)) if !d.searches[0].capacity.probes.is_empty()),
                    "{}: a search keeps its probes",
                    p.display()
                ),
                ("play-find-max-studio.json", _) => {
                    assert!(
                        matches!(detail, Some(Detail::Search(d))
                            if d.searches[0].capacity.probes.iter().all(|p| p.ranks.len() == 3)),
                        "{}: a studio's probes keep what each rank saw",
                        p.display()
                    );
                    let st = doc.studio.as_ref().expect("a studio run says so");
                    assert_eq!((st.ranks, st.hosts.len()), (3, 3), "{}", p.display());
                }
                (_, "realtime") => assert!(
                    matches!(detail, Some(Detail::RealTime(r)) if r.play.as_ref().is_some_and(|p| p.search.is_some())),
                    "{}: run's searches are kept",
                    p.display()
                ),
                _ => {}
            }
        }
    }
}

#[test]
fn every_schema_versions_documents_render_in_every_format() {
    for (p, doc) in fixtures() {
        for presenter in PRESENTERS {
            let text = presenter
                .render(&doc)
                .unwrap_or_else(|e| panic!("{} as {}: {e}", p.display(), presenter.name()));
            for s in &doc.sections {
                assert!(
                    presenter.name() == "json" || text.contains(&s.title.replace('&', "&amp;")),
                    "{} as {} lacks {}",
                    p.display(),
                    presenter.name(),
                    s.title
                );
            }
        }
        if doc.studio.is_some() {
            for presenter in PRESENTERS.iter().filter(|p| p.name() != "json") {
                let text = presenter.render(&doc).unwrap();
                assert!(
                    text.contains("3 workstations × 48 tracks = 144 tracks at once"),
                    "{} as {} lacks the studio's answer",
                    p.display(),
                    presenter.name()
                );
            }
        }
        // A run's summary needs the audio format: recorded since schema 5, found in the
        // real-time section's settings before.
        if doc.is_suite() && doc.sections.iter().any(|s| s.workload == "realtime") {
            let summary = present::summary::summary(&doc).unwrap_or_default();
            assert!(
                summary.contains("This folder plays"),
                "{}: {summary}",
                p.display()
            );
        }
    }
}
