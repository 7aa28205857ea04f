//! The computers a session runs on at once: one (a workstation and its disk), or a world of ranks
//! started by an MPI launcher, each a workstation on one shared storage. Rank 0 decides and every
//! rank obeys: the workloads only meet the world through two points — every rank starts its clock
//! together ([`World::start`]) and a search's probe has one verdict, the studio's: the worst of
//! the ranks' own and the storage's, judged on their evidence pooled
//! ([`crate::search::find_max_shared`]). The session runner does the rest (the plan's agreement, the gather).

#[cfg(feature = "mpi")]
pub mod mpi;

use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;

/// The ranks of one run and the collective operations between them. Every rank calls the same
/// operations in the same order; each returns `Err(Error::Interrupted)` when `cancel` is set
/// while it waits (a signal, or a launcher stopping the job because a rank died).
pub trait World {
    /// This process's rank, 0 for the one that decides.
    fn rank(&self) -> u32;
    /// How many ranks there are (1 alone).
    fn size(&self) -> u32;
    /// Every rank's bytes, in rank order. The one collective operation: everything else is made
    /// of it (see [`gather`]), so ranks that went different ways meet in the same operation and
    /// find out, rather than waiting in two different ones for ever.
    fn all_gather(&self, mine: &[u8], cancel: &AtomicBool) -> Result<Vec<Vec<u8>>>;
    /// Returns when every rank has called it with the same `tag`.
    fn barrier(&self, tag: &str, cancel: &AtomicBool) -> Result<()> {
        if self.size() == 1 {
            return Ok(());
        }
        gather(self, tag, &(), cancel).map(|_| ())
    }
    /// A barrier after which every rank starts a measured run (a probe's clock, a transfer):
    /// a world of ranks records when this rank left it, for the start skew in the result.
    fn start(&self, tag: &str, cancel: &AtomicBool) -> Result<()> {
        self.barrier(tag, cancel)
    }
    /// When this rank left each [`World::start`], in nanoseconds of the wall clock.
    fn starts_ns(&self) -> Vec<u64> {
        Vec::new()
    }
    /// What launched the ranks, for the result (`mpirun`, `srun` …); empty alone.
    fn launcher(&self) -> String {
        String::new()
    }
    /// The run was stopped or failed: the other ranks may be gone, so this rank must not wait
    /// for them again, not even to leave the world.
    fn forsake(&self) {}
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
    fn is_alone(&self) -> bool {
        self.size() == 1
    }
}

/// One computer: every collective operation is immediate.
pub struct Alone;

impl World for Alone {
    fn rank(&self) -> u32 {
        0
    }
    fn size(&self) -> u32 {
        1
    }
    fn all_gather(&self, mine: &[u8], _cancel: &AtomicBool) -> Result<Vec<Vec<u8>>> {
        Ok(vec![mine.to_vec()])
    }
}

/// Every rank's `value`, in rank order, from the operation every rank names `tag` (what it is
/// doing: `probe 5`, `start`, …). A rank that names another operation went another way (it
/// failed or stopped): every rank then fails, naming where each was, instead of reading one
/// thing as another.
pub fn gather<T: Serialize + DeserializeOwned, W: World + ?Sized>(
    world: &W,
    tag: &str,
    value: &T,
    cancel: &AtomicBool,
) -> Result<Vec<T>> {
    let bytes = serde_json::to_vec(&(tag, value)).map_err(|e| Error::World {
        detail: format!("cannot encode this rank's part of {tag}: {e}"),
    })?;
    let all = world.all_gather(&bytes, cancel)?;
    let mut out = Vec::with_capacity(all.len());
    for (rank, b) in all.iter().enumerate() {
        let (theirs, v): (String, serde_json::Value) =
            serde_json::from_slice(b).map_err(|e| Error::World {
                detail: format!(
                    "rank {rank} sent what rank {} cannot read: {e}",
                    world.rank()
                ),
            })?;
        if theirs != tag {
            let said = if theirs == ENDED {
                format!(" ({})", v)
            } else {
                String::new()
            };
            return Err(Error::World {
                detail: format!(
                    "rank {rank} was at \"{theirs}\"{said} while rank {} was at \"{tag}\": the ranks went different ways",
                    world.rank()
                ),
            });
        }
        out.push(serde_json::from_value(v).map_err(|e| Error::World {
            detail: format!("rank {rank}'s part of {tag} cannot be read: {e}"),
        })?);
    }
    Ok(out)
}

/// The tag of the exchange after each workload, where ranks say how it ended.
pub const ENDED: &str = "workload ended";

/// How a rank's workload ended, as the others learn it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    Done,
    Interrupted,
    Failed(String),
}

