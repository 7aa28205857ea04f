//! The standard suite of `trackbench run`: what a newcomer's first run measures — tracks in real
//! time, sampler voices, a template load and an offline export, then the classic measurements.
//! Its summary, which every presenter shows, is `report::summary`.

use crate::audio::Format;
use crate::engine::ButlerMode;
use crate::engine::profile::SamplerPolicy;
use crate::error::Result;
use crate::workloads::Workload;
use crate::workloads::access::Access;
use crate::workloads::bounce::Bounce;
use crate::workloads::load::Load;
use crate::workloads::mix::Mix;
use crate::workloads::realtime::RealTime;
use crate::workloads::sampler::{DEFAULT_FILES, DEFAULT_NOTES_PER_S, LibrarySpec, Sampler};
use crate::workloads::seek::Seek;
use crate::workloads::seq::{Seq, SeqMode};
use crate::workloads::sweep::{DEFAULT_BLOCKS, Sweep};
use crate::workloads::zones::Zones;

/// The most voices `run`'s sampler search tries, as the track searches stop at 1000: the suite
/// stays within minutes on fast disks, and says "at least" when it stops there.
pub const SUITE_MAX_VOICES: u32 = 2000;

/// Tracks `run` exports, of `SUITE_BOUNCE_S` each (the `bounce` command's defaults are 500 of
/// 30 s).
pub const SUITE_BOUNCE_TRACKS: u32 = 100;
pub const SUITE_BOUNCE_S: u64 = 30;

/// The standard suite of `trackbench run`: a sequential transfer (the naive count's one
/// measurement), then the real-time answer (the default engine's most playback, record, and
/// playback-while-recording tracks), the sampler's most voices, a template load and an offline
/// export, then the other classic measurements, shortened to about a minute. Samples are stereo
/// at the tracks' rate and depth.
pub fn standard(format: Format) -> Result<Vec<Box<dyn Workload>>> {
    const SPAN: u64 = 1 << 30;
    let stereo = Format {
        channels: 2,
        ..format
    };
    let library = LibrarySpec {
        files: DEFAULT_FILES,
        min_s: 1.0,
        max_s: 10.0,
        seed: 1,
    };
    let profile = SamplerPolicy::named("trackbench", &stereo)?;
    Ok(vec![
        // First, and short: the one sequential measurement every naive count of the result
        // comes from (the searches and the sampler take it instead of transfers of their own).
        Box::new(Seq {
            block: 1 << 20,
            size: 512 << 20,
            mode: SeqMode::Both,
        }),
        // Capped so that run stays within minutes on fast disks (uncapped, this machine's disk
        // took 35 min at ~9500 tracks); the summary says "at least" when it stops there.
        Box::new(RealTime {
            format,
            max_tracks: Some(1000),
        }),
        Box::new(Sampler {
            format: stereo,
            library,
            voices: 1,
            notes_per_s: DEFAULT_NOTES_PER_S,
            butler: ButlerMode::Serial,
            profile,
            period_frames: crate::engine::DEFAULT_PERIOD,
            duration: None,
            margin: crate::engine::DEFAULT_MARGIN,
            device: None,
            find_max: true,
            max_voices: Some(SUITE_MAX_VOICES),
            limited_by: None,
        }),
        Box::new(Load {
            format: stereo,
            library,
            preload_bytes: 60 << 10,
            threads: 8,
            drop_caches: false,
        }),
        Box::new(Bounce {
            format,
            tracks: SUITE_BOUNCE_TRACKS,
            duration: std::time::Duration::from_secs(SUITE_BOUNCE_S),
        }),
        Box::new(Seek {
            block: 4096,
            duration: std::time::Duration::from_secs(5),
            size: SPAN,
            rpm: None,
        }),
        Box::new(Access {
            block: 64 << 10,
            duration: std::time::Duration::from_secs(2),
            size: SPAN,
        }),
        Box::new(Mix {
            seq_block: 32 << 10,
            random_block: 8 << 10,
            read_pct: 70,
            duration: std::time::Duration::from_secs(3),
            size: SPAN,
        }),
        Box::new(Zones {
            points: 16,
            block: 1 << 20,
            bytes_per_point: 32 << 20,
            duration: std::time::Duration::from_millis(500),
            size: SPAN,
        }),
        Box::new(Sweep {
            files: 8,
            blocks: DEFAULT_BLOCKS.to_vec(),
            duration: std::time::Duration::from_millis(1500),
            file_size: 64 << 20,
            buffer: std::time::Duration::from_secs(2),
            memory_limit: None,
        }),
    ])
}

/// The parts of the suite, by the names `--only` takes, in the order they run.
pub const PARTS: [&str; 10] = [
    "seq", "realtime", "sampler", "load", "bounce", "seek", "access", "mix", "zones", "sweep",
];

/// The suite with only the parts named in `only` (all of it when `only` is empty), in the
/// suite's order: a weekly watch of what matters in less time. A name that is no part is
/// refused, with the parts there are.
pub fn only(format: Format, only: &[String]) -> Result<Vec<Box<dyn Workload>>> {
    if let Some(bad) = only.iter().find(|n| !PARTS.contains(&n.as_str())) {
        return Err(crate::error::Error::invalid(
            "--only",
            bad,
            format!("parts of the suite, comma-separated: {}", PARTS.join(", ")),
        ));
    }
    let mut all = standard(format)?;
    if !only.is_empty() {
        all.retain(|w| only.iter().any(|n| n == w.name()));
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_is_named_and_only_keeps_the_suites_order() {
        let f = Format::parse("48k/24/mono").unwrap();
        let names: Vec<&str> = standard(f).unwrap().iter().map(|w| w.name()).collect();
        assert_eq!(names, PARTS);
        let picked = only(f, &["seek".into(), "seq".into()]).unwrap();
        let names: Vec<&str> = picked.iter().map(|w| w.name()).collect();
        assert_eq!(names, ["seq", "seek"]);
        let e = only(f, &["tracks".into()]).err().unwrap().to_string();
        assert!(
            e.contains("tracks") && e.contains("seq, realtime, sampler"),
            "{e}"
        );
    }
}
