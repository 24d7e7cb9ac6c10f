//! What each update source offers: the versions npm, `PyPI` and GitHub releases serve, as
//! [`PreviewVersion`]s, read from the services' real response shapes into typed views that
//! keep only those facts (`net::json`; nothing of a whole answer is held or memoised).
//!
//! - npm `GET <npm>/<name>`: every key of `versions` whose entry is not `deprecated`;
//!   prereleases other than `-preview.N` do not parse and are left out. Published: `time`.
//!   Recorded in `releases.json` (deprecated versions too): `time`, `dist.integrity`, the
//!   `deprecated` message.
//! - `PyPI` `GET <pypi>/pypi/<name>/json`: every key of `releases` with at least one file not
//!   yanked; `X.Y.ZrcN` (PEP 440's spelling of `X.Y.Z-preview.N`) is a preview. Published: the
//!   newest `upload_time_iso_8601` of those files. Recorded (every release with a file): the
//!   earliest upload time of its files (when it appeared), yanked when every file is, the
//!   only file's `digests.sha256`.
//! - GitHub `GET <api>/repos/<owner>/<repo>/releases?per_page=100&page=N`, every page (the
//!   `Link: rel="next"` header, followed only on the API's origin): non-draft releases, tag
//!   `v` stripped, `X.Y` read as `X.Y.0`; a release marked `prerelease` counts only as a
//!   preview (`-preview.N` tag). Published: `published_at`. Of the releases only the one the
//!   update could move to (the highest version the caller finds eligible, given its publish
//!   time) keeps its assets.
//!
//! A release feed of the configuration is read by `update::feed`; its offer carries the
//! highest eligible release's assets in [`Offer::feed`] ([`FeedRelease`]).
//!
//! GitHub's pages are read through a deserializer that hands each release to a callback as it is
//! parsed, so no page is held as a parsed whole and only the release `select` could choose keeps
//! its assets. A next page off the API's origin, or carrying credentials, is refused rather than
//! followed.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::de::{DeserializeSeed, Deserializer, Error as _, SeqAccess, Visitor};
use url::Url;

use crate::net::json::Obj;
use crate::net::{read_json_with, retry_after, Bearer, Client, Headers, NetError};
use crate::online::packages::{npm_url, pypi_url, NpmAnswer, NpmHistory, PypiAnswer, PypiHistory};
use crate::online::release::{Asset, ReleaseDoc, GITHUB_ACCEPT};
use crate::registry::releases::{Release as Recorded, SourceKind};
use crate::rules::PreviewVersion;
use acp_registry_core::time::format_utc;

/// Pages of releases read at most (10,000 releases).
const MAX_PAGES: usize = 100;
/// Releases one page may list: the `per_page` asked.
const PER_PAGE: usize = 100;
/// Times a rate-limited GitHub page is waited for and asked again.
const RATE_LIMIT_RETRIES: u32 = 3;

/// Why a source could not say what it offers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SourceError {
    #[error("{source_name} ({url}): {error}")]
    Net {
        source_name: String,
        /// The URL asked, so a mirror or proxy problem is visible.
        url: String,
        error: NetError,
    },
    #[error("{0}: not found")]
    NotFound(String),
    #[error("{0}: the answer is not in the expected shape")]
    Shape(String),
    #[error(
        "{source_name}: GitHub API rate limit reached, it resets in {wait} s (more than the {bound} s \
         --rate-limit-wait allows); set GITHUB_TOKEN or run again later"
    )]
    RateLimited {
        source_name: String,
        wait: u64,
        bound: u64,
    },
    #[error("{source_name}: {problem}")]
    Feed {
        source_name: String,
        problem: String,
    },
    #[error("{0}: more than {MAX_PAGES} pages of releases")]
    TooManyPages(String),
    #[error(
        "{source_name}: the next page `{url}` is not on the API's origin `{origin}`; refused \
         (the token and the pagination stay on the configured API)"
    )]
    ForeignPage {
        source_name: String,
        url: String,
        origin: String,
    },
}

impl SourceError {
    /// The source that failed, as reports name it.
    pub(crate) fn source_name(&self) -> &str {
        match self {
            SourceError::Net { source_name, .. }
            | SourceError::RateLimited { source_name, .. }
            | SourceError::ForeignPage { source_name, .. }
            | SourceError::Feed { source_name, .. } => source_name,
            SourceError::NotFound(name)
            | SourceError::Shape(name)
            | SourceError::TooManyPages(name) => name,
        }
    }
}

