//! What one run of the online rules is asked ([`Options`]: endpoints, limits, cache, the
//! base revision), what it reports back ([`Outcome`], [`Progress`]) and why it cannot run.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::diagnostics::Diagnostic;
use crate::manifest::repository::Repository;
use crate::net::{NetConfig, NetError};

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

/// `GITHUB_TOKEN` and the GitHub API origins it may be sent to: the one decision of where
/// the token goes ([`GitHubToken::for_api`]), used wherever a request carries it (`validate
/// --online`, `new --binary`, `update`).
///
/// The API the requests go to is the flag's, else `online.github_api` of the registry's own
/// configuration, else `https://api.github.com`. The configuration is part of the tree a
/// pull request changes, so it may decide where requests go but never where the token goes:
/// the token is sent only to the default API's origin and to the origins named by the
/// command line (`--github-api`) or the environment (`GITHUB_API_URL`, which the Actions
/// runner sets). Origins are compared parsed (scheme, host, port).
#[derive(Clone, Default)]
pub struct GitHubToken {
    token: Option<String>,
    /// Base URLs of APIs trusted besides the default.
    trusted: Vec<String>,
}

impl std::fmt::Debug for GitHubToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHubToken")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("trusted", &self.trusted)
            .finish()
    }
}

impl GitHubToken {
    /// `token` (none when empty), for the default API and the APIs at `trusted` base URLs
    /// (named outside the tree under test: the command line, the environment).
    pub fn new(token: Option<String>, trusted: Vec<String>) -> GitHubToken {
        GitHubToken {
            token: token.filter(|t| !t.is_empty()),
            trusted,
        }
    }

    /// The token requests to the API at `api` carry: only when its origin is trusted.
    pub(crate) fn for_api(&self, api: &str) -> Option<String> {
        self.token.clone().filter(|_| self.trusts(api))
    }

    /// Whether the API at `api` is on the default API's origin or a trusted one.
    fn trusts(&self, api: &str) -> bool {
        let origin = |text: &str| url::Url::parse(text).ok().map(|u| u.origin());
        let Some(wanted) = origin(api).filter(url::Origin::is_tuple) else {
            return false;
        };
        std::iter::once(DEFAULT_GITHUB_API)
            .chain(self.trusted.iter().map(String::as_str))
            .any(|t| origin(t).as_ref() == Some(&wanted))
    }

    /// The warning to print once when a token is set but withheld from `api`.
    pub fn withheld(&self, api: &str) -> Option<String> {
        if self.token.is_none() || self.trusts(api) {
            return None;
        }
        Some(format!(
            "GITHUB_TOKEN is not sent to the GitHub API at {api}: it is named by the registry's \
             configuration (online.github_api), which a pull request can change, so its \
             requests go without the token. To trust it, pass --github-api {api} or set \
             GITHUB_API_URL={api}"
        ))
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
    /// `GITHUB_TOKEN`: sent to a trusted GitHub API only, asked for published asset digests.
    pub github_token: GitHubToken,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_to_the_default_api_and_trusted_origins_only() {
        let token = GitHubToken::new(Some("t".into()), vec!["https://ghe.example/api/v3".into()]);
        for api in [
            "https://api.github.com",
            "https://api.github.com:443/",
            "https://ghe.example/api/v3",
            "https://ghe.example/other",
        ] {
            assert_eq!(token.for_api(api).as_deref(), Some("t"), "{api}");
            assert_eq!(token.withheld(api), None, "{api}");
        }
        for api in [
            "http://api.github.com",
            "https://api.github.com.evil",
            "https://api.github.com@evil.example",
            "https://ghe.example:8443/api/v3",
            "https://evil.example",
            "not a url",
        ] {
            assert_eq!(token.for_api(api), None, "{api}");
            assert!(token.withheld(api).is_some(), "{api}");
        }
        assert_eq!(
            GitHubToken::new(Some(String::new()), vec![]).withheld("https://x.example"),
            None
        );
        assert!(!format!("{token:?}").contains("\"t\""));
    }
}
