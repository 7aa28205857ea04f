//! `report`: one result as a self-contained HTML file with charts, or as Markdown, terminal
//! text or JSON.

use super::load_results;
use crate::cli::ReportArgs;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use trackbench::present;
use trackbench::present::output::Output;

/// Renders the result `a` names with the presenter it asks for.
pub fn report(a: &ReportArgs) -> Result<ExitCode> {
    let name = if a.markdown {
        "markdown"
    } else {
        a.to.as_str()
    };
    let presenter = present::presenter(name).ok_or_else(|| {
        let names: Vec<_> = present::PRESENTERS.iter().map(|p| p.name()).collect();
        anyhow::anyhow!("invalid format {name:?}: one of {}", names.join(", "))
    })?;
    let html = presenter.name() == "html";
    let out = match &a.output {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) => Some(Output::prepare(p, "the report (--output)")?),
        // An HTML page is a file to open; text goes to the terminal.
        None if !html => None,
        None => {
            let stem = Path::new(&a.result)
                .file_stem()
                .map_or(a.result.clone(), |s| s.to_string_lossy().into_owned());
            let p = PathBuf::from(format!(
                "trackbench-report-{stem}.{}",
                presenter.extension()
            ));
            Some(Output::prepare(&p, "the report").context("name another place with -o FILE")?)
        }
    };
    let (_, doc) = load_results(std::slice::from_ref(&a.result), &a.store)?
        .pop()
        .context("one result loaded")?;
    // A stored result's page shows the disk's series over its earlier runs.
    let stored_id = a
        .result
        .parse::<i64>()
        .ok()
        .filter(|_| html && !Path::new(&a.result).exists());
    let text = match stored_id {
        Some(id) => {
            let mut s = trackbench::store::open(a.store.db.as_deref())?;
            trackbench::watch::series::report_with_history(s.as_mut(), &doc, id)?
        }
        None => presenter.render(&doc)?,
    };
    match out {
        None => print!("{text}"),
        Some(o) => {
            o.write(&text)?;
            println!(
                "report: {} ({})",
                o.path().display(),
                if html {
                    "one HTML file with charts; open it in a browser"
                } else {
                    presenter.name()
                }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
