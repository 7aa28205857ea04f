//! How real programs stream from disk, as butler policies: buffer seconds, the read chunk and
//! refill rule, the order in which tracks are served, and buffered or direct I/O. The figures and
//! their sources are in ../shared/reference/daw-settings.md; each profile cites its own.

use crate::audio::Format;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// In which order the butler serves tracks that need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Emptiest playback ring / fullest capture ring first (LinuxSampler's disk thread, trackbench).
    Neediest,
    /// Track after track in session order, round and round (Ardour's butler).
    Session,
}

/// A butler policy: what one program does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    pub profile: String,
    /// Seconds of audio per ring.
    pub buffer_s: f64,
    /// Ring slot size; rings hold whole chunks, at least `min_ring_chunks`.
    pub chunk_bytes: u64,
    /// The fewest chunks a ring holds, whatever `buffer_s` asks for. The default engine keeps
    /// four: with two, tracks starting in phase must all be refilled within 0.6 of a refill
    /// cycle, which caps a session at ~60% of what the disk streams. Programs' profiles keep
    /// their own geometry (two: one chunk read while one plays).
    #[serde(default = "two")]
    pub min_ring_chunks: u64,
    /// A playback ring is refilled once this much of it is free.
    pub refill_at_bytes: u64,
    /// A read takes the free space, clamped to min..max and rounded down to `read_round_bytes`.
    pub read_min_bytes: u64,
    pub read_max_bytes: u64,
    pub read_round_bytes: u64,
    /// A capture ring is flushed in writes of this size, once it holds that much.
    pub write_bytes: u64,
    pub order: Order,
    /// Neediest first, this many streams per pass at most (LinuxSampler refills the 4
    /// emptiest, then sorts again); None: as many as the queue takes.
    #[serde(default)]
    pub pass_streams: Option<u32>,
    /// O_DIRECT; false reads through the page cache (and the kernel's read-ahead).
    pub direct: bool,
    /// A buffered read is issued as consecutive read calls of at most this many bytes, one
    /// after another (libsndfile converts integer samples through its 8 KiB buffer, so a
    /// program reading 24-bit files through it asks the kernel for 8190 bytes at a time, and
    /// the kernel's read-ahead sees that stream); None: one call per read.
    #[serde(default)]
    pub syscall_bytes: Option<u64>,
    /// The program's own audio period, where it has a default (Ardour's engines: 1024 frames);
    /// None: trackbench's 256.
    #[serde(default)]
    pub period_frames: Option<u32>,
    /// How empty a ring may get before the program fails: a program drops out only when a ring
    /// runs dry, so its profile answers with no margin (0); None: trackbench's 20%.
    #[serde(default)]
    pub margin: Option<f64>,
    /// A program whose ring is a power of two of frames with a reservation it never fills:
    /// the ring holds the power of two at or above `buffer_s` plus this many frames, less the
    /// reservation and one frame (Ardour's PlaybackBuffer keeps 8191 frames for reverse play,
    /// so its 10 s buffer holds 516,096 frames, 10.75 s at 48 kHz). None: whole chunks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_reserve_frames: Option<u64>,
    /// A program that reads a refill whole into a buffer of its own and copies it into the
    /// ring, across the ring's end where it wraps (Ardour's refill_audio reads into its
    /// sum_buffer, then PlaybackBuffer::write copies): the read the kernel sees is never cut
    /// at the ring's end. False: reads go straight into ring memory and stop at its end, the
    /// rest waiting for the next refill.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_whole: bool,
    /// Where the figures come from.
    pub source: String,
}

fn two() -> u64 {
    2
}

