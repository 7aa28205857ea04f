//! The world of an MPI job (`mpirun`, `srun`): every rank a workstation on one shared storage.
//! Collective operations are started non-blocking and polled, so a rank waiting for the others
//! still notices a signal (Ctrl-C on the launcher, or the launcher stopping the job because a rank
//! died) and stops within a second instead of hanging in MPI.

use super::World;
use crate::error::{Error, Result};
use mpi::Count;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use std::mem::ManuallyDrop;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The launcher's variables that say this process is a rank of a job (OpenMPI's mpirun, PMIx,
/// MPICH's hydra and Slurm's PMI): without one of them, MPI is never initialised and the binary
/// behaves exactly as one built without the feature.
const LAUNCHED_BY: [(&str, &str); 4] = [
    ("OMPI_COMM_WORLD_SIZE", "mpirun (Open MPI)"),
    ("PMIX_RANK", "a PMIx launcher"),
    ("PMI_RANK", "a PMI launcher"),
    ("MPI_LOCALNRANKS", "mpiexec (MPICH)"),
];

/// An MPI job's world.
pub struct MpiWorld {
    comm: SimpleCommunicator,
    rank: u32,
    size: u32,
    launcher: String,
    starts: Mutex<Vec<u64>>,
    /// A collective operation was abandoned, or the run was stopped: the other ranks may be gone,
    /// and MPI_Finalize (which waits for them) would hang until the launcher kills this rank,
    /// cleanup and all.
    broken: AtomicBool,
    // Finalises MPI when the world goes, unless it is broken.
    universe: ManuallyDrop<Universe>,
}

impl Drop for MpiWorld {
    fn drop(&mut self) {
        if !self.broken.load(Ordering::Relaxed) {
            // SAFETY: dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.universe) };
        }
    }
}

impl MpiWorld {
    /// The world this process was launched into, or `None` when no launcher started it.
    pub fn from_launcher() -> Result<Option<MpiWorld>> {
        let Some((_, by)) = LAUNCHED_BY
            .iter()
            .find(|(var, _)| std::env::var_os(var).is_some())
        else {
            return Ok(None);
        };
        // Only the thread that initialised MPI calls it: the session's.
        let (universe, _) =
            mpi::initialize_with_threading(mpi::Threading::Funneled).ok_or_else(|| {
                Error::World {
                    detail: format!("started by {by}, but MPI cannot be initialised"),
                }
            })?;
        let comm = universe.world();
        let launcher = if std::env::var_os("SLURM_JOB_ID").is_some() {
            "srun (Slurm)".to_string()
        } else {
            by.to_string()
        };
        Ok(Some(MpiWorld {
            rank: comm.rank() as u32,
            size: comm.size() as u32,
            comm,
            launcher,
            starts: Mutex::new(Vec::new()),
            broken: AtomicBool::new(false),
            universe: ManuallyDrop::new(universe),
        }))
    }
}

/// Polls `req` until it completes, or `cancel` is set: then it is abandoned (its buffers were
/// leaked to it, so MPI may still write them), the world is broken and the wait interrupted.
fn wait<D: ?Sized>(
    mut req: Request<'static, D>,
    cancel: &AtomicBool,
    broken: &AtomicBool,
) -> Result<()> {
    let start = Instant::now();
    loop {
        match req.test() {
            Ok(_) => return Ok(()),
            Err(r) => req = r,
        }
        if cancel.load(Ordering::Relaxed) {
            broken.store(true, Ordering::Relaxed);
            std::mem::forget(req);
            return Err(Error::Interrupted);
        }
        // Finely at first: a barrier before a clock starts is met within microseconds, and the
        // polling step is what the ranks' start skew is made of. Gently after that.
        std::thread::sleep(if start.elapsed() < Duration::from_millis(50) {
            Duration::from_micros(20)
        } else {
            Duration::from_millis(1)
        });
    }
}

/// A buffer handed to MPI for a non-blocking operation: it must outlive the request, which an
/// abandoned request never completes, so it is leaked to it and taken back only once the
/// request has completed.
struct Lent<T: ?Sized>(*mut T);

impl<T: ?Sized> Lent<T> {
    fn new(b: Box<T>) -> Self {
        Lent(Box::into_raw(b))
    }
    /// SAFETY: the pointer came from `Box::into_raw` and is not yet taken back; the reference is
    /// used for one request only, and `take` is called only after that request completed.
    unsafe fn lend(&self) -> &'static mut T {
        unsafe { &mut *self.0 }
    }
    /// SAFETY: as for `lend`: the request that used the buffer has completed.
    unsafe fn take(self) -> Box<T> {
        unsafe { Box::from_raw(self.0) }
    }
}

impl World for MpiWorld {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn size(&self) -> u32 {
        self.size
    }
    fn launcher(&self) -> String {
        self.launcher.clone()
    }

    fn forsake(&self) {
        self.broken.store(true, Ordering::Relaxed);
    }

    fn start(&self, tag: &str, cancel: &AtomicBool) -> Result<()> {
        self.barrier(tag, cancel)?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        if let Ok(mut s) = self.starts.lock() {
            s.push(now);
        }
        Ok(())
    }

    fn starts_ns(&self) -> Vec<u64> {
        self.starts.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn all_gather(&self, mine: &[u8], cancel: &AtomicBool) -> Result<Vec<Vec<u8>>> {
        let n = self.size as usize;
        let too_big = || Error::World {
            detail: format!(
                "{} bytes to share from rank {}: more than MPI counts in one message",
                mine.len(),
                self.rank
            ),
        };
        let my_len = Count::try_from(mine.len()).map_err(|_| too_big())?;
        // First every rank's length, then the bytes.
        let len = Lent::new(Box::new(my_len));
        let lens = Lent::new(vec![0 as Count; n].into_boxed_slice());
        // SAFETY: each buffer is lent to this one request and taken back after it completed.
        let req = unsafe {
            self.comm
                .immediate_all_gather_into(StaticScope, len.lend(), lens.lend())
        };
        wait(req, cancel, &self.broken)?;
        // SAFETY: the request completed.
        let (_, lens) = unsafe { (len.take(), lens.take()) };
        let mut displs = Vec::with_capacity(n);
        let mut total: Count = 0;
        for &l in lens.iter() {
            displs.push(total);
            total = total.checked_add(l).ok_or_else(too_big)?;
        }
        let send = Lent::new(mine.to_vec().into_boxed_slice());
        let recv = Lent::new(vec![0u8; total as usize].into_boxed_slice());
        // SAFETY: as above; the partition borrows the receive buffer for this request only.
        let part = Lent::new(Box::new(unsafe {
            PartitionMut::new(recv.lend(), lens.to_vec(), displs.clone())
        }));
        let req = unsafe {
            self.comm
                .immediate_all_gather_varcount_into(StaticScope, send.lend(), part.lend())
        };
        wait(req, cancel, &self.broken)?;
        // SAFETY: the request completed; the partition goes before the buffer it borrowed.
        let recv = unsafe {
            drop(part.take());
            drop(send.take());
            recv.take()
        };
        Ok(lens
            .iter()
            .zip(&displs)
            .map(|(&l, &d)| recv[d as usize..(d + l) as usize].to_vec())
            .collect())
    }
}
