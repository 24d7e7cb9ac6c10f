//! `acp-registry update`: run [`crate::update`] and print what it found, as text or JSON.
//! Exit codes: 0 nothing to do (or everything applied; releases held by the cooldown are
//! not "to do"), 1 updates available but not applied or an entry failed, 2 the run failed,
//! 3 `--apply` wrote every entry it could and some entries failed.

use std::io::Write;
use std::time::Duration;

use serde::Serialize;

use super::display::display_root;
use super::error::CommandError;
use super::exit::{self, Exit};
use super::online::{github_token, EndpointFlags};
use crate::diagnostics::escape;
use crate::flags::{self, ByteSize, Registry};
use crate::online::Endpoints;
use crate::registry::config::MAX_MIN_AGE_DAYS;
pub use crate::update::Channel;
use crate::update::{self, Note, Outcome};

/// `--format` of `update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpdateFormat {
    /// One line per update, note and summary.
    #[default]
    Text,
    /// One versioned JSON document.
    Json,
}

// `--channel` and `--format` list their values bare, as they always did.
flags::bare_value_enum!(Channel {
    Channel::Stable => "stable",
    Channel::Preview => "preview",
});
flags::bare_value_enum!(UpdateFormat {
    UpdateFormat::Text => "text",
    UpdateFormat::Json => "json",
});

/// `update`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Exit codes: 0 nothing to do (or every update applied), 1 updates available but not \
applied, or an entry failed (the report names the entry and the source), 2 usage or I/O failure, \
3 with --apply: every other entry was applied and some entries failed (each named with its source).",
    mut_arg("allow_loopback_for_tests", |arg| arg.help(
        "TEST ONLY: allow loopback addresses, over plain http too (see `validate`)"
    ))
)]
#[allow(clippy::doc_markdown)] // The field docs are `--help` text, written for users.
pub struct Options {
    /// `--registry`.
    #[command(flatten)]
    pub registry: Registry,
    /// Only these entry ids (comma-separated or repeated) [default: every entry].
    #[arg(long, value_name = "IDS", value_delimiter = ',', add = crate::flags::entry_ids())]
    pub agent: Vec<String>,
    /// The version followed: `version` (stable) or the `preview` block.
    #[arg(long, value_enum, default_value = "stable")]
    pub channel: Channel,
    /// Write the updates (comments and layout kept); each entry is re-validated and restored
    /// on failure.
    #[arg(long)]
    pub apply: bool,
    /// Record what the sources say in releases.json (the release history `build` publishes in
    /// lifecycle.json) without editing any manifest; --apply records too.
    #[arg(long, conflicts_with = "apply")]
    pub record: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: UpdateFormat,
    /// Longest GitHub rate-limit reset to wait for, in seconds; longer ones are reported.
    #[arg(long, value_name = "SECONDS", value_parser = flags::seconds, default_value = "60")]
    pub rate_limit_wait: Duration,
    /// Largest archive downloaded to hash when a release publishes no digest, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = ByteSize::mib(crate::online::DEFAULT_ARCHIVE_CAP_MIB))]
    pub archive_cap: ByteSize,
    /// Release-age cooldown: apply only releases published at least DAYS days ago (npm
    /// `time`, PyPI upload time, GitHub `published_at`, at every source of the entry); a
    /// newer one is reported as held with the date it becomes eligible, and the newest old
    /// enough is taken instead, never below the current version. A release of unknown age
    /// is never applied under a cooldown. Pick at least the largest minimum release age
    /// your users set (npm `min-release-age` in days, pnpm `minimumReleaseAge` in minutes),
    /// or they cannot install the pins; longer means fixes arrive later. Overrides
    /// `update.min_age_days` [default: the configuration's, else 0].
    #[arg(long, value_name = "DAYS", value_parser = clap::value_parser!(u32).range(..=i64::from(MAX_MIN_AGE_DAYS)))]
    pub min_age: Option<u32>,
    /// Measure release ages at this UTC time instead of now (`2026-03-01T12:00:00Z` or
    /// `2026-03-01`), to reproduce an earlier run.
    #[arg(long, value_name = "TIME", value_parser = flags::as_of)]
    pub as_of: Option<i64>,
    /// The endpoint overrides and the loopback switch.
    #[command(flatten)]
    pub endpoints: EndpointFlags,
}

impl Default for Options {
    fn default() -> Self {
        flags::defaults()
    }
}

/// The `--format json` document.
#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    channel: Channel,
    apply: bool,
    exit_code: Exit,
    #[serde(flatten)]
    outcome: &'a Outcome,
}

