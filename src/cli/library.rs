//! The sample library's commands' flags (sampler, load) and the offline export's (bounce).

use super::streaming::parse_pct;
use super::{Common, SAMPLE_FORMAT, duration};
use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;
use trackbench::engine::ButlerMode;
use trackbench::engine::profile::SamplerPolicy;
use trackbench::engine::virtual_time::DeviceModel;
use trackbench::units::parse_size;

#[derive(Args, Debug)]
pub struct SamplerArgs {
    /// Directory to measure (not needed with --device-model)
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Voices sounding at once (a single run; --find-max searches them)
    #[arg(long, default_value_t = 64)]
    pub voices: u32,
    /// Note-ons per second on top of the notes that end, each stealing the oldest voice
    #[arg(long, default_value_t = 100.0, value_name = "RATE")]
    pub notes_per_s: f64,
    /// Sample files in the library
    #[arg(long, default_value_t = 2000, value_name = "F")]
    pub files: u32,
    /// Sample lengths, drawn between these (log-uniformly)
    #[arg(long, default_value = "1s..10s", value_name = "MIN..MAX")]
    pub lengths: String,
    /// How a real sampler streams: trackbench (default engine), kontakt, linuxsampler, sfizz,
    /// spectrasonics (sources in the result document)
    #[arg(long, default_value = "trackbench")]
    pub profile: String,
    /// Bytes of each sample held in RAM [default: the profile's]
    #[arg(long, value_name = "SIZE")]
    pub preload: Option<String>,
    /// serial (one read at a time) or parallel:QD [default: the profile's]
    #[arg(long)]
    pub butler: Option<String>,
    /// Frames per audio period (the tick)
    #[arg(long, default_value_t = trackbench::engine::DEFAULT_PERIOD, value_name = "FRAMES")]
    pub period: u32,
    /// Length of each run [default: 15 s, or as long as the rings need; with --find-max, one ring and 5 s of steady running (simulated: a minute)]
    #[arg(long)]
    pub duration: Option<String>,
    /// A first read landing with less than this share of its preload left, or a ring below it, makes the run marginal
    #[arg(long, default_value = "20%")]
    pub margin: String,
    /// Run in virtual time against a device model (see play --help)
    #[arg(long, value_name = "MODEL")]
    pub device_model: Option<String>,
    /// Search the most voices with no dropout at the note rate
    #[arg(long)]
    pub find_max: bool,
    /// With --find-max, try at most N voices
    #[arg(long, value_name = "N")]
    pub max_voices: Option<u32>,
    /// Seed of the library's lengths, the notes and their samples
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub common: Common,
}

impl SamplerArgs {
    pub fn workload(&self) -> Result<trackbench::workloads::sampler::Sampler> {
        let format = self.common.settings_for(None, SAMPLE_FORMAT)?.format;
        let profile = self.profile(&format)?;
        let butler = match &self.butler {
            Some(b) => ButlerMode::parse(b)?,
            None => profile.butler,
        };
        self.check_counts()?;
        let (min_s, max_s) = lengths(&self.lengths)?;
        self.check_max_voices()?;
        let device = self
            .device_model
            .as_deref()
            .map(DeviceModel::parse)
            .transpose()?;
        let w = trackbench::workloads::sampler::Sampler {
            format,
            library: trackbench::workloads::sampler::LibrarySpec {
                files: self.files,
                min_s,
                max_s,
                seed: self.seed,
            },
            voices: self.voices,
            notes_per_s: self.notes_per_s,
            profile,
            butler,
            period_frames: self.period,
            duration: self
                .duration
                .as_deref()
                .map(|d| duration("duration", d))
                .transpose()?,
            margin: parse_pct("margin", &self.margin)?,
            device,
            find_max: self.find_max,
            max_voices: self.max_voices,
            limited_by: None,
        };
        let spec = w.spec(w.voices, 1_000_000_000, 4096);
        spec.validate()?;
        if let Some(d) = w.duration
            && d.as_secs_f64() < trackbench::verdict::voices::min_run_s(&spec)
            && w.find_max
        {
            bail!(
                "invalid duration {:?} for --find-max: each probe needs at least {:.1} s (one ring and 5 s of steady running) before it can pass; leave --duration out to let the search plan it",
                self.duration.as_deref().unwrap_or_default(),
                trackbench::verdict::voices::min_run_s(&spec)
            );
        }
        Ok(w)
    }
}

impl SamplerArgs {
    /// The sampler profile for `format`, with the preload asked for (whole 4 KiB blocks).
    fn profile(&self, format: &trackbench::audio::Format) -> Result<SamplerPolicy> {
        let mut profile = SamplerPolicy::named(&self.profile, format)?;
        if let Some(p) = &self.preload {
            let bytes = parse_size("preload", p)?;
            if !(4096..=64 << 20).contains(&bytes) {
                bail!("invalid preload {p:?}: from 4K to 64M");
            }
            profile.preload_bytes = bytes.div_ceil(4096) * 4096;
            profile.preload_stated = p.clone();
        }
        Ok(profile)
    }

