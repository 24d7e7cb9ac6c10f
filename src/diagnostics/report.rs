//! The result of a run ([`Report`]): its findings sorted and counted.

use std::collections::BTreeMap;

use acp_registry_core::source::SourceFile;

use super::diagnostic::Diagnostic;
use super::severity::Severity;

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
