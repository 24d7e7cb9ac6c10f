//! `acp-registry validate`: every offline rule on every entry (and with `--online` the
//! online rules), rendered in one format.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{display_root, exit, CommandError, Exit};
use crate::diagnostics::{self, escape, Report, Severity};
use crate::registry::{check_registry_since, fix, git, select};
use crate::rules::{check_changes, ChangeBase};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
/// Output format of `validate` (`--format`).
pub enum Format {
    #[default]
    /// Compiler-style text with source excerpts.
    Human,
    /// The versioned JSON document.
    Json,
    /// GitHub workflow commands (annotations).
    Github,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
}

#[derive(Debug, Clone)]
/// What `validate` checks and how it reports.
pub struct Options {
    /// The registry root (`--registry`).
    pub registry: PathBuf,
    /// How findings are printed.
    pub format: Format,
    /// `--deny-warnings`: warnings fail the run too.
    pub deny_warnings: bool,
    /// `--changed-since`: report only entries changed since this git revision.
    pub changed_since: Option<String>,
    /// Files or entry folders named on the command line: only their entries are reported.
    pub paths: Vec<PathBuf>,
    /// Colour the human output.
    pub color: bool,
    /// `--online` and its flags; `None` runs the offline rules only.
    pub online: Option<super::online::Flags>,
    /// Apply the findings' certain fixes, then check again and report what is left.
    pub fix: bool,
}

/// Render `report` in `format`.
pub fn render(report: &Report, format: Format, color: bool) -> String {
    match format {
        Format::Human => diagnostics::render_human(report, color),
        Format::Json => diagnostics::render_json(report),
        Format::Github => diagnostics::render_github(report),
        Format::Sarif => diagnostics::render_sarif(report, env!("CARGO_PKG_VERSION")),
    }
}

/// The exit code for a finished report.
pub(crate) fn exit_code(report: &Report, deny_warnings: bool) -> Exit {
    if report.has_errors() || (deny_warnings && report.count(Severity::Warning) > 0) {
        exit::FINDINGS
    } else {
        exit::OK
    }
}

/// Where finding paths start for `format`: SARIF locations are relative to the repository
/// root (code scanning resolves them there; the working directory outside git), every
/// other format shows paths as the user named the registry.
fn display_prefix(registry: &Path, format: Format) -> String {
    match format {
        Format::Sarif => git::work_tree_prefix(registry).unwrap_or_else(|| display_root(registry)),
        _ => display_root(registry),
    }
}

fn check(options: &Options, only: Option<&BTreeSet<String>>) -> Result<Report, CommandError> {
    // With --changed-since the entries reported are the ones changed since the base.
    let changed = options.changed_since.as_ref().and(only);
    let mut checked = check_registry_since(&options.registry, only, changed)?;
    if let (Some(rev), Some(changed)) = (&options.changed_since, only) {
        let manifests = git::manifests_at(&options.registry, rev, changed)?;
        let base = ChangeBase {
            rev,
            manifests: &manifests,
            changed,
        };
        let findings = check_changes(&base, &checked.entries, &checked.config.policy);
        checked.add_findings(findings);
    }
    if let Some(flags) = &options.online {
        let since = options.changed_since.as_deref();
        super::online::extend(&mut checked, &options.registry, only, since, flags)?;
    }
    Ok(checked.report)
}

/// Apply the certain fixes of `report`, say on stderr what changed and what could not, and
/// check again when anything changed: the findings left are what needs a person.
fn fix(
    options: &Options,
    only: Option<&BTreeSet<String>>,
    report: Report,
) -> Result<Report, CommandError> {
    let attempts = fix::apply(&options.registry, &report);
    let root = display_root(&options.registry);
    let mut err = std::io::stderr();
    for a in &attempts {
        let file = super::fmt::join_display(&root, &a.file);
        let line = match &a.failure {
            None => format!("fixed {file}: {} ({})", a.fix, a.code),
            Some(why) => format!("not fixed {file}: {} ({}): {why}", a.fix, a.code),
        };
        // The file, pointers and values come from the registry.
        writeln!(err, "{}", escape::terminal(&line))?;
    }
    let applied = attempts.iter().filter(|a| a.failure.is_none()).count();
    // The check again, without writing quarantine.json a second time.
    let mut again = options.clone();
    if let Some(flags) = &mut again.online {
        flags.quarantine_retagged = false;
    }
    let report = match applied {
        0 => report,
        _ => check(&again, only)?,
    };
    let left = report.diagnostics.len();
    writeln!(
        err,
        "{applied} of {} fixes applied; {left} findings left for a person",
        attempts.len()
    )?;
    Ok(report)
}

/// Run `validate`, print the report to `out`, return the exit code.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    let only = match &options.changed_since {
        Some(rev) => Some(git::changed_folders(&options.registry, rev)?),
        None if !options.paths.is_empty() => {
            select::entries_holding(&options.registry, &options.paths)?
        }
        None => None,
    };
    let mut report = check(options, only.as_ref())?;
    if options.fix {
        report = fix(options, only.as_ref(), report)?;
    }
    report.relocate(&display_prefix(&options.registry, options.format));
    out.write_all(render(&report, options.format, options.color).as_bytes())?;
    if options.format == Format::Github {
        if let Some(summary) = diagnostics::render_github_summary(&report) {
            append_step_summary(&summary)?;
        }
    }
    Ok(exit_code(&report, options.deny_warnings))
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
