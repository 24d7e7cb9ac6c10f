//! The digest to pin for an archive URL, the one piece every writer of a `sha256` pin uses
//! (`validate --fix --verify-archives`, `new --binary`, `update --apply`): a pin is only ever
//! the sha256 of bytes this run downloaded through [`crate::net`] under the size cap. When
//! GitHub publishes a `digest` for the release asset it is compared with the download
//! ([`checked_pin`]): a mismatch is refused (an error naming the asset and both digests), so
//! nothing is pinned that the bytes do not have.
//!
//! `new` and `validate` ask the release by tag, `GET
//! <api>/repos/<owner>/<repo>/releases/tags/<tag>`, with the owner, repository and tag of the
//! URL itself (not of the manifest), once per run and release (`net`'s memo); the asset is the
//! one named like the URL's last segment. Any problem on that path (not a release download, a
//! 404, a rate limit, no digest) leaves the download unchecked against it, so the API is never
//! required. `update` has the digest from the release list it read and calls [`hashed_pin`].

use std::sync::Arc;

use url::Url;

use super::options::{OnlineError, Options};
use super::release::{ReleaseDoc, GITHUB_ACCEPT};
use crate::manifest::repository::ReleaseAsset;
use crate::net::{Bearer, Client, NetError};

/// Where the GitHub API is and the token it gets (never sent to another origin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GitHubApi {
    /// The API's base URL (`https://api.github.com`, or GitHub Enterprise's `…/api/v3`).
    pub api: String,
    /// `GITHUB_TOKEN`, when set and the API is trusted with it ([`super::GitHubToken::for_api`]).
    pub token: Option<String>,
}

/// What a digest was checked against; findings and messages say which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DigestSource {
    /// The downloaded archive's, equal to GitHub's published `digest` of the release asset.
    Published,
    /// The downloaded archive's; GitHub publishes none for it.
    Downloaded,
}

impl DigestSource {
    /// How a message names the source.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            DigestSource::Published => {
                "of the downloaded archive, matching the digest GitHub publishes for the release asset"
            }
            DigestSource::Downloaded => "of the downloaded archive",
        }
    }
}

/// Why no pin could be had for an archive.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// The archive could not be downloaded (under the cap) to hash it.
    #[error(transparent)]
    Net(#[from] NetError),
    /// GitHub's published digest is not the sha256 of the bytes downloaded.
    #[error(
        "GitHub publishes sha256 {published} for the release asset `{asset}`, but the \
         downloaded archive hashes to {downloaded}; the asset was changed after it was \
         published, or something on the way alters it: nothing is pinned"
    )]
    Mismatch {
        /// The asset's file name.
        asset: String,
        /// GitHub's digest.
        published: String,
        /// The download's.
        downloaded: String,
    },
}

/// The one comparison behind every pin: `downloaded` (the sha256 of bytes this run
/// downloaded) is the pin, and a digest GitHub publishes for the asset must be equal to it.
pub(crate) fn checked_pin(
    asset: &str,
    published: Option<&str>,
    downloaded: String,
) -> Result<ArchiveDigest, PinError> {
    match published {
        None => Ok(ArchiveDigest {
            sha256: downloaded,
            source: DigestSource::Downloaded,
        }),
        Some(published) if published.eq_ignore_ascii_case(&downloaded) => Ok(ArchiveDigest {
            sha256: downloaded,
            source: DigestSource::Published,
        }),
        Some(published) => Err(PinError::Mismatch {
            asset: asset.to_string(),
            published: published.to_string(),
            downloaded,
        }),
    }
}

/// Download `url` (at most `cap` bytes), hash it and check it against `published`, the
/// digest GitHub publishes for the asset named `asset`, when there is one.
pub(crate) async fn hashed_pin(
    client: &Client,
    url: &str,
    cap: u64,
    asset: &str,
    published: Option<&str>,
) -> Result<ArchiveDigest, PinError> {
    let download = client.download(url, cap).await?;
    checked_pin(asset, published, download.sha256)
}

/// The last path segment of `url`, as messages name the asset.
pub(crate) fn asset_name(url: &str) -> String {
    Url::parse(url)
        .ok()
        .and_then(|u| u.path_segments()?.next_back().map(str::to_string))
        .unwrap_or_else(|| url.to_string())
}

/// The sha256 to pin for an archive and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArchiveDigest {
    /// Lowercase hex.
    pub sha256: String,
    /// Published or downloaded.
    pub source: DigestSource,
}

/// The digest to pin for `url`: the download's (at most `cap` bytes), checked against the
/// one GitHub publishes when it has one ([`hashed_pin`]).
pub(crate) async fn archive_digest(
    client: &Client,
    github: &GitHubApi,
    url: &str,
    cap: u64,
) -> Result<ArchiveDigest, PinError> {
    let published = published_digest(client, github, url).await;
    hashed_pin(client, url, cap, &asset_name(url), published.as_deref()).await
}