/// A sampler's disk streaming: its voices' rings and reads (`policy`), how it issues them, and
/// the start of every sample it holds in RAM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplerPolicy {
    pub policy: Policy,
    /// Bytes of each sample's start held in RAM (whole 4 KiB blocks): a new voice plays from
    /// them at once, and its stream's first read must land before they run out.
    pub preload_bytes: u64,
    /// The preload as the program states it, before rounding to blocks.
    pub preload_stated: String,
    /// One read at a time, or a pool of workers.
    pub butler: super::ButlerMode,
    /// A voice's ring holds the rest of the longest sample (the whole file is read into RAM).
    pub whole_sample: bool,
}

/// The sampler profiles `sampler --profile` accepts, with a line for `--help`.
pub const SAMPLER_PROFILES: [(&str, &str); 5] = [
    (
        "trackbench",
        "60 KB preload, rings of four 64 KiB reads, neediest first, O_DIRECT (the default engine)",
    ),
    ("kontakt", "Kontakt DFD: 60 KB preload per sample"),
    (
        "linuxsampler",
        "32768-frame preload, 262144-frame rings, refills of at most 65536 frames, the 4 emptiest streams per pass",
    ),
    (
        "sfizz",
        "8192-frame preload, the rest of the file in 1024-frame blocks by a worker pool",
    ),
    (
        "spectrasonics",
        "Omnisphere/Trilian/Keyscape: 60,000-sample preload, 240,000-byte reads",
    ),
];

fn whole_blocks(bytes: u64) -> u64 {
    bytes.div_ceil(4096).max(1) * 4096
}

impl SamplerPolicy {
    /// The sampler profile `name` for voices of `format` (frames become bytes, rounded up to
    /// whole 4 KiB blocks where direct I/O needs them).
    pub fn named(name: &str, format: &Format) -> Result<SamplerPolicy> {
        let frame = format.bytes_per_frame();
        let rate = format.bytes_per_second() as f64;
        let plain = |policy: Policy, preload_bytes: u64, preload_stated: &str| SamplerPolicy {
            policy,
            preload_bytes,
            preload_stated: preload_stated.into(),
            butler: super::ButlerMode::Serial,
            whole_sample: false,
        };
        Ok(match name {
            "trackbench" | "default" => plain(
                Policy::sampler_rings(
                    "trackbench",
                    (64 << 10, 4, 64 << 10),
                    rate,
                    true,
                    "trackbench's own sampler engine (DESIGN.md section 5: 60 KB preload, refills of 64 KiB; rings of four, neediest first, O_DIRECT as its track engine)".into(),
                ),
                whole_blocks(60 << 10),
                "60 KB",
            ),
            "kontakt" => plain(
                Policy::sampler_rings(
                    "kontakt",
                    (64 << 10, 4, 64 << 10),
                    rate,
                    false,
                    "Kontakt DFD: memory = number of samples x preload size, 60 KB per sample as commonly reported (secondary sources, ../shared/reference/daw-settings.md); its streaming reads are not published: trackbench's (64 KiB, rings of four, neediest first) through the page cache are assumed".into(),
                ),
                whole_blocks(60 << 10),
                "60 KB",
            ),
            "linuxsampler" => {
                let chunk = whole_blocks(65_536 * frame);
                let mut policy = Policy::sampler_rings(
                    "linuxsampler",
                    (chunk, whole_blocks(262_144 * frame).div_ceil(chunk), whole_blocks(1024 * frame)),
                    rate,
                    false,
                    "LinuxSampler trunk configure.ac: preload 32768 frames, stream ring 262144 frames, refills of at most 65536 and at least 1024 frames (1024 frames rounded up to whole 4 KiB blocks); src/engines/common/DiskThreadBase.h: the 4 emptiest streams refilled per pass; buffered reads (libgig)".into(),
                );
                policy.pass_streams = Some(4);
                plain(policy, whole_blocks(32_768 * frame), "32768 frames")
            }
            "sfizz" => SamplerPolicy::sfizz(frame, rate),
            "spectrasonics" => plain(
                Policy::sampler_rings(
                    "spectrasonics",
                    (whole_blocks(240_000), 2, whole_blocks(240_000)),
                    rate,
                    false,
                    "Spectrasonics support pages: preload 60,000 samples by default, about 240,000 bytes per read recommended for Trilian (both rounded up to whole 4 KiB blocks); ring size, service order and I/O mode are not published: two reads per voice, neediest first, page cache assumed".into(),
                ),
                whole_blocks(60_000 * frame),
                "60,000 samples",
            ),
            _ => {
                let names: Vec<&str> = SAMPLER_PROFILES.iter().map(|(n, _)| *n).collect();
                return Err(Error::invalid(
                    "profile",
                    name,
                    format!("one of {}", names.join(", ")),
                ));
            }
        })
    }

