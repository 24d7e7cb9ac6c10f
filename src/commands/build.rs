//! `acp-registry build` and `acp-registry site`: validate, then compose and write the output
//! folder atomically (or compare it with `--check`).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use super::validate::{append_step_summary, render, Format};
use super::{exit, relocated, CommandError, Exit};
use crate::diagnostics::{escape, render_human, Report};
use crate::publish::build::{plan, site_only, BuildOptions, BuildSummary};
use crate::publish::last_good::{self, HeldBack, LastGood};
use crate::publish::output::{check_destination, compare, write_atomically};
use crate::registry::{check_registry_to_build, Checked};

/// What `build` and `site` read, write and compare.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--registry`.
    pub registry: PathBuf,
    /// `--out`: the output folder, replaced as a whole.
    pub out: PathBuf,
    /// `--base-url`, over the configuration's.
    pub base_url: Option<String>,
    /// Render the site too (`build` without `--no-site`).
    pub site: bool,
    /// Only the site (`acp-registry site`): the files under `site/`, written to `out`.
    pub site_only: bool,
    /// `--check`: write nothing, compare.
    pub check: bool,
    /// Colour in the findings written to stderr.
    pub color: bool,
    /// `--matrix`: a `matrix.json`, written as `verification.json` and shown on the site.
    pub matrix: Option<PathBuf>,
    /// `--max-age`: evidence older than this many days is expired (over
    /// `verify.max_age_days`).
    pub max_age_days: Option<u32>,
    /// `--as-of`: the time evidence ages are measured at, seconds since the Unix epoch
    /// (`None`: `SOURCE_DATE_EPOCH`, else the clock).
    pub as_of: Option<i64>,
    /// `--last-good`: the previous `registry.json`, or the `dist/` folder holding it; failing
    /// entries are then served in their previous form (or left out) instead of stopping the
    /// build.
    pub last_good: Option<PathBuf>,
    /// `--format` of the findings.
    pub format: Format,
}

/// The launches of a `matrix.json`, judged at `as_of` under `max_age_days`.
fn evidence(
    matrix: &crate::verify::matrix::Matrix,
    max_age_days: u32,
    as_of: i64,
) -> crate::publish::evidence::Evidence {
    crate::publish::evidence::Evidence {
        launches: matrix.launches(),
        max_age_days,
        as_of,
    }
}

/// The time evidence ages are measured at: `--as-of`, else `SOURCE_DATE_EPOCH` (the
/// reproducible-builds convention), else the clock.
fn as_of(flag: Option<i64>) -> Result<i64, CommandError> {
    if let Some(at) = flag {
        return Ok(at);
    }
    if let Ok(text) = std::env::var("SOURCE_DATE_EPOCH") {
        return text.trim().parse::<i64>().map_err(|_| {
            CommandError::Usage(format!(
                "SOURCE_DATE_EPOCH `{}` is not a number of seconds since 1970-01-01; set it to one (e.g. `git log -1 --format=%ct`) or unset it",
                escape::terminal(&text)
            ))
        });
    }
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    Ok(since.map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX)))
}

fn summary_text(summary: &BuildSummary, out: &str, seconds: f64, check: bool) -> String {
    let mut text = String::new();
    let verb = if check { "checked" } else { "built" };
    text.push_str(&format!(
        "{verb} {out} in {seconds:.2} s: {} files\n",
        summary.files
    ));
    for output in &summary.outputs {
        let excluded = if output.excluded.is_empty() {
            String::new()
        } else {
            format!(" (excluded: {})", output.excluded.join(", "))
        };
        text.push_str(&format!(
            "  {}: {} agents{excluded}\n",
            output.file, output.agents
        ));
    }
    if summary.site_pages > 0 {
        text.push_str(&format!("  site/: {} pages\n", summary.site_pages));
    }
    if summary.quarantined.is_empty() {
        text.push_str("  quarantined: none\n");
    }
    for q in &summary.quarantined {
        let state = if q.published {
            "published"
        } else {
            "not published"
        };
        text.push_str(&format!(
            "  quarantined: {} ({state}): {}\n",
            q.id, q.reason
        ));
    }
    // Ids, exclusions and quarantine reasons come from the registry.
    escape::terminal(&text).into_owned()
}

