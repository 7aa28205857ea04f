//! Presentation of result documents. The library renders to strings; only the binary prints.
//! One presenter per format behind [`Presenter`]; a new format is one new file and one line in
//! [`PRESENTERS`].

pub mod compare;
pub mod json;
pub mod terminal;

use crate::error::Result;
use crate::result::ResultDoc;

/// One way of showing a finished result document.
pub trait Presenter: Sync {
    /// The format's name, as commands name it.
    fn name(&self) -> &'static str;
    /// The whole document in this format.
    fn render(&self, doc: &ResultDoc) -> Result<String>;
}

/// Every format a result renders to.
pub const PRESENTERS: &[&dyn Presenter] = &[&terminal::Terminal, &json::Json];

/// The presenter called `name`.
pub fn presenter(name: &str) -> Option<&'static dyn Presenter> {
    PRESENTERS.iter().copied().find(|p| p.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_presenter_is_found_by_its_own_name() {
        for p in PRESENTERS {
            assert_eq!(presenter(p.name()).map(|q| q.name()), Some(p.name()));
        }
        assert!(presenter("terminal").is_some() && presenter("json").is_some());
        assert!(presenter("pdf").is_none());
    }
}