    /// sfizz: on a note-on, a pool of workers reads the rest of the sample into RAM.
    fn sfizz(frame: u64, rate: f64) -> SamplerPolicy {
        let block = whole_blocks(1024 * frame);
        // src/sfizz/FilePool.cpp: a pool of (hardware threads - 2) workers.
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .saturating_sub(2)
            .max(1) as u32;
        SamplerPolicy {
            policy: Policy::sampler_rings(
                "sfizz",
                (block, 2, block),
                rate,
                false,
                format!(
                    "sfizz src/sfizz/Config.h: preload 8192 frames, file chunk 1024 frames (rounded up to whole 4 KiB blocks); src/sfizz/FilePool.cpp: on a note-on a pool of hardware threads - 2 workers ({workers} here) reads the rest of the file into RAM, buffered"
                ),
            ),
            preload_bytes: whole_blocks(8192 * frame),
            preload_stated: "8192 frames".into(),
            butler: if workers > 1 {
                super::ButlerMode::Parallel(workers)
            } else {
                super::ButlerMode::Serial
            },
            whole_sample: true,
        }
    }
}

/// The profiles `--profile` accepts, with a line for `--help`.
pub const PROFILES: [(&str, &str); 6] = [
    (
        "trackbench",
        "max(2 s, 4 chunks) rings, 256 KiB reads, neediest first, O_DIRECT (the default engine)",
    ),
    (
        "ardour-small",
        "Ardour 'Small' buffering: 5 s, 64k-frame chunks, session order, page cache",
    ),
    (
        "ardour-medium",
        "Ardour 'Medium' (its default): 10 s, 256k-frame chunks, session order, page cache",
    ),
    (
        "ardour-large",
        "Ardour 'Large': 20 s, 512k-frame chunks, session order, page cache",
    ),
    ("protools", "Pro Tools DAE: 1.5 s playback buffer"),
    (
        "cubase-vst",
        "Cubase VST (1990s manual): 64 KB disk blocks, 256 KB per channel",
    ),
];

/// How libsndfile reads `format` for a program that asks it for float samples: integer samples
/// through its conversion buffer of 8192 bytes (whole frames of it: 8190 bytes of 24-bit mono),
/// float samples straight into the caller's buffer in one call.
fn libsndfile_calls(format: &Format) -> Option<u64> {
    let frame = format.bytes_per_frame();
    (format.sample_type != crate::audio::SampleType::Float).then(|| (8192 / frame).max(1) * frame)
}