/// A GitHub release: its version, tag, publish time and assets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Release {
    pub(crate) version: PreviewVersion,
    pub(crate) tag: String,
    /// `published_at`, seconds since the epoch.
    pub(crate) published: Option<i64>,
    pub(crate) assets: Vec<Asset>,
}

/// What one source serves. `release` is GitHub's only and `feed` a feed's: the highest
/// eligible release, with its assets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Offer {
    /// How findings name the source: ``npm `name` ``, ``PyPI `name` ``, `GitHub releases of o/r`.
    pub(crate) name: String,
    /// Which source it is, and its package (or `owner/repo`), as `releases.json` names it.
    pub(crate) kind: SourceKind,
    pub(crate) package: String,
    /// Every release the source lists with what `releases.json` records of it, in no order:
    /// deprecated and yanked ones too, which `versions` leaves out.
    pub(crate) history: Vec<Recorded>,
    /// Sorted, without duplicates.
    pub(crate) versions: Vec<PreviewVersion>,
    /// When each version was published (seconds since the epoch), `None` when the source
    /// does not say.
    pub(crate) published: BTreeMap<PreviewVersion, Option<i64>>,
    pub(crate) release: Option<Release>,
    pub(crate) feed: Option<FeedRelease>,
}

/// What a feed says about a target's archive in one release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FeedAsset {
    /// The text at the `url` pointer, when it is a string of at most
    /// [`MAX_URL_LEN`](crate::online::release::MAX_URL_LEN) bytes.
    pub(crate) url: Option<String>,
    pub(crate) sha256: FeedDigest,
}

/// The sha256 a feed gives for an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FeedDigest {
    /// The declaration has no `sha256` pointer.
    Undeclared,
    /// Lowercase hex.
    Given(String),
    /// The pointer finds nothing, or not 64 hex digits (optionally `sha256:`-prefixed).
    Unreadable,
}

/// One release of a feed (`update::feed`), with the assets of the declared targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FeedRelease {
    pub(crate) version: PreviewVersion,
    /// Seconds since the epoch, when the feed gives a readable time.
    pub(crate) published: Option<i64>,
    /// By platform target.
    pub(crate) assets: BTreeMap<String, FeedAsset>,
}

impl Offer {
    /// When this source published `version`, if it says.
    pub(crate) fn published(&self, version: PreviewVersion) -> Option<i64> {
        self.published.get(&version).copied().flatten()
    }
}

pub(crate) async fn npm(client: &Client, base: &str, package: &str) -> Result<Offer, SourceError> {
    let name = format!("npm `{package}`");
    let doc = document::<NpmAnswer>(client, &npm_url(base, package), &name).await?;
    let versions = doc.0.as_ref().and_then(|d| d.versions());
    let versions = versions.ok_or_else(|| SourceError::Shape(name.clone()))?;
    let kept = versions.filter(|(_, deprecated)| !deprecated);
    let doc = doc.0.as_ref();
    let timed = kept.filter_map(|(key, _)| {
        let published = doc.and_then(|d| d.published(key));
        Some((PreviewVersion::parse(key)?, published))
    });
    let mut offer = offer(name, timed.collect(), SourceKind::Npm, package);
    let history = doc.and_then(|d| d.history()).into_iter().flatten();
    offer.history = history.filter_map(npm_recorded).collect();
    Ok(offer)
}

/// The history of one npm version whose key is a version of the registry's order.
fn npm_recorded(item: NpmHistory<'_>) -> Option<Recorded> {
    let mut recorded = Recorded::new(PreviewVersion::parse(item.key)?);
    recorded.published = item.published.map(format_utc);
    recorded.digest = item.integrity.map(str::to_string);
    recorded.deprecated = item.deprecated.map(str::to_string);
    Some(recorded)
}

