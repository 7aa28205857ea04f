//! Presentation of result documents. The library renders to strings; only the binary prints.

pub mod json;
pub mod terminal;
