//! `acp-registry update`: move entries to the newest version their sources serve, without
//! ever downgrading, and apply the change through the comment-keeping editor.
//!
//! For each entry (quarantined ones skipped): the sources its distribution declares
//! ([`sources`]: npm for `npx`, `PyPI` for `uvx`, GitHub releases of `repository` for binary
//! targets), the highest version all of them offer on the channel and, under a release-age
//! cooldown, published at least that long ago by each ([`select`]; a newer release held back
//! is reported with the time it becomes eligible), then with `apply` the edits ([`apply`]):
//! only the strings that must change, `sha256` written for every binary target, the entry
//! re-validated and the file restored on any failure. All HTTP goes through [`crate::net`].
//!
//! With `apply` (or `record`, which edits no manifest), the run ends by recording what the
//! sources said in `releases.json`
//! (`registry::releases`): each entry whose sources all answered gets its highest releases
//! and its pins, the others keep what the file had, and ids no entry declares are dropped.
//! A file the registry could not read stops the run before anything is edited: overwriting
//! it would lose the members it could not read.

mod apply;
mod context;
mod feed;
mod options;
pub(crate) mod select;
pub(crate) mod sources;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::diagnostics::Severity;
use crate::manifest::distribution::Distribution;
use crate::net::{Client, NetError};
use crate::online::Endpoints;
use crate::registry::releases::{ReleasesError, SourceReleases};
use crate::registry::{check_registry, Checked, RegistryError, Releases};
use crate::rules::{display_path, package_name_and_pin, EntryReport, PreviewVersion};
use acp_registry_core::time::format_utc;
use context::{Candidate, Context};
pub use options::{Channel, Options};
use select::{Cooldown, Decision};
use sources::{Offer, SourceError};

/// One entry that can move to a newer version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Update {
    pub(crate) id: String,
    /// The manifest, relative to the registry root.
    pub(crate) file: String,
    pub(crate) from: String,
    pub(crate) to: String,
    /// When `to` was published (the latest of its sources' times), RFC 3339 UTC.
    pub(crate) published: Option<String>,
    pub(crate) applied: bool,
}

/// A release newer than the entry's update (or than its current version) that the
/// cooldown holds back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Held {
    pub(crate) id: String,
    pub(crate) version: String,
    /// When it was published (the latest of its sources' times), RFC 3339 UTC; `None` when a
    /// source does not say.
    pub(crate) published: Option<String>,
    /// When it becomes eligible; `None` when its publish time is unknown.
    pub(crate) eligible_at: Option<String>,
    pub(crate) message: String,
}

/// A message about one entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    pub(crate) id: String,
    /// Errors: the source the failure concerns (``npm `x` ``, `GitHub releases of o/r`,
    /// ``feed `https://…` ``; the entry's sources, comma-separated, when it is not one's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<String>,
    pub(crate) message: String,
}

/// The result of a run, every list sorted by id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The cooldown applied, in days (the flag's, else the configuration's).
    pub(crate) min_age_days: u32,
    /// The time release ages were measured at, RFC 3339 UTC; `None` without a cooldown (no
    /// decision depended on it, so the output does not either).
    pub(crate) as_of: Option<String>,
    pub(crate) updates: Vec<Update>,
    /// Releases the cooldown holds back, one per entry (the newest).
    pub(crate) held: Vec<Held>,
    /// Entries whose sources could not be read, or whose edit failed.
    pub errors: Vec<Note>,
    pub(crate) warnings: Vec<Note>,
    pub(crate) up_to_date: Vec<String>,
    pub(crate) skipped: Vec<Note>,
    /// With `--apply` or `--record`: whether `releases.json` was written (its text changed).
    pub(crate) releases_changed: bool,
}

/// Why a run could not take place (per-entry problems are [`Outcome::errors`]).
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    /// The registry could not be read or checked.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The async runtime could not start.
    #[error("cannot start the network runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(#[from] NetError),
    /// `releases.json` cannot be written: malformed (so never overwritten), or the write
    /// failed. A malformed file stops an `--apply` run before anything is asked or edited.
    #[error(transparent)]
    Releases(#[from] ReleasesError),
    /// `--agent` names ids no entry has (a usage error, as for `verify`).
    #[error("--agent {ids}: no entry of {} has this id", registry.display())]
    UnknownAgents {
        /// The unknown ids, comma-separated.
        ids: String,
        /// The registry as named.
        registry: PathBuf,
    },
}

