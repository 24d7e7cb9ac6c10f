//! Loading a registry document: from a file, or from a URL through an on-disk cache with
//! conditional requests, a freshness window, an offline mode and a snapshot to fall back on.
//!
//! Every copy is untrusted and read under the same bounds ([`MAX_DOCUMENT_BYTES`], then
//! [`Document::parse`]): the server's answer, the cached copy and the snapshot alike. Only a
//! document that parses replaces the cache, so an HTML error page or a cut answer never
//! hides the last good copy. The rules, in the order they apply (docs/format.md, "Client"):
//!
//! - [`Freshness::Normal`]: a cached copy younger than [`RegistryOptions::max_age`] is used
//!   without a request ([`Origin::FreshCache`]); otherwise the URL is asked conditionally.
//! - [`Freshness::Refresh`]: always asked (conditionally).
//! - [`Freshness::Offline`]: never asked; the cached copy, else the snapshot, else an error.
//! - An answer: 304 keeps the copy ([`Origin::NotModified`]), 200 with a document replaces it
//!   ([`Origin::Network`]); a failed request or an answer that is not a document falls back to
//!   the cached copy ([`Origin::StaleCache`]), else the snapshot ([`Origin::Snapshot`]), each
//!   with a warning saying why and how old, else an error.
//!
//! [`Registry::lifecycle`] loads the lifecycle document beside it by the same rules, on
//! request only (`sibling`).

mod cache;
mod sibling;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::document::{Document, DocumentError, MAX_DOCUMENT_BYTES};
use crate::net::{self, Conditional, NetError};
use crate::resolve::{self, Resolution, ResolveError, ResolveOptions};
use cache::{Cache, Cached};

/// The public registry: the `registry.json` the ACP registry publishes on its CDN, the one
/// `acpr` (`agentclientprotocol/acpr`) fetches.
pub const DEFAULT_REGISTRY_URL: &str =
    "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json";

/// How long a cached copy is used without asking, by default: one hour.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(3600);

/// Where the registry document comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An `https://` URL (or `http://` to a loopback address under the test-only switch),
    /// cached on disk.
    Url(String),
    /// A file the user names, read as it is (no cache).
    File(PathBuf),
}

impl Source {
    /// `https://…` and `http://…` (any case) are URLs; anything else is a file path.
    #[must_use]
    pub fn parse(text: &str) -> Source {
        let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
        if lower.starts_with("https://") || lower.starts_with("http://") {
            Source::Url(text.to_string())
        } else {
            Source::File(PathBuf::from(text))
        }
    }
}

impl Default for Source {
    fn default() -> Self {
        Source::Url(DEFAULT_REGISTRY_URL.to_string())
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Url(url) => f.write_str(url),
            Source::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Whether the network is asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Freshness {
    /// Ask (conditionally) only when the cached copy is older than the maximum age.
    #[default]
    Normal,
    /// Never ask: the cached copy whatever its age, else the snapshot.
    Offline,
    /// Always ask (conditionally: an unchanged document costs a 304).
    Refresh,
}

/// What [`Registry::load`] reads and how.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    /// The URL or file.
    pub source: Source,
    /// The client's cache root; copies live in `<cache_root>/registry/<16 hex>/`.
    pub cache_root: PathBuf,
    /// How long a cached copy is used without asking ([`DEFAULT_MAX_AGE`]).
    pub max_age: Duration,
    /// Whether the network is asked.
    pub freshness: Freshness,
    /// A `registry.json` the caller ships, used when neither the network nor the cache gives
    /// a document.
    pub snapshot: Option<PathBuf>,
}

impl RegistryOptions {
    /// `source` cached under `cache_root`, fresh for [`DEFAULT_MAX_AGE`], no snapshot.
    #[must_use]
    pub fn new(source: Source, cache_root: PathBuf) -> RegistryOptions {
        RegistryOptions {
            source,
            cache_root,
            max_age: DEFAULT_MAX_AGE,
            freshness: Freshness::Normal,
            snapshot: None,
        }
    }
}

/// Where the loaded document came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The server sent it now (and it replaced the cached copy).
    Network,
    /// The server said the cached copy is current (304).
    NotModified,
    /// The cached copy, young enough not to ask (or offline and young enough).
    FreshCache,
    /// The cached copy, older than the maximum age, because the server could not be asked or
    /// did not give a document (see the warnings), or offline.
    StaleCache,
    /// The caller's snapshot: no other copy was available.
    Snapshot,
    /// The file named as the source.
    File,
}

impl fmt::Display for Origin {
    /// `network`, `not-modified`, `fresh-cache`, `stale-cache`, `snapshot`, `file`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Network => "network",
            Origin::NotModified => "not-modified",
            Origin::FreshCache => "fresh-cache",
            Origin::StaleCache => "stale-cache",
            Origin::Snapshot => "snapshot",
            Origin::File => "file",
        })
    }
}

