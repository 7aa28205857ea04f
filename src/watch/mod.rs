//! A disk watched over time: where the series of its answers stepped beyond its noise.
//! [`steps`] finds the steps in one series; grouping stored results into a disk's series, the
//! `watch` command and the history's marks build on it; [`latest`] judges the newest run against
//! the median of the runs before it.

pub mod latest;
pub mod series;
pub mod steps;
