//! The real-time streaming model: per-track rings, the audio tick, the butler's policies, xrun
//! accounting and telemetry — run against real disks with threads, or against a simulated device
//! in virtual time, with the same ring, policy and accounting code.

pub mod ring;
