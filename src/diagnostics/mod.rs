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
mod format;
// The escaper is shared with `acp-collab`, so it lives in the core.
pub(crate) use acp_registry_core::escape;
mod github;
mod human;
mod json;
mod sarif;

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use acp_registry_core::source::{Position, SourceFile, Span};

pub(crate) use code::{did_you_mean, explain, nearest, UnknownCode};
pub use code::{rules_markdown, Code};
pub(crate) use format::{append_step_summary, write_report};
pub use format::{render, ReportFormat};
pub(crate) use github::render_github;
pub use github::render_github_summary;
pub(crate) use human::render_human;
pub(crate) use json::{json_document, json_text, render_json};
pub(crate) use sarif::render_sarif;

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

    fn sort_key(&self) -> (&str, usize, usize, &str, &str) {
        (
            &self.file,
            self.line(),
            self.column(),
            self.code.as_str(),
            &self.message,
        )
    }
}

/// The result of a run: findings in output order, the sources they point into, and what was
/// checked.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The findings, sorted once [`Report::finish`] ran.
    pub diagnostics: Vec<Diagnostic>,
    /// The files findings point into, by shown path (for excerpts).
    pub sources: BTreeMap<String, SourceFile>,
    /// Number of registry entries checked.
    pub entries: usize,
}

impl Report {
    /// Sort by (file, line, column, code, message) and drop exact duplicates, so output is
    /// stable whatever order rules and threads produced findings in.
    pub fn finish(&mut self) {
        self.diagnostics
            .sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        self.diagnostics.dedup();
    }

    /// Put `prefix` (a `/`-separated folder, `""` for none) in front of every finding's file
    /// and every source path, so paths read as the user named the registry. Order is kept:
    /// one common prefix does not change how paths sort.
    pub fn relocate(&mut self, prefix: &str) {
        if prefix.is_empty() {
            return;
        }
        let join = |path: &str| match path {
            "" => prefix.to_string(),
            _ if prefix.ends_with('/') => format!("{prefix}{path}"),
            _ => format!("{prefix}/{path}"),
        };
        for d in &mut self.diagnostics {
            d.file = join(&d.file);
        }
        self.sources = std::mem::take(&mut self.sources)
            .into_values()
            .map(|mut source| {
                source.path = join(&source.path);
                (source.path.clone(), source)
            })
            .collect();
    }

    /// How many findings have `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }

    /// Whether any finding is an error (exit 1).
    pub fn has_errors(&self) -> bool {
        self.count(Severity::Error) > 0
    }

    /// `N errors, M warnings in K entries` (notes mentioned only when present).
    pub fn summary(&self) -> String {
        let plural = |n: usize, word: &str| {
            if n == 1 {
                format!("{n} {word}")
            } else {
                format!("{n} {word}s")
            }
        };
        let mut text = format!(
            "{}, {}",
            plural(self.count(Severity::Error), "error"),
            plural(self.count(Severity::Warning), "warning")
        );
        let notes = self.count(Severity::Note);
        if notes > 0 {
            text.push_str(&format!(", {}", plural(notes, "note")));
        }
        text.push_str(&format!(
            " in {}",
            plural(self.entries, "entry").replace("entrys", "entries")
        ));
        text
    }
}
