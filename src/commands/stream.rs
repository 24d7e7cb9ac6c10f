//! [`Stream`]: the standard stream a command writes to, and whether it may be coloured.

use std::io::IsTerminal;

/// A standard stream a command writes its report or progress to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    /// Whether the stream is a terminal (progress bars are drawn only there).
    pub fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }

    /// Colour on a terminal unless `NO_COLOR` is set (to anything non-empty).
    pub fn use_color(self) -> bool {
        std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && self.is_terminal()
    }
}
