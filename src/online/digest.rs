//! The digest to pin for an archive URL, the one piece every writer of a `sha256` pin uses
//! (`validate --fix --verify-archives`, `new --binary`, `update --apply`): GitHub's published
//! asset `digest` when the URL is a GitHub release download and the release's API answer has
//! one, else the sha256 of the archive downloaded through [`crate::net`] under the size cap.
//!
//! The release is asked by tag, `GET <api>/repos/<owner>/<repo>/releases/tags/<tag>`, with the
//! owner, repository and tag of the URL itself (not of the manifest), once per run and
//! release (`net`'s memo); the asset is the one named like the URL's last segment. Any
//! problem on that path (not a release download, a 404, a rate limit, no digest) falls back to
//! the download, so the API is never required.

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
    /// `GITHUB_TOKEN`, when set.
    pub token: Option<String>,
}

/// Where a digest came from; findings and messages say which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DigestSource {
    /// GitHub's `digest` of the release asset.
    Published,
    /// The sha256 of the downloaded archive.
    Downloaded,
}

impl DigestSource {
    /// How a message names the source.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            DigestSource::Published => "published by GitHub for the release asset",
            DigestSource::Downloaded => "of the downloaded archive",
        }
    }
}

/// The sha256 to pin for an archive and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArchiveDigest {
    /// Lowercase hex.
    pub sha256: String,
    /// Published or downloaded.
    pub source: DigestSource,
}

/// The digest to pin for `url`: the published one when GitHub has it, else the download's
/// (at most `cap` bytes). Only the download can fail the call.
pub(crate) async fn archive_digest(
    client: &Client,
    github: &GitHubApi,
    url: &str,
    cap: u64,
) -> Result<ArchiveDigest, NetError> {
    if let Some(sha256) = published_digest(client, github, url).await {
        return Ok(ArchiveDigest {
            sha256,
            source: DigestSource::Published,
        });
    }
    let download = client.download(url, cap).await?;
    Ok(ArchiveDigest {
        sha256: download.sha256,
        source: DigestSource::Downloaded,
    })
}

/// The digests to pin for `urls`, in their order, asked concurrently under the limits of
/// `options` (its network settings, GitHub API, token and archive cap): what `new --binary`
/// writes.
pub(crate) fn pin_digests(
    urls: &[String],
    options: &Options,
) -> Result<Vec<Result<ArchiveDigest, NetError>>, OnlineError> {
    let runtime = crate::net::runtime()?;
    let client = Arc::new(Client::new(options.net.clone())?);
    let github = Arc::new(GitHubApi {
        api: options.endpoints.github_api.clone(),
        token: options.github_token.clone(),
    });
    let cap = options.archive_cap;
    Ok(runtime.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for (index, url) in urls.iter().cloned().enumerate() {
            let (client, github) = (client.clone(), github.clone());
            set.spawn(async move { (index, archive_digest(&client, &github, &url, cap).await) });
        }
        // A task that panicked leaves its place an error, never another URL's digest.
        let mut found: Vec<Result<ArchiveDigest, NetError>> = urls
            .iter()
            .map(|_| Err(NetError::Connect("the request stopped".into())))
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
}
