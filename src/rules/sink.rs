//! The [`Sink`] every rule reports into: it applies the [`Policy`] as findings are made.

use super::policy::Policy;
use crate::diagnostics::{Code, Diagnostic, Severity};

/// Collects findings for one entry (or the registry), applying the policy on the way in.
pub struct Sink<'p> {
    policy: &'p Policy,
    entry: Option<String>,
    /// The findings kept so far.
    pub diagnostics: Vec<Diagnostic>,
}

impl<'p> Sink<'p> {
    /// A sink for findings about `entry` (`None`: registry-wide).
    pub fn new(policy: &'p Policy, entry: Option<String>) -> Self {
        Self {
            policy,
            entry,
            diagnostics: Vec::new(),
        }
    }

    /// Keep `diagnostic` unless the policy drops it, at its configured severity.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        if let Some(d) = self.policy.apply(self.entry.as_deref(), diagnostic) {
            self.diagnostics.push(d);
        }
    }

    /// The policy applied.
    pub fn policy(&self) -> &Policy {
        self.policy
    }

    /// The severity of `sha256-missing` for this sink's entry (`None`: not reported).
    pub fn sha256_missing_severity(&self) -> Option<Severity> {
        self.policy.sha256_missing_severity(self.entry.as_deref())
    }

    /// Whether findings of `code` are kept for this sink's entry: a rule skips the work
    /// whose every finding the policy would drop.
    pub fn keeps(&self, code: Code) -> bool {
        self.policy.keeps(code, self.entry.as_deref())
    }
}
