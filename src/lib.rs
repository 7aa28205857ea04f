//! trackbench: storage measured the way audio work needs it — in tracks and voices, with the
//! megabytes, IOPS and latencies underneath. This library measures and never prints.
//!
//! Its rooms are layers, each importing only from those below it (docs/architecture.md):
//! `session` and `suite` run plans of `workloads`; a workload's `--find-max` is a `search`
//! over runs that the `verdict` judges from what the `engine` measured (in real time or
//! virtual time, through `io`); what a run found is a `result` document, which `present`
//! renders and `store` keeps. Beneath them: the data directory (`datadir`), test media
//! (`dataset`), the computers of a studio (`studio`), and the ground (`platform`, `units`,
//! `stats`, `content`, `audio`, `clock`, `error`).

pub mod audio;
pub mod clock;
pub mod content;
pub mod control;
pub mod datadir;
pub mod dataset;
pub mod engine;
pub mod error;
pub mod fio;
pub mod health;
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
pub mod watch;
pub mod workloads;

pub use error::{Error, Result};
