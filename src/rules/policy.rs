//! The validation policy: what `acp-registry.jsonc` configures about rules.
//!
//! Applied at the source: rules push findings into a `Sink` that applies severity overrides and
//! per-id exemptions as they arrive (`Sink::keeps` lets a rule skip work whose findings would be
//! dropped), so rules know nothing of configuration. A few rules emit a milder severity for a
//! milder case (`schema-version` of a newer minor version, `auth-type` `api_key`); an override
//! still wins.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostics::{Code, Diagnostic, Severity};

/// OS families a binary distribution must cover by default.
pub(crate) const DEFAULT_REQUIRED_OS: [&str; 3] = ["darwin", "linux", "windows"];

/// Codes a registry's configuration cannot lower below error nor exempt: `build` refuses
/// (or could not publish correctly) what they report whatever the configuration says, so
/// lowering one would let `validate` pass a registry that `build` then refuses. The
/// configuration file comes with the pull request, so it is untrusted too.
pub(crate) const ENFORCED: [Code; 12] = [
    Code::JsoncSyntax,
    Code::NotUtf8,
    Code::FileUnreadable,
    Code::FileLink,
    Code::FileNotRegular,
    Code::FileTooLarge,
    Code::Schema,
    Code::IdFormat,
    Code::DuplicateId,
    Code::IconXml,
    Code::IconRoot,
    Code::IconUnsafe,
];

/// Whether `code` is one of [`ENFORCED`].
pub(crate) fn is_enforced(code: Code) -> bool {
    ENFORCED.contains(&code)
}

/// A configured severity: a level, or `off` to drop the finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The code's findings are dropped.
    Off,
    /// The code's findings get this severity.
    On(Severity),
}

/// `require_sha256`: how strictly binary targets must pin `sha256` (`sha256-missing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RequireSha256 {
    /// Never reported.
    Off,
    /// An error in entries changed since `--changed-since`, a warning elsewhere and in runs
    /// without a base revision (`build`, whole-registry runs).
    #[default]
    Changed,
    /// An error everywhere.
    All,
}

impl RequireSha256 {
    /// The configuration's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RequireSha256::Off => "off",
            RequireSha256::Changed => "changed",
            RequireSha256::All => "all",
        }
    }

    /// The mode `text` names.
    pub fn parse(text: &str) -> Option<RequireSha256> {
        [Self::Off, Self::Changed, Self::All]
            .into_iter()
            .find(|mode| mode.as_str() == text)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
/// What a registry's configuration says about rules.
pub struct Policy {
    /// Per-code severity overrides.
    pub severity: BTreeMap<Code, Level>,
    /// Per-id exemptions: findings of these codes are dropped for that entry.
    pub exemptions: BTreeMap<String, BTreeSet<Code>>,
    /// OS families (`darwin`, `linux`, `windows`) binary distributions must cover.
    pub required_os: Vec<String>,
    /// `require_sha256`.
    pub require_sha256: RequireSha256,
    /// A fact of the run, not of the file: the entry folders changed since `--changed-since`
    /// (`None`: no base revision was given).
    pub changed: Option<BTreeSet<String>>,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            severity: BTreeMap::new(),
            exemptions: BTreeMap::new(),
            required_os: DEFAULT_REQUIRED_OS
                .iter()
                .map(ToString::to_string)
                .collect(),
            require_sha256: RequireSha256::default(),
            changed: None,
        }
    }
}

impl Policy {
    /// Apply overrides and exemptions to a finding about `entry` (None: registry-wide).
    pub fn apply(&self, entry: Option<&str>, mut diagnostic: Diagnostic) -> Option<Diagnostic> {
        let code = diagnostic.code;
        if !self.keeps(code, entry) {
            return None;
        }
        if let Some(Level::On(severity)) = self.severity.get(&code) {
            diagnostic.severity = *severity;
        }
        Some(diagnostic)
    }

    /// The severity `sha256-missing` is reported with for `entry` under `require_sha256`
    /// (`None`: not reported). A `severity` override still wins in [`Policy::apply`].
    pub fn sha256_missing_severity(&self, entry: Option<&str>) -> Option<Severity> {
        match self.require_sha256 {
            RequireSha256::Off => None,
            RequireSha256::All => Some(Severity::Error),
            RequireSha256::Changed => {
                let changed = entry
                    .is_some_and(|id| self.changed.as_ref().is_some_and(|set| set.contains(id)));
                Some(if changed {
                    Severity::Error
                } else {
                    Severity::Warning
                })
            }
        }
    }

    /// Whether a code can produce findings at all (so expensive checks can be skipped).
    pub fn enabled(&self, code: Code) -> bool {
        self.severity.get(&code) != Some(&Level::Off)
    }

    /// Whether a finding of `code` about `entry` would be kept: enabled and not exempted.
    pub fn keeps(&self, code: Code, entry: Option<&str>) -> bool {
        let exempt = entry
            .and_then(|id| self.exemptions.get(id))
            .is_some_and(|codes| codes.contains(&code));
        self.enabled(code) && !exempt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_turned_off_or_exempted_is_not_kept_so_rules_skip_its_work() {
        let mut policy = Policy::default();
        policy.severity.insert(Code::SkillLink, Level::Off);
        policy
            .severity
            .insert(Code::IconColor, Level::On(Severity::Note));
        policy
            .exemptions
            .insert("old".into(), BTreeSet::from([Code::LicenseUrlMissing]));
        assert!(!policy.keeps(Code::SkillLink, Some("new")));
        assert!(!policy.keeps(Code::LicenseUrlMissing, Some("old")));
        assert!(policy.keeps(Code::LicenseUrlMissing, Some("new")));
        assert!(policy.keeps(Code::LicenseUrlMissing, None));
        assert!(policy.keeps(Code::IconColor, Some("old")));
    }

    #[test]
    fn require_sha256_makes_a_missing_digest_an_error_only_where_it_should() {
        let mut policy = Policy::default();
        let severity = |policy: &Policy, id| policy.sha256_missing_severity(Some(id));
        // No base revision: a warning everywhere.
        assert_eq!(severity(&policy, "old"), Some(Severity::Warning));
        policy.changed = Some(BTreeSet::from(["new".to_string()]));
        assert_eq!(severity(&policy, "new"), Some(Severity::Error));
        assert_eq!(severity(&policy, "old"), Some(Severity::Warning));
        policy.require_sha256 = RequireSha256::All;
        assert_eq!(severity(&policy, "old"), Some(Severity::Error));
        policy.require_sha256 = RequireSha256::Off;
        assert_eq!(severity(&policy, "new"), None);
        assert_eq!(
            RequireSha256::parse("changed"),
            Some(RequireSha256::Changed)
        );
        assert_eq!(RequireSha256::parse("always"), None);
    }

    #[test]
    fn config_invalid_documents_exactly_the_enforced_codes() {
        let explanation = Code::ConfigInvalid.explanation();
        let listed: Vec<&str> = explanation
            .split("says, because")
            .nth(1)
            .and_then(|rest| rest.split(':').nth(1))
            .and_then(|list| list.split('.').next())
            .expect("the explanation lists the enforced codes")
            .split(',')
            .map(|code| code.trim().trim_matches('`'))
            .collect();
        let enforced: Vec<&str> = ENFORCED.iter().map(|c| c.as_str()).collect();
        assert_eq!(listed, enforced);
    }
}