/// Ask every source of every selected entry for its newest version and, with
/// [`Options::apply`], edit the manifests (each re-validated, restored on failure).
pub fn run(root: &Path, options: &Options) -> Result<Outcome, UpdateError> {
    let checked = check_registry(root, None)?;
    let unknown = unknown_agents(&checked, &options.agents);
    if !unknown.is_empty() {
        return Err(UpdateError::UnknownAgents {
            ids: unknown.join(","),
            registry: root.to_path_buf(),
        });
    }
    let records = options.apply || options.record;
    if records && checked.releases.malformed {
        // Refused before any edit: the run would end by overwriting what it could not read.
        return Err(ReleasesError::Malformed.into());
    }
    let endpoints = options
        .endpoints
        .apply(checked.config.online.apply(Endpoints::default()));
    let context = Context {
        client: Client::new(options.net.clone())?,
        github: sources::GitHub {
            api: endpoints.github_api.clone(),
            token: options.github_token.for_api(&endpoints.github_api),
            rate_limit_wait: options.rate_limit_wait,
        },
        endpoints,
        options: options.clone(),
        cooldown: Cooldown {
            min_age_days: options
                .min_age_days
                .unwrap_or(checked.config.update_min_age_days),
            now: options.now,
        },
    };
    let runtime = crate::net::runtime()?;
    let mut outcome = Outcome {
        min_age_days: context.cooldown.min_age_days,
        as_of: (context.cooldown.min_age_days > 0).then(|| format_utc(options.now)),
        ..Outcome::default()
    };
    let mut history = checked.releases.clone();
    for report in &checked.entries {
        if !options.agents.is_empty()
            && !options
                .agents
                .iter()
                .any(|a| *a == report.entry.name || a == report.id())
        {
            continue;
        }
        match candidate(&checked, report, &context) {
            Err(reason) => outcome.skipped.push(note(report, reason)),
            Ok(candidate) => {
                let asked =
                    runtime.block_on(update_entry(root, &context, &candidate, &mut outcome));
                if let Some((offers, applied)) = asked {
                    record(&mut history, &candidate, &offers, applied);
                }
            }
        }
    }
    outcome.errors.sort_by(|a, b| a.id.cmp(&b.id));
    if records {
        let ids: BTreeSet<&str> = checked.entries.iter().map(EntryReport::id).collect();
        history.retain_ids(&ids);
        outcome.releases_changed = history.write(root)?;
    }
    Ok(outcome)
}

/// Record what the entry's sources said in `history` (each source asked replaces its
/// member; the entry's other sources keep theirs): the highest releases, plus the entry's
/// stable and preview pins, with `applied` in place of the channel's when the update moved it.
fn record(
    history: &mut Releases,
    candidate: &Candidate<'_>,
    offers: &[Offer],
    applied: Option<PreviewVersion>,
) {
    let report = candidate.report;
    let pin = |pointer: &str| -> Option<PreviewVersion> {
        if pointer == format!("{}/version", candidate.base) && applied.is_some() {
            return applied;
        }
        let doc = report.manifest_doc()?;
        let (node, _) = doc.root.pointer(pointer)?;
        PreviewVersion::parse(node.as_str()?)
    };
    let pins: Vec<PreviewVersion> = ["/version", "/preview/version"]
        .into_iter()
        .filter_map(pin)
        .collect();
    for offer in offers {
        let releases =
            SourceReleases::recorded(offer.package.clone(), offer.history.clone(), &pins);
        history.set(report.id(), offer.kind, releases);
    }
}

fn unknown_agents(checked: &Checked, agents: &[String]) -> Vec<String> {
    let known: BTreeSet<&str> = checked
        .entries
        .iter()
        .flat_map(|e| [e.entry.name.as_str(), e.id()])
        .collect();
    let wanted: BTreeSet<&String> = agents.iter().collect();
    wanted
        .into_iter()
        .filter(|a| !known.contains(a.as_str()))
        .cloned()
        .collect()
}