/// A loaded registry document and where it came from.
#[derive(Debug, Clone)]
pub struct Registry {
    /// The document.
    pub document: Document,
    /// Where it came from.
    pub origin: Origin,
    /// For a cached copy, how long ago the server last gave or confirmed it (zero for
    /// [`Origin::Network`] and [`Origin::NotModified`]); `None` for a file or snapshot, or a
    /// copy whose fetch time is unreadable or in the future.
    pub age: Option<Duration>,
    /// What the caller should show: a fallback and why, a cache that could not be read or
    /// written.
    pub warnings: Vec<String>,
}

/// Why no registry document could be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The file named as the source cannot be read.
    #[error("cannot read the registry file {}: {reason}; check the path given as the registry", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The file or snapshot is not a registry document.
    #[error("{0}; give a registry.json file")]
    Invalid(DocumentError),
    /// The URL gave no document and there was nothing to fall back on.
    #[error("cannot load {url}: {reason}; check the URL and the network, or pass --snapshot FILE")]
    Fetch {
        /// The URL.
        url: String,
        /// Why (the request's failure, and the snapshot's when there is one).
        reason: String,
    },
    /// Offline, with neither a cached copy nor a snapshot.
    #[error("no cached copy of {url}; run once without --offline, or pass --snapshot FILE")]
    NoOfflineCopy {
        /// The URL.
        url: String,
    },
    /// Offline without a cached copy, and the snapshot cannot be used.
    #[error("no cached copy of {url}, and the snapshot cannot be used: {reason}")]
    Snapshot {
        /// The URL.
        url: String,
        /// Why the snapshot cannot be used (it names the file).
        reason: String,
    },
}

impl Registry {
    /// Load the document `options` names (see the module doc for the rules).
    ///
    /// ```no_run
    /// use acp_registry_client::net::{Client, NetConfig};
    /// use acp_registry_client::registry::{Registry, RegistryOptions, Source, DEFAULT_REGISTRY_URL};
    /// use acp_registry_client::resolve::ResolveOptions;
    ///
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = Client::new(NetConfig::default())?;
    /// let source = Source::parse(DEFAULT_REGISTRY_URL);
    /// let options = RegistryOptions::new(source, "/home/me/.cache/acp-registry".into());
    /// let registry = Registry::load(&client, &options).await?;
    /// for warning in &registry.warnings {
    ///     eprintln!("warning: {warning}");
    /// }
    /// let resolution = registry.resolve("some-agent", &ResolveOptions::default())?;
    /// println!("{:?} {}", resolution.kind, resolution.entry.version);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`RegistryError`] when no document can be had: the file is unreadable or not a
    /// document, or the URL gave none and neither a cached copy nor a snapshot is usable.
    pub async fn load(
        client: &net::Client,
        options: &RegistryOptions,
    ) -> Result<Registry, RegistryError> {
        match &options.source {
            Source::File(path) => Ok(Registry {
                document: read_named(path)?,
                origin: Origin::File,
                age: None,
                warnings: Vec::new(),
            }),
            Source::Url(url) => load_url(client, url, options).await,
        }
    }

    /// Resolve `id` in the document ([`resolve::resolve`]).
    ///
    /// # Errors
    /// [`ResolveError`] when the id is unknown or no kind the order allows is usable.
    pub fn resolve(&self, id: &str, options: &ResolveOptions) -> Result<Resolution, ResolveError> {
        resolve::resolve(&self.document, id, options)
    }
}

/// The URL's document by the rules of the module doc.
async fn load_url(
    client: &net::Client,
    url: &str,
    options: &RegistryOptions,
) -> Result<Registry, RegistryError> {
    let cache = Cache::new(&options.cache_root, url);
    let mut warnings = Vec::new();
    let cached = cache.read(&mut warnings);
    let fresh = cached
        .as_ref()
        .and_then(|c| c.age)
        .is_some_and(|age| age < options.max_age);
    match (options.freshness, cached) {
        (Freshness::Offline, cached) => offline(url, cached, fresh, options, warnings),
        (Freshness::Normal, Some(cached)) if fresh => {
            Ok(from_cache(cached, Origin::FreshCache, warnings))
        }
        (_, cached) => {
            let known = cached
                .as_ref()
                .map(|c| c.validators.clone())
                .unwrap_or_default();
            let answer = client
                .document_if_changed(url, &known, MAX_DOCUMENT_BYTES)
                .await;
            let failure = match (answer, cached) {
                (Ok(Conditional::NotModified), Some(cached)) => {
                    if let Err(e) = cache.touch(&cached) {
                        warnings.push(e);
                    }
                    let mut registry = from_cache(cached, Origin::NotModified, warnings);
                    registry.age = Some(Duration::ZERO);
                    return Ok(registry);
                }
                (Ok(Conditional::Modified { body, validators }), cached) => {
                    match Document::parse(&body, "the answer") {
                        Ok(document) => {
                            if let Err(e) = cache.store(&body, &validators) {
                                warnings.push(e);
                            }
                            return Ok(Registry {
                                document,
                                origin: Origin::Network,
                                age: Some(Duration::ZERO),
                                warnings,
                            });
                        }
                        Err(e) => (e.to_string(), cached),
                    }
                }
                // A 304 is only ever answered to validators, which only a copy has.
                (Ok(Conditional::NotModified), None) => {
                    ("a 304 answer to an unconditional request".to_string(), None)
                }
                (Err(e), cached) => (describe(&e), cached),
            };
            fall_back(url, failure, options, warnings)
        }
    }
}

