//! `acp-registry build` and `acp-registry site`: validate, then compose and write the output
//! folder atomically (or compare it with `--check`).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use super::{exit, relocated, CommandError};
use crate::diagnostics::{escape, render_human};
use crate::registry::build::{plan, site_only, BuildOptions, BuildSummary};
use crate::registry::check_registry;
use crate::registry::output::{check_destination, compare, write_atomically};

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
    /// `--matrix`: a `matrix.json` whose results the site shows.
    pub matrix: Option<PathBuf>,
}

/// One verification per id from a matrix: its first passing row (binary, npx, uvx), else
/// its first row.
fn verifications(
    matrix: &crate::verify::matrix::Matrix,
) -> std::collections::BTreeMap<String, (String, crate::site::Verification)> {
    let mut out = std::collections::BTreeMap::new();
    for row in &matrix.agents {
        let passed = row.status == "passed";
        let better = out
            .get(&row.id)
            .is_none_or(|(_, v): &(String, crate::site::Verification)| passed && !v.passed);
        if better {
            let verification = crate::site::Verification {
                verified: row.verified.clone(),
                passed,
                protocol_version: row.protocol_version,
                sign_in: row
                    .auth_methods
                    .iter()
                    .map(|a| (a.name.clone(), a.kind.clone()))
                    .collect(),
                session_methods: row.supported(),
            };
            out.insert(row.id.clone(), (row.version.clone(), verification));
        }
    }
    out
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

/// Validates, then writes (or with `--check` compares) the output; findings and the summary
/// go to `err`. Exit 1 for error findings or, with `--check`, differences.
pub fn run(options: &Options, err: &mut dyn Write) -> Result<u8, CommandError> {
    let started = Instant::now();
    let checked = check_registry(&options.registry, None)?;
    if checked.report.has_errors() {
        let report = relocated(&checked.report, &options.registry);
        err.write_all(render_human(&report, options.color).as_bytes())?;
        writeln!(err, "nothing written: fix the errors above first")?;
        return Ok(exit::FINDINGS);
    }
    if !checked.report.diagnostics.is_empty() {
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
            verifications: match &options.matrix {
                Some(path) => verifications(&crate::verify::matrix::read(path)?),
                None => std::collections::BTreeMap::default(),
            },
        },
    )?;
    let plan = if options.site_only {
        site_only(plan)
    } else {
        plan
    };
    let out_display = options.out.display().to_string();
    if options.check {
        let differences = compare(&options.out, &plan.files)?;
        err.write_all(
            summary_text(
                &plan.summary,
                &out_display,
                started.elapsed().as_secs_f64(),
                true,
            )
            .as_bytes(),
        )?;
        if differences.is_empty() {
            writeln!(err, "{out_display} is up to date")?;
            return Ok(exit::OK);
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
    err.write_all(
        summary_text(
            &plan.summary,
            &out_display,
            started.elapsed().as_secs_f64(),
            false,
        )
        .as_bytes(),
    )?;
    Ok(exit::OK)
}