fn note(report: &EntryReport, message: impl Into<String>) -> Note {
    Note {
        id: report.id().to_string(),
        source: None,
        message: message.into(),
    }
}

/// An error of the entry concerning `source`.
fn error_note(report: &EntryReport, source: String, message: impl Into<String>) -> Note {
    Note {
        source: Some(source),
        ..note(report, message)
    }
}

/// How an error that is no single source's names the entry's sources.
fn all_sources(offers: &[Offer]) -> String {
    let names: Vec<&str> = offers.iter().map(|o| o.name.as_str()).collect();
    names.join(", ")
}

/// The entry's channel and sources, or why it is skipped.
fn candidate<'a>(
    checked: &Checked,
    report: &'a EntryReport,
    context: &Context,
) -> Result<Candidate<'a>, String> {
    if let Some(reason) = checked.quarantine.ids.get(report.id()) {
        return Err(format!("quarantined: {reason}"));
    }
    let errors = report
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error);
    let doc = report
        .manifest_doc()
        .filter(|_| !errors)
        .ok_or("the entry has validation errors; run `acp-registry validate` and fix them first")?;
    let base = match context.options.channel {
        Channel::Stable => "",
        Channel::Preview => "/preview",
    };
    let version = doc
        .root
        .pointer(&format!("{base}/version"))
        .and_then(|(n, _)| n.as_str())
        .and_then(PreviewVersion::parse)
        .ok_or("no preview block")?;
    let dist = doc
        .root
        .pointer(&format!("{base}/distribution"))
        .map(|(n, _)| Distribution::from_node(n, &format!("{base}/distribution")))
        .unwrap_or_default();
    let feed = checked.config.feeds.get(report.id()).cloned();
    let github = match dist.binary.is_empty() || feed.is_some() {
        true => None,
        false => Some(
            apply::github_repository(&doc, &dist, &context.endpoints.github_api).ok_or(
                "no update source: the binaries are not releases of `repository` on GitHub, \
                 and the configuration declares no feed for the entry (`feeds`)",
            )?,
        ),
    };
    if github.is_none() && feed.is_none() && dist.npx.is_none() && dist.uvx.is_none() {
        return Err("no update source".into());
    }
    Ok(Candidate {
        report,
        base,
        current: version,
        dist,
        github,
        feed_seen: feed.as_ref().map_or_else(Default::default, |f| {
            feed::first_seen(&checked.releases, report.id(), &f.url)
        }),
        feed,
    })
}

/// Ask every source of the entry, in a fixed order (npm, `PyPI`, then the feed or GitHub).
async fn offers(context: &Context, candidate: &Candidate<'_>) -> Result<Vec<Offer>, SourceError> {
    let client = &context.client;
    let mut offers = Vec::new();
    if let Some(spec) = candidate.dist.npx.as_ref().and_then(|p| p.spec.as_deref()) {
        let (name, _) = package_name_and_pin(spec, true);
        offers.push(sources::npm(client, &context.endpoints.npm, name).await?);
    }
    if let Some(spec) = candidate.dist.uvx.as_ref().and_then(|p| p.spec.as_deref()) {
        let (name, _) = package_name_and_pin(spec, false);
        let name = name.split_once('[').map_or(name, |(n, _)| n);
        offers.push(sources::pypi(client, &context.endpoints.pypi, name).await?);
    }
    // Only the release `select` can choose keeps its assets: on the channel, offered by
    // every other source (their version lists are sorted), and old enough at each.
    let (channel, cooldown) = (context.options.channel, context.cooldown);
    let others = &offers;
    let eligible = |v, time: Option<i64>| {
        let published = match others.is_empty() {
            true => time,
            false => time
                .zip(select::published(others, v))
                .map(|(a, b)| a.max(b)),
        };
        select::follows(channel, v)
            && others
                .iter()
                .all(|o: &Offer| o.versions.binary_search(&v).is_ok())
            && cooldown.allows(published)
    };
    let last = if let Some(declared) = &candidate.feed {
        let cap = context.options.net.document_cap;
        let seen = (&candidate.feed_seen, context.options.now);
        Some(feed::feed(client, declared, cap, seen, &eligible).await?)
    } else if let Some((owner, repo)) = &candidate.github {
        Some(sources::github(client, &context.github, owner, repo, &eligible).await?)
    } else {
        None
    };
    offers.extend(last);
    Ok(offers)
}

