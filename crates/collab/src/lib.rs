//! acp-collab: the Agent Collaboration Protocol engine (the contract: `docs/collab-protocol.md`).
//!
//! `acp-collab` implements the five commands of the published v2 scripts:
//! [`init()`], [`append()`], [`next_action()`], [`wait_for_turn()`] and
//! [`validate()`]. Folders stay interchangeable with the scripts; the
//! deliberate differences (serialised appends, tolerated partial lines,
//! refused symlinks, exit 2 for internal failures, corrected guidance, `ready:`
//! first and no busy waiting) are listed at the end of that document.
//!
//! One file per concern: [`spec`] (the protocol's fixed tables), `error` ([`CollabError`]),
//! `paths` (path rules and symlink refusal), `protocol` (`protocol.json`), `events` (log I/O and
//! locking), `record` (one decoded line), `state` (replay), `markdown` (readiness, conclusion,
//! content, decisions, review headings), `templates`, [`cli`] (what each command prints), and one module per
//! command.

mod acp;
mod append;
mod error;
mod events;
mod guide;
mod init;
mod markdown;
mod paths;
mod protocol;
mod pyfmt;
mod record;
mod state;
mod status;
mod templates;
mod validate;
mod wait;

// The public surface, all of it: what the binary, the tests and the examples use. Every other
// module is private, so `unreachable_pub` flags a `pub` item nothing outside reaches. The
// namespaces hold tables or a family of names that would be vague at the root.

/// What each command prints, and the one entry point the binary calls.
pub mod cli;
/// The next-action lines `next` prints, one constant each.
pub mod next;
/// `skill install`: the agents and files of the bundled skill.
pub mod skill;
/// The protocol's fixed tables: events, files, deliverable types.
pub mod spec;

pub use append::{append, append_with, AppendOptions, Appended};
pub use error::{CollabError, FlagProblem};
pub use events::{format_event_line, read_events, Event};
pub use guide::Invocation;
pub use init::{init, InitOptions, InitOutcome};
pub use markdown::Readiness;
pub use next::{next_action, next_action_with, NextAction};
pub use paths::Sibling;
pub use protocol::Protocol;
pub use state::replay;
pub use status::{log, status, Status};
pub use validate::{validate, Report};
pub use wait::{wait_for_turn, WaitOptions, WaitOutcome};