    /// The voices, the files and the note rate within their ranges.
    fn check_counts(&self) -> Result<()> {
        if !(1..=20_000).contains(&self.voices) {
            bail!("invalid voices {}: 1 to 20000", self.voices);
        }
        files(self.files)?;
        if !(self.notes_per_s.is_finite() && (0.0..=100_000.0).contains(&self.notes_per_s)) {
            bail!(
                "invalid notes-per-s {}: 0 to 100000 note-ons a second",
                self.notes_per_s
            );
        }
        Ok(())
    }

    /// `--max-voices` within its range, and with a search to limit.
    fn check_max_voices(&self) -> Result<()> {
        if let Some(m) = self.max_voices {
            if !(1..=20_000).contains(&m) {
                bail!("invalid max-voices {m}: 1 to 20000");
            }
            if !self.find_max {
                bail!("--max-voices limits a --find-max search: add --find-max");
            }
        }
        Ok(())
    }
}

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// Directory to measure (the library is laid out there)
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Sample files in the library
    #[arg(long, default_value_t = 2000, value_name = "F")]
    pub files: u32,
    /// Sample lengths, drawn between these (log-uniformly)
    #[arg(long, default_value = "1s..10s", value_name = "MIN..MAX")]
    pub lengths: String,
    /// Bytes of each sample read after its header
    #[arg(long, default_value = "60K", value_name = "SIZE")]
    pub preload: String,
    /// Loader threads of the parallel passes
    #[arg(long, default_value_t = 8, value_name = "Q")]
    pub threads: u32,
    /// Before each cold pass, drop the whole page, dentry and inode cache (root only; affects the whole machine)
    #[arg(long)]
    pub drop_caches: bool,
    /// Seed of the library's lengths (the sampler's, so the two share files)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub common: Common,
}

/// `--lengths MIN..MAX` as seconds.
fn lengths(s: &str) -> Result<(f64, f64)> {
    let (min_s, max_s) = match s.split_once("..") {
        Some((a, b)) => (
            duration("lengths", a)?.as_secs_f64(),
            duration("lengths", b)?.as_secs_f64(),
        ),
        None => bail!("invalid lengths {s:?}: MIN..MAX, e.g. 1s..10s"),
    };
    if min_s > max_s || max_s > 600.0 {
        bail!("invalid lengths {s:?}: MIN..MAX with MIN at most MAX and MAX at most 10m");
    }
    Ok((min_s, max_s))
}

fn files(n: u32) -> Result<u32> {
    if !(1..=100_000).contains(&n) {
        bail!("invalid files {n}: 1 to 100000");
    }
    Ok(n)
}

impl LoadArgs {
    pub fn workload(&self) -> Result<trackbench::workloads::load::Load> {
        let format = self.common.settings_for(None, SAMPLE_FORMAT)?.format;
        let (min_s, max_s) = lengths(&self.lengths)?;
        let preload = parse_size("preload", &self.preload)?;
        if !(4096..=64 << 20).contains(&preload) {
            bail!("invalid preload {:?}: from 4K to 64M", self.preload);
        }
        if !(1..=1024).contains(&self.threads) {
            bail!("invalid threads {}: 1 to 1024", self.threads);
        }
        if self.drop_caches && !cfg!(target_os = "linux") {
            bail!(
                "--drop-caches is Linux's (it writes /proc/sys/vm/drop_caches); on macOS run `sudo purge` before the load instead"
            );
        }
        if self.drop_caches && !trackbench::platform::is_root() {
            bail!(
                "--drop-caches needs root (it writes /proc/sys/vm/drop_caches); leave it out to drop each file's pages only"
            );
        }
        Ok(trackbench::workloads::load::Load {
            format,
            library: trackbench::workloads::sampler::LibrarySpec {
                files: files(self.files)?,
                min_s,
                max_s,
                seed: self.seed,
            },
            preload_bytes: preload.div_ceil(4096) * 4096,
            threads: self.threads,
            drop_caches: self.drop_caches,
        })
    }
}

#[derive(Args, Debug)]
pub struct BounceArgs {
    /// Directory to measure (the export is written there)
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Tracks exported
    #[arg(long, default_value_t = 500)]
    pub tracks: u32,
    /// Length of each track
    #[arg(long, default_value = "30s")]
    pub duration: String,
    /// Also write stage one's write pattern as a fio job file, to cross-check with fio
    #[arg(long, value_name = "FILE")]
    pub fio_job: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

impl BounceArgs {
    pub fn workload(&self) -> Result<trackbench::workloads::bounce::Bounce> {
        let format = self.common.settings(None)?.format;
        if !(1..=100_000).contains(&self.tracks) {
            bail!("invalid tracks {}: 1 to 100000", self.tracks);
        }
        let d = duration("duration", &self.duration)?;
        if d.as_secs_f64() * f64::from(format.rate_hz) < 1.0 {
            bail!("invalid duration {:?}: at least one frame", self.duration);
        }
        Ok(trackbench::workloads::bounce::Bounce {
            format,
            tracks: self.tracks,
            duration: d,
        })
    }
}
