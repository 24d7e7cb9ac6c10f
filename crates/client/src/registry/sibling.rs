//! The lifecycle document beside a loaded registry (docs/format.md "Client", "Lifecycle"):
//! for a URL, the URL with its last path segment replaced by `lifecycle.json`, fetched and
//! cached by the registry's own rules (freshness window, `Offline`, `Refresh`, conditional
//! requests, only a document that parses replacing the copy); for a file, the file
//! `lifecycle.json` in its folder; for a snapshot, none (a caller's shipped copy has no
//! sibling to trust).
//!
//! It is optional: a 404 means the registry publishes none (no warning, and the answer is
//! cached like a document, so it is not asked again while fresh), and any other failure is a
//! warning with the client carrying on without it (or with its cached copy, as for the
//! registry). Loading it is a separate call, so commands that do not need it ask nothing.

use std::path::Path;

use acp_registry_core::fs::ReadError;

use super::cache::{Cache, Cached};
use super::{Freshness, Origin, Registry, RegistryOptions, Source};
use crate::lifecycle::{Lifecycle, MAX_LIFECYCLE_BYTES};
use crate::net::{self, Conditional, NetError};

/// The file name, beside `registry.json`.
const FILE: &str = "lifecycle.json";

/// A lifecycle copy: the document, or `None` for a registry that publishes none.
type LifecycleCopy = Cached<Option<Lifecycle>>;

impl Registry {
    /// The lifecycle document beside this registry (see the module doc), with the warnings
    /// the caller should show; `None` when there is none or it cannot be had.
    pub async fn lifecycle(
        &self,
        client: &net::Client,
        options: &RegistryOptions,
    ) -> (Option<Lifecycle>, Vec<String>) {
        let mut warnings = Vec::new();
        let lifecycle = match (&options.source, self.origin) {
            (_, Origin::Snapshot) => None,
            (Source::File(path), _) => beside_file(path, &mut warnings),
            (Source::Url(url), _) => match beside_url(url) {
                Some(url) => load_url(client, &url, options, &mut warnings).await,
                None => None,
            },
        };
        (lifecycle, warnings)
    }
}

/// `https://host/a/registry.json` → `https://host/a/lifecycle.json`.
pub(super) fn beside_url(url: &str) -> Option<String> {
    let base = url::Url::parse(url).ok()?;
    Some(base.join(FILE).ok()?.to_string())
}

/// The sibling of the registry file the user named (its link followed, as for the registry);
/// the sibling itself is read like any untrusted file.
fn beside_file(path: &Path, warnings: &mut Vec<String>) -> Option<Lifecycle> {
    let real = std::fs::canonicalize(path).ok()?;
    let dir = real.parent()?;
    let bytes = match acp_registry_core::fs::read_capped(dir, Path::new(FILE), MAX_LIFECYCLE_BYTES)
    {
        Ok(bytes) => bytes,
        Err(ReadError::NotFound) => return None,
        Err(e) => {
            warnings.push(without(&dir.join(FILE).display().to_string(), &e));
            return None;
        }
    };
    parsed(&bytes, &dir.join(FILE).display().to_string(), warnings)
}

fn parsed(bytes: &[u8], origin: &str, warnings: &mut Vec<String>) -> Option<Lifecycle> {
    Lifecycle::parse(bytes)
        .map_err(|e| warnings.push(without(origin, &e)))
        .ok()
}

fn without(origin: &str, why: &dyn std::fmt::Display) -> String {
    format!("ignoring {origin} ({why}): carrying on without the lifecycle document")
}

/// The URL's lifecycle document by the registry's cache rules.
async fn load_url(
    client: &net::Client,
    url: &str,
    options: &RegistryOptions,
    warnings: &mut Vec<String>,
) -> Option<Lifecycle> {
    let cache = Cache::named(&options.cache_root, url, FILE);
    let cached: Option<LifecycleCopy> = cache.read_with(warnings, |bytes| match bytes {
        Some(bytes) => Lifecycle::parse(bytes).map(Some).map_err(|e| e.to_string()),
        None => Ok(None),
    });
    let fresh = cached
        .as_ref()
        .and_then(|c| c.age)
        .is_some_and(|age| age < options.max_age);
    match options.freshness {
        Freshness::Offline => return cached.and_then(|c| c.document),
        Freshness::Normal if fresh => return cached.and_then(|c| c.document),
        Freshness::Normal | Freshness::Refresh => {}
    }
    let known = cached
        .as_ref()
        .map(|c| c.validators.clone())
        .unwrap_or_default();
    let answer = client
        .document_if_changed(url, &known, MAX_LIFECYCLE_BYTES)
        .await;
    answered(&cache, url, answer, cached, warnings)
}

/// What an answer leaves: a new document, the confirmed copy, nothing for a 404, else the
/// copy (or nothing) with a warning.
fn answered(
    cache: &Cache,
    url: &str,
    answer: Result<Conditional, NetError>,
    cached: Option<LifecycleCopy>,
    warnings: &mut Vec<String>,
) -> Option<Lifecycle> {
    let keep = |result: Result<(), String>, warnings: &mut Vec<String>| {
        if let Err(e) = result {
            warnings.push(e);
        }
    };
    let (why, cached) = match (answer, cached) {
        (Ok(Conditional::NotModified), Some(cached)) => {
            keep(cache.touch(&cached), warnings);
            return cached.document;
        }
        (Ok(Conditional::Modified { body, validators }), cached) => match Lifecycle::parse(&body) {
            Ok(lifecycle) => {
                keep(cache.store(&body, &validators), warnings);
                return Some(lifecycle);
            }
            Err(e) => (e.to_string(), cached),
        },
        (Err(NetError::Status(404 | 410)), _) => {
            keep(cache.store_absent(), warnings);
            return None;
        }
        // A 304 is only ever answered to validators, which only a copy has.
        (Ok(Conditional::NotModified), None) => {
            ("a 304 answer to an unconditional request".to_string(), None)
        }
        (Err(e), cached) => (e.to_string(), cached),
    };
    let Some(cached) = cached else {
        warnings.push(without(url, &why));
        return None;
    };
    warnings.push(format!(
        "could not refresh {url} ({why}): using the cached copy fetched {}",
        super::age_text(cached.age)
    ));
    cached.document
}

#[cfg(test)]
mod tests {
    use super::beside_url;

    #[test]
    fn the_lifecycle_url_replaces_the_registry_urls_last_segment() {
        assert_eq!(
            beside_url("https://cdn.example/registry/v1/latest/registry.json").as_deref(),
            Some("https://cdn.example/registry/v1/latest/lifecycle.json")
        );
        assert_eq!(
            beside_url("https://mirror.example/acp/").as_deref(),
            Some("https://mirror.example/acp/lifecycle.json")
        );
        assert_eq!(beside_url("not a url"), None);
    }
}
