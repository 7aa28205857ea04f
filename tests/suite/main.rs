//! The integration tests, one binary: the real trackbench on temporary directories, devices and
//! programs. One binary rather than one per file, because cargo runs test binaries one after
//! another while most of these tests wait (on a capped device, on Ardour rolling in real time, on
//! a newcomer's `run`): in one binary they wait at the same time. `.cargo/config.toml` sets how
//! many run at once (`RUST_TEST_THREADS`, which the environment overrides); libtest starts them in
//! name order, so the longest, the newcomer's `run` (`as_a_newcomer`), starts first (Ardour's
//! check, longer still, is CI's step of its own).

mod common;

mod ardour;
mod as_a_newcomer;
mod capped_device;
mod cli;
mod daw;
mod find_max_real;
mod fio_job;
mod fits;
mod health;
mod install;
mod nothing_lost;
mod report;
mod sampler;
mod schema_fixtures;
mod share;
mod slow_tick;
mod store;
mod studio;
mod ui;
mod watch;
mod windows;
