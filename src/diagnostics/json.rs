//! `--format json`: a versioned document of findings.
//!
//! Shape (version 1):
//! `{"version": 1, "summary": {"errors", "warnings", "notes", "entries"}, "findings": [{code,
//! severity, file, line, column, end_line, end_column, pointer, message, help}]}`. Positions are
//! 1-based (columns count characters); `line`/`column` are `null` when a finding concerns a
//! whole file, `pointer`/`help` are `null` when absent.

use serde::Serialize;

use super::report::Report;
use super::severity::Severity;

/// Version of the `--format json` document; raised on incompatible changes.
pub(crate) const JSON_FORMAT_VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    summary: Summary,
    findings: Vec<Finding<'a>>,
}

#[derive(Serialize)]
struct Summary {
    errors: usize,
    warnings: usize,
    notes: usize,
    entries: usize,
}

#[derive(Serialize)]
struct Finding<'a> {
    code: &'a str,
    severity: Severity,
    file: &'a str,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    pointer: Option<&'a str>,
    message: &'a str,
    help: Option<&'a str>,
}

/// The `--format json` document of `report`, as a value a command can add fields to (verify
/// adds its agents) before serialising it once.
pub(crate) fn json_document(report: &Report) -> serde_json::Value {
    let document = Document {
        version: JSON_FORMAT_VERSION,
        summary: Summary {
            errors: report.count(Severity::Error),
            warnings: report.count(Severity::Warning),
            notes: report.count(Severity::Note),
            entries: report.entries,
        },
        findings: report
            .diagnostics
            .iter()
            .map(|d| Finding {
                code: d.code.as_str(),
                severity: d.severity,
                file: &d.file,
                line: d.location.as_ref().map(|l| l.start.line),
                column: d.location.as_ref().map(|l| l.start.column),
                end_line: d.location.as_ref().map(|l| l.end.line),
                end_column: d.location.as_ref().map(|l| l.end.column),
                pointer: d.pointer.as_deref(),
                message: &d.message,
                help: d.help.as_deref(),
            })
            .collect(),
    };
    serde_json::to_value(document).expect("findings serialise")
}

/// A JSON document as every `--format json` prints it: pretty, one final newline. Keys keep
/// the order they were written in (`serde_json`'s `preserve_order`).
pub(crate) fn json_text(document: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(document).expect("a JSON value serialises");
    text.push('\n');
    text
}

/// The `--format json` document of `report`.
pub(crate) fn render_json(report: &Report) -> String {
    json_text(&json_document(report))
}
