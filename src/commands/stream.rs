//! [`Stream`]: the standard stream a command writes to, whether it may be coloured (the one
//! place `--color`, `NO_COLOR` and `CLICOLOR_FORCE` are read) and whether progress bars are
//! drawn on it (`--quiet` turns them off for the whole process).

use std::ffi::OsStr;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::flags::ColorChoice;

/// A standard stream a command writes its report or progress to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Cleared by `--quiet`: progress bars are drawn only while it is set.
static PROGRESS: AtomicBool = AtomicBool::new(true);

impl Stream {
    /// Whether the stream is a terminal.
    pub fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }

    /// Whether a progress bar may be drawn on the stream: a terminal, and no `--quiet`.
    pub fn shows_progress(self) -> bool {
        PROGRESS.load(Ordering::Relaxed) && self.is_terminal()
    }

    /// `--quiet`: no progress bar from now on, in this process. Called once by the binary.
    pub fn hide_progress() {
        PROGRESS.store(false, Ordering::Relaxed);
    }

    /// Whether to colour what goes to the stream under `--color choice`: `always` and `never`
    /// decide alone; `auto` colours a terminal unless `NO_COLOR` is set (to anything
    /// non-empty), and colours a pipe too when `CLICOLOR_FORCE` is set (non-empty, not `0`);
    /// `NO_COLOR` wins over `CLICOLOR_FORCE`.
    pub fn use_color(self, choice: ColorChoice) -> bool {
        decide(
            choice,
            std::env::var_os("NO_COLOR").as_deref(),
            std::env::var_os("CLICOLOR_FORCE").as_deref(),
            || self.is_terminal(),
        )
    }
}

/// The colour decision of [`Stream::use_color`] from the flag, the two variables and the
/// terminal test (asked only when it matters).
fn decide(
    choice: ColorChoice,
    no_color: Option<&OsStr>,
    force: Option<&OsStr>,
    terminal: impl FnOnce() -> bool,
) -> bool {
    let set = |value: Option<&OsStr>| value.is_some_and(|v| !v.is_empty());
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if set(no_color) => false,
        ColorChoice::Auto if set(force) && force != Some(OsStr::new("0")) => true,
        ColorChoice::Auto => terminal(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_decides_first_then_no_color_then_clicolor_force_then_the_terminal() {
        let some = |text: &'static str| Some(OsStr::new(text));
        assert!(decide(ColorChoice::Always, some("1"), None, || false));
        assert!(!decide(ColorChoice::Never, None, some("1"), || true));
        assert!(decide(ColorChoice::Auto, None, None, || true));
        assert!(!decide(ColorChoice::Auto, None, None, || false));
        assert!(!decide(ColorChoice::Auto, some("1"), None, || true));
        assert!(decide(ColorChoice::Auto, some(""), None, || true));
        assert!(decide(ColorChoice::Auto, None, some("1"), || false));
        assert!(!decide(ColorChoice::Auto, None, some("0"), || false));
        assert!(!decide(ColorChoice::Auto, None, some(""), || false));
        assert!(!decide(ColorChoice::Auto, some("1"), some("1"), || true));
    }
}
