//! `acp-registry build` and `acp-registry site`: validate, then compose and write the output
//! folder atomically (or compare it with `--check`).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use super::build_report::{held_text, json_section, summary_text, Recorded};
use super::display::relocated;
use super::error::CommandError;
use super::exit::{self, Exit};
use crate::diagnostics::{
    escape, json_document, json_text, render_human, write_report, Report, ReportFormat, Severity,
};
use crate::flags::{self, Registry};
use crate::publish::build::{plan, site_only, BuildOptions};
use crate::publish::last_good::{self, HeldBack, LastGood};
use crate::publish::output::{check_destination, compare, write_atomically};
use crate::registry::config::MAX_MIN_AGE_DAYS;
use crate::registry::{check_registry_to_build, Checked};

/// `build`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Exit codes: 0 everything written (or --check found no difference), 1 errors found \
(nothing written) or --check found differences, 2 usage or I/O failure (the message names the path or \
flag to change), 3 with --last-good: published, but entries that fail validation were held back in \
their previous form or left out (the findings name them)."
)]
#[allow(clippy::doc_markdown)] // The field docs are `--help` text, written for users.
pub struct Options {
    /// `--registry`.
    #[command(flatten)]
    pub registry: Registry,
    /// Output folder, replaced atomically as a whole.
    #[arg(long, value_name = "DIR", default_value = "dist")]
    pub out: PathBuf,
    /// URL the files are published under (overrides `base_url` in acp-registry.jsonc).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Skip the static site.
    #[arg(long)]
    pub no_site: bool,
    /// Write nothing: rebuild in memory and exit 1 if the output folder differs.
    #[arg(long)]
    pub check: bool,
    /// Publish the results of `acp-registry matrix` (a matrix.json): verification.json (and
    /// its schema) beside the registry files, and the verification badges and filter on the
    /// site. Evidence for another version or distribution than the published one is stale.
    #[arg(long, value_name = "FILE")]
    pub matrix: Option<PathBuf>,
    /// With --matrix: evidence older than DAYS days is expired [default: `verify.max_age_days`,
    /// else 30].
    #[arg(long, value_name = "DAYS", requires = "matrix", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_MIN_AGE_DAYS)))]
    pub max_age: Option<u32>,
    /// The UTC time (`2026-03-01T12:00:00Z` or `2026-03-01`) lifecycle.json describes (written
    /// as its `as_of`: later retirements and releases left out) and, with --matrix, evidence
    /// ages are measured at [default: SOURCE_DATE_EPOCH, else none for lifecycle.json and now
    /// for evidence]. Give it (or SOURCE_DATE_EPOCH) for a reproducible build.
    #[arg(long, value_name = "TIME", value_parser = flags::as_of)]
    pub as_of: Option<i64>,
    /// The registry.json a previous build published, or the dist/ folder holding it: entries
    /// that fail validation keep their previous form (or are left out) instead of stopping the
    /// build, and the exit code is 3.
    #[arg(long, value_name = "PATH")]
    pub last_good: Option<PathBuf>,
    /// Format of the findings: human text on stderr, the others on stdout (as `validate`).
    #[arg(long, value_enum, default_value = "human")]
    pub format: ReportFormat,
    /// Colour in the findings written to stderr (set by the binary for a terminal).
    #[arg(skip)]
    pub color: bool,
    /// `--quiet` (set by the binary): no summary, no "is up to date".
    #[arg(skip)]
    pub quiet: bool,
}

impl Default for Options {
    fn default() -> Self {
        flags::defaults()
    }
}

/// `site`'s options: `build`'s for the site alone; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
pub struct SiteOptions {
    /// `--registry`.
    #[command(flatten)]
    pub registry: Registry,
    /// Output folder for the site, replaced atomically as a whole.
    #[arg(long, value_name = "DIR", default_value = "dist/site")]
    pub out: PathBuf,
    /// URL the registry's files are published under.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Write nothing: exit 1 if the output folder differs from a fresh render.
    #[arg(long)]
    pub check: bool,
    /// Colour in the findings written to stderr (set by the binary for a terminal).
    #[arg(skip)]
    pub color: bool,
    /// `--quiet` (set by the binary): no summary, no "is up to date".
    #[arg(skip)]
    pub quiet: bool,
}

impl Default for SiteOptions {
    fn default() -> Self {
        flags::defaults()
    }
}

