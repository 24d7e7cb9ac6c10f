//! GitHub's release document, read once for everyone: an item of `GET /repos/{o}/{r}/releases`
//! (`update`'s GitHub source) and the answer of `…/releases/tags/{tag}` (the published digest
//! of an archive) are the same object, so one typed view keeps what either uses (the tag,
//! draft and prerelease flags, publish time, and each asset's name, download URL and sha256).

use serde::de::{Error as _, SeqAccess};
use serde::Deserialize;

use crate::net::json::{deserialize_leniently, Flag, Lenient, Obj, Text, MAX_VERSION_LEN};

/// What GitHub's REST API is asked with.
pub(crate) const GITHUB_ACCEPT: &str = "application/vnd.github+json";
/// Assets one release may list (GitHub's own limit is 1,000); more is an error.
const MAX_ASSETS: usize = 1_000;
/// The longest asset name kept.
const MAX_ASSET_NAME: usize = 1_024;
/// The longest download URL kept; a longer one reads as missing.
pub(crate) const MAX_URL_LEN: usize = 2_048;

/// What is read of one release: everything else is skipped.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ReleaseDoc {
    pub(crate) tag_name: Text<MAX_VERSION_LEN>,
    pub(crate) draft: Flag,
    pub(crate) prerelease: Flag,
    pub(crate) published_at: Text<64>,
    pub(crate) assets: Assets,
}

/// One release asset as the GitHub API lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asset {
    pub(crate) name: String,
    /// `browser_download_url`; `None` when missing or longer than [`MAX_URL_LEN`].
    pub(crate) url: Option<String>,
    /// Lowercase hex of the published `sha256:` digest, when GitHub has one.
    pub(crate) sha256: Option<String>,
}

/// A release's assets, at most [`MAX_ASSETS`] items; items without a name are left out.
#[derive(Debug, Default)]
pub(crate) struct Assets(pub(crate) Vec<Asset>);

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AssetItem {
    name: Text<MAX_ASSET_NAME>,
    browser_download_url: Text<MAX_URL_LEN>,
    digest: Text<80>,
}

impl Lenient for Assets {
    fn seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut assets = Vec::new();
        let mut count = 0;
        while let Some(Obj(item)) = seq.next_element::<Obj<AssetItem>>()? {
            count += 1;
            if count > MAX_ASSETS {
                return Err(A::Error::custom(format!(
                    "more than {MAX_ASSETS} assets in one release"
                )));
            }
            assets.extend(item.and_then(asset));
        }
        Ok(Assets(assets))
    }
}

deserialize_leniently!(Assets);

fn asset(item: AssetItem) -> Option<Asset> {
    let sha256 = item.digest.0.as_deref().and_then(published_sha256);
    Some(Asset {
        name: item.name.0?,
        url: item.browser_download_url.0,
        sha256,
    })
}

/// Lowercase hex of a GitHub `digest` (`sha256:<64 hex digits>`, either case); other
/// algorithms and malformed values are `None`.
pub(crate) fn published_sha256(digest: &str) -> Option<String> {
    use acp_registry_core::fs::digest::{is_sha256_hex, HexCase};
    digest
        .strip_prefix("sha256:")
        .filter(|hex| is_sha256_hex(hex, HexCase::Any))
        .map(str::to_ascii_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sha256_digests_of_the_right_length_are_read() {
        assert_eq!(
            published_sha256(&format!("sha256:{}", "AB".repeat(32))),
            Some("ab".repeat(32))
        );
        assert_eq!(
            published_sha256(&format!("sha512:{}", "ab".repeat(32))),
            None
        );
        assert_eq!(published_sha256("sha256:abc"), None);
        assert_eq!(
            published_sha256(&format!("sha256:{}", "zz".repeat(32))),
            None
        );
    }

    #[test]
    fn a_release_keeps_its_tag_flags_time_and_named_assets_only() {
        let body = serde_json::json!({
            "tag_name": "v1.0.0",
            "prerelease": true,
            "published_at": "2025-01-02T03:04:05Z",
            "body": [0, 0, 0],
            "assets": [
                {"name": "a.tar.gz", "digest": format!("sha256:{}", "0f".repeat(32)), "size": 3,
                 "browser_download_url": "https://example.com/a.tar.gz"},
                {"name": "b.zip", "digest": null, "browser_download_url": "x".repeat(MAX_URL_LEN + 1)},
                {"digest": "sha256:x"},
                "not an asset"
            ]
        });
        let release: ReleaseDoc = serde_json::from_value(body).unwrap();
        assert_eq!(release.tag_name.0.as_deref(), Some("v1.0.0"));
        assert_eq!((release.draft.0, release.prerelease.0), (None, Some(true)));
        assert_eq!(
            release.published_at.0.as_deref(),
            Some("2025-01-02T03:04:05Z")
        );
        let a = Asset {
            name: "a.tar.gz".into(),
            url: Some("https://example.com/a.tar.gz".into()),
            sha256: Some("0f".repeat(32)),
        };
        let b = Asset {
            name: "b.zip".into(),
            url: None,
            sha256: None,
        };
        assert_eq!(release.assets.0, [a, b]);
    }

    #[test]
    fn more_assets_than_github_allows_is_an_error() {
        let many = vec![serde_json::json!({"name": "a"}); MAX_ASSETS + 1];
        let body = serde_json::json!({ "assets": many }).to_string();
        let error = serde_json::from_str::<ReleaseDoc>(&body).unwrap_err();
        assert!(
            error.to_string().contains("more than 1000 assets"),
            "{error}"
        );
    }
}
