//! `--format github`: workflow commands for GitHub Actions annotations.
//!
//! GitHub shows at most 10 error and 10 warning annotations per step; every finding is still
//! printed as a command (the log keeps them), and the full list goes into a Markdown table for
//! `$GITHUB_STEP_SUMMARY` so nothing is hidden.

use acp_registry_core::escape::{
    markdown_cell, markdown_code_cell, workflow_data, workflow_property,
};

use super::report::Report;
use super::severity::Severity;

/// Annotations GitHub displays per severity and step.
pub(crate) const GITHUB_ANNOTATION_LIMIT: usize = 10;

/// GitHub workflow commands, one annotation per finding (capped), then the summary line.
pub(crate) fn render_github(report: &Report) -> String {
    let mut out = String::new();
    for d in &report.diagnostics {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let mut props = vec![format!("file={}", workflow_property(&d.file))];
        if let Some(location) = &d.location {
            props.push(format!("line={}", location.start.line));
            props.push(format!("col={}", location.start.column));
            props.push(format!("endLine={}", location.end.line));
            props.push(format!("endColumn={}", location.end.column));
        }
        props.push(format!("title={}", workflow_property(d.code.as_str())));
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        out.push_str(&format!(
            "::{command} {}::{}\n",
            props.join(","),
            workflow_data(&message)
        ));
    }
    out.push_str(&report.summary());
    out.push('\n');
    out
}

/// The Markdown table for `$GITHUB_STEP_SUMMARY`; `None` when there is nothing to report.
pub fn render_github_summary(report: &Report) -> Option<String> {
    if report.diagnostics.is_empty() {
        return None;
    }
    let mut out = format!("### acp-registry: {}\n\n", report.summary());
    let hidden = [Severity::Error, Severity::Warning]
        .iter()
        .any(|s| report.count(*s) > GITHUB_ANNOTATION_LIMIT);
    if hidden {
        out.push_str(&format!(
            "GitHub shows only {GITHUB_ANNOTATION_LIMIT} annotations of each severity; all findings are listed here.\n\n"
        ));
    }
    out.push_str("| severity | code | location | message |\n|---|---|---|---|\n");
    for d in &report.diagnostics {
        let location = match &d.location {
            Some(l) => format!("{}:{}:{}", d.file, l.start.line, l.start.column),
            None => d.file.clone(),
        };
        out.push_str(&format!(
            "| {} | `{}` | {} | {} |\n",
            d.severity,
            d.code,
            markdown_code_cell(&location),
            markdown_cell(&d.message)
        ));
    }
    Some(out)
}
