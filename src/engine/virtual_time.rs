//! The engine in virtual time: the same loop as a real run (`engine`), against the simulated
//! device (`io::sim`) on a virtual clock, with the audio tick run inline whenever the clock
//! reaches its deadline. Tests assert exact capacities with it; `--device-model` lets a user ask
//! "what if I had this disk".

use super::ring::Ring;
use super::seams::{EarlyEnd, Files, TickDriver, TickReport, TickSide, Timing, Tracks, TracksRun};
use super::shape::{play_file_bytes, record_file_bytes};
use super::stream_loop::{self};
use super::tick::Tick;
use super::{Direction, StreamSpec, Track};
use crate::clock::{Clock, SimClock};
use crate::control::Control;
use crate::error::Result;
use crate::io::device_model::SimBackend;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use crate::io::device_model::{DeviceModel, Disk, MODELS, Stall};

/// Virtual time: the tick runs on the butler's thread, at its deadline on a simulated clock that
/// jumps from event to event.
pub struct Virtual {
    pub clock: Rc<SimClock>,
}

/// The ticks as the butler runs them itself.
struct Inline<'a, T> {
    clock: &'a SimClock,
    spec: &'a StreamSpec,
    side: T,
    /// Where the ticks' time starts.
    t0: u64,
    /// Ticks played.
    k: u64,
    total: u64,
    period_ns: u64,
    cancel: &'a AtomicBool,
    interrupted: bool,
    stopped_early: bool,
}

impl<T: TickSide> TickDriver for Inline<'_, T> {
    fn ticks_done(&self) -> u64 {
        self.k
    }
    fn finished(&self) -> bool {
        self.k >= self.total || self.interrupted || self.stopped_early
    }
    fn deadline(&self) -> Option<u64> {
        Some(self.t0 + self.k * self.period_ns)
    }
    fn step(&mut self) {}
    fn idle(&mut self) {
        self.clock.sleep_until(self.t0 + self.k * self.period_ns);
    }
    fn advance(&mut self, tracks: &[Track]) {
        let due = self.t0 + self.k * self.period_ns;
        if self.clock.now_ns() < due {
            return;
        }
        self.side.run(tracks, due - self.t0);
        self.k += 1;
        if self.spec.stop_early && self.side.cannot_pass(self.spec) {
            self.stopped_early = true;
        } else if self.k.is_multiple_of(1024) && self.cancel.load(Ordering::Relaxed) {
            self.interrupted = true;
        }
    }
    fn abort(&mut self) {
        self.interrupted = true;
    }
    fn end_now(&mut self) {
        self.total = self.total.min(self.k + 1);
    }
}

impl Timing for Virtual {
    type Clock = SimClock;

    fn clock(&self) -> &SimClock {
        &self.clock
    }

    fn run<T: TickSide>(
        &self,
        spec: &StreamSpec,
        _tracks: &[Track],
        side: T,
        ctl: &Control<'_>,
        butler: &mut dyn FnMut(&mut dyn TickDriver) -> Result<()>,
    ) -> Result<(T, TickReport)> {
        let mut d = Inline {
            clock: &self.clock,
            spec,
            side,
            t0: self.clock.now_ns(),
            k: 0,
            total: spec.ticks(),
            period_ns: spec.period_ns(),
            cancel: ctl.cancel,
            interrupted: false,
            stopped_early: false,
        };
        butler(&mut d)?;
        Ok((
            d.side,
            TickReport {
                interrupted: d.interrupted,
                stopped_early: d.stopped_early,
                ..TickReport::default()
            },
        ))
    }
}

/// Runs `spec` against `model` in virtual time, telling `progress` what a live view shows (ring
/// fill over virtual time); `cancel` stops it between events, `early` may end a run that may
/// end early (`StreamSpec::end_early`). Returns what the run measured, for the verdict to judge.
pub fn simulate_watched(
    spec: &StreamSpec,
    model: &DeviceModel,
    cancel: &AtomicBool,
    progress: &dyn crate::control::Progress,
    early: Option<&dyn EarlyEnd>,
) -> Result<TracksRun> {
    spec.validate()?;
    let (tracks, sizes) = simulated_tracks(spec);
    let names: Vec<PathBuf> = (0..sizes.len())
        .map(|i| PathBuf::from(format!("simulated file {i}")))
        .collect();
    let timing = Virtual {
        clock: Rc::new(SimClock::new()),
    };
    let mut backend = SimBackend::new(
        model.clone(),
        Rc::clone(&timing.clock),
        &sizes,
        spec.butler.queue_depth(),
    );
    let mut locate = spec.locate_queue_depth.map(|q| backend.sibling(q as usize));
    let ctl = Control {
        cancel,
        progress,
        world: &crate::studio::Alone,
    };
    let e = stream_loop::run(
        spec,
        &tracks,
        &mut backend,
        locate.as_mut().map(|l| l as &mut dyn crate::io::IoBackend),
        &timing,
        Tick::new(spec.period_bytes(), spec.period_ns(), spec.ticks()),
        &mut Tracks,
        &Files {
            names: &names,
            page_cache: None,
            drop_behind: false,
            rings_ready: None,
        },
        None,
        early,
        &ctl,
    )?;
    Ok(TracksRun::of(&tracks, spec.ring_bytes(), e, true))
}

/// The tracks of `spec`'s run on the simulated device (rings without memory: the device moves no
/// data), each on the file a real run would lay out, end to end on the device: the tracks, and
/// the files' sizes.
fn simulated_tracks(spec: &StreamSpec) -> (Vec<Track>, Vec<u64>) {
    let (cap, chunk) = (spec.ring_bytes(), spec.ring_slot_bytes());
    let lens: Vec<u64> = (0..spec.tracks())
        .map(|i| {
            if i < spec.play_tracks {
                play_file_bytes(spec)
            } else {
                record_file_bytes(spec)
            }
        })
        .collect();
    let sizes = lens.iter().map(|l| crate::audio::DATA_OFFSET + l).collect();
    let tracks = lens
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let dir = if (i as u32) < spec.play_tracks {
                Direction::Play
            } else {
                Direction::Record
            };
            let ring = Ring::new(cap, chunk, false);
            Track::new(
                dir,
                ring,
                i as u32,
                i as u32 + 1,
                crate::audio::DATA_OFFSET,
                len,
            )
        })
        .collect();
    (tracks, sizes)
}
