//! The release-feed source: an entry's feed declared in the configuration (`feeds`, read by
//! `registry::config`), fetched through [`crate::net`] and read with the declared JSON
//! Pointers, then the archive edits of an update to one of its releases.
//!
//! Reading is bounded: the body at most [`MAX_FEED_BYTES`] (and the client's document cap),
//! UTF-8, its JSON values counted ([`MAX_FEED_VALUES`]) before any tree is built; a JSONL feed
//! at most [`MAX_LINES`] lines of at most [`MAX_LINE_BYTES`] each, every non-blank line one
//! JSON release. A line that is too long or not JSON refuses the whole feed; a release whose
//! version is not of the registry's order (`v` stripped, `X.Y` read as `X.Y.0`, only
//! `-preview.N` prereleases) is left out, as npm's betas are. Only the highest release the
//! caller finds eligible keeps its assets.
//!
//! Writing follows the GitHub source's rules: an asset URL is written only when it is an
//! absolute https URL without credentials or fragment, with no dot segment, exactly as a URL
//! parser writes it, on the feed's host, the host of the target's current archive or a host
//! of the feed's `asset_hosts`; every archive is downloaded and hashed before the file is
//! touched, and a sha256 the feed gives must be the download's.

use std::collections::BTreeMap;

use serde_json::Value;

use super::context::{Candidate, Context};
use super::sources::{
    recorded_times, tag_version, FeedAsset, FeedDigest, FeedRelease, Highest, Offer, SourceError,
};
use crate::manifest::distribution::BinaryTarget;
use crate::net::Client;
use crate::online::release::MAX_URL_LEN;
use crate::registry::config::{FeedConfig, FeedFormat};
use crate::registry::releases::{Releases, SourceKind};
use crate::rules::PreviewVersion;
use acp_registry_core::fs::ValueBudget;
use acp_registry_core::time::parse_iso_utc_seconds;

/// The largest feed read (under the client's document cap too).
pub(crate) const MAX_FEED_BYTES: u64 = 8 << 20;
/// JSON values counted over a whole feed before trees are built.
const MAX_FEED_VALUES: u64 = 500_000;
/// Lines a JSONL feed may have (blank ones included).
pub(crate) const MAX_LINES: usize = 10_000;
/// The longest line of a JSONL feed.
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024;
/// The longest version or time text read from a release.
const MAX_FIELD: usize = 256;

/// How messages name the feed.
pub(crate) fn feed_name(feed: &FeedConfig) -> String {
    format!("feed `{}`", feed.url)
}

/// When `releases.json` says each release of the entry's feed at `url` was published, by
/// version: for a feed that gives no publish time, when `update` first saw it.
pub(crate) fn first_seen(history: &Releases, id: &str, url: &str) -> BTreeMap<PreviewVersion, i64> {
    let recorded = history.agents.get(id).and_then(|a| a.get(SourceKind::Feed));
    let versions = recorded
        .filter(|s| s.name == url)
        .map(|s| s.versions.iter());
    versions
        .into_iter()
        .flatten()
        .filter_map(|r| Some((r.order()?, parse_iso_utc_seconds(r.published.as_deref()?)?)))
        .collect()
}

/// What the feed offers; of its releases only the highest `eligible` accepts (given its
/// publish time) keeps its assets. A release the feed gives no time for takes the time
/// `seen` recorded for it, else `now`: the run that first sees it (so a cooldown counts from
/// then, never less than from the real publication).
pub(crate) async fn feed(
    client: &Client,
    feed: &FeedConfig,
    cap: u64,
    (seen, now): (&BTreeMap<PreviewVersion, i64>, i64),
    eligible: &dyn Fn(PreviewVersion, Option<i64>) -> bool,
) -> Result<Offer, SourceError> {
    let name = feed_name(feed);
    let problem = |problem: String| SourceError::Feed {
        source_name: name.clone(),
        problem,
    };
    let body = match client.bytes(&feed.url, cap.min(MAX_FEED_BYTES)).await {
        Ok(Some(body)) => body,
        Ok(None) => return Err(SourceError::NotFound(name)),
        Err(error) => {
            return Err(SourceError::Net {
                source_name: name,
                url: feed.url.clone(),
                error,
            })
        }
    };
    let text = String::from_utf8(body).map_err(|_| problem("the feed is not UTF-8".into()))?;
    let releases = read_releases(feed, &text).map_err(problem)?;
    let mut highest = Highest::default();
    for release in releases {
        let version = release.version;
        let time = release.published.or_else(|| seen.get(&version).copied());
        highest.offer(version, time.or(Some(now)), release, eligible);
    }
    let (published, best) = highest.into_parts();
    if published.is_empty() {
        return Err(problem(format!(
            "no release gives a version at `{}` (`X.Y.Z` or `X.Y.Z-preview.N`, a leading `v` \
             allowed)",
            feed.version
        )));
    }
    Ok(Offer {
        name,
        kind: SourceKind::Feed,
        package: feed.url.clone(),
        history: recorded_times(&published),
        versions: published.keys().copied().collect(),
        published,
        release: None,
        feed: best,
    })
}

