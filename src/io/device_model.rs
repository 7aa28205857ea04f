//! The simulated device, as an I/O backend: a bandwidth, an IOPS limit, a per-request latency
//! (which overlaps when requests are queued), optionally a disk's seek and rotation, and
//! optionally one stalled request. Requests take the time the model says on a virtual clock
//! shared with whoever waits for them, so the engine that streams from real disks runs unchanged
//! in virtual time: tests assert exact capacities, and users ask "what if I had this disk".

use super::{Completion, IoBackend, Op};
use crate::clock::{Clock, SimClock};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::rc::Rc;

/// A spinning disk's mechanics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disk {
    pub rpm: u32,
    /// Seek across the whole surface.
    pub full_stroke_ms: f64,
    /// Seek to the next track.
    pub track_to_track_ms: f64,
    /// Bytes over which a full stroke is spread.
    pub span_bytes: u64,
}

impl Disk {
    /// Seek time for a head movement of `distance` bytes: track-to-track plus the square-root
    /// growth real actuators show, reaching the full stroke across the span.
    pub fn seek_ns(&self, distance: u64) -> u64 {
        if distance == 0 {
            return 0;
        }
        let frac = (distance as f64 / self.span_bytes as f64).min(1.0);
        let ms =
            self.track_to_track_ms + (self.full_stroke_ms - self.track_to_track_ms) * frac.sqrt();
        (ms * 1e6) as u64
    }
    /// Half a revolution on average.
    pub fn rotation_ns(&self) -> u64 {
        30_000_000_000 / u64::from(self.rpm)
    }
}

/// One request held up for a while: the device does nothing else meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stall {
    /// The request in service at this time (or the first to start after it) stalls.
    pub at_ns: u64,
    pub duration_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceModel {
    pub name: String,
    /// Sustained transfer rate; `None` for no limit.
    pub bandwidth_bytes_per_s: Option<f64>,
    /// Requests per second at most; `None` for no limit.
    pub iops: Option<f64>,
    /// Time from the device finishing a request to its completion being seen; overlaps with
    /// the next request when several are queued.
    pub latency_ns: u64,
    pub disk: Option<Disk>,
    pub stall: Option<Stall>,
    /// Shared storage (`nas:…`): the workstations it serves at once, each as busy as the one
    /// simulated, so each gets its share of the storage's rate and IOPS. 1 for a local device.
    #[serde(default = "one_client")]
    pub clients: u32,
    /// Shared storage: each workstation's own link to it (bytes per second), which caps that
    /// workstation whatever the storage has to spare.
    #[serde(default)]
    pub link_bytes_per_s: Option<f64>,
}

fn one_client() -> u32 {
    1
}

/// The named models `--device-model` knows, with a line for `--help`.
pub const MODELS: [(&str, &str); 4] = [
    (
        "hdd-7200",
        "7200 rpm disk: 160 MB/s, 18 ms full stroke, 1 ms track to track",
    ),
    (
        "hdd-5400",
        "5400 rpm laptop disk: 110 MB/s, 22 ms full stroke",
    ),
    ("sata-ssd", "SATA SSD: 530 MB/s, 90k IOPS, 70 µs"),
    ("nvme", "NVMe SSD: 3.2 GB/s, 600k IOPS, 20 µs"),
];

const MODEL_HELP: &str = "hdd-7200, hdd-5400, sata-ssd, nvme, or key=value pairs: \
bw=BYTES/s (e.g. 200M), iops=N, lat=TIME, rpm=N, seek=TIME (full stroke), track=TIME, stall=AT+LEN (e.g. 10s+3s); \
shared storage: nas:bw=BYTES/s,link=BYTES/s (or 10Gbit),clients=N (1 to 100000)[,iops=N,lat=TIME]";

impl DeviceModel {
    /// A named model, or a custom one from `key=value,...`; a name may be followed by overrides.
    pub fn parse(s: &str) -> Result<DeviceModel> {
        let bad =
            |why: String| Error::invalid("device model", s, format!("{why}; valid: {MODEL_HELP}"));
        // Shared storage: the keys after "nas:", and a count of clients that must be said.
        let nas = s.trim_start().strip_prefix("nas:");
        let keys = nas.unwrap_or(s);
        let mut m = DeviceModel::unlimited(s);
        for (i, part) in keys.split(',').map(str::trim).enumerate() {
            match part.split_once('=') {
                None if i == 0 && nas.is_none() => {
                    m = DeviceModel::named(s, part)
                        .ok_or_else(|| bad(format!("unknown model {part:?}")))?
                }
                None => return Err(bad(format!("{part:?} is not key=value"))),
                Some((k, v)) => m.set(k, v, nas.is_some()).map_err(bad)?,
            }
        }
        if m.bandwidth_bytes_per_s.is_none() && m.iops.is_none() && m.disk.is_none() {
            return Err(bad("the model needs a limit (bw, iops or a disk)".into()));
        }
        if nas.is_some() && !keys.split(',').any(|p| p.trim().starts_with("clients=")) {
            return Err(bad("shared storage needs its clients (clients=N)".into()));
        }
        Ok(m)
    }