pub(crate) async fn pypi(client: &Client, base: &str, package: &str) -> Result<Offer, SourceError> {
    let name = format!("PyPI `{package}`");
    let doc = document::<PypiAnswer>(client, &pypi_url(base, package), &name).await?;
    let releases = doc.0.as_ref().and_then(|d| d.releases());
    let releases = releases.ok_or_else(|| SourceError::Shape(name.clone()))?;
    let kept = releases.filter(|(_, installable)| *installable);
    let doc = doc.0.as_ref();
    let timed = kept.filter_map(|(key, _)| {
        let published = doc.and_then(|d| d.published(key));
        Some((pypi_version(key)?, published))
    });
    let mut offer = offer(name, timed.collect(), SourceKind::Pypi, package);
    let history = doc.and_then(|d| d.history()).into_iter().flatten();
    offer.history = history.filter_map(pypi_recorded).collect();
    Ok(offer)
}

/// The history of one `PyPI` release whose key reads as a version of the registry's order.
fn pypi_recorded(item: PypiHistory<'_>) -> Option<Recorded> {
    let mut recorded = Recorded::new(pypi_version(item.key)?);
    recorded.published = item.published.map(format_utc);
    recorded.yanked = item.yanked;
    recorded.digest = item.sha256.map(|hex| format!("sha256:{hex}"));
    Some(recorded)
}

/// `X.Y.Z`, `X.Y.Z-preview.N`, or `PyPI`'s normalised `X.Y.ZrcN`.
fn pypi_version(key: &str) -> Option<PreviewVersion> {
    PreviewVersion::parse(key).or_else(|| {
        let (base, counter) = key.split_once("rc")?;
        PreviewVersion::parse(&format!("{base}-preview.{counter}"))
    })
}

async fn document<T>(
    client: &Client,
    url: &str,
    name: &str,
) -> Result<std::sync::Arc<T>, SourceError>
where
    T: serde::de::DeserializeOwned + Send + Sync + 'static,
{
    match client.document::<T>(url).await {
        Ok(Some(doc)) => Ok(doc),
        Ok(None) => Err(SourceError::NotFound(name.to_string())),
        Err(error) => Err(SourceError::Net {
            source_name: name.to_string(),
            url: url.to_string(),
            error,
        }),
    }
}

/// An offer of `(version, publish time)` pairs. Two keys naming one version (`1.0.0` and
/// `1.00.0`) count as published when the later one was, and as unknown when one is.
fn offer(
    name: String,
    timed: Vec<(PreviewVersion, Option<i64>)>,
    kind: SourceKind,
    package: &str,
) -> Offer {
    let mut published: BTreeMap<PreviewVersion, Option<i64>> = BTreeMap::new();
    for (version, time) in timed {
        published
            .entry(version)
            .and_modify(|known| *known = known.zip(time).map(|(a, b)| a.max(b)))
            .or_insert(time);
    }
    Offer {
        name,
        kind,
        package: package.to_string(),
        history: Vec::new(),
        versions: published.keys().copied().collect(),
        published,
        release: None,
        feed: None,
    }
}

/// How GitHub is asked: base URL, token, and how long a rate limit may be waited for.
#[derive(Debug, Clone)]
pub(crate) struct GitHub {
    pub(crate) api: String,
    pub(crate) token: Option<String>,
    pub(crate) rate_limit_wait: Duration,
}

/// The releases of `owner/repo`, every page; of them only the highest version `eligible`
/// accepts, given its publish time, keeps its assets (the first listed of two tags naming
/// one version, whose publish time is the version's).
pub(crate) async fn github(
    client: &Client,
    github: &GitHub,
    owner: &str,
    repo: &str,
    eligible: &dyn Fn(PreviewVersion, Option<i64>) -> bool,
) -> Result<Offer, SourceError> {
    let name = format!("GitHub releases of {owner}/{repo}");
    let first = format!(
        "{}/repos/{owner}/{repo}/releases?per_page={PER_PAGE}&page=1",
        github.api.trim_end_matches('/')
    );
    let net = |url: &str, error| SourceError::Net {
        source_name: name.clone(),
        url: url.to_string(),
        error,
    };
    let api = Url::parse(&github.api)
        .map_err(|_| net(&github.api, NetError::InvalidUrl(github.api.clone())))?;
    let origin = api.origin();
    let mut url =
        Url::parse(&first).map_err(|_| net(&first, NetError::InvalidUrl(first.clone())))?;
    let mut highest = Highest::default();
    for _ in 0..MAX_PAGES {
        let (body, next) = page(client, github, &origin, &url, &name).await?;
        let mut on_release = |item: ReleaseDoc| {
            if let Some(release) = release(item) {
                let (version, time) = (release.version, release.published);
                highest.offer(version, time, release, eligible);
            }
        };
        read_json_with(&body, Page(&mut on_release)).map_err(|e| net(url.as_str(), e))?;
        let Some(next) = next else {
            let (published, best) = highest.into_parts();
            return Ok(Offer {
                name,
                kind: SourceKind::GitHub,
                package: format!("{owner}/{repo}"),
                history: recorded_times(&published),
                versions: published.keys().copied().collect(),
                published,
                release: best,
                feed: None,
            });
        };
        url = next_page(&origin, &next, &name)?;
    }
    Err(SourceError::TooManyPages(name))
}

