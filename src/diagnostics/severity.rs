//! How serious a finding is.

use std::fmt;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
/// How serious a finding is; the order is the severity order.
pub enum Severity {
    /// Information; never fails a run.
    Note,
    /// Fails the run only with `--deny-warnings`.
    Warning,
    /// Fails the run.
    Error,
}

impl Severity {
    /// The lowercase name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
