//! `lifecycle.json`: what the registry knows about each entry beyond `registry.json`, for
//! clients (docs/format.md, "Lifecycle document"): its status from `deprecations.json`, the
//! publish time of each distribution's pinned version and a short history from `releases.json`
//! (what `update` recorded, so the build stays offline), and which known clients can install
//! it.
//!
//! Every entry is listed, disabled ones too (that is how a client learns why an id went away),
//! sorted by id, with fixed key order. `--as-of` (or `SOURCE_DATE_EPOCH`) is written as `as_of`
//! and judges what was known then: a retirement decided later, and releases published later,
//! are left out; without it nothing is filtered and no time is written, so the document is a
//! function of the committed files alone.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::manifest::agent::AgentView;
use crate::manifest::distribution::Distribution;
use crate::manifest::jsonc::Node;
use crate::published::listings;
use crate::registry::releases::{Release, SourceKind, SourceReleases};
use crate::registry::Checked;
use crate::rules::{client_list, compatibility, package_name_and_pin, EntryReport, Status};
use acp_registry_core::time::{format_utc, parse_iso_utc_seconds};

/// The file, beside `registry.json`.
pub(crate) const LIFECYCLE_FILE: &str = "lifecycle.json";
/// Its schema's file name, beside it.
pub(crate) const LIFECYCLE_SCHEMA_FILE: &str = "lifecycle.schema.json";
/// The schema, as published.
pub(crate) const LIFECYCLE_SCHEMA: &str = include_str!("../../schemas/lifecycle.schema.json");
/// `version` of the document's format.
const FORMAT_VERSION: &str = "1.0.0";

/// The document.
#[derive(Debug, Serialize)]
struct Document<'a> {
    version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    as_of: Option<String>,
    registry: &'a str,
    clients: Vec<ClientRef>,
    agents: Vec<Agent<'a>>,
}

/// A known client, as the compatibility members name it.
#[derive(Debug, Serialize)]
struct ClientRef {
    id: String,
    name: String,
}

/// One entry.
#[derive(Debug, Serialize)]
struct Agent<'a> {
    id: &'a str,
    version: String,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    since: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    replacement: Option<&'a str>,
    in_registry: bool,
    compatibility: BTreeMap<String, Compat>,
    distributions: BTreeMap<&'static str, Dist>,
}

/// Whether one client can install the entry.
#[derive(Debug, Serialize)]
struct Compat {
    installs: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    why: Vec<String>,
}

/// One distribution kind of the entry.
#[derive(Debug, Serialize)]
struct Dist {
    source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    package: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repository: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    published: Option<String>,
    history: Vec<Release>,
}

/// The document for `checked`, as of `as_of` (seconds since the epoch) when given; `listed`
/// says whether `registry.json` lists an id.
pub(crate) fn document(
    checked: &Checked,
    as_of: Option<i64>,
    listed: &dyn Fn(&str) -> bool,
) -> String {
    let mut entries: Vec<&EntryReport> = checked
        .entries
        .iter()
        .filter(|e| e.manifest.is_some())
        .collect();
    entries.sort_by(|a, b| a.id().cmp(b.id()));
    entries.dedup_by(|a, b| a.id() == b.id());
    let doc = Document {
        version: FORMAT_VERSION,
        as_of: as_of.map(format_utc),
        registry: registry_file(checked),
        clients: clients(),
        agents: entries
            .iter()
            .map(|entry| agent(checked, entry, as_of, listed(entry.id())))
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&doc).expect("plain data serializes");
    text.push('\n');
    text
}

/// The registry file the document describes: the first configured output.
fn registry_file(checked: &Checked) -> &str {
    checked
        .config
        .outputs
        .first()
        .map_or("registry.json", |o| o.file.as_str())
}

fn agent<'a>(
    checked: &'a Checked,
    entry: &'a EntryReport,
    as_of: Option<i64>,
    in_registry: bool,
) -> Agent<'a> {
    let id = entry.id();
    let retirement = checked
        .deprecations
        .ids
        .get(id)
        .filter(|r| as_of.is_none_or(|at| r.since_secs() <= at));
    let doc = entry.manifest_doc();
    let version = doc
        .as_ref()
        .and_then(|d| d.root.get_str("version").map(str::to_string))
        .unwrap_or_default();
    Agent {
        id,
        version: version.clone(),
        status: retirement.map_or(Status::Active, |r| r.status).as_str(),
        reason: retirement.map(|r| r.reason.as_str()),
        since: retirement.map(|r| r.since.as_str()),
        replacement: retirement.and_then(|r| r.replacement.as_deref()),
        in_registry,
        compatibility: doc
            .as_ref()
            .map(|d| compatibility_members(checked, id, &d.root))
            .unwrap_or_default(),
        distributions: doc
            .as_ref()
            .map(|d| distributions(checked, id, &d.root, &version, as_of))
            .unwrap_or_default(),
    }
}