    /// A model called `name` with no limit yet.
    fn unlimited(name: &str) -> DeviceModel {
        DeviceModel {
            name: name.to_string(),
            bandwidth_bytes_per_s: None,
            iops: None,
            latency_ns: 0,
            disk: None,
            stall: None,
            clients: 1,
            link_bytes_per_s: None,
        }
    }

    /// The model `named` (`hdd-7200`, `hdd-5400`, `sata-ssd`, `nvme`), called `name`.
    fn named(name: &str, named: &str) -> Option<DeviceModel> {
        let m = DeviceModel::unlimited(name);
        let hdd = |bw: f64, rpm: u32, full: f64, t2t: f64| DeviceModel {
            bandwidth_bytes_per_s: Some(bw),
            disk: Some(Disk {
                rpm,
                full_stroke_ms: full,
                track_to_track_ms: t2t,
                span_bytes: 2_000_000_000_000,
            }),
            ..DeviceModel::unlimited(name)
        };
        Some(match named {
            "hdd-7200" => hdd(160e6, 7200, 18.0, 1.0),
            "hdd-5400" => hdd(110e6, 5400, 22.0, 1.5),
            "sata-ssd" => DeviceModel {
                bandwidth_bytes_per_s: Some(530e6),
                iops: Some(90_000.0),
                latency_ns: 70_000,
                ..m
            },
            "nvme" => DeviceModel {
                bandwidth_bytes_per_s: Some(3.2e9),
                iops: Some(600_000.0),
                latency_ns: 20_000,
                ..m
            },
            _ => return None,
        })
    }

    /// Sets `key` to `v` (of shared storage where `shared`), or says why it cannot.
    fn set(&mut self, k: &str, v: &str, shared: bool) -> std::result::Result<(), String> {
        let dur = |v: &str| {
            crate::units::parse_duration("device model time", v)
                .map_err(|_| format!("{v:?} is not a time"))
        };
        match k {
            "bw" => {
                let b = crate::units::parse_size("bandwidth", v)
                    .map_err(|_| format!("{v:?} is not a size"))?;
                if b == 0 {
                    return Err("bw must be above 0".into());
                }
                self.bandwidth_bytes_per_s = Some(b as f64);
            }
            "clients" | "link" if !shared => {
                return Err(format!(
                    "{k} describes shared storage: write the model as nas:bw=…,link=…,clients=…"
                ));
            }
            "clients" => {
                self.clients = v
                    .parse()
                    .ok()
                    .filter(|c| (1..=100_000).contains(c))
                    .ok_or_else(|| format!("clients {v:?} must be 1 to 100000"))?
            }
            "link" => {
                let b = link_rate(v)
                    .ok_or_else(|| format!("link {v:?} is not a rate (e.g. 1G, 118M or 10Gbit)"))?;
                self.link_bytes_per_s = Some(b);
            }
            "iops" => match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x.is_finite() => self.iops = Some(x),
                _ => return Err(format!("iops {v:?} must be a positive number")),
            },
            "lat" => self.latency_ns = dur(v)?.as_nanos() as u64,
            "rpm" | "seek" | "track" => {
                let d = self.disk.get_or_insert(Disk {
                    rpm: 7200,
                    full_stroke_ms: 18.0,
                    track_to_track_ms: 1.0,
                    span_bytes: 2_000_000_000_000,
                });
                match k {
                    "rpm" => {
                        d.rpm = v
                            .parse()
                            .ok()
                            .filter(|r| (1000..=30_000).contains(r))
                            .ok_or_else(|| format!("rpm {v:?} must be 1000..30000"))?
                    }
                    "seek" => d.full_stroke_ms = dur(v)?.as_secs_f64() * 1e3,
                    _ => d.track_to_track_ms = dur(v)?.as_secs_f64() * 1e3,
                }
            }
            "stall" => {
                let (a, l) = v
                    .split_once('+')
                    .ok_or_else(|| format!("stall {v:?} must be AT+LEN"))?;
                self.stall = Some(Stall {
                    at_ns: dur(a)?.as_nanos() as u64,
                    duration_ns: dur(l)?.as_nanos() as u64,
                });
            }
            _ => return Err(format!("unknown key {k:?}")),
        }
        Ok(())
    }

    /// Shared storage whose workstations are each held back by their own link rather than by
    /// their share of the storage.
    pub fn link_binds(&self) -> bool {
        match (self.bandwidth_bytes_per_s, self.link_bytes_per_s) {
            (Some(b), Some(l)) => l < b / f64::from(self.clients.max(1)),
            (None, Some(_)) => true,
            _ => false,
        }
    }

    /// What one workstation can count on: its share of the storage (the model's rate and IOPS
    /// divided among the clients, all as busy as this one, served in turn), capped by its own
    /// link.
    fn per_client(&self) -> (Option<f64>, Option<f64>) {
        let n = f64::from(self.clients.max(1));
        let share = self.bandwidth_bytes_per_s.map(|b| b / n);
        let bw = match (share, self.link_bytes_per_s) {
            (Some(s), Some(l)) => Some(s.min(l)),
            (s, l) => s.or(l),
        };
        (bw, self.iops.map(|i| i / n))
    }

    /// How long the device is busy with one request of `len` bytes after a head movement of
    /// `distance` bytes (`None`: sequential, no movement).
    pub fn occupancy_ns(&self, len: u64, distance: Option<u64>) -> u64 {
        let (bw, iops) = self.per_client();
        let transfer = bw.map_or(0.0, |bw| len as f64 / bw * 1e9);
        let per_op = iops.map_or(0.0, |i| 1e9 / i);
        let mut ns = transfer.max(per_op) as u64;
        if let (Some(d), Some(dist)) = (&self.disk, distance) {
            ns += d.seek_ns(dist) + d.rotation_ns();
        }
        ns
    }
}

