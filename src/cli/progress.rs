//! Progress bars on stderr (indicatif), fed by the library's progress callbacks.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::RefCell;
use trackbench::control::{Progress, ProgressUnit};

pub struct Bars {
    bar: RefCell<Option<ProgressBar>>,
    quiet: bool,
}

impl Bars {
    pub fn new(quiet: bool) -> Bars {
        Bars {
            bar: RefCell::new(None),
            quiet,
        }
    }

    /// Prints a line above any bar, on stderr.
    pub fn note(&self, msg: &str) {
        match self.bar.borrow().as_ref() {
            Some(b) => b.suspend(|| eprintln!("{msg}")),
            None => eprintln!("{msg}"),
        }
    }
}

impl Progress for Bars {
    fn begin(&self, label: &str, total: u64, unit: ProgressUnit) {
        if self.quiet {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let tpl = match unit {
            ProgressUnit::Bytes => "{msg:32} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
            ProgressUnit::Millis => "{msg:32} [{bar:30}] {elapsed}",
            ProgressUnit::Count => "{msg:32} [{bar:30}] {pos}/{len} {per_sec}",
        };
        if let Ok(style) = ProgressStyle::with_template(tpl) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(label.to_string());
        *self.bar.borrow_mut() = Some(bar);
    }

    fn set(&self, position: u64) {
        if let Some(b) = self.bar.borrow().as_ref() {
            b.set_position(position);
        }
    }

    fn end(&self) {
        if let Some(b) = self.bar.borrow_mut().take() {
            b.finish_and_clear();
        }
    }
}
