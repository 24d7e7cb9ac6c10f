//! `acp-registry update`: run [`crate::update`] and print what it found, as text or JSON.
//! Exit codes: 0 nothing to do (or everything applied; releases held by the cooldown are
//! not "to do"), 1 updates available but not applied or an entry failed, 2 the run failed.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::online::Flags;
use super::{display_root, exit, CommandError, Exit};
use crate::diagnostics::escape;
use crate::net::NetConfig;
pub use crate::update::Channel;
use crate::update::{self, Note, Outcome};

/// `--format` of `update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One line per update, note and summary.
    Text,
    /// One versioned JSON document.
    Json,
}

/// `update`'s options.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--registry`.
    pub registry: PathBuf,
    /// `--agent`: only these ids (empty: every entry).
    pub agents: Vec<String>,
    /// `--channel`.
    pub channel: Channel,
    /// `--apply`: write the updates.
    pub apply: bool,
    /// `--format`.
    pub format: Format,
    /// The endpoints, archive cap and test-only loopback switch of the online flags.
    pub online: Flags,
    /// `--rate-limit-wait`: the longest GitHub rate-limit reset waited for.
    pub rate_limit_wait: Duration,
    /// `--min-age`: the release-age cooldown in days (`None`: `update.min_age_days`).
    pub min_age_days: Option<u32>,
    /// `--as-of`: measure release ages at this time, seconds since the Unix epoch
    /// (`None`: the clock).
    pub as_of: Option<i64>,
}

/// Reads `--as-of`: an RFC 3339 time with a zone (`2026-03-01T12:00:00Z`), or a date
/// (`2026-03-01`, midnight UTC); seconds since the Unix epoch.
pub fn parse_as_of(text: &str) -> Result<i64, String> {
    let full = match text.len() {
        10 => format!("{text}T00:00:00Z"),
        _ => text.to_string(),
    };
    crate::time::parse_iso_utc_seconds(&full).ok_or_else(|| {
        format!("`{text}` is not a UTC time; write e.g. 2026-03-01T12:00:00Z or 2026-03-01")
    })
}

/// The clock in seconds since the Unix epoch.
fn now() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
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
/// report says which); a failure of the run itself (a missing registry, say) is an error
/// (exit 2), as for every command.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    let token = super::online::github_token();
    let mut outcome = update::run(
        &options.registry,
        &update::Options {
            channel: options.channel,
            agents: options.agents.clone(),
            apply: options.apply,
            net: NetConfig {
                allow_loopback: options.online.allow_loopback_for_tests,
                ..NetConfig::default()
            },
            endpoints: options.online.endpoints.clone(),
            github_token: token,
            rate_limit_wait: options.rate_limit_wait,
            archive_cap: options.online.archive_cap_mib.saturating_mul(1024 * 1024),
            min_age_days: options.min_age_days,
            now: options.as_of.unwrap_or_else(now),
        },
    )?;
    let root = display_root(&options.registry);
    for update in &mut outcome.updates {
        if !root.is_empty() {
            update.file = format!("{root}/{}", update.file);
        }
    }
    let code = exit_code(&outcome);
    match options.format {
        Format::Json => {
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
        Format::Text => text(&outcome, out)?,
    }
    Ok(code)
}

fn exit_code(outcome: &Outcome) -> Exit {
    let pending = outcome.updates.iter().any(|u| !u.applied);
    if outcome.errors.is_empty() && !pending {
        exit::OK
    } else {
        exit::FINDINGS
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
    lines("error", &outcome.errors, out)?;
    lines("skipped", &outcome.skipped, out)?;
    if !outcome.up_to_date.is_empty() {
        let ids: Vec<String> = outcome.up_to_date.iter().map(|i| t(i)).collect();
        writeln!(out, "up to date: {}", ids.join(", "))?;
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
