//! `acp-registry validate`: every offline rule on every entry (and with `--online` the
//! online rules), rendered in one format.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::display::{display_root, join_display};
use super::error::CommandError;
use super::exit::{self, Exit};
use super::online::{self, OnlineFlags};
use crate::diagnostics::{
    escape, render_human_findings, write_report, Report, ReportFormat, Severity,
};
use crate::flags::Registry;
use crate::registry::{check_registry_since, fix, git, select};
use crate::rules::{check_changes, ChangeBase};

/// What `validate` checks and how it reports; the field docs are its `--help`.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(
    after_help = "Exit codes: 0 no errors (and no warnings with --deny-warnings), 1 errors found (or \
warnings with --deny-warnings), 2 usage or I/O failure (the message names the path or flag to change)."
)]
pub struct Options {
    /// `--registry`.
    #[command(flatten)]
    pub registry: Registry,
    /// Files or entry folders to report on, e.g. `registry/foo/agent.json` (as pre-commit passes
    /// them); registry-wide rules such as duplicate ids still see every entry.
    #[arg(value_name = "PATH", conflicts_with = "changed_since")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: ReportFormat,
    /// Exit 1 when there are warnings, not only errors.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Check only entries whose files changed since this git revision (registry-wide rules
    /// such as duplicate ids still see every entry), and compare them with their manifests at
    /// REV: a lower version, a changed distribution under the same version, renamed and removed
    /// ids.
    #[arg(long, value_name = "REV")]
    pub changed_since: Option<String>,
    /// Apply the fixes that are certain (platform key spellings, http to https, `api_key` to
    /// `env_var`, the ignored `icon` field, `proprietary` and `GPL-2.0+`-style license
    /// spellings, digests found by --verify-archives), comments kept; then report what still
    /// needs a person.
    #[arg(long)]
    pub fix: bool,
    /// `--online` and its flags; without `--online` or `--verify-archives` the offline rules
    /// only run.
    #[command(flatten)]
    pub online: OnlineFlags,
    /// Colour the human output (set by the binary for a terminal).
    #[arg(skip)]
    pub color: bool,
    /// `--quiet` (set by the binary): the human output without its count line, and no
    /// `--fix` tally.
    #[arg(skip)]
    pub quiet: bool,
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
fn display_prefix(registry: &Path, format: ReportFormat) -> String {
    match format {
        ReportFormat::Sarif => {
            git::work_tree_prefix(registry).unwrap_or_else(|| display_root(registry))
        }
        _ => display_root(registry),
    }
}

fn check(options: &Options, only: Option<&BTreeSet<String>>) -> Result<Report, CommandError> {
    // With --changed-since the entries reported are the ones changed since the base.
    let changed = options.changed_since.as_ref().and(only);
    let registry = &options.registry.root;
    let mut checked = check_registry_since(registry, only, changed)?;
    if let (Some(rev), Some(changed)) = (&options.changed_since, only) {
        let manifests = git::manifests_at(registry, rev, changed)?;
        let base = ChangeBase {
            rev,
            manifests: &manifests,
            changed,
        };
        let findings = check_changes(&base, &checked.entries, &checked.config.policy);
        checked.add_findings(findings);
    }
    if options.online.enabled() {
        let since = options.changed_since.as_deref();
        online::extend(&mut checked, registry, only, since, &options.online)?;
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
    let attempts = fix::apply(&options.registry.root, &report);
    let root = display_root(&options.registry.root);
    let mut err = std::io::stderr();
    for a in &attempts {
        let file = join_display(&root, &a.file);
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
    again.online.quarantine_retagged = false;
    let report = match applied {
        0 => report,
        _ => check(&again, only)?,
    };
    let left = report.diagnostics.len();
    if !options.quiet {
        writeln!(
            err,
            "{applied} of {} fixes applied; {left} findings left for a person",
            attempts.len()
        )?;
    }
    Ok(report)
}

/// Run `validate`, print the report to `out`, return the exit code.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    let registry = &options.registry.root;
    let only = match &options.changed_since {
        Some(rev) => Some(git::changed_folders(registry, rev)?),
        None if !options.paths.is_empty() => select::entries_holding(registry, &options.paths)?,
        None => None,
    };
    let mut report = check(options, only.as_ref())?;
    if options.fix {
        report = fix(options, only.as_ref(), report)?;
    }
    report.relocate(&display_prefix(registry, options.format));
    if options.quiet && options.format == ReportFormat::Human {
        out.write_all(render_human_findings(&report, options.color).as_bytes())?;
    } else {
        write_report(&report, options.format, options.color, out)?;
    }
    Ok(exit_code(&report, options.deny_warnings))
}
