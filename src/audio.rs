//! Audio formats and their data rates, and the RIFF/WAVE (or RF64) headers of trackbench's test media.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How samples are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleType {
    /// Signed integer PCM of 16 or 24 bits.
    Int,
    /// 32-bit IEEE float, as most DAWs record and render internally.
    Float,
}

/// Sample rate, sample depth and channel count of one stream (a track or a voice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Format {
    pub rate_hz: u32,
    pub bits: u16,
    pub sample_type: SampleType,
    pub channels: u16,
}

/// The sample rates trackbench accepts: the ones audio interfaces offer.
pub const RATES_HZ: [u32; 5] = [44_100, 48_000, 88_200, 96_000, 192_000];
const FORMAT_HELP: &str = "rate/depth/channels, e.g. 48k/24/mono, 44.1k/16/stereo, 96k/32f/8 \
(rates 44.1k 48k 88.2k 96k 192k; depths 16, 24, 32f; channels mono, stereo or 1-64)";

impl Default for Format {
    /// 48 kHz, 24-bit, mono: one DAW track, 144 kB/s.
    fn default() -> Self {
        Format {
            rate_hz: 48_000,
            bits: 24,
            sample_type: SampleType::Int,
            channels: 1,
        }
    }
}

impl Format {
    /// Parses `48k/24/mono`, `44.1k/16/stereo`, `96000/32f/2`.
    pub fn parse(s: &str) -> Result<Format> {
        let bad = || Error::invalid("format", s, FORMAT_HELP);
        let parts: Vec<&str> = s.trim().split('/').collect();
        if parts.len() != 3 {
            return Err(bad());
        }
        let rate = parts[0].to_ascii_lowercase();
        let rate_hz = if let Some(k) = rate.strip_suffix("khz").or(rate.strip_suffix('k')) {
            k.parse::<f64>()
                .map(|v| (v * 1000.0).round())
                .map_err(|_| bad())?
        } else {
            rate.strip_suffix("hz")
                .unwrap_or(&rate)
                .parse::<f64>()
                .map_err(|_| bad())?
        };
        let rate_hz = rate_hz as u32;
        if !RATES_HZ.contains(&rate_hz) {
            return Err(bad());
        }
        let (bits, sample_type) = match parts[1].to_ascii_lowercase().as_str() {
            "16" => (16, SampleType::Int),
            "24" => (24, SampleType::Int),
            "32f" | "32" | "float" => (32, SampleType::Float),
            _ => return Err(bad()),
        };
        let channels = match parts[2].to_ascii_lowercase().as_str() {
            "mono" => 1,
            "stereo" => 2,
            n => match n.parse::<u16>() {
                Ok(c) if (1..=64).contains(&c) => c,
                _ => return Err(bad()),
            },
        };
        Ok(Format {
            rate_hz,
            bits,
            sample_type,
            channels,
        })
    }

    /// Bytes of one frame (one sample of every channel).
    pub fn bytes_per_frame(&self) -> u64 {
        u64::from(self.bits / 8) * u64::from(self.channels)
    }

    /// The stream's data rate.
    pub fn bytes_per_second(&self) -> u64 {
        self.bytes_per_frame() * u64::from(self.rate_hz)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = if self.rate_hz.is_multiple_of(1000) {
            format!("{}k", self.rate_hz / 1000)
        } else {
            format!("{}k", f64::from(self.rate_hz) / 1000.0)
        };
        let depth = match self.sample_type {
            SampleType::Int => self.bits.to_string(),
            SampleType::Float => "32f".to_string(),
        };
        let ch = match self.channels {
            1 => "mono".to_string(),
            2 => "stereo".to_string(),
            n => n.to_string(),
        };
        write!(f, "{rate}/{depth}/{ch}")
    }
}

/// Where the audio data of every trackbench WAV file starts: one aligned block, so that O_DIRECT I/O
/// on the data never straddles the header. The gap is a standard `JUNK` chunk that readers skip.
pub const DATA_OFFSET: u64 = 4096;

/// The largest data size a plain RIFF file can describe; beyond it the header is RF64.
const RIFF_MAX: u64 = u32::MAX as u64;

/// Rounds a wanted data size down to what a file of this format can hold: whole frames and whole
/// 4 KiB blocks (so every block carries a content tag and O_DIRECT can write the last one).
pub fn data_len_for(format: &Format, wanted: u64) -> u64 {
    let unit = lcm(4096, format.bytes_per_frame());
    wanted / unit * unit
}

/// The least common multiple.
pub fn lcm(a: u64, b: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    a / gcd(a, b) * b
}