/// The history of GitHub releases: each version's `published_at` (the first listed of two
/// tags naming one version).
/// A source's releases as they are read: each version's publish time (the first listed wins)
/// and the highest release the caller finds eligible, the only one whose assets are kept.
pub(crate) struct Highest<R> {
    published: BTreeMap<PreviewVersion, Option<i64>>,
    best: Option<(PreviewVersion, R)>,
}

impl<R> Default for Highest<R> {
    fn default() -> Self {
        Highest {
            published: BTreeMap::new(),
            best: None,
        }
    }
}

impl<R> Highest<R> {
    /// Note `release` of `version`, published at `time`; keep it when it is higher than the
    /// one kept and `eligible` accepts it at its version's time.
    pub(crate) fn offer(
        &mut self,
        version: PreviewVersion,
        time: Option<i64>,
        release: R,
        eligible: &dyn Fn(PreviewVersion, Option<i64>) -> bool,
    ) {
        let time = *self.published.entry(version).or_insert(time);
        let higher = self.best.as_ref().is_none_or(|(kept, _)| version > *kept);
        if higher && eligible(version, time) {
            self.best = Some((version, release));
        }
    }

    /// The publish times by version, and the release kept.
    pub(crate) fn into_parts(self) -> (BTreeMap<PreviewVersion, Option<i64>>, Option<R>) {
        (self.published, self.best.map(|(_, release)| release))
    }
}

/// Each release a source listed, with its publish time, as `releases.json` records it.
pub(crate) fn recorded_times(published: &BTreeMap<PreviewVersion, Option<i64>>) -> Vec<Recorded> {
    let recorded = |(version, time): (&PreviewVersion, &Option<i64>)| {
        let mut recorded = Recorded::new(*version);
        recorded.published = time.map(format_utc);
        recorded
    };
    published.iter().map(recorded).collect()
}

/// The next page's URL, only on the API's origin (scheme, host and port, compared parsed)
/// and without credentials: a URL that merely starts with the API's text
/// (`https://api.github.com@elsewhere/`, `https://api.github.com.elsewhere/`) is refused.
fn next_page(origin: &url::Origin, next: &str, name: &str) -> Result<Url, SourceError> {
    let refused = || SourceError::ForeignPage {
        source_name: name.to_string(),
        url: next.to_string(),
        origin: origin.ascii_serialization(),
    };
    let url = Url::parse(next).map_err(|_| refused())?;
    let credentials = !url.username().is_empty() || url.password().is_some();
    if url.origin() != *origin || credentials {
        return Err(refused());
    }
    Ok(url)
}

/// One page of releases (its body) and the next page's URL, waiting out a rate limit up to
/// the bound.
async fn page(
    client: &Client,
    github: &GitHub,
    origin: &url::Origin,
    url: &Url,
    name: &str,
) -> Result<(Vec<u8>, Option<String>), SourceError> {
    let net = |error| SourceError::Net {
        source_name: name.to_string(),
        url: url.to_string(),
        error,
    };
    let bearer = github
        .token
        .as_deref()
        .map(|token| Bearer { origin, token });
    let mut waited = 0;
    loop {
        let page = client
            .api_page(url, GITHUB_ACCEPT, bearer)
            .await
            .map_err(net)?;
        match (page.status, page.body) {
            (200, Some(body)) => return Ok((body, next_link(&page.headers))),
            (404, _) => return Err(SourceError::NotFound(name.to_string())),
            (403 | 429, _) if rate_limited(&page.headers) => {
                let wait = rate_limit_delay(&page.headers, SystemTime::now());
                if wait > github.rate_limit_wait || waited >= RATE_LIMIT_RETRIES {
                    return Err(SourceError::RateLimited {
                        source_name: name.to_string(),
                        wait: wait.as_secs(),
                        bound: github.rate_limit_wait.as_secs(),
                    });
                }
                tokio::time::sleep(wait).await;
                waited += 1;
            }
            (status, _) => return Err(net(NetError::Status(status))),
        }
    }
}

