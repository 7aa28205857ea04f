//! The integration tests, one binary: the real trackbench on temporary directories, devices and
//! programs. One binary rather than one per file, because cargo runs test binaries one after
//! another while most of these tests wait (on a capped device, on Ardour rolling in real time, on
//! a newcomer's `run`): in one binary they wait at the same time. `.cargo/config.toml` sets how
//! many run at once (`RUST_TEST_THREADS`, which the environment overrides); libtest starts them in
//! name order, so the longest, Ardour's check, starts first, and with it the newcomer's `run`
//! (below), the longest wait of a plain `cargo test`, where Ardour's check is ignored.

mod common;

mod ardour;
mod capped_device;
mod cli;
mod daw;
mod find_max_real;
mod fio_job;
mod nothing_lost;
mod report;
mod sampler;
mod schema_fixtures;
mod store;
mod studio;
mod ui;
mod windows;

/// The Windows binary, which the Windows tests (last in name order) share: built first, beside
/// the newcomer's run. Cross-built from Linux, as `windows` is.
#[cfg(target_os = "linux")]
mod a_windows_build {
    #[test]
    fn the_windows_binary_builds_and_starts_under_wine() {
        crate::windows::the_windows_binary_builds_and_starts_under_wine();
    }
}

/// A newcomer's `run`, which two tests check: here, first in name order, so that the run starts
/// with the suite instead of when the capped devices' tests free a thread (it waited a minute
/// for one, and the suite's end waited on it).
mod a_newcomers_run {
    #[test]
    fn is_the_standard_suite_with_a_summary() {
        crate::cli::run_is_the_standard_suite_with_a_summary();
    }

    #[test]
    fn stores_its_result_and_writes_a_report_a_browser_draws_whole() {
        crate::report::a_newcomers_run_stores_its_result_and_writes_a_report_a_browser_draws_whole(
        );
    }
}