/// Every release of the feed's text whose version reads, in the feed's order; the problem
/// that refuses the feed otherwise.
pub(crate) fn read_releases(feed: &FeedConfig, text: &str) -> Result<Vec<FeedRelease>, String> {
    let mut budget = ValueBudget::new(MAX_FEED_VALUES);
    let mut parse = |text: &str| -> Result<Value, String> {
        budget.spend(text).map_err(|e| e.to_string())?;
        serde_json::from_str(text).map_err(|e| e.to_string())
    };
    match feed.format {
        FeedFormat::Json => {
            let doc = parse(text).map_err(|e| format!("the feed is not JSON: {e}"))?;
            Ok(release(feed, &doc).into_iter().collect())
        }
        FeedFormat::Jsonl => {
            let mut releases = Vec::new();
            for (index, line) in text.split('\n').enumerate() {
                let number = index + 1;
                if number > MAX_LINES {
                    return Err(format!("the feed has more than {MAX_LINES} lines"));
                }
                if line.len() > MAX_LINE_BYTES {
                    return Err(format!(
                        "line {number} is longer than {MAX_LINE_BYTES} bytes"
                    ));
                }
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let doc = parse(line).map_err(|e| format!("line {number} is not JSON: {e}"))?;
                releases.extend(release(feed, &doc));
            }
            Ok(releases)
        }
    }
}

/// The release one document describes, when its version reads.
fn release(feed: &FeedConfig, doc: &Value) -> Option<FeedRelease> {
    let text = |pointer: &str, max: usize| {
        doc.pointer(pointer)
            .and_then(Value::as_str)
            .filter(|t| t.len() <= max)
    };
    let version = tag_version(text(&feed.version, MAX_FIELD)?)?;
    let published = feed
        .published
        .as_deref()
        .and_then(|p| text(p, MAX_FIELD))
        .and_then(parse_iso_utc_seconds);
    let assets = feed
        .assets
        .iter()
        .map(|(platform, pointers)| {
            let sha256 = match &pointers.sha256 {
                None => FeedDigest::Undeclared,
                Some(p) => text(p, 80)
                    .and_then(sha256_hex)
                    .map_or(FeedDigest::Unreadable, FeedDigest::Given),
            };
            let url = text(&pointers.url, MAX_URL_LEN).map(str::to_string);
            (platform.clone(), FeedAsset { url, sha256 })
        })
        .collect();
    Some(FeedRelease {
        version,
        published,
        assets,
    })
}

/// Lowercase hex of `<64 hex digits>` or `sha256:<64 hex digits>`, either case.
fn sha256_hex(text: &str) -> Option<String> {
    use acp_registry_core::fs::digest::{is_sha256_hex, HexCase};
    let hex = text.strip_prefix("sha256:").unwrap_or(text);
    is_sha256_hex(hex, HexCase::Any).then(|| hex.to_ascii_lowercase())
}

/// Whether a path segment is a dot segment, as URL parsers read it.
fn is_dot_segment(segment: &str) -> bool {
    let lower = segment.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "." | ".." | "%2e" | "%2e." | ".%2e" | "%2e%2e"
    )
}