/// Validates, then writes (or with `--check` compares) the site alone: `build` without the
/// registry files, into `options.out`.
pub fn site(
    options: &SiteOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    let build = Options {
        registry: options.registry.clone(),
        out: options.out.clone(),
        base_url: options.base_url.clone(),
        check: options.check,
        color: options.color,
        quiet: options.quiet,
        ..Options::default()
    };
    build_output(&build, true, out, err)
}

/// The launches of the `matrix.json` at `path`, judged at `as_of` under `max_age_days`; each
/// row it sets aside (forged, damaged, dated after `as_of`) is a warning on `err` and no
/// evidence.
fn evidence(
    path: &std::path::Path,
    max_age_days: u32,
    as_of: i64,
    err: &mut dyn Write,
) -> Result<crate::publish::evidence::Evidence, CommandError> {
    let read = crate::verify::matrix::read::read(path, as_of)?;
    for refused in &read.refused {
        writeln!(
            err,
            "warning: {}: {refused}; not used as evidence",
            escape::terminal(&path.display().to_string())
        )?;
    }
    Ok(crate::publish::evidence::Evidence {
        launches: read.matrix.launches(),
        max_age_days,
        as_of,
    })
}

/// The time evidence ages are measured at: `--as-of`, else `SOURCE_DATE_EPOCH` (the
/// reproducible-builds convention), else the clock.
fn as_of(flag: Option<i64>) -> Result<i64, CommandError> {
    if let Some(at) = given_as_of(flag)? {
        return Ok(at);
    }
    Ok(acp_registry_core::time::now_secs())
}

/// The time the build was given: `--as-of`, else `SOURCE_DATE_EPOCH`, else none (what
/// `lifecycle.json` describes; without one it writes no time).
fn given_as_of(flag: Option<i64>) -> Result<Option<i64>, CommandError> {
    if let Some(at) = flag {
        return Ok(Some(at));
    }
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => text.trim().parse::<i64>().map(Some).map_err(|_| {
            CommandError::Usage(format!(
                "SOURCE_DATE_EPOCH `{}` is not a number of seconds since 1970-01-01; set it to one (e.g. `git log -1 --format=%ct`) or unset it",
                escape::terminal(&text)
            ))
        }),
        Err(_) => Ok(None),
    }
}