/// A link's rate in bytes per second: a size per second (`1G`, `118M`) or bits (`10Gbit`,
/// `1Gbit`, `100Mbit`).
fn link_rate(v: &str) -> Option<f64> {
    let lower = v.to_ascii_lowercase();
    let (num, bits) = match lower.strip_suffix("bit") {
        Some(n) => (n.to_string(), true),
        None => (v.to_string(), false),
    };
    if bits {
        let (digits, scale) = match num.chars().last()? {
            'k' => (&num[..num.len() - 1], 1e3),
            'm' => (&num[..num.len() - 1], 1e6),
            'g' => (&num[..num.len() - 1], 1e9),
            't' => (&num[..num.len() - 1], 1e12),
            _ => (&num[..], 1.0),
        };
        let x: f64 = digits.parse().ok()?;
        return (x > 0.0 && x.is_finite()).then_some(x * scale / 8.0);
    }
    crate::units::parse_size("link", &num)
        .ok()
        .filter(|&b| b > 0)
        .map(|b| b as f64)
}

/// The device: one request in service at a time, first come first served.
pub struct SimDevice {
    model: DeviceModel,
    busy_until: u64,
    head: u64,
    stalled: bool,
}

impl SimDevice {
    pub fn new(model: DeviceModel) -> SimDevice {
        SimDevice {
            model,
            busy_until: 0,
            head: 0,
            stalled: false,
        }
    }

    /// Queues a request at `now`; returns when its completion will be seen.
    pub fn submit(&mut self, now: u64, pos: u64, len: u64) -> u64 {
        let start = now.max(self.busy_until);
        let distance = (pos != self.head).then(|| pos.abs_diff(self.head));
        let mut occ = self.model.occupancy_ns(len, distance);
        if let Some(s) = self.model.stall
            && !self.stalled
            && start + occ > s.at_ns
        {
            occ += s.duration_ns;
            self.stalled = true;
        }
        self.head = pos + len;
        self.busy_until = start + occ;
        self.busy_until + self.model.latency_ns
    }
}

/// A simulated device seen through the backend interface: files laid end to end on it, requests
/// served first come first served, completions seen when the model says, on the shared clock.
/// It moves no data: rings in simulation keep only their counters.
pub struct SimBackend {
    device: Rc<RefCell<SimDevice>>,
    clock: Rc<SimClock>,
    /// Where each file's first byte lies on the device.
    bases: Rc<[u64]>,
    queue_depth: usize,
    /// Requests in flight: when each completes, and its slot.
    pending: BinaryHeap<Reverse<(u64, u32)>>,
    /// Each slot's request length, its result when it completes.
    lens: Vec<u32>,
}

impl SimBackend {
    /// A device of `model` holding files of `file_bytes` each, one after the other, served
    /// `queue_depth` requests at a time, on `clock`.
    pub fn new(
        model: DeviceModel,
        clock: Rc<SimClock>,
        file_bytes: &[u64],
        queue_depth: usize,
    ) -> SimBackend {
        let mut base = 0;
        let bases: Vec<u64> = file_bytes
            .iter()
            .map(|len| {
                let b = base;
                base += len;
                b
            })
            .collect();
        SimBackend {
            device: Rc::new(RefCell::new(SimDevice::new(model))),
            clock,
            bases: bases.into(),
            queue_depth: queue_depth.max(1),
            pending: BinaryHeap::with_capacity(queue_depth),
            lens: vec![0; queue_depth.max(1)],
        }
    }