/// The hosts an asset URL may be on: the feed's, the target's current archive's, and the
/// feed's `asset_hosts`, lowercase.
fn allowed_hosts(feed: &FeedConfig, target: &BinaryTarget) -> Vec<String> {
    let host = |url: &str| {
        url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    };
    let mut hosts: Vec<String> = [Some(feed.url.as_str()), target.archive.as_deref()]
        .into_iter()
        .flatten()
        .filter_map(host)
        .collect();
    hosts.extend(feed.asset_hosts.iter().cloned());
    hosts.dedup();
    hosts
}

/// The asset URL when `update` may write it for `target` (see the module's rules); otherwise
/// what is wrong with it.
pub(crate) fn checked_feed_url(
    feed: &FeedConfig,
    target: &BinaryTarget,
    raw: &str,
) -> Result<String, String> {
    let parsed = url::Url::parse(raw).map_err(|_| format!("`{raw}` is not an absolute URL"))?;
    if parsed.scheme() != "https" {
        return Err(format!("`{raw}` is not an https URL"));
    }
    if raw.split(['/', '\\']).any(is_dot_segment) {
        return Err(format!("`{raw}` has a dot segment"));
    }
    let plain = parsed.as_str() == raw
        && parsed.username().is_empty()
        && parsed.password().is_none()
        && parsed.fragment().is_none();
    if !plain {
        return Err(format!(
            "`{raw}` has credentials, a fragment, or text a URL parser rewrites"
        ));
    }
    let hosts = allowed_hosts(feed, target);
    let host = parsed.host_str().unwrap_or_default();
    if !hosts.iter().any(|h| h == host) {
        return Err(format!(
            "`{raw}` is on `{host}`, not on a host the feed may name (the feed's, the current \
             archive's, or `asset_hosts`: {})",
            hosts.join(", ")
        ));
    }
    Ok(raw.to_string())
}