/// The first `DATA_OFFSET` bytes of a WAV file holding `data_len` bytes of audio in `format`:
/// RIFF/WAVE (or RF64 above 4 GiB), a `fmt ` chunk (PCM, IEEE float, or WAVE_FORMAT_EXTENSIBLE
/// for more than two channels), a `fact` chunk for float, a `JUNK` pad, and the `data` chunk header.
pub fn wav_header(format: &Format, data_len: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(DATA_OFFSET as usize);
    let rf64 = data_len + DATA_OFFSET - 8 > RIFF_MAX;
    let riff_size = DATA_OFFSET - 8 + data_len;
    h.extend_from_slice(if rf64 { b"RF64" } else { b"RIFF" });
    put_u32(&mut h, if rf64 { u32::MAX } else { riff_size as u32 });
    h.extend_from_slice(b"WAVE");
    let frames = data_len / format.bytes_per_frame();
    if rf64 {
        h.extend_from_slice(b"ds64");
        put_u32(&mut h, 28);
        h.extend_from_slice(&riff_size.to_le_bytes());
        h.extend_from_slice(&data_len.to_le_bytes());
        h.extend_from_slice(&frames.to_le_bytes());
        put_u32(&mut h, 0);
    }
    let float = format.sample_type == SampleType::Float;
    let extensible = format.channels > 2;
    let tag: u16 = if extensible {
        0xFFFE
    } else if float {
        3
    } else {
        1
    };
    let fmt_len: u32 = if extensible {
        40
    } else if float {
        18
    } else {
        16
    };
    h.extend_from_slice(b"fmt ");
    put_u32(&mut h, fmt_len);
    put_u16(&mut h, tag);
    put_u16(&mut h, format.channels);
    put_u32(&mut h, format.rate_hz);
    put_u32(&mut h, format.bytes_per_second() as u32);
    put_u16(&mut h, format.bytes_per_frame() as u16);
    put_u16(&mut h, format.bits);
    if extensible {
        put_u16(&mut h, 22);
        put_u16(&mut h, format.bits);
        put_u32(&mut h, 0); // no speaker positions claimed
        // KSDATAFORMAT_SUBTYPE_PCM or _IEEE_FLOAT: {0000000X-0000-0010-8000-00aa00389b71}
        put_u32(&mut h, if float { 3 } else { 1 });
        h.extend_from_slice(&[
            0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71,
        ]);
    } else if float {
        put_u16(&mut h, 0);
    }
    if float {
        h.extend_from_slice(b"fact");
        put_u32(&mut h, 4);
        put_u32(&mut h, frames.min(RIFF_MAX) as u32);
    }
    let pad = DATA_OFFSET as usize - 8 - h.len() - 8;
    h.extend_from_slice(b"JUNK");
    put_u32(&mut h, pad as u32);
    h.resize(h.len() + pad, 0);
    h.extend_from_slice(b"data");
    put_u32(&mut h, if rf64 { u32::MAX } else { data_len as u32 });
    debug_assert_eq!(h.len() as u64, DATA_OFFSET);
    h
}

fn put_u16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn put_u32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// 24-bit full scale: the largest positive sample.
pub const I24_MAX: i32 = 8_388_607;

/// The gain that brings a signal peaking at `peak` (absolute) to full scale; 1 for silence.
pub fn normalise_gain(peak: f32) -> f64 {
    if peak > 0.0 && peak.is_finite() {
        1.0 / f64::from(peak)
    } else {
        1.0
    }
}

/// A 32-bit float sample as a 24-bit one after `gain`: scaled so 1.0 is full scale, rounded to
/// the nearest step (halves away from zero), and clipped to the 24-bit range.
pub fn f32_to_i24(x: f32, gain: f64) -> i32 {
    let v = (f64::from(x) * gain * f64::from(I24_MAX)).round();
    v.clamp(f64::from(-I24_MAX - 1), f64::from(I24_MAX)) as i32
}

/// Converts `src` (little-endian 32-bit floats) to little-endian 24-bit samples in `dst` (three
/// bytes each) after `gain`.
pub fn convert_f32_to_i24(src: &[u8], gain: f64, dst: &mut [u8]) {
    for (i, s) in src.chunks_exact(4).enumerate() {
        let x = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        let v = f32_to_i24(x, gain).to_le_bytes();
        dst[3 * i..3 * i + 3].copy_from_slice(&v[..3]);
    }
}