/// The digests to pin for `urls`, in their order, asked concurrently under the limits of
/// `options` (its network settings, GitHub API, token and archive cap): what `new --binary`
/// writes.
pub(crate) fn pin_digests(
    urls: &[String],
    options: &Options,
) -> Result<Vec<Result<ArchiveDigest, PinError>>, OnlineError> {
    let runtime = crate::net::runtime()?;
    let client = Arc::new(Client::new(options.net.clone())?);
    let github = Arc::new(GitHubApi {
        api: options.endpoints.github_api.clone(),
        token: options.github_token.for_api(&options.endpoints.github_api),
    });
    let cap = options.archive_cap;
    Ok(runtime.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for (index, url) in urls.iter().cloned().enumerate() {
            let (client, github) = (client.clone(), github.clone());
            set.spawn(async move { (index, archive_digest(&client, &github, &url, cap).await) });
        }
        // A task that panicked leaves its place an error, never another URL's digest.
        let mut found: Vec<Result<ArchiveDigest, PinError>> = urls
            .iter()
            .map(|_| Err(NetError::Connect("the request stopped".into()).into()))
            .collect();
        while let Some(joined) = set.join_next().await {
            if let Ok((index, digest)) = joined {
                found[index] = digest;
            }
        }
        found
    }))
}

/// GitHub's published digest of the asset `url` downloads; `None` when `url` is not a
/// release download on github.com or the API's host, or the API has no digest for it.
pub(crate) async fn published_digest(
    client: &Client,
    github: &GitHubApi,
    url: &str,
) -> Option<String> {
    let asset = release_download(url, &github.api)?;
    let api = Url::parse(&github.api).ok()?;
    let origin = api.origin();
    let mut by_tag = Url::parse(&format!("{}/", github.api.trim_end_matches('/'))).ok()?;
    // Each part pushed as one segment: a tag holding `/` or `?` stays the tag.
    by_tag.path_segments_mut().ok()?.pop_if_empty().extend([
        "repos",
        &asset.owner,
        &asset.repo,
        "releases",
        "tags",
        &asset.tag,
    ]);
    let bearer = github.token.as_deref().map(|token| Bearer {
        origin: &origin,
        token,
    });
    let release = client
        .api_document::<ReleaseDoc>(&by_tag, GITHUB_ACCEPT, bearer)
        .await
        .ok()??;
    let found = release.assets.0.iter().find(|a| a.name == asset.file)?;
    found.sha256.clone()
}

/// `url` read as a release download on github.com or the API's host (GitHub Enterprise
/// serves both on one host, as the local servers of tests do), without credentials, query or
/// empty and dot segments.
fn release_download(url: &str, api: &str) -> Option<ReleaseAsset> {
    let asset = ReleaseAsset::parse(url)?;
    let api_host = Url::parse(api).ok()?.host_str()?.to_string();
    let host = asset.url.host_str()?;
    let on_github = host == "github.com" || host == api_host;
    let plain = asset.url.username().is_empty() && asset.url.query().is_none();
    let dot = |s: &String| matches!(s.as_str(), "." | "..") || s.is_empty();
    let named = ![&asset.owner, &asset.repo, &asset.tag, &asset.file]
        .into_iter()
        .any(dot);
    (on_github && plain && named).then_some(asset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_release_downloads_on_github_or_the_api_host_are_looked_up() {
        let api = "https://github.example.com/api/v3";
        let parse = |u: &str| release_download(u, api);
        let found = parse("https://github.com/o/r/releases/download/v1.0.0/agent%20x.tar.gz")
            .map(|a| (a.owner, a.repo, a.tag, a.file));
        assert_eq!(
            found,
            Some((
                "o".into(),
                "r".into(),
                "v1.0.0".into(),
                "agent x.tar.gz".into()
            ))
        );
        assert!(parse("https://github.example.com/o/r/releases/download/v1/a.zip").is_some());
        for other in [
            "https://example.com/o/r/releases/download/v1/a.zip",
            "https://github.com/o/r/releases/latest/a.zip",
            "https://github.com/o/r/releases/download/v1/a.zip?x=1",
            "https://u@github.com/o/r/releases/download/v1/a.zip",
            "https://github.com/o/r/releases/download/v1/",
            "https://github.com/o/r/x/releases/download/v1/a.zip",
            "not a url",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
    }

    #[test]
    fn a_pin_is_the_download_and_a_published_digest_must_equal_it() {
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        let pin = checked_pin("x.zip", None, a.clone()).unwrap();
        assert_eq!(
            (pin.sha256.as_str(), pin.source),
            (a.as_str(), DigestSource::Downloaded)
        );
        let pin = checked_pin("x.zip", Some(&a.to_uppercase()), a.clone()).unwrap();
        assert_eq!(
            (pin.sha256.as_str(), pin.source),
            (a.as_str(), DigestSource::Published)
        );
        let error = checked_pin("x.zip", Some(&b), a.clone())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`x.zip`") && error.contains(&a) && error.contains(&b),
            "{error}"
        );
    }
}