/// GitHub's rate-limit answers: `x-ratelimit-remaining: 0`, or a `retry-after` (secondary
/// limits). Any other 403 is a refusal.
fn rate_limited(headers: &Headers) -> bool {
    headers
        .get("x-ratelimit-remaining")
        .is_some_and(|v| v.trim() == "0")
        || headers.contains("retry-after")
}

/// How long to wait: `retry-after`, else until `x-ratelimit-reset` (epoch seconds) plus one
/// second of margin, else a minute (GitHub's advice for secondary limits).
pub(crate) fn rate_limit_delay(headers: &Headers, now: SystemTime) -> Duration {
    if let Some(delay) = headers.get("retry-after").and_then(|v| retry_after(v, now)) {
        return delay;
    }
    if let Some(reset) = headers
        .get("x-ratelimit-reset")
        .and_then(|v| v.trim().parse().ok())
    {
        let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        return Duration::from_secs(u64::saturating_sub(reset, now) + 1);
    }
    Duration::from_secs(60)
}

/// The `rel="next"` URL of a `Link` header.
fn next_link(headers: &Headers) -> Option<String> {
    let link = headers.get("link")?;
    link.split(',').find_map(|part| {
        let (target, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().trim_start_matches("rel=").trim_matches('"') == "next");
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        is_next.then(|| target.to_string())
    })
}

/// A page of releases: a JSON list whose items are handed to the callback one at a time
/// (never held together); more than [`PER_PAGE`] is an error.
struct Page<'a>(&'a mut dyn FnMut(ReleaseDoc));

impl<'de> DeserializeSeed<'de> for Page<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Page<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of releases")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut count = 0;
        while let Some(Obj(item)) = seq.next_element::<Obj<ReleaseDoc>>()? {
            count += 1;
            if count > PER_PAGE {
                return Err(A::Error::custom(format!(
                    "more than {PER_PAGE} releases on one page"
                )));
            }
            if let Some(item) = item {
                (self.0)(item);
            }
        }
        Ok(())
    }
}

/// The release an item serves, if it serves one: not a draft; a `prerelease` only with a
/// `-preview.N` tag.
fn release(item: ReleaseDoc) -> Option<Release> {
    if item.draft.0 == Some(true) {
        return None;
    }
    let tag = item.tag_name.0?;
    let version = tag_version(&tag)?;
    if item.prerelease.0 == Some(true) && version.preview.is_none() {
        return None;
    }
    let published = item.published_at.0.as_deref();
    Some(Release {
        version,
        tag,
        published: published.and_then(acp_registry_core::time::parse_iso_utc_seconds),
        assets: item.assets.0,
    })
}

