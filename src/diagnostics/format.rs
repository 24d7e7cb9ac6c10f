//! `--format`: the report formats every command that prints findings offers, the dispatch to
//! their renderers, and the GitHub step summary `--format github` appends to. One place, so
//! `validate`, `build`, `new` and `verify` print a report the same way.

use std::io::Write;
use std::path::Path;

use super::github::{render_github, render_github_summary};
use super::human::render_human;
use super::json::render_json;
use super::report::Report;
use super::sarif::render_sarif;

/// How findings are printed (`--format`). The variants' rustdoc is their `--help` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
#[allow(clippy::doc_markdown)] // The docs are `--help` text, written for users.
pub enum ReportFormat {
    /// Compiler-style findings with source excerpts.
    #[default]
    Human,
    /// A versioned JSON document of findings.
    Json,
    /// GitHub Actions workflow commands (and a table in $GITHUB_STEP_SUMMARY).
    Github,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
}

/// `report` in `format`; colour applies to the human format only.
pub fn render(report: &Report, format: ReportFormat, color: bool) -> String {
    match format {
        ReportFormat::Human => render_human(report, color),
        ReportFormat::Json => render_json(report),
        ReportFormat::Github => render_github(report),
        ReportFormat::Sarif => render_sarif(report, env!("CARGO_PKG_VERSION")),
    }
}

/// `report` in `format` to `out`; with `--format github` its findings table also goes to the
/// step summary ([`append_step_summary`]).
pub(crate) fn write_report(
    report: &Report,
    format: ReportFormat,
    color: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    out.write_all(render(report, format, color).as_bytes())?;
    if format == ReportFormat::Github {
        if let Some(summary) = render_github_summary(report) {
            append_step_summary(&summary)?;
        }
    }
    Ok(())
}

/// Append `summary` to the file `$GITHUB_STEP_SUMMARY` names, when it is set (`--format
/// github` in a workflow step).
pub(crate) fn append_step_summary(summary: &str) -> std::io::Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return Ok(());
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(summary.as_bytes()))
        .map_err(|e| {
            let path = Path::new(&path).display();
            std::io::Error::new(
                e.kind(),
                format!("cannot append to GITHUB_STEP_SUMMARY `{path}`: {e}"),
            )
        })
}