impl Policy {
    /// The policy of a named profile for tracks of `format` (chunks in frames become bytes).
    pub fn named(name: &str, format: &Format) -> Result<Policy> {
        Ok(match name {
            "trackbench" | "default" => Policy {
                min_ring_chunks: 4,
                ..Policy::fixed(
                    "trackbench",
                    2.0,
                    256 << 10,
                    (Order::Neediest, true),
                    "trackbench's own engine (DESIGN.md sections 4 and 5: 256 KiB chunks, rings of \
                     max(2 s, 4 chunks))",
                )
            },
            "ardour-small" => Policy::ardour(name, format, (65_536, 65_536), 5.0, "Small"),
            "ardour-medium" => Policy::ardour(name, format, (262_144, 131_072), 10.0, "Medium"),
            "ardour-large" => Policy::ardour(name, format, (524_288, 131_072), 20.0, "Large"),
            "protools" => Policy::fixed(
                name,
                1.5,
                256 << 10,
                (Order::Session, true),
                "Pro Tools DAE playback buffer default 1500 ms (Avid documentation); read size and \
                 service order are not published: 256 KiB reads in session order are assumed",
            ),
            // 256 KB of memory per channel at 64 KB blocks: four blocks of buffer.
            "cubase-vst" => Policy::fixed(
                name,
                (256 * 1024) as f64 / format.bytes_per_second() as f64,
                64 << 10,
                (Order::Session, false),
                "Cubase VST manual (1990s): disk block 64 KB, 256 KB memory per channel recommended; \
                 seed 000 lists three blocks as the minimum; service order and buffered I/O assumed",
            ),
            _ => {
                let names: Vec<&str> = PROFILES.iter().map(|(n, _)| *n).collect();
                return Err(Error::invalid(
                    "profile",
                    name,
                    format!("one of {}", names.join(", ")),
                ));
            }
        })
    }

    /// Ardour's `preset` of buffering for tracks of `format`: rings of `secs`, refilled a
    /// chunk at a time, recorded in writes (`chunk_frames`, `write_frames`), as its code does.
    fn ardour(
        name: &str,
        format: &Format,
        (chunk_frames, write_frames): (u64, u64),
        secs: f64,
        preset: &str,
    ) -> Policy {
        let frame = format.bytes_per_frame();
        Policy {
            profile: name.to_string(),
            buffer_s: secs,
            chunk_bytes: chunk_frames * frame,
            min_ring_chunks: 2,
            refill_at_bytes: chunk_frames * frame,
            read_min_bytes: 256 << 10,
            read_max_bytes: 4 << 20,
            read_round_bytes: 16 << 10,
            write_bytes: write_frames * frame,
            order: Order::Session,
            pass_streams: None,
            direct: false,
            syscall_bytes: libsndfile_calls(format),
            // Ardour's backends default to 1024-frame periods (libs/ardour/ardour/audio_backend.h),
            // and a disk reader underruns only when its ring holds less than one period
            // (libs/ardour/disk_reader.cc run): no margin.
            period_frames: Some(1024),
            margin: Some(0.0),
            // libs/pbd/pbd/playback_buffer.h (PlaybackBuffer's reservation, power-of-two size)
            // and libs/ardour/disk_reader.cc (ReaderChannelInfo::resize; refill once the
            // write space, which excludes the reservation, holds a chunk).
            ring_reserve_frames: Some(8191),
            // libs/ardour/disk_reader.cc refill_audio: audio_read into sum_buffer, then
            // chan->rbuf->write (which copies across the PlaybackBuffer's end).
            read_whole: true,
            source: format!(
                "Ardour {preset} preset (libs/ardour/disk_io.cc get_buffering_presets); refill rule from \
                 libs/ardour/disk_reader.cc refill_audio (read the free space, 256 KiB..4 MiB, rounded down to \
                 16 KiB, once a chunk is free); session order from libs/ardour/butler.cc; buffered I/O via libsndfile \
                 (integer samples read through its 8 KiB conversion buffer, float in one call: strace of Ardour 7.3's \
                 butler, bench/ardour.py)"
            ),
        }
    }

    /// A program that reads and writes whole chunks of one size, in `order`, direct or not.
    fn fixed(
        profile: &str,
        buffer_s: f64,
        chunk: u64,
        (order, direct): (Order, bool),
        source: &str,
    ) -> Policy {
        Policy {
            profile: profile.into(),
            buffer_s,
            chunk_bytes: chunk,
            min_ring_chunks: 2,
            refill_at_bytes: chunk,
            read_min_bytes: chunk,
            read_max_bytes: chunk,
            read_round_bytes: chunk,
            write_bytes: chunk,
            order,
            pass_streams: None,
            direct,
            syscall_bytes: None,
            period_frames: None,
            margin: None,
            ring_reserve_frames: None,
            read_whole: false,
            source: source.into(),
        }
    }