/// Findings in `--format`: human text on stderr (as `build` always printed them), every
/// other format on stdout like `validate`'s (github also appends its step-summary table).
fn print_findings(
    options: &Options,
    report: &Report,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CommandError> {
    let report = relocated(report, &options.registry);
    match options.format {
        Format::Human => err.write_all(render_human(&report, options.color).as_bytes())?,
        format => {
            out.write_all(render(&report, format, false).as_bytes())?;
            if format == Format::Github {
                if let Some(summary) = crate::diagnostics::render_github_summary(&report) {
                    append_step_summary(&summary)?;
                }
            }
        }
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
    let started = Instant::now();
    let mut checked = check_registry_to_build(&options.registry)?;
    let last_good = match &options.last_good {
        Some(path) => Some(LastGood::read(path, &checked.config.outputs)?),
        None => None,
    };
    let held = held_back(&mut checked, last_good.as_ref());
    if checked.report.has_errors() && held.is_none() {
        return refuse(options, &checked.report, last_good.is_some(), out, err);
    }
    if held.is_some() || options.format != Format::Human {
        print_findings(options, &checked.report, out, err)?;
    } else if !checked.report.diagnostics.is_empty() {
        writeln!(
            err,
            "{} (`acp-registry validate` shows them)",
            checked.report.summary()
        )?;
    }
    let plan = plan(
        &checked,
        &BuildOptions {
            base_url: options.base_url.clone(),
            site: options.site || options.site_only,
            evidence: match &options.matrix {
                Some(path) => Some(evidence(
                    &crate::verify::matrix::read(path)?,
                    options
                        .max_age_days
                        .unwrap_or(checked.config.verify_max_age_days),
                    as_of(options.as_of)?,
                )),
                None => None,
            },
        },
        held.as_ref(),
    )?;
    let plan = if options.site_only {
        site_only(plan)
    } else {
        plan
    };
    let out_display = options.out.display().to_string();
    let summary = |check: bool| {
        let mut text = summary_text(
            &plan.summary,
            &out_display,
            started.elapsed().as_secs_f64(),
            check,
        );
        text.push_str(&held_text(held.as_ref()));
        text
    };
    let published = match &held {
        Some(held) if !held.entries.is_empty() => exit::HELD_BACK,
        _ => exit::OK,
    };
    if options.check {
        let differences = compare(&options.out, &plan.files)?;
        err.write_all(summary(true).as_bytes())?;
        if differences.is_empty() {
            writeln!(err, "{out_display} is up to date")?;
            return Ok(published);
        }
        writeln!(
            err,
            "{out_display} differs from a fresh build in {} files:",
            differences.len()
        )?;
        for difference in &differences {
            writeln!(err, "  {difference}")?;
        }
        writeln!(err, "run `acp-registry build` to update it")?;
        return Ok(exit::FINDINGS);
    }
    let destination = check_destination(&options.out, &options.registry)?;
    write_atomically(&destination, &plan.files)?;
    err.write_all(summary(false).as_bytes())?;
    Ok(published)
}

/// The summary's lines about entries held back by `--last-good`, escaped.
fn held_text(held: Option<&HeldBack>) -> String {
    let Some(held) = held else {
        return String::new();
    };
    let failing = held.entries.len();
    let mut text = format!(
        "  held back: {failing} failing {}, {} served in their previous form, {} left out\n",
        if failing == 1 { "entry" } else { "entries" },
        held.kept(),
        failing - held.kept()
    );
    for entry in &held.entries {
        let codes: Vec<&str> = entry.codes.iter().map(|c| c.as_str()).collect();
        let served = if entry.kept_in.is_empty() {
            "left out".to_string()
        } else {
            let version = entry.version.as_deref().unwrap_or("?");
            format!("previous {version} kept in {}", entry.kept_in.join(", "))
        };
        text.push_str(&format!(
            "  held back: {} ({served}; failing: {})\n",
            entry.id,
            codes.join(", ")
        ));
    }
    // Ids come from the registry.
    escape::terminal(&text).into_owned()
}