/// Offline: the cached copy whatever its age, else the snapshot.
fn offline(
    url: &str,
    cached: Option<Cached>,
    fresh: bool,
    options: &RegistryOptions,
    mut warnings: Vec<String>,
) -> Result<Registry, RegistryError> {
    if let Some(cached) = cached {
        if fresh {
            return Ok(from_cache(cached, Origin::FreshCache, warnings));
        }
        warnings.push(format!(
            "offline: using the cached copy of {url}, fetched {}",
            age_text(cached.age)
        ));
        return Ok(from_cache(cached, Origin::StaleCache, warnings));
    }
    let Some(snapshot) = &options.snapshot else {
        return Err(RegistryError::NoOfflineCopy {
            url: url.to_string(),
        });
    };
    let document = read_named(snapshot).map_err(|e| RegistryError::Snapshot {
        url: url.to_string(),
        reason: e.to_string(),
    })?;
    warnings.push(format!(
        "offline and no cached copy of {url}: using the snapshot {}",
        snapshot.display()
    ));
    Ok(snapshot_registry(document, warnings))
}

/// After a failed request or an answer that is not a document (`why`): the cached copy, else
/// the snapshot, else the error.
fn fall_back(
    url: &str,
    (why, cached): (String, Option<Cached>),
    options: &RegistryOptions,
    mut warnings: Vec<String>,
) -> Result<Registry, RegistryError> {
    if let Some(cached) = cached {
        warnings.push(format!(
            "could not refresh {url} ({why}): using the cached copy fetched {}",
            age_text(cached.age)
        ));
        return Ok(from_cache(cached, Origin::StaleCache, warnings));
    }
    let Some(snapshot) = &options.snapshot else {
        return Err(RegistryError::Fetch {
            url: url.to_string(),
            reason: why,
        });
    };
    match read_named(snapshot) {
        Ok(document) => {
            warnings.push(format!(
                "could not load {url} ({why}) and there is no cached copy: using the snapshot {}",
                snapshot.display()
            ));
            Ok(snapshot_registry(document, warnings))
        }
        Err(e) => Err(RegistryError::Fetch {
            url: url.to_string(),
            reason: format!("{why}; the snapshot cannot be used either: {e}"),
        }),
    }
}

fn from_cache(cached: Cached, origin: Origin, warnings: Vec<String>) -> Registry {
    Registry {
        document: cached.document,
        origin,
        age: cached.age,
        warnings,
    }
}

fn snapshot_registry(document: Document, warnings: Vec<String>) -> Registry {
    Registry {
        document,
        origin: Origin::Snapshot,
        age: None,
        warnings,
    }
}

/// A request's failure in words; a 404 says the document is not there.
fn describe(error: &NetError) -> String {
    match error {
        NetError::Status(404 | 410) => "not found (HTTP 404)".to_string(),
        NetError::TooLarge { .. } => {
            format!("the answer is larger than the {MAX_DOCUMENT_BYTES}-byte cap")
        }
        other => other.to_string(),
    }
}

/// "3 h ago", "2 days ago", or "at an unknown time" for a copy of unknown age.
pub(crate) fn age_text(age: Option<Duration>) -> String {
    let Some(age) = age else {
        return "at an unknown time (its fetch time is unreadable or in the future)".to_string();
    };
    let secs = age.as_secs();
    match secs {
        0..120 => format!("{secs} s ago"),
        120..7200 => format!("{} min ago", secs / 60),
        7200..172_800 => format!("{} h ago", secs / 3600),
        _ => format!("{} days ago", secs / 86_400),
    }
}

/// A registry document from a file the user (or the caller, for a snapshot) names: a link
/// the user names is followed, then the file is read like any other (a regular file, at most
/// [`MAX_DOCUMENT_BYTES`]) and parsed under the document's bounds.
fn read_named(path: &Path) -> Result<Document, RegistryError> {
    let failed = |reason: String| RegistryError::File {
        path: path.to_path_buf(),
        reason,
    };
    let real = std::fs::canonicalize(path).map_err(|e| failed(e.to_string()))?;
    let (Some(dir), Some(name)) = (real.parent(), real.file_name()) else {
        return Err(failed("it is not a file".to_string()));
    };
    let bytes = acp_registry_core::fs::read_capped_named(dir, Path::new(name), MAX_DOCUMENT_BYTES)
        .map_err(|e| failed(e.to_string()))?;
    Document::parse(&bytes, &path.display().to_string()).map_err(RegistryError::Invalid)
}

#[cfg(test)]
mod tests;
