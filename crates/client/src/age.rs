//! When the pinned version of a resolved agent was published, where a source says it, for
//! `--min-age` (skip releases younger than that): npm's `time[version]` for an npx package,
//! the earliest `upload_time_iso_8601` of `PyPI`'s `/pypi/<name>/<version>/json` for a uvx
//! one. A binary's archive has no such source, and an unpinned or range spec no one version:
//! both are `None`.
//!
//! Answers are read into typed views that keep only the times (`net::json`), and known times
//! are kept in `<cache root>/registry/publish-times.json` (a published version's time does not
//! change), so asking again costs no request. An unknown time is not kept: the version may
//! still be published.

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::SeqAccess;
use serde::Deserialize;

use crate::net::json::{deserialize_leniently, Lenient, Obj, Text, Versions};
use crate::net::{self, NetError};
use crate::platform::Kind;
use crate::resolve::Resolution;

/// The longest time text kept (`2026-01-01T00:00:00.000000+00:00` is 32 bytes).
const MAX_TIME_LEN: usize = 64;
/// The largest `publish-times.json` read.
const MAX_TIMES_BYTES: u64 = 1024 * 1024;
/// The most times kept; past it the file starts again empty.
const MAX_TIMES: usize = 10_000;
/// The cache file, below the cache root.
const TIMES_FILE: &str = "registry/publish-times.json";

/// Where publish times are asked (base URLs, no final `/` needed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgeSources {
    /// The npm registry: `https://registry.npmjs.org`.
    pub npm: String,
    /// `PyPI`: `https://pypi.org`.
    pub pypi: String,
}

impl Default for AgeSources {
    fn default() -> Self {
        AgeSources {
            npm: "https://registry.npmjs.org".to_string(),
            pypi: "https://pypi.org".to_string(),
        }
    }
}

/// Why a publish time could not be found out.
#[derive(Debug, thiserror::Error)]
pub enum AgeError {
    /// The package index could not be asked or gave no usable answer.
    #[error("cannot find out when {package} was published ({url}): {source}")]
    Net {
        /// The package spec.
        package: String,
        /// The URL asked.
        url: String,
        /// Why.
        source: NetError,
    },
}

/// When the version `resolution` pins was published, in seconds since the Unix epoch (UTC;
/// `acp_registry_core::time::format_utc` writes it), from the default [`AgeSources`].
/// `Ok(None)`: a binary, an unpinned or range spec, or a source that does not say.
///
/// # Errors
/// [`AgeError`] when the package index cannot be asked or answers with an error status.
pub async fn publish_time(
    client: &net::Client,
    cache_root: &Path,
    resolution: &Resolution,
) -> Result<Option<i64>, AgeError> {
    publish_time_from(client, cache_root, resolution, &AgeSources::default()).await
}

/// [`publish_time`] asking `sources`.
///
/// # Errors
/// As [`publish_time`].
pub async fn publish_time_from(
    client: &net::Client,
    cache_root: &Path,
    resolution: &Resolution,
    sources: &AgeSources,
) -> Result<Option<i64>, AgeError> {
    let Some(package) = &resolution.package else {
        return Ok(None);
    };
    let spec = package.package.trim();
    let (url, version) = match resolution.kind {
        Kind::Binary => return Ok(None),
        Kind::Npx => match npm_pinned(spec) {
            Some((name, version)) => (npm_url(&sources.npm, name), version),
            None => return Ok(None),
        },
        Kind::Uvx => match pypi_pinned(spec) {
            Some((name, version)) => (pypi_url(&sources.pypi, name, version), version),
            None => return Ok(None),
        },
    };
    let key = format!("{url}#{version}");
    let mut times = read_times(cache_root);
    if let Some(time) = times.get(&key).and_then(|t| parse_time(t)) {
        return Ok(Some(time));
    }
    let failed = |source| AgeError::Net {
        package: spec.to_string(),
        url: url.clone(),
        source,
    };
    let time = match resolution.kind {
        Kind::Npx => npm_time(client, &url, version).await.map_err(failed)?,
        _ => pypi_time(client, &url).await.map_err(failed)?,
    };
    if let Some(time) = time {
        if times.len() >= MAX_TIMES {
            times.clear();
        }
        times.insert(key, acp_registry_core::time::format_utc(time));
        // Best effort: a cache that cannot be written only costs a request next time.
        let _ = write_times(cache_root, &times);
    }
    Ok(time)
}

/// The exact version a package spec of `kind` pins, and the spec before it (`name@`,
/// `name[x]==`): the same reading as the publish-time lookups, so `--min-age` can swap the
/// version for an older one. `None` for a binary, an unpinned spec, a tag or a range.
pub(crate) fn split_pin(kind: Kind, spec: &str) -> Option<(&str, &str)> {
    let spec = spec.trim();
    let version = match kind {
        Kind::Binary => return None,
        Kind::Npx => npm_pinned(spec)?.1,
        Kind::Uvx => pypi_pinned(spec)?.1,
    };
    // Both readings end the spec with the version (`pypi_pinned` trims only whitespace,
    // already gone).
    let prefix = spec.strip_suffix(version)?;
    Some((prefix, version))
}