/// The `archive` and `sha256` edits of every binary target for the feed's release `to`:
/// each archive URL checked, downloaded through `net` (at most the archive cap) and hashed,
/// and the feed's sha256, when it gives one, compared with the download.
pub(super) async fn archive_edits(
    context: &Context,
    candidate: &Candidate<'_>,
    feed: &FeedConfig,
    offers: &[Offer],
    to: PreviewVersion,
) -> Result<Vec<(String, String)>, String> {
    let name = feed_name(feed);
    let release = offers
        .iter()
        .find_map(|o| o.feed.as_ref())
        .filter(|r| r.version == to)
        .ok_or_else(|| format!("{name} serves no release {to}"))?;
    let mut edits = Vec::new();
    for target in &candidate.dist.binary {
        let platform = &target.platform;
        let refuse = |what: String| format!("{name} {to} for {platform}: {what}; nothing written");
        let asset = release.assets.get(platform.as_str()).ok_or_else(|| {
            refuse(format!(
                "the feed's declaration has no asset for this target; add `{platform}` to its \
                 `assets` in the configuration"
            ))
        })?;
        let pointer = &feed.assets[platform.as_str()];
        let raw = asset.url.as_deref().ok_or_else(|| {
            refuse(format!(
                "no URL at `{}` (missing, not a string, or longer than {MAX_URL_LEN} bytes)",
                pointer.url
            ))
        })?;
        let url = checked_feed_url(feed, target, raw).map_err(&refuse)?;
        let given = match &asset.sha256 {
            FeedDigest::Unreadable => {
                return Err(refuse(format!(
                    "no sha256 at `{}` (missing, or not 64 hex digits)",
                    pointer.sha256.as_deref().unwrap_or_default()
                )))
            }
            FeedDigest::Given(hex) => Some(hex),
            FeedDigest::Undeclared => None,
        };
        let download = context
            .client
            .download(&url, context.options.archive_cap)
            .await
            .map_err(|e| refuse(format!("downloading `{url}` to hash it failed: {e}")))?;
        if let Some(given) = given.filter(|g| **g != download.sha256) {
            return Err(refuse(format!(
                "the feed gives sha256 {given} for `{url}`, but the downloaded archive hashes to \
                 {}: the archive was changed after the feed was written, or something on the \
                 way alters it",
                download.sha256
            )));
        }
        edits.push((format!("{}/archive", target.pointer), url));
        edits.push((format!("{}/sha256", target.pointer), download.sha256));
    }
    Ok(edits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::config::AssetPointers;

    fn config(format: FeedFormat) -> FeedConfig {
        FeedConfig {
            url: "https://feed.example/latest".into(),
            format,
            version: "/version".into(),
            published: Some("/at".into()),
            assets: BTreeMap::from([(
                "linux-x86_64".to_string(),
                AssetPointers {
                    url: "/files/linux/url".into(),
                    sha256: Some("/files/linux/sha256".into()),
                },
            )]),
            asset_hosts: vec!["cdn.example".into()],
        }
    }

    #[test]
    fn a_jsonl_feed_gives_each_line_whose_version_reads_with_its_time_and_assets() {
        let sha = "AB".repeat(32);
        let text = format!(
            "{{\"version\": \"v1.2\", \"at\": \"2026-01-01T00:00:00Z\", \"files\": {{\"linux\": \
             {{\"url\": \"https://cdn.example/a\", \"sha256\": \"sha256:{sha}\"}}}}}}\r\n\n\
             {{\"version\": \"1.3.0-beta.1\"}}\n{{\"version\": \"1.3.0\", \"files\": {{}}}}\n"
        );
        let releases = read_releases(&config(FeedFormat::Jsonl), &text).unwrap();
        let versions: Vec<String> = releases.iter().map(|r| r.version.to_string()).collect();
        assert_eq!(versions, ["1.2.0", "1.3.0"]);
        assert_eq!(releases[0].published, Some(1_767_225_600));
        let asset = &releases[0].assets["linux-x86_64"];
        assert_eq!(asset.url.as_deref(), Some("https://cdn.example/a"));
        assert_eq!(asset.sha256, FeedDigest::Given("ab".repeat(32)));
        let bare = &releases[1].assets["linux-x86_64"];
        assert_eq!(
            (bare.url.as_ref(), &bare.sha256),
            (None, &FeedDigest::Unreadable)
        );
    }

    #[test]
    fn a_long_line_too_many_lines_or_a_line_not_json_refuse_the_feed() {
        let feed = config(FeedFormat::Jsonl);
        let long = format!("{{\"version\": \"{}\"}}", "1".repeat(MAX_LINE_BYTES));
        assert_eq!(
            read_releases(&feed, &long).unwrap_err(),
            format!("line 1 is longer than {MAX_LINE_BYTES} bytes")
        );
        let many = "\n".repeat(MAX_LINES);
        assert_eq!(
            read_releases(&feed, &many).unwrap_err(),
            format!("the feed has more than {MAX_LINES} lines")
        );
        let broken = "{\"version\": \"1.0.0\"}\n{nope}\n";
        assert!(read_releases(&feed, broken)
            .unwrap_err()
            .starts_with("line 2 is not JSON"));
        let json = config(FeedFormat::Json);
        assert!(read_releases(&json, "[0,")
            .unwrap_err()
            .starts_with("the feed is not JSON"));
    }

    #[test]
    fn an_asset_url_must_be_plain_https_on_an_allowed_host() {
        let feed = config(FeedFormat::Json);
        let target = BinaryTarget {
            platform: "linux-x86_64".into(),
            pointer: "/distribution/binary/linux-x86_64".into(),
            legacy: false,
            archive: Some("https://old.example/agent-1.0.0.tar.gz".into()),
            cmd: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            sha256: None,
        };
        for good in [
            "https://feed.example/agent-1.1.0.tar.gz",
            "https://old.example/agent-1.1.0.tar.gz",
            "https://cdn.example/v/agent-1.1.0.tar.gz?x=1",
        ] {
            assert_eq!(checked_feed_url(&feed, &target, good).as_deref(), Ok(good));
        }
        for bad in [
            "http://feed.example/a.tar.gz",
            "https://evil.example/a.tar.gz",
            "https://feed.example.evil.example/a.tar.gz",
            "https://u@feed.example/a.tar.gz",
            "https://feed.example/a.tar.gz#x",
            "https://feed.example/x/../a.tar.gz",
            "https://feed.example/x/%2e%2e/a.tar.gz",
            "https://FEED.example/a.tar.gz",
            "/a.tar.gz",
        ] {
            assert!(checked_feed_url(&feed, &target, bad).is_err(), "{bad}");
        }
    }
}
