//! One handler per command: `measure` runs every measuring command (through the library's
//! session) and presents what it reports; `clean`, `history`, `show`, `compare` and `report`
//! read what is stored or left behind. `dispatch` picks the handler, once the process knows
//! the computers it runs on; the browser face runs its commands through `run_for_ui`.

pub mod clean;
pub mod compare;
pub mod history;
pub mod manual;
pub mod measure;
pub mod report;
pub mod show;
pub mod watch;

use crate::browser;
use crate::cli::{Cli, Command, Place, StoreArgs};
use anyhow::{Context, Result, bail};
use clap::Parser;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use trackbench::result::ResultDoc;
use trackbench::store;
use trackbench::studio::{Alone, World};
use trackbench::target;

/// What a measuring command runs with: the cancel flag and the computers running it at once.
pub struct Ctx<'a> {
    pub cancel: &'a AtomicBool,
    pub world: &'a dyn World,
    /// The browser face watching this run (`trackbench ui`), with the command line it stands
    /// for (what the result records).
    pub observer: Option<(&'a dyn browser::Observer, &'a [String])>,
}

/// The world of ranks this process belongs to: an MPI job's when a launcher started it and the
/// command measures (other commands, and the cleaner an interrupted rank starts, never join
/// one); otherwise none, and the command runs alone as it always has.
#[cfg(feature = "mpi")]
type Ranks = trackbench::studio::mpi::MpiWorld;
#[cfg(not(feature = "mpi"))]
type Ranks = Alone;

fn world_for(c: &Command) -> Result<Option<Ranks>> {
    let measures = c.measures();
    #[cfg(feature = "mpi")]
    if measures {
        return trackbench::studio::mpi::MpiWorld::from_launcher()
            .context("joining the MPI job this process was launched into");
    }
    let _ = measures;
    Ok(None)
}

/// Runs the command line's command: `ui` serves the browser face, every other command runs
/// here, with the computers it runs on.
pub fn dispatch(cli: Cli, cancel: &AtomicBool) -> Result<ExitCode> {
    let ranks = world_for(&cli.command)?;
    let world = ranks
        .as_ref()
        .map_or(&Alone as &dyn World, |w| w as &dyn World);
    if let Command::Ui(a) = &cli.command {
        return browser::serve(a, cancel, run_for_ui);
    }
    let ctx = &Ctx {
        cancel,
        world,
        observer: None,
    };
    let done = run_command(cli, ctx);
    // A rank that stops on an error or a signal does not wait for the others to leave.
    if done.is_err() || cancel.load(Ordering::Relaxed) {
        world.forsake();
    }
    done
}

/// A run the browser face started: the command line it built, run as the terminal would run
/// it, with `observer` told what happens.
fn run_for_ui(
    args: &[String],
    cancel: &AtomicBool,
    observer: &dyn browser::Observer,
) -> Result<ExitCode> {
    let cli = Cli::try_parse_from(args)?;
    let ctx = &Ctx {
        cancel,
        world: &Alone,
        observer: Some((observer, args)),
    };
    run_command(cli, ctx)
}

/// Runs one command: a measurement through `measure`, or the handler of a command that reads.
fn run_command(cli: Cli, ctx: &Ctx<'_>) -> Result<ExitCode> {
    match &cli.command {
        Command::Clean(a) => clean::clean(&a.path, a.inherited_lock, a.rank, a.after_exit),
        Command::History(a) => history::history(a),
        Command::Show(a) => show::show(a),
        Command::Compare(a) => compare::compare(a),
        Command::Report(a) => report::report(a),
        Command::Ui(_) => bail!("ui runs no measurement of its own"),
        Command::Completions(a) => manual::completions(a),
        Command::Man(a) => manual::man(a),
        measuring => {
            let place = Place {
                ranks: Some((ctx.world.rank(), ctx.world.size())),
                kind_of: &|p| Ok(target::inspect(p)?.kind),
            };
            let req = measuring
                .request(&place)?
                .context("a measuring command's request")?;
            measure::measure(req, ctx)
        }
    }
}

/// The `--db` a follow-up command needs to find the same store.
pub fn db_flag(s: &StoreArgs) -> String {
    s.db.as_deref()
        .map(|d| format!(" --db {d}"))
        .unwrap_or_default()
}

/// Results named by store ids or result files, with the name each is shown under (`#12`, the
/// file's name); the store is opened once, where an id needs it.
pub fn load_results(names: &[String], db: &StoreArgs) -> Result<Vec<(String, ResultDoc)>> {
    let mut store = None;
    let mut docs = Vec::new();
    for r in names {
        let path = Path::new(r);
        let doc = match r.parse::<i64>() {
            Ok(id) if !path.exists() => {
                let s = match &mut store {
                    Some(s) => s,
                    None => store.insert(store::open(db.db.as_deref())?),
                };
                (format!("#{id}"), s.load(id)?)
            }
            _ => {
                let text = std::fs::read_to_string(path).with_context(|| {
                    format!("{r} is neither a stored result's id nor a readable result document")
                })?;
                let doc: ResultDoc = serde_json::from_str(&text)
                    .with_context(|| format!("{r} is not a trackbench result document"))?;
                let name = path
                    .file_name()
                    .map_or(r.clone(), |n| n.to_string_lossy().into_owned());
                (name, doc)
            }
        };
        docs.push(doc);
    }
    // Two files of the same name are told apart by their paths, as given.
    for i in 0..docs.len() {
        if docs.iter().filter(|d| d.0 == docs[i].0).count() > 1 && !docs[i].0.starts_with('#') {
            docs[i].0 = names[i].clone();
        }
    }
    Ok(docs)
}
