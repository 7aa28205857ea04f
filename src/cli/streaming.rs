//! The real-time streaming commands' flags (play, record, hdr): the program's profile and
//! what may change in it, the counts, the search, and a studio rank's part.

use super::{Common, duration};
use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use trackbench::audio::Format;
use trackbench::engine::virtual_time::DeviceModel;
use trackbench::engine::{ButlerMode, Policy, StreamSpec};
use trackbench::units::parse_size;
use trackbench::workloads::multitrack::{Multitrack, StreamKind};

/// Flags every streaming command shares.
#[derive(Args, Debug, Clone)]
pub struct StreamOpts {
    /// How a real program streams: trackbench (default engine), ardour-small, ardour-medium,
    /// ardour-large, protools, cubase-vst (sources in the result document and DESIGN.md)
    #[arg(long, default_value = "trackbench")]
    pub profile: String,
    /// Seconds of audio each ring holds [default: the profile's]
    #[arg(long, value_name = "DURATION")]
    pub buffer: Option<String>,
    /// Ring slot and I/O size [default: the profile's]
    #[arg(long, value_name = "SIZE")]
    pub chunk: Option<String>,
    /// Frames per audio period (the tick) [default: 256, or the program's own for its profile:
    /// 1024 for Ardour's]
    #[arg(long, value_name = "FRAMES")]
    pub period: Option<u32>,
    /// serial (one I/O at a time, like most DAWs) or parallel:QD (QD in flight: io_uring on
    /// Linux, a pool of I/O threads elsewhere)
    #[arg(long, default_value = "serial")]
    pub butler: String,
    /// Length of each run [default: 10 s, or longer where the rings need it; with --find-max, as long as a confirmation needs to tell: one ring plus four refill cycles (simulated: 120 s or 40 rings); a real playback search's other probes, started in the steady state, run shorter by the first ring less a warm-up of two refill cycles and at least 3.5 s, and end at the rule's shortest run where the butler was idle 20% or more of it and of its later half (a pass) or under 0.5% of it (a failure)]
    #[arg(long)]
    pub duration: Option<String>,
    /// A ring below this share of its capacity makes the run marginal [default: 20%; 0 for a
    /// program's profile (Ardour's): the program drops out only when a ring runs dry]
    #[arg(long)]
    pub margin: Option<String>,
    /// Spread the tracks' starts over one chunk instead of starting them in phase
    #[arg(long)]
    pub stagger: bool,
    /// Run in virtual time against a device model instead of the disk: hdd-7200, hdd-5400,
    /// sata-ssd, nvme, or bw=SIZE,iops=N,lat=TIME,rpm=N,seek=TIME,stall=AT+LEN; shared storage
    /// serving many workstations: nas:bw=SIZE,link=SIZE|10Gbit,clients=N
    #[arg(long, value_name = "MODEL")]
    pub device_model: Option<String>,
    /// Search the largest track count that passes (exponential steps, bisection to 2%, confirmation)
    #[arg(long)]
    pub find_max: bool,
    /// With --find-max and a --profile, also search trackbench's default engine, side by side
    #[arg(long)]
    pub compare_default: bool,
    /// With --find-max and a serial butler, also search what a parallel butler (QD in flight:
    /// io_uring on Linux, I/O threads elsewhere; 8 if no QD is given) holds on the same target; about doubles the search time
    #[arg(long, value_name = "QD", num_args = 0..=1, default_missing_value = "8")]
    pub compare_parallel: Option<u32>,
    /// With --find-max, try at most N tracks in all (the answer says when it stopped there)
    #[arg(long, value_name = "N")]
    pub max_tracks: Option<u32>,
}

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// Directory to measure (not needed with --device-model)
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Playback tracks (one mono file each at the default format)
    #[arg(long, default_value_t = 32)]
    pub tracks: u32,
    /// A studio run (under mpirun): which workstations play and which record, in rank order,
    /// e.g. play:3,record:1; each plays or records --tracks (with --find-max, the searched count)
    #[arg(long, value_name = "ROLES")]
    pub roles: Option<String>,
    #[command(flatten)]
    pub stream: StreamOpts,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Record tracks (one file each)
    #[arg(long, default_value_t = 16)]
    pub tracks: u32,
    /// A studio run (under mpirun): which workstations record and which play, in rank order,
    /// e.g. record:1,play:3; each records or plays --tracks (with --find-max, the searched count)
    #[arg(long, value_name = "ROLES")]
    pub roles: Option<String>,
    #[command(flatten)]
    pub rec: RecordOpts,
    #[command(flatten)]
    pub stream: StreamOpts,
    #[command(flatten)]
    pub common: Common,
}

