//! `acp-registry verify`: launch each agent's distributions as an editor would and check its
//! `initialize` answer; one line per agent and distribution, then the findings in the
//! chosen format.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use super::validate::{self, Format};
use super::{display_root, exit, CommandError, Exit};
use crate::diagnostics::escape;
use crate::manifest::distribution::Kind;
use crate::net::NetConfig;
use crate::registry::{check_registry, git, Checked};
use crate::rules::EntryReport;
use crate::verify::{self, AgentResult, Outcome, Shard, Status};

/// Flags shared by `verify` and `matrix`.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--registry`.
    pub registry: PathBuf,
    /// `--agent`: only these ids (quarantined ones named here run too).
    pub agents: Option<Vec<String>>,
    /// `--type`: only these distribution kinds.
    pub kinds: Option<Vec<Kind>>,
    /// `--changed-since`: only entries changed since this git revision.
    pub changed_since: Option<String>,
    /// `--shard K/N`: only this part of the selected entries.
    pub shard: Option<Shard>,
    /// `--list-shards MAX`: print how the selection splits instead of running it.
    pub list_shards: Option<ListShards>,
    /// `-j`: agents run at once.
    pub jobs: usize,
    /// `--timeout`: the wait for each ACP answer.
    pub timeout: Duration,
    /// `--require-tested`: a distribution that cannot run here fails.
    pub require_tested: bool,
    /// `--format`.
    pub format: Format,
    /// Colour in the human findings.
    pub color: bool,
    /// Archive cache folder; `None` with `no_cache` false: the user's cache folder.
    pub cache: Option<PathBuf>,
    /// `--no-cache`.
    pub no_cache: bool,
    /// `--archive-cap` in MiB.
    pub archive_cap_mib: u64,
    /// `--unpack-cap` in MiB: what one archive may unpack to.
    pub unpack_cap_mib: u64,
    /// TEST ONLY: admit loopback addresses, over plain http too.
    pub allow_loopback_for_tests: bool,
}

/// `--list-shards MAX --shard-size SIZE`: one shard per `SIZE` selected entries, at most
/// `MAX`, at least one.
#[derive(Debug, Clone, Copy)]
pub struct ListShards {
    /// `--list-shards`.
    pub max: usize,
    /// `--shard-size`.
    pub size: usize,
}

/// The library options of a run, and the checked registry it runs on.
pub(crate) fn prepare(options: &Options) -> Result<(Checked, verify::Options), CommandError> {
    let changed = match &options.changed_since {
        Some(rev) => Some(git::changed_folders(&options.registry, rev)?),
        None => None,
    };
    let checked = check_registry(&options.registry, None)?;
    let agents: Option<BTreeSet<String>> =
        options.agents.as_ref().map(|a| a.iter().cloned().collect());
    if let Some(agents) = &agents {
        let known: BTreeSet<&str> = checked.entries.iter().map(EntryReport::id).collect();
        if let Some(unknown) = agents.iter().find(|a| !known.contains(a.as_str())) {
            return Err(CommandError::Usage(format!(
                "--agent {unknown}: no entry of {} has this id",
                options.registry.display()
            )));
        }
    }
    let mut run = verify::Options {
        agents,
        kinds: options.kinds.as_ref().map(|k| k.iter().copied().collect()),
        changed,
        shard: options.shard,
        jobs: options.jobs.max(1),
        timeout: options.timeout,
        require_tested: options.require_tested,
        net: NetConfig {
            allow_loopback: options.allow_loopback_for_tests,
            ..NetConfig::default()
        },
        cache_dir: match (&options.cache, options.no_cache) {
            (_, true) => None,
            (Some(dir), false) => Some(dir.clone()),
            (None, false) => crate::online::cache::default_dir(),
        },
        archive_cap: options.archive_cap_mib.saturating_mul(1024 * 1024),
        sole_parent: true,
        unpack_cap: options.unpack_cap_mib.saturating_mul(1024 * 1024),
        ..verify::Options::default()
    };
    // Set but empty counts as unset, as for the loopback switch.
    if let Some(value) = std::env::var_os(verify::TEST_UV_INDEX_ENV).filter(|v| !v.is_empty()) {
        let value = value.to_string_lossy();
        run.uv_test_index = Some(verify::test_uv_index(&value).map_err(CommandError::Usage)?);
    }
    if let Some(types) = &checked.config.verify_auth_types {
        run.auth_types = types.iter().cloned().collect();
    }
    Ok((checked, run))
}

/// Launches the selected agents and writes one line each and the findings to `out`; exit 1
/// when a finding is an error.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    if let Some(list) = options.list_shards {
        return list_shards(options, list, out);
    }
    let (checked, run) = prepare(options)?;
    let mut outcome = verify::run(&checked, &run)?;
    write(&mut outcome, options, out)?;
    Ok(if outcome.report.has_errors() {
        exit::FINDINGS
    } else {
        exit::OK
    })
}

