//! The apply step: the new strings of one entry (its `version`, npx/uvx pins, the tag and
//! file-name version of GitHub archive URLs, the `sha256` of every binary target it
//! rewrites, added where there was none), written through [`Editor`] so every other byte
//! stays, then the entry re-validated and the file restored when anything fails. Every
//! string is known (every asset downloaded and hashed, and its hash compared with the
//! published digest) before the file is touched, so a failed download or a mismatch leaves
//! it as it was.
//!
//! Only what is derived is written: a new archive URL is the release asset's download URL
//! only when that is a release download of the same repository on the same scheme, host and
//! port as the current URL, at the release's tag and the expected file name, with no dot
//! segment and nothing the URL parser would normalise away; anything else is an error
//! naming the asset, before any file is touched.

use std::collections::BTreeSet;
use std::path::Path;

use super::context::{Candidate, Context};
use super::sources::{Offer, Release};
use crate::diagnostics::Severity;
use crate::manifest::distribution::{BinaryTarget, Distribution, Package};
use crate::manifest::edit::Editor;
use crate::manifest::repository::ReleaseAsset;
use crate::online::digest::{hashed_pin, PinError};
use crate::online::release::Asset;
use crate::registry::check_registry;
use crate::rules::{package_name_and_pin, url_versions, ManifestDoc, PreviewVersion};
use acp_registry_core::fs::replace_file;

/// `(owner, repo)` when `repository` is a GitHub repository (github.com, or the configured
/// API's host for GitHub Enterprise and tests) and every binary target is one of its release
/// assets, `…/<owner>/<repo>/releases/download/<tag>/<file>` on the same host.
pub(super) fn github_repository(
    doc: &ManifestDoc,
    dist: &Distribution,
    api: &str,
) -> Option<(String, String)> {
    let api_host = url::Url::parse(api).ok()?.host_str()?.to_string();
    let hosts = ["github.com", api_host.as_str()];
    let repository = url::Url::parse(doc.root.get_str("repository")?).ok()?;
    if !hosts.contains(&repository.host_str()?) {
        return None;
    }
    let mut parts = repository.path_segments()?.filter(|s| !s.is_empty());
    let owner = parts.next()?.to_string();
    let repo = parts.next()?.trim_end_matches(".git").to_string();
    if parts.next().is_some() {
        return None;
    }
    let all_assets = dist.binary.iter().all(|target| {
        asset_path(target).is_some_and(|at| {
            at.url.host_str().is_some_and(|host| hosts.contains(&host))
                && at.owner.eq_ignore_ascii_case(&owner)
                && at.repo.eq_ignore_ascii_case(&repo)
        })
    });
    all_assets.then_some((owner, repo))
}

/// The target's archive URL read as a release asset.
fn asset_path(target: &BinaryTarget) -> Option<ReleaseAsset> {
    ReleaseAsset::parse(target.archive.as_deref()?)
}

/// Whether a path segment is a dot segment, as URL parsers read it (`.`, `..`, `%2e`, …).
fn is_dot_segment(segment: &str) -> bool {
    let lower = segment.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "." | ".." | "%2e" | "%2e." | ".%2e" | "%2e%2e"
    )
}

/// The asset's download URL when it is one `update` may write in place of `current`: a
/// release download of the same repository on the same scheme, host and port, at the
/// release's tag and the asset's name, with no dot segment, credentials, query or fragment,
/// and exactly as the URL parser writes it (so nothing was normalised away). Otherwise the
/// message names the asset and what is wrong.
fn checked_asset_url(
    current: &ReleaseAsset,
    release: &Release,
    asset: &Asset,
) -> Result<String, String> {
    let expected = format!(
        "a release download of {}/{} on {} at tag `{}`",
        current.owner,
        current.repo,
        current.url.origin().ascii_serialization(),
        release.tag
    );
    let refuse = |what: &str| {
        format!(
            "release `{}` asset `{}`: {what}; expected {expected}, nothing written",
            release.tag, asset.name
        )
    };
    let raw = asset.url.as_deref().ok_or_else(|| {
        refuse(&format!(
            "no download URL (missing, or longer than {} bytes)",
            crate::online::release::MAX_URL_LEN
        ))
    })?;
    let unexpected = || refuse(&format!("its download URL `{raw}` is not one"));
    if raw.split(['/', '\\']).any(is_dot_segment) {
        return Err(refuse(&format!(
            "its download URL `{raw}` has a dot segment"
        )));
    }
    let parsed = ReleaseAsset::parse(raw).ok_or_else(unexpected)?;
    let url = &parsed.url;
    let plain = url.as_str() == raw
        && url.username().is_empty()
        && url.password().is_none()
        && url.query().is_none()
        && url.fragment().is_none();
    let same_place = url.origin() == current.url.origin()
        && url.scheme() == current.url.scheme()
        && parsed.owner.eq_ignore_ascii_case(&current.owner)
        && parsed.repo.eq_ignore_ascii_case(&current.repo);
    if !(plain && same_place && parsed.tag == release.tag && parsed.file == asset.name) {
        return Err(unexpected());
    }
    Ok(raw.to_string())
}