/// `v1.2.3` → 1.2.3, `1.2` → 1.2.0, `v1.2.3-preview.4` → 1.2.3-preview.4.
pub(crate) fn tag_version(tag: &str) -> Option<PreviewVersion> {
    let text = tag.strip_prefix('v').unwrap_or(tag);
    let (base, rest) = match text.split_once('-') {
        Some((base, rest)) => (base, format!("-{rest}")),
        None => (text, String::new()),
    };
    let base = match base.split('.').count() {
        2 => format!("{base}.0"),
        _ => base.to_string(),
    };
    PreviewVersion::parse(&format!("{base}{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::online::release::MAX_URL_LEN;
    use serde_json::json;

    #[test]
    fn tags_lose_their_v_and_two_part_tags_gain_a_patch() {
        let v = |t| tag_version(t).map(|v| v.to_string());
        assert_eq!(v("v1.2.3").as_deref(), Some("1.2.3"));
        assert_eq!(v("1.2").as_deref(), Some("1.2.0"));
        assert_eq!(v("v2.0-preview.3").as_deref(), Some("2.0.0-preview.3"));
        assert_eq!(v("rust-v0.4.0"), None);
        assert_eq!(v("v1.2.3-beta.1"), None);
    }

    #[test]
    fn drafts_and_non_preview_prereleases_serve_nothing() {
        let r = |draft, pre, tag| {
            let item = json!({"tag_name": tag, "draft": draft, "prerelease": pre, "assets": []});
            release(serde_json::from_value(item).unwrap())
        };
        assert!(r(true, false, "v1.0.0").is_none());
        assert!(r(false, true, "v1.0.0-rc.1").is_none());
        assert!(r(false, true, "v1.0.0").is_none());
        assert!(r(false, true, "v1.0.0-preview.1").is_some());
        assert!(r(false, false, "v1.0.0").is_some());
    }

    #[test]
    fn a_release_carries_its_published_at_when_it_reads() {
        let published = |at: serde_json::Value| {
            let item = json!({"tag_name": "v1.0.0", "published_at": at});
            release(serde_json::from_value(item).unwrap())
                .unwrap()
                .published
        };
        assert_eq!(
            published(json!("2026-01-01T00:00:00Z")),
            Some(1_767_225_600)
        );
        assert_eq!(published(json!(null)), None);
        assert_eq!(published(json!("soon")), None);
    }

    #[test]
    fn the_next_link_is_found_among_others() {
        let headers: Headers = [(
            "link",
            "<https://api.example/x?page=1>; rel=\"prev\", <https://api.example/x?page=3>; rel=\"next\"",
        )]
        .into_iter()
        .collect();
        assert_eq!(
            next_link(&headers).as_deref(),
            Some("https://api.example/x?page=3")
        );
    }

    #[test]
    fn a_next_page_must_be_on_the_api_origin_compared_parsed() {
        let origin = Url::parse("https://api.example:8443/v3").unwrap().origin();
        let next = |u: &str| next_page(&origin, u, "gh").map(|u| u.to_string());
        assert_eq!(
            next("https://api.example:8443/v3/x?page=2").as_deref(),
            Ok("https://api.example:8443/v3/x?page=2")
        );
        for foreign in [
            "https://api.example:8443@evil.example/v3/x?page=2",
            "https://api.example:8443.evil.example/v3/x",
            "https://api.example.evil.example:8443/v3/x",
            "https://api.example/v3/x",
            "http://api.example:8443/v3/x",
            "https://user:pw@api.example:8443/v3/x",
            "/v3/x?page=2",
        ] {
            assert!(
                matches!(next(foreign), Err(SourceError::ForeignPage { .. })),
                "{foreign}"
            );
        }
    }

    #[test]
    fn a_page_keeps_capped_assets_and_refuses_more_releases_than_asked() {
        let mut seen = Vec::new();
        let body = json!([
            {"tag_name": "v1.0.0", "assets": [
                {"name": "a", "browser_download_url": "x".repeat(MAX_URL_LEN + 1),
                 "digest": format!("sha256:{}", "AB".repeat(32))},
                {"browser_download_url": "https://example.com/b"},
                "not an asset"
            ], "body": [0, 0, 0]},
            "not a release",
        ])
        .to_string();
        read_json_with(body.as_bytes(), Page(&mut |item| seen.push(release(item)))).unwrap();
        let release = seen[0].clone().unwrap();
        assert_eq!(seen.len(), 1);
        let expected = Asset {
            name: "a".into(),
            url: None,
            sha256: Some("ab".repeat(32)),
        };
        assert_eq!(release.assets, [expected]);
        let many = serde_json::Value::Array(vec![json!({}); PER_PAGE + 1]).to_string();
        let error = read_json_with(many.as_bytes(), Page(&mut |_| {})).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("more than 100 releases on one page"),
            "{error}"
        );
    }

    #[test]
    fn rate_limits_wait_until_the_reset_or_the_retry_after() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let mut pairs = vec![
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1010"),
        ];
        let headers: Headers = pairs.iter().copied().collect();
        assert!(rate_limited(&headers));
        assert_eq!(rate_limit_delay(&headers, now), Duration::from_secs(11));
        pairs.push(("retry-after", "3"));
        let headers: Headers = pairs.into_iter().collect();
        assert_eq!(rate_limit_delay(&headers, now), Duration::from_secs(3));
    }

    #[test]
    fn pypi_rc_releases_are_previews() {
        assert_eq!(
            pypi_version("1.2.0rc3").map(|v| v.to_string()).as_deref(),
            Some("1.2.0-preview.3")
        );
        assert_eq!(pypi_version("1.2.0b1"), None);
    }
}