/// `--list-shards`: the shards of what `options` selects, as a GitHub Actions
/// `strategy.matrix` (`--format json`, one line: `{"include":[{"shard":"1/2","agents":[…]},…]}`)
/// or one line per shard; nothing is launched.
pub(crate) fn list_shards(
    options: &Options,
    list: ListShards,
    out: &mut dyn Write,
) -> Result<Exit, CommandError> {
    verify::shard::check_count(list.max)
        .map_err(|e| CommandError::Usage(format!("--list-shards {}: {e}", list.max)))?;
    if list.size == 0 {
        return Err(CommandError::Usage(
            "--shard-size 0: a shard holds at least one entry".into(),
        ));
    }
    let (checked, run) = prepare(options)?;
    let shards = verify::list_shards(&checked, &run, list.max, list.size);
    match options.format {
        Format::Json => {
            let include: Vec<serde_json::Value> = shards
                .iter()
                .map(|(shard, ids)| serde_json::json!({"shard": shard.to_string(), "agents": ids}))
                .collect();
            let matrix = serde_json::json!({ "include": include });
            writeln!(out, "{}", serde_json::to_string(&matrix)?)?;
        }
        Format::Human => {
            for (shard, ids) in &shards {
                let line = format!("{shard}: {}", ids.join(", "));
                writeln!(out, "{}", escape::terminal(line.trim_end()))?;
            }
        }
        Format::Github | Format::Sarif => {
            return Err(CommandError::Usage(
                "--list-shards prints --format human or json".into(),
            ))
        }
    }
    Ok(exit::OK)
}

/// The per-agent lines and the findings, in `options.format`.
pub(crate) fn write(
    outcome: &mut Outcome,
    options: &Options,
    out: &mut dyn Write,
) -> Result<(), CommandError> {
    outcome.report.relocate(&display_root(&options.registry));
    match options.format {
        Format::Json => {
            let mut document: serde_json::Value =
                serde_json::from_str(&validate::render(&outcome.report, Format::Json, false))?;
            if let Some(part) = &outcome.part {
                document["part"] = serde_json::to_value(part)?;
            }
            document["agents"] = serde_json::to_value(&outcome.results)?;
            let mut text = serde_json::to_string_pretty(&document)?;
            text.push('\n');
            out.write_all(text.as_bytes())?;
        }
        Format::Human => {
            for result in &outcome.results {
                writeln!(out, "{}", line(result))?;
            }
            out.write_all(
                validate::render(&outcome.report, Format::Human, options.color).as_bytes(),
            )?;
        }
        Format::Github => {
            out.write_all(validate::render(&outcome.report, Format::Github, false).as_bytes())?;
            validate::append_step_summary(&github_summary(outcome))?;
        }
        Format::Sarif => {
            out.write_all(validate::render(&outcome.report, Format::Sarif, false).as_bytes())?;
        }
    }
    Ok(())
}

/// The step summary of `--format github`: a row per agent and distribution, then the
/// findings table `validate` writes.
fn github_summary(outcome: &Outcome) -> String {
    let statuses = [
        Status::Passed,
        Status::Failed,
        Status::NotTested,
        Status::Skipped,
        Status::Reused,
    ];
    let counts: Vec<String> = statuses
        .iter()
        .map(|s| (s, outcome.results.iter().filter(|r| r.status == *s).count()))
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{n} {}", s.as_str()))
        .collect();
    let counts = if counts.is_empty() {
        "no agents".to_string()
    } else {
        counts.join(", ")
    };
    let shard = outcome
        .part
        .as_ref()
        .map_or(String::new(), |p| format!(" (shard {})", p.shard));
    let mut text = format!("### acp-registry verify{shard}: {counts}\n\n");
    text.push_str("| agent | distribution | platform | status | time | reason |\n");
    text.push_str("|---|---|---|---|---|---|\n");
    for result in &outcome.results {
        let time = match result.status {
            Status::Passed | Status::Failed => format!("{:.1} s", result.total_seconds),
            _ => String::new(),
        };
        text.push_str(&format!(
            "| {} | {} | {} | {} | {time} | {} |\n",
            escape::markdown_code_cell(&result.id),
            result.distribution,
            result.platform.as_deref().unwrap_or(""),
            result.status.as_str(),
            escape::markdown_cell(result.reason.as_deref().unwrap_or("")),
        ));
    }
    if let Some(findings) = crate::diagnostics::render_github_summary(&outcome.report) {
        text.push('\n');
        text.push_str(&findings);
    }
    text
}

/// `✓ id npx 1.2 s`, `✗ id binary (linux-x86_64) 60.0 s: agent-timeout: …`, `- id uvx: not tested: …`.
fn line(result: &AgentResult) -> String {
    let mark = match result.status {
        Status::Passed => "✓",
        Status::Failed => "✗",
        Status::NotTested | Status::Skipped | Status::Reused => "-",
    };
    let platform = result
        .platform
        .as_ref()
        .map_or(String::new(), |p| format!(" ({p})"));
    let time = match result.status {
        Status::Passed | Status::Failed => format!(" {:.1} s", result.total_seconds),
        _ => String::new(),
    };
    let why = match (result.status, &result.reason) {
        (Status::NotTested, Some(r)) => format!(": not tested: {r}"),
        (Status::Skipped, Some(r)) => format!(": skipped: {r}"),
        (_, Some(r)) => format!(": {r}"),
        (_, None) => String::new(),
    };
    let text = format!(
        "{mark} {} {}{platform}{time}{why}",
        result.id, result.distribution
    );
    escape::terminal(&text).into_owned()
}
