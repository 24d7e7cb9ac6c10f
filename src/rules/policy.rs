//! The validation policy: what `acp-registry.jsonc` configures about rules.

use std::collections::{BTreeMap, BTreeSet};

use super::Code;
use crate::diagnostics::{Diagnostic, Severity};

/// OS families a binary distribution must cover by default.
pub const DEFAULT_REQUIRED_OS: [&str; 3] = ["darwin", "linux", "windows"];

/// A configured severity: a level, or `off` to drop the finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Off,
    On(Severity),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Per-code severity overrides.
    pub severity: BTreeMap<Code, Level>,
    /// Per-id exemptions: findings of these codes are dropped for that entry.
    pub exemptions: BTreeMap<String, BTreeSet<Code>>,
    /// OS families (`darwin`, `linux`, `windows`) binary distributions must cover.
    pub required_os: Vec<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            severity: BTreeMap::new(),
            exemptions: BTreeMap::new(),
            required_os: DEFAULT_REQUIRED_OS.iter().map(|s| s.to_string()).collect(),
        }
    }
}

impl Policy {
    /// Apply overrides and exemptions to a finding about `entry` (None: registry-wide).
    pub fn apply(
        &self,
        code: Code,
        entry: Option<&str>,
        mut diagnostic: Diagnostic,
    ) -> Option<Diagnostic> {
        if let Some(id) = entry {
            if self
                .exemptions
                .get(id)
                .is_some_and(|codes| codes.contains(&code))
            {
                return None;
            }
        }
        match self.severity.get(&code) {
            Some(Level::Off) => None,
            Some(Level::On(severity)) => {
                diagnostic.severity = *severity;
                Some(diagnostic)
            }
            None => Some(diagnostic),
        }
    }

    /// Whether a code can produce findings at all (so expensive checks can be skipped).
    pub fn enabled(&self, code: Code) -> bool {
        self.severity.get(&code) != Some(&Level::Off)
    }
}