/// Ask the entry's sources, report what they offer and, with `--apply`, apply the update.
/// The sources' answers and the version applied, when every source answered (`None`: a
/// source failed, and nothing may be recorded of the entry).
async fn update_entry(
    root: &Path,
    context: &Context,
    candidate: &Candidate<'_>,
    outcome: &mut Outcome,
) -> Option<(Vec<Offer>, Option<PreviewVersion>)> {
    let report = candidate.report;
    let offers = match offers(context, candidate).await {
        Ok(offers) => offers,
        Err(error) => {
            let source = error.source_name().to_string();
            outcome
                .errors
                .push(error_note(report, source, error.to_string()));
            return None;
        }
    };
    let applied = decide(root, context, candidate, &offers, outcome).await;
    Some((offers, applied))
}

/// Report the entry's selection and apply it with `--apply`; the version applied.
async fn decide(
    root: &Path,
    context: &Context,
    candidate: &Candidate<'_>,
    offers: &[Offer],
    outcome: &mut Outcome,
) -> Option<PreviewVersion> {
    let report = candidate.report;
    let cooldown = context.cooldown;
    let selection = select::select(candidate.current, offers, context.options.channel, cooldown);
    if let Some(mismatch) = selection.mismatch {
        outcome.warnings.push(note(report, mismatch));
    }
    if let Some(held) = &selection.held {
        let instead = match selection.decision {
            Decision::Update(to) => format!("moving to {to} instead"),
            _ => format!("staying at {}", candidate.current),
        };
        outcome
            .held
            .push(held_note(report, held, cooldown, &instead));
    }
    let to = match selection.decision {
        Decision::UpToDate => {
            outcome.up_to_date.push(report.id().to_string());
            return None;
        }
        Decision::Waiting => return None,
        Decision::NoCommon => {
            let message = "no version is offered by every source";
            let source = all_sources(offers);
            outcome.errors.push(error_note(report, source, message));
            return None;
        }
        Decision::Downgrade(best) => {
            let message = format!(
                "the newest version every source offers, {best}, is lower than {}; not applied",
                candidate.current
            );
            outcome.warnings.push(note(report, message));
            return None;
        }
        Decision::Update(to) => to,
    };
    let mut update = Update {
        id: report.id().to_string(),
        file: display_path(&report.entry, "agent.json"),
        from: candidate.current.to_string(),
        to: to.to_string(),
        published: select::published(offers, to).map(format_utc),
        applied: false,
    };
    if context.options.apply {
        match apply::apply(root, context, candidate, to, offers).await {
            Ok(()) => update.applied = true,
            Err(message) => {
                // The archives' source when there are binaries (the last asked), else all.
                let source = match (candidate.dist.binary.is_empty(), offers.last()) {
                    (false, Some(last)) => last.name.clone(),
                    _ => all_sources(offers),
                };
                outcome.errors.push(error_note(report, source, message));
            }
        }
    }
    let applied = update.applied.then_some(to);
    outcome.updates.push(update);
    applied
}

/// The report of a release the cooldown holds back; `instead` says what the entry does.
fn held_note(report: &EntryReport, held: &select::Held, cooldown: Cooldown, instead: &str) -> Held {
    let days = cooldown.min_age_days;
    let published = held.published.map(format_utc);
    let eligible_at = cooldown.eligible_at(held.published).map(format_utc);
    let why = match (&published, &eligible_at) {
        (Some(published), Some(eligible_at)) => {
            format!("published {published}, inside the {days}-day cooldown until {eligible_at}")
        }
        _ => format!(
            "has no publish time at {}; a release of unknown age is never applied under the \
             {days}-day cooldown",
            held.untimed.join(", ")
        ),
    };
    Held {
        id: report.id().to_string(),
        version: held.version.to_string(),
        published,
        eligible_at,
        message: format!("{} {why}; {instead}", held.version),
    }
}
