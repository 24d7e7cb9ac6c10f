//! One finding ([`Diagnostic`]), where it points ([`Location`]) and the change that resolves
//! it ([`Fix`]).

use std::fmt;

use acp_registry_core::source::{Position, SourceFile, Span};

use super::code::Code;
use super::severity::Severity;

/// Where a finding points: byte span plus the 1-based positions derived from it once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// Where the span starts.
    pub start: Position,
    /// Where the span ends.
    pub end: Position,
    /// The byte span in the source text.
    pub span: Span,
}

/// One finding: code, severity, place, message and help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The rule that made the finding.
    pub code: Code,
    /// Its severity after the policy.
    pub severity: Severity,
    /// `/`-separated path relative to the registry root, until [`Report::relocate`] puts it
    /// where the user will look for it.
    pub file: String,
    /// Where in the file, when the finding has a position.
    pub location: Option<Location>,
    /// JSON pointer of the offending value, for JSON files.
    pub pointer: Option<String>,
    /// What is wrong, in one sentence.
    pub message: String,
    /// What to change, when the rule knows.
    pub help: Option<String>,
    /// The change that certainly resolves this finding, when the rule knows one; applied by
    /// `validate --fix`, rendered by no output format.
    pub fix: Option<Fix>,
}

/// A machine-applicable change to the JSON document the finding is in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Fix {
    /// JSON pointer of the value or member to change.
    pub pointer: String,
    /// What to do at the pointer.
    pub edit: FixEdit,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
/// The change a [`Fix`] makes.
pub enum FixEdit {
    /// Set the string at the pointer, adding the member when it is missing.
    SetString(String),
    /// Rename the member at the pointer, keeping its value.
    RenameKey(String),
    /// Remove the member at the pointer.
    Remove,
}

impl Fix {
    /// A fix making `edit` at `pointer`.
    pub fn new(pointer: impl Into<String>, edit: FixEdit) -> Self {
        Self {
            pointer: pointer.into(),
            edit,
        }
    }
}

impl fmt::Display for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = &self.pointer;
        match &self.edit {
            FixEdit::SetString(value) => write!(f, "set `{pointer}` to `{value}`"),
            FixEdit::RenameKey(key) => write!(f, "renamed `{pointer}` to `{key}`"),
            FixEdit::Remove => write!(f, "removed `{pointer}`"),
        }
    }
}

impl Diagnostic {
    /// A finding of `code` at its default severity, not yet placed: add `.at()` or
    /// `.in_file()`, and `.help()`.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            severity: code.default_severity(),
            file: String::new(),
            location: None,
            pointer: None,
            message: message.into(),
            help: None,
            fix: None,
        }
    }

    /// Point at `span` of `source` (file name taken from the source).
    pub fn at(mut self, source: &SourceFile, span: Span) -> Self {
        let (start, end) = source.range(span);
        self.file = source.path.clone();
        self.location = Some(Location { start, end, span });
        self
    }

    /// A finding about a whole file, without a position.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = file.into();
        self
    }

    /// Record the JSON pointer of the offending value.
    pub fn pointer(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    /// Add the sentence saying what to change.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Attach the change that certainly resolves the finding.
    pub fn fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }

    /// 1-based line of the start (0 without a position).
    pub fn line(&self) -> usize {
        self.location.as_ref().map_or(0, |l| l.start.line)
    }

    /// 1-based column of the start (0 without a position).
    pub fn column(&self) -> usize {
        self.location.as_ref().map_or(0, |l| l.start.column)
    }

    pub(super) fn sort_key(&self) -> (&str, usize, usize, &str, &str) {
        (
            &self.file,
            self.line(),
            self.column(),
            self.code.as_str(),
            &self.message,
        )
    }
}
