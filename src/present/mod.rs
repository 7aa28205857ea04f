//! Presentation of result documents. The library renders to strings; only the binary prints.
//! One presenter per format behind [`Presenter`]; a new format is one new file and one line in
//! [`PRESENTERS`].

pub mod answer;
pub mod charts;
pub mod compare;
pub mod html;
pub mod json;
pub mod markdown;
pub mod output;
pub mod studio;
pub mod summary;
pub mod terminal;
pub mod words;

use crate::error::Result;
use crate::result::ResultDoc;

/// A figure's value as every presenter shows it: scaled to its display unit, or a size in K/M/G.
pub fn shown(def: &crate::result::metrics::Def, v: f64) -> String {
    match def.show {
        crate::result::metrics::Show::Num(k) => crate::units::fmt_figure(v * k),
        crate::result::metrics::Show::Size => crate::units::fmt_size(v.max(0.0) as u64),
    }
}

/// One way of showing a finished result document.
pub trait Presenter: Sync {
    /// The format's name, as commands name it (`report --to NAME`).
    fn name(&self) -> &'static str;
    /// The extension of a file in this format.
    fn extension(&self) -> &'static str;
    /// The whole document in this format.
    fn render(&self, doc: &ResultDoc) -> Result<String>;
}

/// Every format a result renders to.
pub const PRESENTERS: &[&dyn Presenter] = &[
    &terminal::Terminal,
    &json::Json,
    &html::Html,
    &markdown::Markdown,
];

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
        let names: Vec<_> = PRESENTERS.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["terminal", "json", "html", "markdown"]);
    }
}