    /// A sampler's rings of whole reads (`chunk` each, `chunks` of them, refilled once
    /// `read_min` is free) for a stream of `rate` bytes a second, neediest first.
    fn sampler_rings(
        profile: &str,
        (chunk, chunks, read_min): (u64, u64, u64),
        rate: f64,
        direct: bool,
        source: String,
    ) -> Policy {
        Policy {
            profile: profile.into(),
            buffer_s: (chunk * chunks) as f64 / rate,
            chunk_bytes: chunk,
            min_ring_chunks: chunks,
            refill_at_bytes: read_min,
            read_min_bytes: read_min,
            read_max_bytes: chunk,
            read_round_bytes: 4096,
            write_bytes: chunk,
            order: Order::Neediest,
            pass_streams: None,
            direct,
            syscall_bytes: None,
            period_frames: None,
            margin: None,
            ring_reserve_frames: None,
            read_whole: false,
            source,
        }
    }

    /// Replaces the chunk (and the read and write sizes that follow from it) and keeps the rest.
    pub fn with_chunk(mut self, chunk: u64) -> Policy {
        let scale_reads =
            self.read_min_bytes == self.chunk_bytes && self.read_max_bytes == self.chunk_bytes;
        self.chunk_bytes = chunk;
        self.refill_at_bytes = chunk;
        self.write_bytes = chunk;
        if scale_reads {
            self.read_min_bytes = chunk;
            self.read_max_bytes = chunk;
            self.read_round_bytes = chunk;
        }
        self
    }

    /// Replaces the seconds of audio per ring.
    pub fn with_buffer(mut self, seconds: f64) -> Policy {
        self.buffer_s = seconds;
        self
    }

    pub fn validate(&self) -> Result<()> {
        let c = self.chunk_bytes;
        if c == 0 || !c.is_multiple_of(4096) || c > 64 << 20 {
            return Err(Error::invalid(
                "chunk",
                crate::units::fmt_size(c),
                "a multiple of 4K from 4K to 64M (O_DIRECT needs whole 4 KiB blocks)",
            ));
        }
        if !(self.buffer_s > 0.0 && self.buffer_s <= 600.0) {
            return Err(Error::invalid(
                "buffer",
                format!("{}s", self.buffer_s),
                "more than 0 and at most 600 s",
            ));
        }
        assert!(
            self.read_round_bytes.is_multiple_of(4096) && self.write_bytes.is_multiple_of(4096),
            "profile sizes are whole 4 KiB blocks"
        );
        assert!(
            self.ring_reserve_frames
                .is_none_or(|r| (r + 1).is_power_of_two() && r + 1 >= 4096),
            "a ring's reservation is a power of two of frames less one, at least 4095"
        );
        Ok(())
    }

