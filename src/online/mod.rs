//! The online rules of `validate --online`: binary archive URLs answer, npm and `PyPI` pins
//! exist (and are not deprecated or yanked), and with `--verify-archives` archives match
//! their `sha256` pin. All HTTP goes through [`crate::net`]; findings are ordinary
//! [`Diagnostic`]s pointing at the URL or package value in `agent.json`, filtered through
//! the registry's [`Policy`] like every offline finding.

pub(crate) mod cache;
mod checks;
pub(crate) mod digest;
pub(crate) mod packages;
mod provenance;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::diagnostics::{Diagnostic, Severity};
use crate::manifest::agent::AgentView;
use crate::manifest::distribution::{Distribution, Kind};
use crate::manifest::repository::Repository;
use crate::net::{Client, NetConfig, NetError};
use crate::rules::{package_name_and_pin, EntryReport, ManifestDoc, Policy, Sink};

use cache::Cache;

const DEFAULT_NPM_REGISTRY: &str = "https://registry.npmjs.org";
const DEFAULT_PYPI: &str = "https://pypi.org";
const DEFAULT_GITHUB_API: &str = "https://api.github.com";
/// The default `--archive-cap`: the largest archive downloaded, in MiB.
pub const DEFAULT_ARCHIVE_CAP_MIB: u64 = 512;

/// Base URLs of the services the online tier asks; configurable so the same code runs
/// against local servers. (`github_api` is for `verify`, `update` and `pack`.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    /// The npm registry.
    pub npm: String,
    /// `PyPI` (its JSON API lives under `/pypi/`).
    pub pypi: String,
    /// The GitHub REST API.
    pub github_api: String,
}

impl Default for Endpoints {
    fn default() -> Self {
        Self {
            npm: DEFAULT_NPM_REGISTRY.into(),
            pypi: DEFAULT_PYPI.into(),
            github_api: DEFAULT_GITHUB_API.into(),
        }
    }
}

/// The `online` object of `acp-registry.jsonc`: endpoints that flags may override.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointOverrides {
    /// `npm_registry`.
    pub npm: Option<String>,
    /// `pypi`.
    pub pypi: Option<String>,
    /// `github_api`.
    pub github_api: Option<String>,
}

impl EndpointOverrides {
    /// `self` over `base`.
    pub fn apply(&self, base: Endpoints) -> Endpoints {
        Endpoints {
            npm: self.npm.clone().unwrap_or(base.npm),
            pypi: self.pypi.clone().unwrap_or(base.pypi),
            github_api: self.github_api.clone().unwrap_or(base.github_api),
        }
    }
}

impl Endpoints {
    /// Hosts whose release assets are GitHub's: `github.com` and the configured API's host
    /// (GitHub Enterprise serves both from one host; tests serve both from a local one).
    pub(crate) fn github_hosts(&self) -> Vec<String> {
        let mut hosts = vec!["github.com".to_string()];
        if let Ok(api) = url::Url::parse(&self.github_api) {
            if let Some(host) = api.host_str() {
                let host = match api.port() {
                    Some(port) => format!("{host}:{port}"),
                    None => host.to_string(),
                };
                if host != "api.github.com" {
                    hosts.push(host.to_ascii_lowercase());
                }
            }
        }
        hosts
    }
}

/// The `provenance` object of `acp-registry.jsonc`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProvenanceConfig {
    /// `release_repositories`: per id, repositories besides the manifest's `repository` that
    /// its release archives (and its packages' repository claims) may come from.
    pub release_repositories: BTreeMap<String, Vec<Repository>>,
}

impl ProvenanceConfig {
    /// The repositories the entry `id` may ship from: its manifest's, then the declared ones.
    pub(crate) fn accepted(&self, id: &str, repository: Option<&Repository>) -> Vec<Repository> {
        let declared = self.release_repositories.get(id).into_iter().flatten();
        repository.into_iter().chain(declared).cloned().collect()
    }
}