/// The largest absolute value of `src` (little-endian 32-bit floats).
pub fn peak_f32(src: &[u8]) -> f32 {
    src.chunks_exact(4)
        .map(|s| f32::from_le_bytes([s[0], s[1], s[2], s[3]]).abs())
        .fold(0.0f32, f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_24_bit_is_sample_exact() {
        // Full scale, its negative, clipping beyond it.
        assert_eq!(f32_to_i24(1.0, 1.0), I24_MAX);
        assert_eq!(f32_to_i24(-1.0, 1.0), -I24_MAX);
        assert_eq!(f32_to_i24(1.5, 1.0), I24_MAX);
        assert_eq!(f32_to_i24(-1.5, 1.0), -I24_MAX - 1);
        // Rounding to the nearest step, halves away from zero.
        // (A gain puts a sample exactly half a step up: floats cannot hold half a 24-bit step
        // near zero exactly.)
        let step = 1.0 / I24_MAX as f64;
        assert_eq!(f32_to_i24(1.0, 0.5 * step), 1);
        assert_eq!(f32_to_i24(1.0, 0.49 * step), 0);
        assert_eq!(f32_to_i24(-1.0, 0.5 * step), -1);
        assert_eq!(f32_to_i24(1.0, 1.5 * step), 2);
        assert_eq!(f32_to_i24(0.0, 1.0), 0);
        // Normalising: a signal peaking at 0.25 reaches full scale; silence stays silent.
        let g = normalise_gain(0.25);
        assert_eq!(f32_to_i24(0.25, g), I24_MAX);
        assert_eq!(f32_to_i24(-0.25, g), -I24_MAX);
        assert_eq!(f32_to_i24(0.125, g), 4_194_304);
        assert_eq!(normalise_gain(0.0), 1.0);
        let src: Vec<u8> = [0.0f32, 0.25, -0.25, 0.0625]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(peak_f32(&src), 0.25);
        let mut dst = [0u8; 12];
        convert_f32_to_i24(&src, normalise_gain(peak_f32(&src)), &mut dst);
        let back: Vec<i32> = dst
            .chunks(3)
            .map(|b| {
                i32::from_le_bytes([b[0], b[1], b[2], if b[2] & 0x80 != 0 { 0xff } else { 0 }])
            })
            .collect();
        assert_eq!(back, [0, I24_MAX, -I24_MAX, 2_097_152]);
        let silence = [0u8; 8];
        let mut out = [1u8; 6];
        convert_f32_to_i24(&silence, normalise_gain(peak_f32(&silence)), &mut out);
        assert_eq!(out, [0; 6]);
    }

    #[test]
    fn parses_formats_and_rates() {
        let f = Format::parse("48k/24/mono").unwrap();
        assert_eq!(f, Format::default());
        assert_eq!(f.bytes_per_second(), 144_000);
        let f = Format::parse("44.1k/16/stereo").unwrap();
        assert_eq!(f.rate_hz, 44_100);
        assert_eq!(f.bytes_per_second(), 176_400);
        assert_eq!(f.to_string(), "44.1k/16/stereo");
        let f = Format::parse("96000/32f/8").unwrap();
        assert_eq!(f.bytes_per_second(), 96_000 * 4 * 8);
        assert_eq!(
            Format::parse("192k/24/mono").unwrap().bytes_per_second(),
            576_000
        );
        assert_eq!(
            Format::parse("48k/32f/mono").unwrap().bytes_per_second(),
            192_000
        );
        assert_eq!(Format::parse("88.2khz/24/2").unwrap().rate_hz, 88_200);
    }

    #[test]
    fn rejects_bad_formats_with_help() {
        for bad in [
            "48k/24",
            "47k/24/mono",
            "48k/20/mono",
            "48k/24/0",
            "48k/24/65",
            "fast",
        ] {
            let e = Format::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("48k/24/mono"), "{e}");
        }
    }

    #[test]
    fn data_len_is_whole_frames_and_blocks() {
        let f = Format::default();
        let n = data_len_for(&f, 1 << 20);
        assert_eq!(n % 3, 0);
        assert_eq!(n % 4096, 0);
        assert!(n <= 1 << 20 && n > (1 << 20) - 12288);
    }

    #[test]
    fn header_layout() {
        for f in ["48k/24/mono", "44.1k/16/stereo", "48k/32f/mono", "96k/24/6"] {
            let f = Format::parse(f).unwrap();
            let len = data_len_for(&f, 1 << 20);
            let h = wav_header(&f, len);
            assert_eq!(h.len() as u64, DATA_OFFSET);
            assert_eq!(&h[0..4], b"RIFF");
            assert_eq!(&h[8..12], b"WAVE");
            let riff = u32::from_le_bytes(h[4..8].try_into().unwrap()) as u64;
            assert_eq!(riff, DATA_OFFSET - 8 + len);
            assert_eq!(&h[4088..4092], b"data");
            let d = u32::from_le_bytes(h[4092..4096].try_into().unwrap()) as u64;
            assert_eq!(d, len);
        }
    }

    #[test]
    fn rf64_above_4_gib() {
        let f = Format::default();
        let len = data_len_for(&f, 5 << 30);
        let h = wav_header(&f, len);
        assert_eq!(&h[0..4], b"RF64");
        assert_eq!(&h[12..16], b"ds64");
        assert_eq!(u64::from_le_bytes(h[28..36].try_into().unwrap()), len);
        assert_eq!(h.len() as u64, DATA_OFFSET);
    }
}
