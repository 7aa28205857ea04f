//! The real-time streaming engine: per-track rings, the audio tick, the butler's policies, xrun
//! accounting and telemetry — run against real disks with threads (`real_time`), or against a
//! simulated device in virtual time (`virtual_time`), through one loop (`stream_loop`) with the
//! same ring, policy and accounting code. A fixed set of tracks or a sampler's voices
//! (`voices`) is what a tick plays. The engine measures; how a run is judged is `verdict`'s.

pub mod butler;
pub mod locate;
pub mod planner;
pub mod profile;
pub mod real_time;
pub mod ring;
pub mod seams;
pub mod shape;
pub mod spec;
pub mod spsc;
pub mod stream_loop;
pub mod telemetry;
pub mod tick;
pub mod track;
pub mod virtual_time;
pub mod voices;

pub use profile::{Order, Policy};
pub use spec::{ButlerMode, DEFAULT_MARGIN, DEFAULT_PERIOD, Direction, StreamSpec};
pub use telemetry::{FillPoint, Sustain};
pub use track::{Track, TrackReport};
