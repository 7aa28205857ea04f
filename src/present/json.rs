//! The result document as JSON, the machine-readable export.

use crate::error::{Error, Result};
use crate::result::ResultDoc;

pub fn to_string(doc: &ResultDoc) -> Result<String> {
    serde_json::to_string_pretty(doc)
        .map_err(|e| Error::io("cannot write the result as JSON", std::io::Error::other(e)))
}

/// The document as pretty-printed JSON.
pub struct Json;

impl super::Presenter for Json {
    fn name(&self) -> &'static str {
        "json"
    }
    fn extension(&self) -> &'static str {
        "json"
    }
    fn render(&self, doc: &ResultDoc) -> Result<String> {
        to_string(doc)
    }
}