/// `name@1.2.3` or `@scope/name@1.2.3` with an exact version; tags and ranges are not pins.
fn npm_pinned(spec: &str) -> Option<(&str, &str)> {
    let at = spec.get(1..)?.find('@')? + 1;
    let (name, version) = (&spec[..at], &spec[at + 1..]);
    let bare = name.strip_prefix('@').map_or(Some(name), |scoped| {
        let (scope, rest) = scoped.split_once('/')?;
        (!scope.is_empty()).then_some(rest)
    })?;
    let name_ok = !bare.is_empty()
        && name.len() <= 214
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~@/".contains(&b))
        && name.bytes().filter(|b| *b == b'/').count() == usize::from(name.starts_with('@'));
    (name_ok && exact_semver(version)).then_some((name, version))
}

/// `1.2.3`, with an optional `-pre` and `+build`: three numbers, nothing of a range.
fn exact_semver(version: &str) -> bool {
    let core = version.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    version.len() <= 256
        && parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && version
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-+.".contains(&b))
}

/// `name==1.2.3` or `name@1.2.3` (extras allowed: `name[x]==1.2.3`) with an exact version:
/// no wildcard, no range, no `===`, no direct reference.
fn pypi_pinned(spec: &str) -> Option<(&str, &str)> {
    let (name, version) = spec.split_once("==").or_else(|| spec.split_once('@'))?;
    let name = name.split('[').next()?.trim();
    let version = version.trim();
    let name_ok = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
    let version_ok = version.len() <= 128
        && version.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && version
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".!+-_".contains(&b));
    (name_ok && version_ok).then_some((name, version))
}

/// The full npm document (the abbreviated one has no `time`); a scope's `/` encoded.
fn npm_url(base: &str, name: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        name.replace('/', "%2f")
    )
}

fn pypi_url(base: &str, name: &str, version: &str) -> String {
    format!("{}/pypi/{name}/{version}/json", base.trim_end_matches('/'))
}

/// What is read of an npm package document: only `time`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NpmTimes {
    time: Versions<Text<MAX_TIME_LEN>>,
}

async fn npm_time(client: &net::Client, url: &str, version: &str) -> Result<Option<i64>, NetError> {
    let parsed = url::Url::parse(url).map_err(|_| NetError::InvalidUrl(url.to_string()))?;
    // Plain JSON: npm's abbreviated document, which `Client::document` asks for, has no `time`.
    let Some(doc) = client
        .api_document::<Obj<NpmTimes>>(&parsed, "application/json", None)
        .await?
    else {
        return Ok(None);
    };
    let time = doc
        .0
        .as_ref()
        .and_then(|doc| doc.time.0.as_ref()?.get(version));
    Ok(time.and_then(|t| parse_time(t.0.as_deref()?)))
}

/// What is read of a `PyPI` release document: the earliest upload time of its files.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PypiRelease {
    urls: Earliest,
}

/// The earliest readable `upload_time_iso_8601` of a list of files.
#[derive(Debug, Default)]
struct Earliest(Option<i64>);

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PypiFile {
    upload_time_iso_8601: Text<MAX_TIME_LEN>,
}

impl Lenient for Earliest {
    fn seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut earliest: Option<i64> = None;
        while let Some(Obj(file)) = seq.next_element::<Obj<PypiFile>>()? {
            let time = file.and_then(|f| parse_time(f.upload_time_iso_8601.0.as_deref()?));
            if let Some(time) = time {
                earliest = Some(earliest.map_or(time, |e| e.min(time)));
            }
        }
        Ok(Earliest(earliest))
    }
}

deserialize_leniently!(Earliest);

async fn pypi_time(client: &net::Client, url: &str) -> Result<Option<i64>, NetError> {
    let doc = client.document::<Obj<PypiRelease>>(url).await?;
    Ok(doc.and_then(|doc| doc.0.as_ref()?.urls.0))
}

fn parse_time(text: &str) -> Option<i64> {
    acp_registry_core::time::parse_iso_utc_seconds(text)
}

/// The cached times; an unreadable file is an empty cache (it is only a cache).
fn read_times(root: &Path) -> BTreeMap<String, String> {
    acp_registry_core::fs::read_capped(root, Path::new(TIMES_FILE), MAX_TIMES_BYTES)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn write_times(root: &Path, times: &BTreeMap<String, String>) -> std::io::Result<()> {
    std::fs::create_dir_all(root)?;
    acp_registry_core::fs::create_dirs_below(root, Path::new("registry"))?;
    let text = serde_json::to_vec_pretty(times).map_err(std::io::Error::other)?;
    acp_registry_core::fs::atomic::write(&root.join(TIMES_FILE), &text)
}

#[cfg(test)]
mod tests;