/// Findings in `--format`: human text on stderr (as `build` always printed them), every
/// other format on stdout like `validate`'s (github also appends its step-summary table).
fn print_findings(
    options: &Options,
    report: &Report,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CommandError> {
    let report = relocated(report, &options.registry.root);
    match options.format {
        ReportFormat::Human => err.write_all(render_human(&report, options.color).as_bytes())?,
        format => write_report(&report, format, false, out)?,
    }
    Ok(())
}

/// With `--last-good` and failing entries: what is served instead, its findings added to the
/// report. `None` when nothing fails, or when an error belongs to no entry and nothing may be
/// built (the caller refuses as without the flag).
fn held_back(checked: &mut Checked, last_good: Option<&LastGood>) -> Option<HeldBack> {
    let last_good = last_good?;
    if !checked.report.has_errors() || last_good::registry_wide_errors(checked) > 0 {
        return None;
    }
    let held = last_good::hold_back(checked, last_good);
    let findings = last_good::findings(checked, &held, last_good);
    checked.add_findings(findings);
    Some(held)
}

/// Print the findings of a refused build and say why nothing was written (exit 1).
fn refuse(
    options: &Options,
    report: &Report,
    last_good: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    print_findings(options, report, out, err)?;
    if last_good {
        writeln!(
            err,
            "nothing written: errors outside the entries (configuration, quarantine, duplicate ids) cannot be held back; fix them first"
        )?;
    } else {
        writeln!(err, "nothing written: fix the errors above first")?;
    }
    Ok(exit::FINDINGS)
}

/// Validates, then writes (or with `--check` compares) the output; findings go to `err` (or
/// in `--format` to `out`), the summary to `err`. Exit 1 for error findings or, with
/// `--check`, differences; with `--last-good`, 3 when failing entries were held back or left
/// out and the rest was published (or, with `--check`, is up to date).
pub fn run(
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    build_output(options, false, out, err)
}

/// `build`, or with `only_site` `site`: only the files under `site/`, written to `out`.
/// With `--format json` the findings document waits for the end, to carry the `build`
/// object (and is printed without it when the build fails).
fn build_output(
    options: &Options,
    only_site: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    let started = Instant::now();
    let mut checked = check_registry_to_build(&options.registry.root)?;
    let last_good = match &options.last_good {
        Some(path) => Some(LastGood::read(path, &checked.config.outputs)?),
        None => None,
    };
    let held = held_back(&mut checked, last_good.as_ref());
    if checked.report.has_errors() && held.is_none() {
        return refuse(options, &checked.report, last_good.is_some(), out, err);
    }
    let json = options.format == ReportFormat::Json;
    if !json && (held.is_some() || options.format != ReportFormat::Human) {
        print_findings(options, &checked.report, out, err)?;
    } else if !json && counts_for_quiet(&checked.report, options.quiet) {
        writeln!(
            err,
            "{} (`acp-registry validate` shows them)",
            checked.report.summary()
        )?;
    }
    let built = plan_and_write(options, only_site, &checked, held.as_ref(), started, err);
    let (exit, section) = match built {
        Ok(done) => done,
        Err(error) => {
            if json {
                print_findings(options, &checked.report, out, err)?;
            }
            return Err(error);
        }
    };
    if json {
        let report = relocated(&checked.report, &options.registry.root);
        let mut document = json_document(&report);
        document["build"] = section;
        out.write_all(json_text(&document).as_bytes())?;
    }
    Ok(exit)
}

/// Whether the findings' count line is printed: always, or under `--quiet` only when it
/// counts errors or warnings (notes alone are informational).
fn counts_for_quiet(report: &Report, quiet: bool) -> bool {
    let findings = report.count(Severity::Error) + report.count(Severity::Warning);
    !report.diagnostics.is_empty() && (!quiet || findings > 0)
}

/// What to build beyond the configuration: the flags, and `--matrix`'s evidence read (its
/// refused rows a warning on `err` each).
fn build_options(
    options: &Options,
    only_site: bool,
    checked: &Checked,
    err: &mut dyn Write,
) -> Result<BuildOptions, CommandError> {
    Ok(BuildOptions {
        base_url: options.base_url.clone(),
        site: !options.no_site || only_site,
        evidence: match &options.matrix {
            Some(path) => Some(evidence(
                path,
                options
                    .max_age
                    .unwrap_or(checked.config.verify_max_age_days),
                as_of(options.as_of)?,
                err,
            )?),
            None => None,
        },
        as_of: given_as_of(options.as_of)?,
    })
}

/// Plan the build of `checked`, then write it (or compare it with `--check`) and print the
/// summary; the exit code and the `build` object of `--format json`.
fn plan_and_write(
    options: &Options,
    only_site: bool,
    checked: &Checked,
    held: Option<&HeldBack>,
    started: Instant,
    err: &mut dyn Write,
) -> Result<(Exit, serde_json::Value), CommandError> {
    let plan = plan(
        checked,
        &build_options(options, only_site, checked, err)?,
        held,
    )?;
    let plan = if only_site { site_only(plan) } else { plan };
    let out_display = options.out.display().to_string();
    let summary = |check: bool| {
        let mut text = summary_text(
            &plan.summary,
            &out_display,
            started.elapsed().as_secs_f64(),
            check,
        );
        text.push_str(&held_text(held));
        text
    };
    let published = match held {
        Some(held) if !held.entries.is_empty() => exit::HELD_BACK,
        _ => exit::OK,
    };
    let files = Recorded::new(&plan.files);
    if options.check {
        let differences = compare(&options.out, &files)?;
        let listed: Vec<String> = differences.iter().map(ToString::to_string).collect();
        let section =
            |files| json_section(&plan.summary, &out_display, Some(&listed), held, &files);
        if !options.quiet {
            err.write_all(summary(true).as_bytes())?;
        }
        if differences.is_empty() {
            if !options.quiet {
                writeln!(err, "{out_display} is up to date")?;
            }
            return Ok((published, section(files.into_files())));
        }
        writeln!(
            err,
            "{out_display} differs from a fresh build in {} files:",
            differences.len()
        )?;
        for difference in &listed {
            writeln!(err, "  {difference}")?;
        }
        writeln!(err, "run `acp-registry build` to update it")?;
        return Ok((exit::FINDINGS, section(files.into_files())));
    }
    let destination = check_destination(&options.out, &options.registry.root)?;
    write_atomically(&destination, &files)?;
    if !options.quiet {
        err.write_all(summary(false).as_bytes())?;
    }
    let files = files.into_files();
    Ok((
        published,
        json_section(&plan.summary, &out_display, None, held, &files),
    ))
}
