//! The classic measurements' flags (seq, seek, access, mix, zones, sweep): what the sources
//! measured, with the sizes and times each takes.

use super::{Common, IoArgs, block, duration, size};
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use trackbench::workloads::{
    access::Access,
    mix::Mix,
    seek::Seek,
    seq::{Seq, SeqMode},
    sweep::{self, Sweep},
    zones::Zones,
};

#[derive(Args, Debug)]
pub struct SeqArgs {
    /// Directory (read and write), or a file or block device (read only)
    pub path: PathBuf,
    /// Request size
    #[arg(long, default_value = "1M")]
    pub block: String,
    /// Bytes to write and read; large enough to get past device caches
    #[arg(long, default_value = "1G")]
    pub size: String,
    /// Directions to measure [default: both on a directory, read elsewhere]
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Read,
    Write,
    Both,
}

#[derive(Args, Debug)]
pub struct SeekArgs {
    /// Directory (a test file is laid out), file or block device (read-only)
    pub path: PathBuf,
    /// Read size: 4K, or 512 as seeker used
    #[arg(long, default_value = "4K")]
    pub block: String,
    /// How long to measure
    #[arg(long, default_value = "10s")]
    pub duration: String,
    /// Size of the test file on a directory
    #[arg(long, default_value = "1G")]
    pub size: String,
    /// Spindle speed of a disk: shows the rotational share (30000/rpm ms) and the implied seek time
    #[arg(long)]
    pub rpm: Option<u32>,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct AccessArgs {
    pub path: PathBuf,
    /// Transfer size
    #[arg(long, default_value = "64K")]
    pub block: String,
    /// Time for each of the three patterns
    #[arg(long, default_value = "3s")]
    pub duration: String,
    /// Size of the test file on a directory
    #[arg(long, default_value = "1G")]
    pub size: String,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct MixArgs {
    /// Directory to measure (mix writes)
    pub path: PathBuf,
    #[arg(long, default_value = "32K")]
    pub seq_block: String,
    #[arg(long, default_value = "8K")]
    pub random_block: String,
    /// Share of reads in the random phase, in percent
    #[arg(long, default_value_t = 70)]
    pub read_pct: u32,
    /// Time for each phase
    #[arg(long, default_value = "5s")]
    pub duration: String,
    /// Size of the test file
    #[arg(long, default_value = "1G")]
    pub size: String,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct ZonesArgs {
    pub path: PathBuf,
    /// Number of evenly spaced points
    #[arg(long, default_value_t = 16)]
    pub points: u32,
    #[arg(long, default_value = "1M")]
    pub block: String,
    /// Most bytes read at each point
    #[arg(long, default_value = "64M")]
    pub per_point: String,
    /// Most time spent at each point
    #[arg(long, default_value = "1s")]
    pub duration: String,
    /// Size of the test file on a directory
    #[arg(long, default_value = "1G")]
    pub size: String,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Directory to measure
    pub path: PathBuf,
    /// Number of files read round robin
    #[arg(long, default_value_t = 8)]
    pub files: u32,
    /// Block sizes, comma separated
    #[arg(
        long,
        default_value = "4K,8K,16K,32K,64K,128K,256K,512K,1M",
        value_delimiter = ','
    )]
    pub blocks: Vec<String>,
    /// Time at each block size
    #[arg(long, default_value = "2s")]
    pub duration: String,
    /// Size of each file
    #[arg(long, default_value = "128M")]
    pub file_size: String,
    /// Seconds of audio each track's buffer holds, for the RAM columns
    #[arg(long, default_value = "2s")]
    pub buffer: String,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

impl SeqArgs {
    pub fn workload(&self, kind: trackbench::target::TargetKind) -> Result<Seq> {
        Ok(Seq {
            block: block("block size", &self.block)?,
            size: size("size", &self.size)?,
            mode: match self.mode {
                None => trackbench::workloads::seq::default_mode(kind),
                Some(ModeArg::Read) => SeqMode::Read,
                Some(ModeArg::Write) => SeqMode::Write,
                Some(ModeArg::Both) => SeqMode::Both,
            },
        })
    }
}

impl SeekArgs {
    pub fn workload(&self) -> Result<Seek> {
        if let Some(rpm) = self.rpm
            && !(1000..=30_000).contains(&rpm)
        {
            bail!(
                "invalid rpm {rpm}: a spindle speed from 1000 to 30000 (e.g. 5400, 7200, 10000, 15000)"
            );
        }
        Ok(Seek {
            block: block("block size", &self.block)?,
            duration: duration("duration", &self.duration)?,
            size: size("size", &self.size)?,
            rpm: self.rpm,
        })
    }
}

impl AccessArgs {
    pub fn workload(&self) -> Result<Access> {
        Ok(Access {
            block: block("block size", &self.block)?,
            duration: duration("duration", &self.duration)?,
            size: size("size", &self.size)?,
        })
    }
}

impl MixArgs {
    pub fn workload(&self) -> Result<Mix> {
        if self.read_pct > 100 {
            bail!("invalid read share {}%: 0 to 100", self.read_pct);
        }
        Ok(Mix {
            seq_block: block("sequential block size", &self.seq_block)?,
            random_block: block("random block size", &self.random_block)?,
            read_pct: self.read_pct,
            duration: duration("duration", &self.duration)?,
            size: size("size", &self.size)?,
        })
    }
}

impl ZonesArgs {
    pub fn workload(&self) -> Result<Zones> {
        if !(2..=1000).contains(&self.points) {
            bail!("invalid points {}: 2 to 1000", self.points);
        }
        Ok(Zones {
            points: self.points,
            block: block("block size", &self.block)?,
            bytes_per_point: size("bytes per point", &self.per_point)?,
            duration: duration("duration", &self.duration)?,
            size: size("size", &self.size)?,
        })
    }
}

impl SweepArgs {
    pub fn workload(&self) -> Result<Sweep> {
        if !(1..=10_000).contains(&self.files) {
            bail!("invalid files {}: 1 to 10000", self.files);
        }
        let mut blocks = Vec::new();
        for b in &self.blocks {
            blocks.push(block("block size", b).with_context(|| "in --blocks".to_string())?);
        }
        if blocks.is_empty() {
            blocks = sweep::DEFAULT_BLOCKS.to_vec();
        }
        let buffer = duration("buffer", &self.buffer)?;
        Ok(Sweep {
            files: self.files,
            blocks,
            duration: duration("duration", &self.duration)?,
            file_size: size("file size", &self.file_size)?,
            buffer,
            memory_limit: None,
        })
    }
}