    /// How many bytes one read takes from `free` bytes of room (0: not yet).
    pub fn read_len(&self, free: u64) -> u64 {
        if free < self.refill_at_bytes {
            return 0;
        }
        let want = free
            .clamp(self.read_min_bytes, self.read_max_bytes)
            .min(free);
        want / self.read_round_bytes * self.read_round_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ardour_medium_reads_about_a_megabyte_of_float() {
        let f = Format::parse("48k/32f/mono").unwrap();
        let p = Policy::named("ardour-medium", &f).unwrap();
        assert_eq!(p.chunk_bytes, 262_144 * 4);
        assert_eq!(p.buffer_s, 10.0);
        assert_eq!(p.order, Order::Session);
        assert!(!p.direct);
        // A steady refill: once a chunk (1 MiB) is free, read the free space rounded to 16 KiB.
        assert_eq!(p.read_len(1_000_000), 0);
        assert_eq!(p.read_len(1 << 20), 1 << 20);
        assert_eq!(p.read_len((1 << 20) + 5000), 1 << 20);
        assert_eq!(p.read_len(9 << 20), 4 << 20);
    }

    /// Ardour reads integer files through libsndfile's 8 KiB conversion buffer and float files
    /// in one call (strace of Ardour 7.3's butler); it plays 1024-frame periods and fails only
    /// when a ring runs dry. trackbench's own engine keeps its period and margin.
    #[test]
    fn ardour_reads_as_libsndfile_does_and_fails_only_when_dry() {
        let f = |s: &str| Format::parse(s).unwrap();
        let p = Policy::named("ardour-small", &f("48k/24/mono")).unwrap();
        assert_eq!(p.syscall_bytes, Some(8190));
        assert_eq!(p.period_frames, Some(1024));
        assert_eq!(p.margin, Some(0.0));
        let p16 = Policy::named("ardour-large", &f("44.1k/16/stereo")).unwrap();
        assert_eq!(p16.syscall_bytes, Some(8192));
        let pf = Policy::named("ardour-medium", &f("48k/32f/mono")).unwrap();
        assert_eq!(pf.syscall_bytes, None);
        let t = Policy::named("trackbench", &f("48k/24/mono")).unwrap();
        assert_eq!(
            (t.syscall_bytes, t.period_frames, t.margin),
            (None, None, None)
        );
    }

    #[test]
    fn default_reads_whole_chunks_and_unknown_names_are_listed() {
        let p = Policy::named("trackbench", &Format::default()).unwrap();
        assert_eq!(p.read_len(255 << 10), 0);
        assert_eq!(p.read_len(700 << 10), 256 << 10);
        let p = p.with_chunk(64 << 10);
        assert_eq!(p.read_len(700 << 10), 64 << 10);
        let e = Policy::named("logic", &Format::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("logic") && e.contains("ardour-medium") && e.contains("cubase-vst"),
            "{e}"
        );
        for (name, _) in PROFILES {
            Policy::named(name, &Format::default())
                .unwrap()
                .validate()
                .unwrap();
        }
    }

    #[test]
    fn sampler_profiles_in_bytes_and_blocks() {
        let f = Format::parse("48k/24/stereo").unwrap();
        let ls = SamplerPolicy::named("linuxsampler", &f).unwrap();
        assert_eq!(ls.preload_bytes, 32_768 * 6);
        assert_eq!(ls.policy.chunk_bytes, 65_536 * 6);
        assert_eq!(
            crate::engine::ring::Ring::capacity_for(
                ls.policy.buffer_s,
                f.bytes_per_second(),
                ls.policy.chunk_bytes,
                ls.policy.min_ring_chunks
            ),
            262_144 * 6
        );
        assert_eq!(ls.policy.read_len(6144), 0, "less than 1024 frames free");
        assert_eq!(ls.policy.read_len(8192), 8192);
        assert_eq!(ls.policy.pass_streams, Some(4));
        let sp = SamplerPolicy::named("spectrasonics", &f).unwrap();
        assert_eq!(
            sp.preload_bytes, 360_448,
            "60,000 frames of 6 bytes, whole blocks"
        );
        assert_eq!(
            SamplerPolicy::named("kontakt", &f).unwrap().preload_bytes,
            61_440
        );
        for (name, _) in SAMPLER_PROFILES {
            SamplerPolicy::named(name, &f)
                .unwrap()
                .policy
                .validate()
                .unwrap();
        }
        let e = SamplerPolicy::named("halion", &f).unwrap_err().to_string();
        assert!(e.contains("halion") && e.contains("sfizz"), "{e}");
    }

    #[test]
    fn cubase_buffers_four_blocks() {
        let f = Format::default();
        let p = Policy::named("cubase-vst", &f).unwrap();
        let ring = crate::engine::ring::Ring::capacity_for(
            p.buffer_s,
            f.bytes_per_second(),
            p.chunk_bytes,
            p.min_ring_chunks,
        );
        assert_eq!(ring, 256 * 1024);
    }
}