/// How record tracks write: shared by `record` and `hdr`.
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct RecordOpts {
    /// Preallocate record files instead of letting them grow as written
    #[arg(long)]
    pub prealloc: bool,
    /// Read the recorded files back and check every block
    #[arg(long)]
    pub verify: bool,
}

#[derive(Args, Debug)]
pub struct HdrArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Playback tracks
    #[arg(long, default_value_t = 16)]
    pub play: u32,
    /// Record tracks
    #[arg(long, default_value_t = 16)]
    pub record: u32,
    #[command(flatten)]
    pub rec: RecordOpts,
    #[command(flatten)]
    pub stream: StreamOpts,
    #[command(flatten)]
    pub common: Common,
}

impl StreamOpts {
    /// Builds the workload from validated flags.
    pub fn workload(
        &self,
        kind: StreamKind,
        format: Format,
        play: u32,
        record: u32,
        RecordOpts { prealloc, verify }: RecordOpts,
    ) -> Result<Multitrack> {
        let policy = self.policy(&format)?;
        let margin = match &self.margin {
            Some(m) => parse_pct("margin", m)?,
            None => policy.margin.unwrap_or(trackbench::engine::DEFAULT_MARGIN),
        };
        let period = self
            .period
            .or(policy.period_frames)
            .unwrap_or(trackbench::engine::DEFAULT_PERIOD);
        let dur = self
            .duration
            .as_deref()
            .map(|d| duration("duration", d))
            .transpose()?;
        let butler = ButlerMode::parse(&self.butler)?;
        let device = self
            .device_model
            .as_deref()
            .map(DeviceModel::parse)
            .transpose()?;
        self.check_search_flags(kind, butler)?;
        let mut spec = StreamSpec {
            period_frames: period,
            duration_ns: dur.map_or(1_000_000_000, |d| d.as_nanos() as u64),
            margin,
            butler,
            stagger: self.stagger,
            prealloc,
            ..StreamSpec::new(format, policy, (play, record))
        };
        spec.validate()?;
        self.plan_duration(&mut spec, dur, device.is_some())?;
        spec.validate()?;
        Ok(Multitrack {
            kind,
            spec,
            device,
            find_max: self.find_max,
            compare_default: self.compare_default,
            compare_parallel: self.compare_parallel,
            verify,
            buffer_asked: self.buffer.is_some(),
            max_tracks: self.max_tracks,
            main_limited_by: None,
            hdr_record: None,
        })
    }

    /// The profile's policy for `format`, with the chunk and the ring asked for.
    fn policy(&self, format: &Format) -> Result<Policy> {
        let mut policy = Policy::named(&self.profile, format)?;
        if let Some(c) = &self.chunk {
            let c = parse_size("chunk", c)?;
            policy = policy.with_chunk(c);
        }
        if let Some(b) = &self.buffer {
            policy = policy.with_buffer(duration("buffer", b)?.as_secs_f64());
        }
        Ok(policy)
    }

    /// The flags that shape a search need one (`--max-tracks`, `--compare-default`,
    /// `--compare-parallel`, the last for a serial butler's play or record search), within
    /// their ranges.
    fn check_search_flags(&self, kind: StreamKind, butler: ButlerMode) -> Result<()> {
        if let Some(m) = self.max_tracks {
            if !(1..=20_000).contains(&m) {
                bail!("invalid max-tracks {m}: 1 to 20000");
            }
            if !self.find_max {
                bail!(
                    "--max-tracks limits a --find-max search: add --find-max, or use --tracks for one run"
                );
            }
        }
        if self.compare_default && !self.find_max {
            bail!("--compare-default compares --find-max answers: add --find-max");
        }
        if let Some(q) = self.compare_parallel {
            if !(2..=1024).contains(&q) {
                bail!("invalid compare-parallel {q}: a queue depth from 2 to 1024");
            }
            if !self.find_max || butler != ButlerMode::Serial || kind == StreamKind::Hdr {
                bail!(
                    "--compare-parallel compares a serial butler's --find-max answer for play or record: add --find-max and keep --butler serial"
                );
            }
        }
        Ok(())
    }