/// How one run of the online rules asks and what it remembers.
#[derive(Debug, Clone)]
pub struct Options {
    /// Limits and safety of the HTTP client.
    pub net: NetConfig,
    /// Where npm and `PyPI` are asked.
    pub endpoints: Endpoints,
    /// `--verify-archives`: download every archive and compare its sha256 with the pin.
    pub verify_archives: bool,
    /// Largest archive `--verify-archives` downloads, in bytes.
    pub archive_cap: u64,
    /// Cache folder; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
    /// Age after which a cached success is checked again.
    pub max_age: Duration,
    /// `provenance` in the configuration.
    pub provenance: ProvenanceConfig,
    /// `GITHUB_TOKEN`: sent to the GitHub API only, asked for published asset digests.
    pub github_token: Option<String>,
    /// The manifests as they were at the base revision, which tell `archive-retagged` from
    /// `sha256-mismatch`; `None`: no history, every mismatch is `sha256-mismatch`.
    pub baseline: Option<Arc<dyn Baseline>>,
}

/// The manifests at the base revision of a run: `--changed-since REV`, else the committed
/// ones (git's `HEAD`).
pub trait Baseline: Send + Sync + std::fmt::Debug {
    /// The text of `file` (relative to the registry root) at the base revision; `None` when
    /// it did not exist there or cannot be read.
    fn manifest_at_base(&self, file: &str) -> Option<String>;
    /// How messages name the base: `HEAD`, or the `--changed-since` revision.
    fn revision(&self) -> &str;
}

/// Whether `target`'s pin is one the base revision already had: the manifest's `version`,
/// and the platform's `archive` and `sha256`, unchanged in `base` (the manifest's text there).
pub(crate) fn pin_established(doc: &ManifestDoc, target: &ArchiveTarget, base: &str) -> bool {
    let Ok(old) = crate::manifest::jsonc::parse(base) else {
        return false;
    };
    if old.get_str("version") != doc.root.get_str("version") {
        return false;
    }
    let Some(dist) = old.get("distribution") else {
        return false;
    };
    let pin = target.sha256.as_deref();
    Distribution::from_node(dist, "/distribution")
        .binary
        .iter()
        .any(|old| {
            old.platform == target.platform
                && old.archive.as_deref() == Some(target.url.as_str())
                && old
                    .sha256
                    .as_deref()
                    .map(str::to_ascii_lowercase)
                    .as_deref()
                    == pin
        })
}

/// The `quarantine.json` reason for an entry whose archives at `version` were re-uploaded:
/// the same for every platform, so one member covers them all.
pub(crate) fn retag_reason(version: &str) -> String {
    format!(
        "retagged: the {version} archives no longer match their sha256 pins (possible compromise; see `acp-registry explain archive-retagged`)"
    )
}

/// Told about the run as it goes (the command draws a progress bar with it).
pub trait Progress: Send + Sync {
    /// The run has `total` checks.
    fn start(&self, total: usize);
    /// A check of a URL on `host` begins.
    fn working(&self, host: &str);
    /// One check has finished.
    fn done(&self);
}

/// Progress that shows nothing.
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: usize) {}
    fn working(&self, _: &str) {}
    fn done(&self) {}
}

/// Findings, plus problems of the run itself (the cache) that are not about the registry.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The online findings, through the policy.
    pub diagnostics: Vec<Diagnostic>,
    /// Problems of the run itself, e.g. an unreadable cache.
    pub warnings: Vec<String>,
    /// Ids with an `archive-retagged` finding (kept by the policy), with the quarantine
    /// reason to record.
    pub retagged: BTreeMap<String, String>,
}

/// Why the online rules could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum OnlineError {
    /// The tokio runtime could not start.
    #[error("cannot start the network runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(#[from] NetError),
}

/// One thing to ask the network about, in one manifest.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Archive(ArchiveTarget),
    Package(PackageTarget),
}

/// A binary target's archive URL.
#[derive(Debug, Clone)]
pub(crate) struct ArchiveTarget {
    pub(crate) platform: String,
    /// JSON pointer of the platform's target object.
    pub(crate) pointer: String,
    pub(crate) url: String,
    pub(crate) sha256: Option<String>,
}

/// An npx (`npm`) or uvx package spec.
#[derive(Debug, Clone)]
pub(crate) struct PackageTarget {
    pub(crate) npm: bool,
    pub(crate) pointer: String,
    pub(crate) name: String,
    pub(crate) version: Option<String>,
}