/// Runs `update`: exit 0 nothing left to do, 1 updates not applied or an entry failed (the
/// report says which), 3 with `--apply` when entries failed and the others were applied; a
/// failure of the run itself (a missing registry, say) is an error
/// (exit 2), as for every command.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    // The API `update::run` asks, to decide once whether the token goes there.
    let (config, _) = crate::registry::Config::load(&options.registry.root);
    let api = options
        .endpoints
        .overrides()
        .apply(config.online.apply(Endpoints::default()))
        .github_api;
    let mut outcome = update::run(
        &options.registry.root,
        &update::Options {
            channel: options.channel,
            agents: options.agent.clone(),
            apply: options.apply,
            record: options.record,
            net: options.endpoints.net(&config)?,
            endpoints: options.endpoints.overrides(),
            github_token: github_token(options.endpoints.github_api.as_deref(), &api),
            rate_limit_wait: options.rate_limit_wait,
            archive_cap: options.archive_cap.bytes(),
            min_age_days: options.min_age,
            now: options
                .as_of
                .unwrap_or_else(acp_registry_core::time::now_secs),
        },
    )?;
    let root = display_root(&options.registry.root);
    for update in &mut outcome.updates {
        if !root.is_empty() {
            update.file = format!("{root}/{}", update.file);
        }
    }
    let code = exit_code(&outcome, options.apply);
    match options.format {
        UpdateFormat::Json => {
            let document = Document {
                version: 1,
                channel: options.channel,
                apply: options.apply,
                exit_code: code,
                outcome: &outcome,
            };
            serde_json::to_writer_pretty(&mut *out, &document)?;
            writeln!(out)?;
        }
        UpdateFormat::Text => text(&outcome, out)?,
    }
    Ok(code)
}

/// 0 nothing left to do; with `--apply`, 3 when an entry failed (every other entry was
/// applied: a failed apply leaves only its own entry unwritten); 1 otherwise.
fn exit_code(outcome: &Outcome, apply: bool) -> Exit {
    let pending = outcome.updates.iter().any(|u| !u.applied);
    match (outcome.errors.is_empty(), pending) {
        (true, false) => exit::OK,
        (false, _) if apply => exit::PARTIAL,
        _ => exit::FINDINGS,
    }
}

fn text(outcome: &Outcome, out: &mut dyn Write) -> std::io::Result<()> {
    let t = |s: &str| escape::terminal(s).into_owned();
    for u in &outcome.updates {
        let verb = if u.applied {
            "updated"
        } else {
            "update available"
        };
        writeln!(
            out,
            "{verb}: {} {} -> {} ({})",
            t(&u.id),
            t(&u.from),
            t(&u.to),
            t(&u.file)
        )?;
    }
    for h in &outcome.held {
        writeln!(out, "held: {}: {}", t(&h.id), t(&h.message))?;
    }
    let lines = |label: &str, notes: &[Note], out: &mut dyn Write| -> std::io::Result<()> {
        for n in notes {
            writeln!(out, "{label}: {}: {}", t(&n.id), t(&n.message))?;
        }
        Ok(())
    };
    lines("warning", &outcome.warnings, out)?;
    for n in &outcome.errors {
        // The source, unless the message already starts with it.
        let source = n
            .source
            .as_deref()
            .filter(|s| !n.message.starts_with(s))
            .map(|s| format!("{}: ", t(s)))
            .unwrap_or_default();
        writeln!(out, "error: {}: {source}{}", t(&n.id), t(&n.message))?;
    }
    lines("skipped", &outcome.skipped, out)?;
    if !outcome.up_to_date.is_empty() {
        let ids: Vec<String> = outcome.up_to_date.iter().map(|i| t(i)).collect();
        writeln!(out, "up to date: {}", ids.join(", "))?;
    }
    if outcome.releases_changed {
        writeln!(out, "recorded: releases.json")?;
    }
    let pending = outcome.updates.iter().filter(|u| !u.applied).count();
    write!(
        out,
        "{} update(s), {} applied, {pending} not applied, {} error(s), {} up to date, {} skipped",
        outcome.updates.len(),
        outcome.updates.len() - pending,
        outcome.errors.len(),
        outcome.up_to_date.len(),
        outcome.skipped.len()
    )?;
    match &outcome.as_of {
        Some(as_of) => writeln!(
            out,
            ", {} held by the {}-day cooldown (as of {as_of})",
            outcome.held.len(),
            outcome.min_age_days
        ),
        None => writeln!(out),
    }
}
