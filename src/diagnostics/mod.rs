//! One `Diagnostic` type for every finding, and one renderer per output format.
//!
//! Ground floor: imports only the shared `source` positions. A finding carries its typed
//! [`Code`] (the catalogue lives here so every layer can name one); renderers take a
//! finished [`Report`] and never re-derive anything from it; what they print from the
//! registry goes through [`escape`].
//!
//! A [`Report`] sorts its findings by file, line, column, code and message and drops duplicates,
//! so output never depends on the order rules ran in. Escaping happens here, at the renderer:
//! terminal (control and bidi characters as `\u{…}`, no line starting a workflow command, the
//! excerpt's span moved along), workflow-command, Markdown-cell and SARIF escapes; JSON is left
//! to serde.

mod code;
mod diagnostic;
mod format;
// The escaper is shared with `acp-collab`, so it lives in the core.
pub(crate) use acp_registry_core::escape;
mod github;
mod human;
mod json;
mod report;
mod sarif;
mod severity;

pub(crate) use code::{
    did_you_mean, explain, nearest, pin_digests_command, UnknownCode, PIN_DIGESTS_COMMAND,
};
pub use code::{rules_markdown, Code};
pub(crate) use diagnostic::{Diagnostic, Fix, FixEdit};
pub(crate) use format::{append_step_summary, write_report};
pub use format::{render, ReportFormat};
pub use github::render_github_summary;
pub(crate) use human::{render_human, render_human_findings};
#[cfg(test)]
pub(crate) use json::render_json;
pub(crate) use json::{json_document, json_text};
pub use report::Report;
pub use severity::Severity;
