//! Commands: what each subcommand does, between argument parsing (the binaries) and the
//! domain (`registry`, `rules`). Each returns an exit code; output goes to the writers given.

pub mod build;
pub mod explain;
pub mod online;
pub mod validate;

use std::io::IsTerminal;

/// Exit codes shared by every command.
pub mod exit {
    pub const OK: u8 = 0;
    pub const FINDINGS: u8 = 1;
    pub const FAILURE: u8 = 2;
}

/// Colour on a terminal unless `NO_COLOR` is set (to anything non-empty).
pub fn use_color() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// The same for output written to stderr.
pub fn use_color_stderr() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}
