//! What each update source offers: the versions npm, `PyPI` and GitHub releases serve, as
//! [`PreviewVersion`]s, read from the services' real response shapes.
//!
//! - npm `GET <npm>/<name>`: every key of `versions` whose entry is not `deprecated`;
//!   prereleases other than `-preview.N` do not parse and are left out.
//! - `PyPI` `GET <pypi>/pypi/<name>/json`: every key of `releases` with at least one file not
//!   yanked; `X.Y.ZrcN` (PEP 440's spelling of `X.Y.Z-preview.N`) is a preview.
//! - GitHub `GET <api>/repos/<owner>/<repo>/releases?per_page=100&page=N`, every page (the
//!   `Link: rel="next"` header): non-draft releases, tag `v` stripped, `X.Y` read as `X.Y.0`;
//!   a release marked `prerelease` counts only as a preview (`-preview.N` tag).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::net::{retry_after, Client, NetError};
use crate::online::packages::{npm_deprecation, npm_url, pypi_installable, pypi_url};
use crate::rules::PreviewVersion;

/// Pages of releases read at most (10,000 releases).
const MAX_PAGES: usize = 100;
/// Times a rate-limited GitHub page is waited for and asked again.
const RATE_LIMIT_RETRIES: u32 = 3;
const GITHUB_ACCEPT: &str = "application/vnd.github+json";

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
    #[error("{0}: more than {MAX_PAGES} pages of releases")]
    TooManyPages(String),
}

/// One release asset as the GitHub API lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asset {
    pub(crate) name: String,
    pub(crate) url: String,
    /// Lowercase hex of the published `sha256:` digest, when GitHub has one.
    pub(crate) sha256: Option<String>,
}

/// A GitHub release: its tag and assets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Release {
    pub(crate) tag: String,
    pub(crate) assets: Vec<Asset>,
}

/// What one source serves. `releases` is filled for GitHub only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Offer {
    /// How findings name the source: ``npm `name` ``, ``PyPI `name` ``, `GitHub releases of o/r`.
    pub(crate) name: String,
    pub(crate) versions: Vec<PreviewVersion>,
    pub(crate) releases: BTreeMap<PreviewVersion, Release>,
}

pub(crate) async fn npm(client: &Client, base: &str, package: &str) -> Result<Offer, SourceError> {
    let listed = Listed {
        name: format!("npm `{package}`"),
        field: "versions",
        keep: |meta| npm_deprecation(meta).is_none(),
        parse: PreviewVersion::parse,
    };
    listed.offer(client, &npm_url(base, package)).await
}

pub(crate) async fn pypi(client: &Client, base: &str, package: &str) -> Result<Offer, SourceError> {
    let listed = Listed {
        name: format!("PyPI `{package}`"),
        field: "releases",
        keep: |files| {
            files
                .as_array()
                .is_some_and(|files| pypi_installable(files))
        },
        parse: pypi_version,
    };
    listed.offer(client, &pypi_url(base, package)).await
}

/// A package document listing its versions as the keys of one object.
struct Listed {
    /// How findings name the source.
    name: String,
    /// The object keyed by version (`versions`, `releases`).
    field: &'static str,
    /// Whether a version's entry can be installed.
    keep: fn(&Value) -> bool,
    /// The version a key spells, if it is one we follow.
    parse: fn(&str) -> Option<PreviewVersion>,
}

impl Listed {
    /// The versions the document at `url` lists and keeps.
    async fn offer(self, client: &Client, url: &str) -> Result<Offer, SourceError> {
        let doc = document(client, url, &self.name).await?;
        let entries = doc[self.field]
            .as_object()
            .ok_or_else(|| SourceError::Shape(self.name.clone()))?;
        let versions = entries
            .iter()
            .filter(|(_, entry)| (self.keep)(entry))
            .filter_map(|(key, _)| (self.parse)(key))
            .collect();
        Ok(offer(self.name, versions))
    }
}

/// `X.Y.Z`, `X.Y.Z-preview.N`, or `PyPI`'s normalised `X.Y.ZrcN`.
fn pypi_version(key: &str) -> Option<PreviewVersion> {
    PreviewVersion::parse(key).or_else(|| {
        let (base, counter) = key.split_once("rc")?;
        PreviewVersion::parse(&format!("{base}-preview.{counter}"))
    })
}

async fn document(client: &Client, url: &str, name: &str) -> Result<Value, SourceError> {
    match client.document(url).await {
        Ok(Some(doc)) => Ok((*doc).clone()),
        Ok(None) => Err(SourceError::NotFound(name.to_string())),
        Err(error) => Err(SourceError::Net {
            source_name: name.to_string(),
            url: url.to_string(),
            error,
        }),
    }
}

fn offer(name: String, mut versions: Vec<PreviewVersion>) -> Offer {
    versions.sort();
    versions.dedup();
    Offer {
        name,
        versions,
        releases: BTreeMap::new(),
    }
}

/// How GitHub is asked: base URL, token, and how long a rate limit may be waited for.
#[derive(Debug, Clone)]
pub(crate) struct GitHub {
    pub(crate) api: String,
    pub(crate) token: Option<String>,
    pub(crate) rate_limit_wait: Duration,
}