/// Every rank says how its workload ended: a failure anywhere fails every rank (naming the
/// rank), an interruption anywhere interrupts every rank.
pub fn agree_ended(world: &dyn World, mine: Ended, cancel: &AtomicBool) -> Result<Ended> {
    if world.is_alone() {
        return Ok(mine);
    }
    let all = gather(world, ENDED, &mine, cancel)?;
    if let Some((rank, m)) = all.iter().enumerate().find_map(|(i, e)| match e {
        Ended::Failed(m) => Some((i, m)),
        _ => None,
    }) {
        if rank as u32 != world.rank() {
            return Err(Error::RankFailed {
                rank: rank as u32,
                detail: m.clone(),
            });
        }
        return Ok(mine);
    }
    Ok(if all.contains(&Ended::Interrupted) {
        Ended::Interrupted
    } else {
        Ended::Done
    })
}

/// Every rank's `mine`: this rank's value when no rank failed, else the first failure (a rank's
/// own error as it is, another's named by rank). What ranks do between collective operations
/// (opening their data directories) ends here, so a rank that could not do it stops them all
/// rather than leaving them waiting.
pub fn agree_ok<T>(
    world: &dyn World,
    tag: &str,
    mine: Result<T>,
    cancel: &AtomicBool,
) -> Result<T> {
    if world.is_alone() {
        return mine;
    }
    let said: std::result::Result<(), String> = match &mine {
        Ok(_) => Ok(()),
        Err(e) => Err(e.to_string()),
    };
    let all = gather(world, tag, &said, cancel)?;
    if mine.is_ok()
        && let Some((rank, e)) = all
            .iter()
            .enumerate()
            .find_map(|(i, r)| r.as_ref().err().map(|e| (i, e)))
    {
        return Err(Error::RankFailed {
            rank: rank as u32,
            detail: e.clone(),
        });
    }
    mine
}

/// What must be the same on every rank of a studio run: the version, the binary itself and the
/// command (flags, format, profile, target).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanPrint {
    pub version: String,
    /// A hash of the running executable: two builds of one version differ here.
    pub binary: String,
    /// The command line without the program's own path.
    pub args: Vec<String>,
}

impl PlanPrint {
    pub fn of(command: &[String]) -> PlanPrint {
        PlanPrint {
            version: env!("CARGO_PKG_VERSION").to_string(),
            binary: binary_hash(),
            args: command.iter().skip(1).cloned().collect(),
        }
    }
}

/// A hash of the running executable's bytes ("unknown" if it cannot be read).
fn binary_hash() -> String {
    use std::hash::Hasher;
    use std::io::Read;
    let Ok(mut f) = std::env::current_exe().and_then(std::fs::File::open) else {
        return "unknown".into();
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.write(&buf[..n]),
            Err(_) => return "unknown".into(),
        }
    }
    format!("{:016x}", h.finish())
}

/// Rank 0 decides and every rank obeys: every rank's plan is compared with rank 0's, and if any
/// differs every rank refuses, naming the ranks and what differs, before anything is written.
pub fn agree_on_plan(world: &dyn World, mine: &PlanPrint, cancel: &AtomicBool) -> Result<()> {
    if world.is_alone() {
        return Ok(());
    }
    let all = gather(world, "plan", mine, cancel)?;
    let root = &all[0];
    let mut diffs = Vec::new();
    for (rank, p) in all.iter().enumerate().skip(1) {
        if p.version != root.version {
            diffs.push(format!(
                "rank {rank} runs trackbench {} where rank 0 runs {}",
                p.version, root.version
            ));
        } else if p.binary != root.binary {
            diffs.push(format!(
                "rank {rank} runs another build of trackbench {} than rank 0 (the executables differ)",
                p.version
            ));
        }
        if p.args != root.args {
            diffs.push(format!(
                "rank {rank} was given `{}` where rank 0 was given `{}`",
                p.args.join(" "),
                root.args.join(" ")
            ));
        }
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(Error::World {
            detail: format!(
                "{}; every workstation must run the same binary with the same settings (install one build everywhere, give every rank the same command)",
                diffs.join("; ")
            ),
        })
    }
}

/// The least of every rank's `value`: a count all ranks can agree to search from.
pub fn least(world: &dyn World, value: f64, cancel: &AtomicBool) -> Result<f64> {
    if world.is_alone() {
        return Ok(value);
    }
    Ok(gather(world, "least", &value, cancel)?
        .into_iter()
        .fold(f64::INFINITY, f64::min))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alone_every_operation_is_immediate() {
        let c = AtomicBool::new(true);
        assert_eq!(Alone.all_gather(b"x", &c).unwrap(), vec![b"x".to_vec()]);
        Alone.barrier("x", &c).unwrap();
        assert_eq!(least(&Alone, 7.0, &c).unwrap(), 7.0);
    }
}
