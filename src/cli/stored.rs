//! The flags of the commands that read what is stored or left behind (history, show, compare,
//! report, clean) and of the browser face (ui).

use super::StoreArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, powershell or elvish
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write every command's page (trackbench.1, trackbench-run.1 …) into this folder instead
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct UiArgs {
    /// Port on 127.0.0.1 (0: a free one)
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Do not open the browser; print the address only
    #[arg(long)]
    pub no_open: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct CleanArgs {
    pub path: PathBuf,
    /// Internal: the lock descriptor an interrupted run hands over with its files
    #[arg(long, hide = true, value_name = "FD")]
    pub inherited_lock: Option<i32>,
    /// Internal: with --inherited-lock, the studio rank whose data directory it is
    #[arg(long, hide = true, value_name = "RANK", requires = "inherited_lock")]
    pub rank: Option<u32>,
    /// Internal: with --inherited-lock, a pipe's read end whose writer is the interrupted run:
    /// the files are removed once it reads end of file (that run has exited)
    #[arg(long, hide = true, value_name = "FD", requires = "inherited_lock")]
    pub after_exit: Option<i32>,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Only results whose target path contains this text
    #[arg(long, value_name = "TEXT")]
    pub target: Option<String>,
    /// Only results on a device whose name or model contains this text
    #[arg(long, value_name = "TEXT")]
    pub device: Option<String>,
    /// Only results that ran this workload (seq, play, realtime, …)
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Only results started on or after this date (2026-11-23) or time (RFC 3339)
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// At most N results (0: all)
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub limit: u32,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The result's id (trackbench history lists them)
    pub id: i64,
    #[command(flatten)]
    pub store: StoreArgs,
    /// The result document as JSON instead of tables
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Two or more results: ids from trackbench history, or result documents (--json files)
    #[arg(required = true, num_args = 2.., value_name = "RESULT")]
    pub results: Vec<String>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Compare even where the settings differ (format, ring, chunk or block size, profile, period)
    #[arg(long)]
    pub unfair: bool,
    /// Also write the comparison as an HTML page with charts
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The result: an id from trackbench history, or a result document (--json file)
    #[arg(value_name = "RESULT")]
    pub result: String,
    /// Where to write it ("-" for standard output) [default: trackbench-report-RESULT.html in
    /// the current directory for HTML; standard output for the other formats]
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The format: html, markdown (text for a forum post), terminal or json
    #[arg(long, value_name = "FORMAT", default_value = "html")]
    pub to: String,
    /// Markdown instead of HTML (--to markdown)
    #[arg(long, conflicts_with = "to")]
    pub markdown: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}