pub(crate) async fn github(
    client: &Client,
    github: &GitHub,
    owner: &str,
    repo: &str,
) -> Result<Offer, SourceError> {
    let name = format!("GitHub releases of {owner}/{repo}");
    let mut url = format!(
        "{}/repos/{owner}/{repo}/releases?per_page=100&page=1",
        github.api.trim_end_matches('/')
    );
    let mut releases = BTreeMap::new();
    for _ in 0..MAX_PAGES {
        let (body, next) = page(client, github, &url, &name).await?;
        let items = body
            .as_array()
            .ok_or_else(|| SourceError::Shape(name.clone()))?;
        for item in items {
            if let Some((version, release)) = release(item) {
                // Two tags naming one version (`v1.2` and `v1.2.0`): the first listed wins.
                releases.entry(version).or_insert(release);
            }
        }
        match next {
            // The token goes wherever the next page is: only under the configured API.
            Some(next) if !next.starts_with(github.api.trim_end_matches('/')) => {
                return Err(SourceError::Shape(name))
            }
            Some(next) => url = next,
            None => {
                let versions = releases.keys().copied().collect();
                return Ok(Offer {
                    releases,
                    ..offer(name, versions)
                });
            }
        }
    }
    Err(SourceError::TooManyPages(name))
}

/// One page of releases and the next page's URL, waiting out a rate limit up to the bound.
async fn page(
    client: &Client,
    github: &GitHub,
    url: &str,
    name: &str,
) -> Result<(Value, Option<String>), SourceError> {
    let net = |error| SourceError::Net {
        source_name: name.to_string(),
        url: url.to_string(),
        error,
    };
    let mut waited = 0;
    loop {
        let page = client
            .api_page(url, GITHUB_ACCEPT, github.token.as_deref())
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
fn rate_limited(headers: &HeaderMap) -> bool {
    header(headers, "x-ratelimit-remaining").is_some_and(|v| v.trim() == "0")
        || headers.contains_key("retry-after")
}

/// How long to wait: `retry-after`, else until `x-ratelimit-reset` (epoch seconds) plus one
/// second of margin, else a minute (GitHub's advice for secondary limits).
pub(crate) fn rate_limit_delay(headers: &HeaderMap, now: SystemTime) -> Duration {
    if let Some(delay) = header(headers, "retry-after").and_then(|v| retry_after(v, now)) {
        return delay;
    }
    if let Some(reset) = header(headers, "x-ratelimit-reset").and_then(|v| v.trim().parse().ok()) {
        let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        return Duration::from_secs(u64::saturating_sub(reset, now) + 1);
    }
    Duration::from_secs(60)
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The `rel="next"` URL of a `Link` header.
fn next_link(headers: &HeaderMap) -> Option<String> {
    let link = header(headers, "link")?;
    link.split(',').find_map(|part| {
        let (target, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().trim_start_matches("rel=").trim_matches('"') == "next");
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        is_next.then(|| target.to_string())
    })
}

/// The version a release serves, if it serves one: not a draft; a `prerelease` only with a
/// `-preview.N` tag.
fn release(item: &Value) -> Option<(PreviewVersion, Release)> {
    if item["draft"].as_bool() == Some(true) {
        return None;
    }
    let tag = item["tag_name"].as_str()?;
    let version = tag_version(tag)?;
    if item["prerelease"].as_bool() == Some(true) && version.preview.is_none() {
        return None;
    }
    let assets = item["assets"]
        .as_array()
        .map(|assets| assets.iter().filter_map(asset).collect())
        .unwrap_or_default();
    Some((
        version,
        Release {
            tag: tag.to_string(),
            assets,
        },
    ))
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

fn asset(item: &Value) -> Option<Asset> {
    let sha256 = item["digest"]
        .as_str()
        .and_then(|d| d.strip_prefix("sha256:"))
        .filter(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_ascii_lowercase);
    Some(Asset {
        name: item["name"].as_str()?.to_string(),
        url: item["browser_download_url"].as_str()?.to_string(),
        sha256,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
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
            release(&json!({"tag_name": tag, "draft": draft, "prerelease": pre, "assets": []}))
        };
        assert!(r(true, false, "v1.0.0").is_none());
        assert!(r(false, true, "v1.0.0-rc.1").is_none());
        assert!(r(false, true, "v1.0.0").is_none());
        assert!(r(false, true, "v1.0.0-preview.1").is_some());
        assert!(r(false, false, "v1.0.0").is_some());
    }

    #[test]
    fn the_next_link_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "link",
            "<https://api.example/x?page=1>; rel=\"prev\", <https://api.example/x?page=3>; rel=\"next\""
                .parse()
                .unwrap(),
        );
        assert_eq!(
            next_link(&headers).as_deref(),
            Some("https://api.example/x?page=3")
        );
    }

    #[test]
    fn rate_limits_wait_until_the_reset_or_the_retry_after() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let mut headers = HeaderMap::new();
        headers.insert("x-ratelimit-remaining", "0".parse().unwrap());
        headers.insert("x-ratelimit-reset", "1010".parse().unwrap());
        assert!(rate_limited(&headers));
        assert_eq!(rate_limit_delay(&headers, now), Duration::from_secs(11));
        headers.insert("retry-after", "3".parse().unwrap());
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