    /// Each run's length: as asked (`dur`), else planned; a search's probe too short to tell
    /// could never pass (the search would answer 0), and is refused.
    fn plan_duration(
        &self,
        spec: &mut StreamSpec,
        dur: Option<Duration>,
        simulated: bool,
    ) -> Result<()> {
        use trackbench::verdict::windows::{min_run_s, steady_words};
        let planned =
            trackbench::workloads::multitrack::planned_duration_s(spec, self.find_max, simulated);
        match dur {
            None => spec.duration_ns = (planned * 1e9) as u64,
            Some(d) if self.find_max && d.as_secs_f64() < min_run_s(spec) => bail!(
                "invalid duration {:?} for --find-max: with {} rings ({:.2} s) each probe needs at least {:.1} s (one ring plus {}) before it can pass; leave --duration out to let the search plan it ({:.1} s), or use smaller rings (--buffer, --chunk)",
                self.duration.as_deref().unwrap_or_default(),
                trackbench::units::fmt_size(spec.ring_bytes()),
                spec.ring_s(),
                min_run_s(spec),
                steady_words(),
                planned
            ),
            Some(_) => {}
        }
        Ok(())
    }
}

/// A share written `20%` or `0.2`.
pub(crate) fn parse_pct(what: &'static str, s: &str) -> Result<f64> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(x) if (0.0..1.0).contains(&x) => Ok(x),
        _ => bail!("invalid {what} {s:?}: a share from 0% to 99% (e.g. 20% or 0.2)"),
    }
}

/// This rank's part in a studio run from `--roles` (`play:3,record:1`: ranks 0–2 play, rank 3
/// records), or `default` without the flag. The counts must add up to the ranks there are.
pub fn role(
    roles: Option<&str>,
    rank: u32,
    size: u32,
    default: trackbench::workloads::multitrack::StreamKind,
) -> Result<trackbench::workloads::multitrack::StreamKind> {
    use trackbench::workloads::multitrack::StreamKind;
    let Some(roles) = roles else {
        return Ok(default);
    };
    let mut kinds = Vec::new();
    for part in roles.split(',') {
        let (name, n) = part.trim().split_once(':').unwrap_or((part.trim(), "1"));
        let kind = match name {
            "play" => StreamKind::Play,
            "record" => StreamKind::Record,
            _ => bail!(
                "invalid roles {roles:?}: {name:?} is no role; each part is play:N or record:N, e.g. play:3,record:1"
            ),
        };
        let n: u32 = n.parse().map_err(|_| {
            anyhow::anyhow!("invalid roles {roles:?}: {n:?} is not a count of workstations")
        })?;
        kinds.extend(std::iter::repeat_n(kind, n as usize));
    }
    if kinds.len() != size as usize {
        bail!(
            "invalid roles {roles:?}: they name {} workstations, but {size} {} running{}",
            kinds.len(),
            if size == 1 { "is" } else { "are" },
            if size == 1 {
                " (a studio run starts one rank per workstation: mpirun -np N trackbench …, with a build that has the mpi feature)"
            } else {
                ": the counts must add up to mpirun's -np"
            }
        );
    }
    Ok(kinds[rank as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_name_every_rank_and_add_up_to_the_ranks_there_are() {
        use trackbench::workloads::multitrack::StreamKind::{Play, Record};
        let r = |rank| role(Some("play:2,record:1"), rank, 3, Play).unwrap();
        assert_eq!([r(0), r(1), r(2)], [Play, Play, Record]);
        assert_eq!(role(None, 2, 3, Record).unwrap(), Record);
        for (roles, size, says) in [
            (
                "play:2,record:1",
                4,
                "they name 3 workstations, but 4 are running",
            ),
            ("play:1", 2, "add up to mpirun's -np"),
            ("play:2", 1, "mpirun -np N"),
            ("mix:3", 3, "\"mix\" is no role"),
            ("play:x", 1, "not a count"),
        ] {
            let e = role(Some(roles), 0, size, Play).unwrap_err().to_string();
            assert!(e.contains(roles) && e.contains(says), "{e}");
        }
    }
}
