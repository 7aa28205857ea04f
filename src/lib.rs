//! trackbench: storage measured the way audio work needs it — in tracks and voices, with the
//! megabytes, IOPS and latencies underneath. This library measures and never prints.

pub mod audio;
pub mod clock;
pub mod content;
pub mod control;
pub mod datadir;
pub mod dataset;
pub mod engine;
pub mod error;
pub mod fio;
pub mod host;
pub mod io;
pub mod memory;
pub mod platform;
pub mod present;
pub mod result;
pub mod search;
pub mod session;
pub mod stats;
pub mod store;
pub mod studio;
pub mod suite;
pub mod target;
pub mod units;
pub mod verdict;
pub mod workloads;

pub use error::{Error, Result};
