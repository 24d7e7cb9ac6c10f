//! acp-collab: the Agent Collaboration Protocol engine (the contract: `docs/collab-protocol.md`).
//!
//! `acp-collab` implements the five commands of the published v2 scripts:
//! [`init()`], [`append()`], [`next_action()`], [`wait_for_turn()`] and
//! [`validate()`]. Folders stay interchangeable with the scripts; the
//! deliberate differences (serialised appends, tolerated partial lines,
//! refused symlinks, exit 2 for internal failures, corrected guidance, `ready:`
//! first and no busy waiting) are listed at the end of that document.
//!
//! One file per concern: [`spec`] (the protocol's fixed tables), [`paths`] (path rules and
//! symlink refusal), [`protocol`] (`protocol.json`), [`events`] (log I/O and
//! locking), [`record`] (one decoded line), [`state`] (replay), [`markdown`] (readiness, conclusion,
//! content, decisions, review headings), [`templates`], [`cli`] (what each command prints), and one module per
//! command.

pub mod acp;
pub mod append;
pub mod cli;
pub mod events;
pub mod guide;
pub mod init;
pub mod markdown;
pub mod next;
pub mod paths;
pub mod protocol;
pub mod pyfmt;
pub mod record;
pub mod skill;
pub mod spec;
pub mod state;
pub mod status;
pub mod templates;
pub mod validate;
pub mod wait;

// The safe reads, atomic writes and timestamps of the core, under the paths the modules use.
use acp_registry_core::{fs, time};

pub use append::{append, append_with, AppendOptions, Appended};
pub use guide::Invocation;
pub use init::{init, InitOptions, InitOutcome};
pub use next::{next_action, next_action_with, NextAction};
pub use status::{log, status, Status};
pub use validate::{validate, Report};
pub use wait::{wait_for_turn, WaitOptions, WaitOutcome};

/// A command failure. Both kinds exit 2; they differ in how they are printed.
#[derive(Debug, thiserror::Error)]
pub enum CollabError {
    /// Invalid arguments: printed argparse-style, `usage: …` then
    /// `«command»: error: «message»`.
    #[error("{0}")]
    Usage(String),
    /// A protocol refusal or an internal failure: printed as `error: «message»`.
    #[error("{0}")]
    Protocol(String),
    /// A protocol refusal and the way forward: printed as `error: «message»` (the published
    /// text, unchanged), then `  «hint»` (whose turn it is and what to run).
    #[error("{message}")]
    Refused {
        /// The refusal, as the published scripts word it.
        message: String,
        /// What to do instead, with the command to run.
        hint: String,
    },
    /// `append` flags that are missing or invalid, all of them at once: printed as
    /// `error: «messages joined with '; '»` (the first being the published one), then one
    /// `  --«flag»: «what to pass»` line each.
    #[error("{}", .0.iter().map(|p| p.message.as_str()).collect::<Vec<_>>().join("; "))]
    Flags(Vec<FlagProblem>),
}

/// One missing or invalid `append` flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagProblem {
    /// The flag without dashes (`reply-to`).
    pub flag: &'static str,
    /// The published message (`reply_to is required after initialized`).
    pub message: String,
    /// What to pass instead.
    pub hint: String,
}