    /// Another way into the same device and files (a deeper queue for the locate).
    pub fn sibling(&self, queue_depth: usize) -> SimBackend {
        SimBackend {
            device: Rc::clone(&self.device),
            clock: Rc::clone(&self.clock),
            bases: Rc::clone(&self.bases),
            queue_depth: queue_depth.max(1),
            pending: BinaryHeap::with_capacity(queue_depth),
            lens: vec![0; queue_depth.max(1)],
        }
    }

    /// Sees the earliest completion: the clock moves to it.
    fn pop(&mut self, out: &mut Vec<Completion>) {
        if let Some(Reverse((t, slot))) = self.pending.pop() {
            self.clock.sleep_until(t);
            out.push(Completion {
                slot,
                result: i64::from(self.lens[slot as usize]),
            });
        }
    }
}

impl IoBackend for SimBackend {
    fn name(&self) -> &'static str {
        "simulated device"
    }
    fn queue_depth(&self) -> usize {
        self.queue_depth
    }
    fn slot(&self, _slot: u32) -> &[u8] {
        &[]
    }
    fn slot_mut(&mut self, _slot: u32) -> &mut [u8] {
        &mut []
    }
    fn submit(&mut self, op: Op) -> Result<()> {
        let base = *self.bases.get(op.file as usize).ok_or_else(|| {
            Error::invalid(
                "simulated file",
                op.file,
                "a file the backend was built with",
            )
        })?;
        let done = self.device.borrow_mut().submit(
            self.clock.now_ns(),
            base + op.offset,
            u64::from(op.len),
        );
        self.lens[op.slot as usize] = op.len;
        self.pending.push(Reverse((done, op.slot)));
        Ok(())
    }
    /// The earliest `min` completions (at least one), the clock moving to each.
    fn complete(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<()> {
        for _ in 0..min.max(1) {
            self.pop(out);
        }
        Ok(())
    }
    /// The earliest completion if it comes by `deadline_ns` (the clock moves to it), else none
    /// (the clock moves to the deadline): one event at a time, so the engine plans again after
    /// each.
    fn complete_by(&mut self, deadline_ns: Option<u64>, out: &mut Vec<Completion>) -> Result<()> {
        match (self.pending.peek(), deadline_ns) {
            (Some(Reverse((t, _))), Some(d)) if *t > d => self.clock.sleep_until(d),
            (None, Some(d)) => self.clock.sleep_until(d),
            _ => self.pop(out),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::OpKind;

    fn op(file: u32, offset: u64, len: u32, slot: u32) -> Op {
        Op {
            kind: OpKind::Read,
            file,
            offset,
            len,
            slot,
            external: std::ptr::null_mut(),
        }
    }

    #[test]
    fn requests_take_the_models_time_on_the_shared_clock() {
        let clock = Rc::new(SimClock::new());
        // 1 MB/s and 1 ms of latency: 1000 bytes take 1 ms, seen 1 ms later.
        let m = DeviceModel::parse("bw=1000000,lat=1ms").unwrap();
        let mut b = SimBackend::new(m, Rc::clone(&clock), &[4096, 4096], 2);
        b.submit(op(0, 0, 1000, 0)).unwrap();
        b.submit(op(1, 0, 1000, 1)).unwrap();
        let mut out = vec![];
        // The first completes at 2 ms: not by 1.5 ms, when the clock stops.
        b.complete_by(Some(1_500_000), &mut out).unwrap();
        assert!(out.is_empty());
        assert_eq!(clock.now_ns(), 1_500_000);
        b.complete_by(Some(10_000_000), &mut out).unwrap();
        assert_eq!(
            out,
            [Completion {
                slot: 0,
                result: 1000
            }]
        );
        assert_eq!(clock.now_ns(), 2_000_000);
        // The second was queued behind it: served from 1 ms to 2 ms, seen at 3 ms.
        b.complete(1, &mut out).unwrap();
        assert_eq!(out[1].slot, 1);
        assert_eq!(clock.now_ns(), 3_000_000);
        // A sibling shares the device, idle now: 1 ms of service and 1 ms of latency.
        let mut s = b.sibling(8);
        s.submit(op(0, 1000, 1000, 5)).unwrap();
        out.clear();
        s.complete(1, &mut out).unwrap();
        assert_eq!(clock.now_ns(), 5_000_000);
        assert!(s.submit(op(7, 0, 1, 0)).is_err(), "no such file");
    }
}