/// Edit, write, re-validate; the file is restored on any failure.
pub(super) async fn apply(
    root: &Path,
    context: &Context,
    candidate: &Candidate<'_>,
    to: PreviewVersion,
    offers: &[Offer],
) -> Result<(), String> {
    let report = candidate.report;
    let doc = report.manifest_doc().expect("candidates have a manifest");
    let edits = edits(context, candidate, to, offers).await?;
    let mut editor = Editor::parse(&doc.source.text).map_err(|e| e.to_string())?;
    for (pointer, value) in &edits {
        // `set_or_insert`: a target without `sha256` gets one at its canonical place.
        editor
            .set_or_insert(pointer, &serde_json::Value::String(value.clone()))
            .map_err(|e| format!("cannot edit `{pointer}`: {e}"))?;
    }
    let rel = Path::new(&report.entry.name).join("agent.json");
    replace_file(root, &rel, editor.text().as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", rel.display()))?;
    if let Err(problem) = revalidate(root, &report.entry.name) {
        let restored = replace_file(root, &rel, doc.source.text.as_bytes());
        let how = match restored {
            Ok(()) => "the file is restored".to_string(),
            Err(e) => format!("restoring the file failed too: {e}"),
        };
        return Err(format!(
            "the entry does not validate at {to} ({problem}); {how}"
        ));
    }
    Ok(())
}

/// The first error the rules report on the entry after the edit.
fn revalidate(root: &Path, name: &str) -> Result<(), String> {
    let only = BTreeSet::from([name.to_string()]);
    let checked = check_registry(root, Some(&only)).map_err(|e| e.to_string())?;
    let entry = checked.entries.iter().find(|e| e.entry.name == name);
    let error = entry
        .into_iter()
        .flat_map(|e| &e.diagnostics)
        .find(|d| d.severity == Severity::Error);
    match error {
        Some(d) => Err(format!("{}: {}", d.code, d.message)),
        None => Ok(()),
    }
}

/// Every `(pointer, new string)` of the update, in manifest order.
async fn edits(
    context: &Context,
    candidate: &Candidate<'_>,
    to: PreviewVersion,
    offers: &[Offer],
) -> Result<Vec<(String, String)>, String> {
    let new = to.to_string();
    let mut edits = vec![(format!("{}/version", candidate.base), new.clone())];
    for (package, npm) in [(&candidate.dist.npx, true), (&candidate.dist.uvx, false)] {
        edits.extend(package.as_ref().and_then(|p| pin_edit(p, npm, &new)));
    }
    if candidate.dist.binary.is_empty() {
        return Ok(edits);
    }
    if let Some(feed) = &candidate.feed {
        edits.extend(super::feed::archive_edits(context, candidate, feed, offers, to).await?);
        return Ok(edits);
    }
    let release = offers
        .iter()
        .find_map(|o| o.release.as_ref())
        .filter(|r| r.version == to)
        .ok_or_else(|| format!("no GitHub release serves {new}"))?;
    for target in &candidate.dist.binary {
        edits.extend(archive_edits(context, target, release, &new).await?);
    }
    Ok(edits)
}

/// The package spec with its pin replaced (an unpinned spec is left alone).
fn pin_edit(package: &Package, npm: bool, new: &str) -> Option<(String, String)> {
    let spec = package.spec.as_deref()?;
    let (_, pin) = package_name_and_pin(spec, npm);
    let kept = &spec[..spec.len() - pin?.len()];
    Some((
        format!("{}/package", package.pointer),
        format!("{kept}{new}"),
    ))
}

/// The target's new archive URL (the release's asset named like the old file with the new
/// version, its URL checked by [`checked_asset_url`]) and its `sha256`, pinned before or
/// not: always the hash of the downloaded asset (through `net`, at most the archive cap),
/// refused when the asset's published digest differs ([`hashed_pin`]).
async fn archive_edits(
    context: &Context,
    target: &BinaryTarget,
    release: &Release,
    new: &str,
) -> Result<Vec<(String, String)>, String> {
    let current = asset_path(target).ok_or("the archive URL is not a release asset")?;
    let old = url_versions(current.url.path())
        .into_iter()
        .next()
        .or_else(|| super::sources::tag_version(&current.tag).map(|v| v.to_string()))
        .unwrap_or_default();
    let wanted = replace_version(&current.file, &old, new);
    let asset = release
        .assets
        .iter()
        .find(|a| a.name == wanted)
        .ok_or_else(|| {
            format!(
                "release `{}` has no asset `{wanted}` for {}",
                release.tag, target.platform
            )
        })?;
    let url = checked_asset_url(&current, release, asset)?;
    let cap = context.options.archive_cap;
    let pin = hashed_pin(
        &context.client,
        &url,
        cap,
        &asset.name,
        asset.sha256.as_deref(),
    )
    .await
    .map_err(|e| {
        let (tag, platform) = (&release.tag, &target.platform);
        match e {
            PinError::Net(e) => format!(
                "release `{tag}` asset `{}` for {platform}: downloading `{url}` to hash it \
                     failed: {e}; nothing written",
                asset.name
            ),
            e @ PinError::Mismatch { .. } => {
                format!("release `{tag}` for {platform}: {e}; nothing written")
            }
        }
    })?;
    Ok(vec![
        (format!("{}/archive", target.pointer), url),
        (format!("{}/sha256", target.pointer), pin.sha256),
    ])
}

/// `text` with each occurrence of the version `old` (not inside a longer number) as `new`.
fn replace_version(text: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        return text.to_string();
    }
    let numeric = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit() || c == '.');
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(old) {
        let before = rest[..at].chars().last().or_else(|| out.chars().last());
        let after = rest[at + old.len()..].chars().next();
        out.push_str(&rest[..at]);
        if numeric(before) || after.is_some_and(|c| c.is_ascii_digit()) {
            out.push_str(old);
        } else {
            out.push_str(new);
        }
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_release_download_of_the_same_repository_and_place_is_written() {
        let base = "https://github.com/Example/agent/releases/download";
        let current = ReleaseAsset::parse(&format!("{base}/v1.0.0/agent-1.0.0.tar.gz")).unwrap();
        let release = Release {
            version: crate::rules::PreviewVersion::parse("1.1.0").unwrap(),
            tag: "v1.1.0".into(),
            published: None,
            assets: Vec::new(),
        };
        let check = |url: Option<&str>| {
            let asset = Asset {
                name: "agent-1.1.0.tar.gz".into(),
                url: url.map(str::to_string),
                sha256: None,
            };
            checked_asset_url(&current, &release, &asset)
        };
        let good = "https://github.com/example/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz";
        assert_eq!(check(Some(good)).as_deref(), Ok(good));
        for foreign in [
            "https://evil.example/example/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz",
            "https://github.com:8443/example/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz",
            "http://github.com/example/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz",
            "https://github.com/other/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz",
            "https://github.com/example/agent/releases/download/v1.0.0/agent-1.1.0.tar.gz",
            "https://github.com/example/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz?x=1",
            "https://github.com/example/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz#x",
            "https://u@github.com/example/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz",
            "https://github.com/example/agent/releases/download/v1.1.0/../../../../evil/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz",
            "https://github.com/x/../example/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz",
            "https://github.com/example/agent/releases/download/v1.1.0/%2e%2E/v1.1.0/agent-1.1.0.tar.gz",
            "https://github.com/example/agent/./releases/download/v1.1.0/agent-1.1.0.tar.gz",
            "https://github.com/example\\agent/releases/download/v1.1.0/agent-1.1.0.tar.gz",
            "https://GitHub.com/example/agent/releases/download/v1.1.0/agent-1.1.0.tar.gz",
            "https://github.com/example/agent/releases/download/v1.1.0/other.tar.gz",
            "not a url",
        ] {
            let error = check(Some(foreign)).unwrap_err();
            assert!(
                error.starts_with("release `v1.1.0` asset `agent-1.1.0.tar.gz`: ")
                    && error.ends_with("nothing written"),
                "{foreign}: {error}"
            );
        }
        assert!(check(None).unwrap_err().contains("no download URL"));
    }

    #[test]
    fn file_name_versions_are_replaced_whole() {
        let cases = [
            (
                "agent-1.0.0-linux.tar.gz",
                "1.0.0",
                "1.1.0",
                "agent-1.1.0-linux.tar.gz",
            ),
            ("agent-11.0.0.zip", "1.0.0", "2.0.0", "agent-11.0.0.zip"),
            ("agent-1.0.01.zip", "1.0.0", "2.0.0", "agent-1.0.01.zip"),
            ("agent-linux.tar.gz", "1.0.0", "2.0.0", "agent-linux.tar.gz"),
        ];
        for (name, from, to, expected) in cases {
            assert_eq!(replace_version(name, from, to), expected, "{name}");
        }
    }
}