impl Target {
    fn host(&self, endpoints: &Endpoints) -> String {
        let url = match self {
            Target::Archive(archive) => &archive.url,
            Target::Package(package) if package.npm => &endpoints.npm,
            Target::Package(_) => &endpoints.pypi,
        };
        url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// The stable distribution's archives and packages of one manifest (preview artefacts are
/// not probed), leaving out values the offline rules already reported as errors.
pub(crate) fn collect(doc: &ManifestDoc, offline: &[Diagnostic]) -> Vec<Target> {
    let reported: BTreeSet<&str> = offline
        .iter()
        .filter(|d| d.severity == Severity::Error && d.file == doc.source.path)
        .filter_map(|d| d.pointer.as_deref())
        .collect();
    // The launch model's targets: only the keys the rules treat as targets are probed.
    let dist = AgentView::from_node(&doc.root).distribution;
    let mut out = Vec::new();
    for target in &dist.binary {
        let Some(url) = &target.archive else {
            continue;
        };
        if reported.contains(format!("{}/archive", target.pointer).as_str()) {
            continue;
        }
        out.push(Target::Archive(ArchiveTarget {
            platform: target.platform.clone(),
            pointer: target.pointer.clone(),
            url: url.clone(),
            sha256: target.sha256.as_deref().map(str::to_ascii_lowercase),
        }));
    }
    for package in [&dist.npx, &dist.uvx].into_iter().flatten() {
        let npm = package.kind == Kind::Npx;
        let pointer = format!("{}/package", package.pointer);
        let Some(spec) = &package.spec else {
            continue;
        };
        if reported.contains(pointer.as_str()) {
            continue;
        }
        let (name, pin) = package_name_and_pin(spec, npm);
        out.push(Target::Package(PackageTarget {
            npm,
            pointer,
            name: name.to_string(),
            version: pin.map(str::to_string),
        }));
    }
    out
}

/// Run the online rules on `entries` (only those in `only`, when given).
pub fn check(
    entries: &[EntryReport],
    only: Option<&BTreeSet<String>>,
    policy: &Policy,
    options: &Options,
    progress: Arc<dyn Progress>,
) -> Result<Outcome, OnlineError> {
    let mut outcome = Outcome::default();
    let cache = match &options.cache_dir {
        Some(dir) => {
            let (cache, warning) = Cache::open(dir, options.max_age);
            outcome.warnings.extend(warning);
            cache
        }
        None => Cache::disabled(),
    };
    let mut jobs = Vec::new();
    let mut identities = BTreeMap::new();
    for entry in entries {
        if only.is_some_and(|set| !set.contains(&entry.entry.name)) {
            continue;
        }
        let Some(doc) = entry.manifest_doc() else {
            continue;
        };
        let doc = Arc::new(doc.into_owned());
        let version = doc.root.get_str("version").unwrap_or_default().to_string();
        identities.insert(entry.entry.name.clone(), (entry.id().to_string(), version));
        for target in collect(&doc, &entry.diagnostics) {
            jobs.push((entry.entry.name.clone(), doc.clone(), target));
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let context = Arc::new(checks::Context {
        client: Client::new(options.net.clone())?,
        cache: Mutex::new(cache),
        options: options.clone(),
    });
    progress.start(jobs.len());
    let results = runtime.block_on(checks::run_all(context.clone(), jobs, progress));
    if let Err(warning) = context.cache.lock().expect("cache").save() {
        outcome.warnings.push(warning);
    }
    for (entry, findings) in results {
        let mut sink = Sink::new(policy, Some(entry.clone()));
        for finding in findings {
            sink.push(finding);
        }
        let retagged = sink
            .diagnostics
            .iter()
            .any(|d| d.code == crate::rules::Code::ArchiveRetagged);
        if let (true, Some((id, version))) = (retagged, identities.get(&entry)) {
            outcome.retagged.insert(id.clone(), retag_reason(version));
        }
        outcome.diagnostics.extend(sink.diagnostics);
    }
    Ok(outcome)
}
