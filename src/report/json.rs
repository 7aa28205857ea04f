//! The result document as JSON, the machine-readable export.

use crate::error::{Error, Result};
use crate::result::ResultDoc;
use std::path::Path;

pub fn to_string(doc: &ResultDoc) -> String {
    serde_json::to_string_pretty(doc).expect("result documents serialise")
}

/// Writes the document to `path` (`-` for standard output is handled by the caller).
pub fn write(doc: &ResultDoc, path: &Path) -> Result<()> {
    std::fs::write(path, to_string(doc) + "\n")
        .map_err(|e| Error::io(format!("cannot write the result to {}", path.display()), e))
}