/// One member per kind the manifest offers, with the pinned version's time and the history.
fn distributions(
    checked: &Checked,
    id: &str,
    root: &Node,
    version: &str,
    as_of: Option<i64>,
) -> BTreeMap<&'static str, Dist> {
    let Some((node, _)) = root.pointer("/distribution") else {
        return BTreeMap::new();
    };
    let dist = Distribution::from_node(node, "/distribution");
    let mut out = BTreeMap::new();
    let npm = (SourceKind::Npm, &dist.npx);
    for (kind, (source, package)) in [("npx", npm), ("uvx", (SourceKind::Pypi, &dist.uvx))] {
        let Some(spec) = package.as_ref().and_then(|p| p.spec.as_deref()) else {
            continue;
        };
        let (name, pin) = package_name_and_pin(spec, kind == "npx");
        let name = name.split_once('[').map_or(name, |(n, _)| n);
        let history = history(checked, id, source, as_of);
        let dist = Dist::new(source.key(), pin.map(str::to_string), history);
        out.insert(kind, dist.package(name));
    }
    if !dist.binary.is_empty() {
        let history = history(checked, id, SourceKind::GitHub, as_of);
        let repository = recorded(checked, id, SourceKind::GitHub)
            .map(|s| s.name.clone())
            .or_else(|| github_repository(root.get_str("repository")?));
        let mut binary = Dist::new("github", Some(version.to_string()), history);
        binary.repository = repository;
        out.insert("binary", binary);
    }
    out
}

impl Dist {
    /// A distribution pinned at `version`, its time looked up in `history`.
    fn new(source: &'static str, version: Option<String>, history: Vec<Release>) -> Dist {
        let published = version.as_ref().and_then(|v| {
            history
                .iter()
                .find(|h| h.version == *v)
                .and_then(|h| h.published.clone())
        });
        Dist {
            source,
            package: None,
            repository: None,
            version,
            published,
            history,
        }
    }

    fn package(mut self, name: &str) -> Dist {
        self.package = Some(name.to_string());
        self
    }
}

/// What `update` recorded of `id`'s `source`.
fn recorded<'c>(checked: &'c Checked, id: &str, source: SourceKind) -> Option<&'c SourceReleases> {
    checked.releases.agents.get(id)?.get(source)
}

/// The recorded releases of `id`'s `source`, highest first; under `as_of`, those published by
/// then (a release of unknown time is kept: nothing says it came later).
fn history(checked: &Checked, id: &str, source: SourceKind, as_of: Option<i64>) -> Vec<Release> {
    let Some(recorded) = recorded(checked, id, source) else {
        return Vec::new();
    };
    let published_by = |release: &&Release| match (as_of, release.published.as_deref()) {
        (Some(at), Some(time)) => parse_iso_utc_seconds(time).is_none_or(|t| t <= at),
        _ => true,
    };
    recorded
        .versions
        .iter()
        .filter(published_by)
        .cloned()
        .collect()
}

/// `owner/repo` of a `https://github.com/owner/repo` URL.
fn github_repository(url: &str) -> Option<String> {
    let rest = url.strip_prefix("https://github.com/")?;
    let mut parts = rest
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .split('/');
    let (owner, repo) = (parts.next()?, parts.next()?);
    (!owner.is_empty() && !repo.is_empty() && parts.next().is_none())
        .then(|| format!("{owner}/{repo}"))
}

/// One known client's verdict on an entry: the `compatibility` member and the site's
/// "Clients" line and "Works in" filter.
pub(crate) struct Verdict {
    pub(crate) id: String,
    pub(crate) name: String,
    /// `yes`, `partly` or `no`.
    pub(crate) installs: &'static str,
    pub(crate) why: Vec<String>,
}

/// Each known client's verdict on `entry`, judged as `validate`'s `client-incompatible` note
/// judges it (the stable distribution, the configured outputs).
pub(crate) fn client_verdicts(checked: &Checked, entry: &EntryReport) -> Vec<Verdict> {
    entry
        .manifest_doc()
        .map(|doc| verdicts(checked, entry.id(), &doc.root))
        .unwrap_or_default()
}

/// [`client_verdicts`] of the manifest tree `root` of the entry `id`.
fn verdicts(checked: &Checked, id: &str, root: &Node) -> Vec<Verdict> {
    let names: BTreeMap<&str, &str> = client_list().into_iter().collect();
    let view = AgentView::from_node(root);
    let listed = listings(&checked.config.outputs, id);
    compatibility(&view, &listed)
        .into_iter()
        .map(|c| Verdict {
            id: c.client.to_string(),
            name: names
                .get(c.client.as_str())
                .copied()
                .unwrap_or_default()
                .to_string(),
            installs: c.installs.as_str(),
            why: c.why,
        })
        .collect()
}

fn compatibility_members(checked: &Checked, id: &str, root: &Node) -> BTreeMap<String, Compat> {
    verdicts(checked, id, root)
        .into_iter()
        .map(|v| {
            let compat = Compat {
                installs: v.installs,
                why: v.why,
            };
            (v.id, compat)
        })
        .collect()
}

fn clients() -> Vec<ClientRef> {
    client_list()
        .into_iter()
        .map(|(id, name)| ClientRef {
            id: id.to_string(),
            name: name.to_string(),
        })
        .collect()
}
