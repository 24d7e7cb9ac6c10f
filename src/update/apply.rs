//! The apply step: the new strings of one entry (its `version`, npx/uvx pins, the tag and
//! file-name version of GitHub archive URLs, `sha256` pins), written through
//! [`Editor`] so every other byte stays, then the entry re-validated and the file restored
//! when anything fails.

use std::collections::BTreeSet;
use std::path::Path;

use super::sources::{Offer, Release};
use super::{Candidate, Context};
use crate::diagnostics::Severity;
use crate::fs::replace_file;
use crate::manifest::distribution::{BinaryTarget, Distribution, Package};
use crate::manifest::edit::Editor;
use crate::registry::check_registry;
use crate::rules::{package_name_and_pin, url_versions, ManifestDoc, PreviewVersion};

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
        asset_path(target).is_some_and(|(host, o, r, _, _)| {
            hosts.contains(&host.as_str())
                && o.eq_ignore_ascii_case(&owner)
                && r.eq_ignore_ascii_case(&repo)
        })
    });
    all_assets.then_some((owner, repo))
}

/// Host, owner, repo, tag and file name of a release-asset archive URL.
fn asset_path(target: &BinaryTarget) -> Option<(String, String, String, String, String)> {
    let url = url::Url::parse(target.archive.as_deref()?).ok()?;
    let segments: Vec<&str> = url.path_segments()?.collect();
    let [owner, repo, "releases", "download", tag, file] = segments.as_slice() else {
        return None;
    };
    Some((
        url.host_str()?.to_string(),
        owner.to_string(),
        repo.to_string(),
        tag.to_string(),
        file.to_string(),
    ))
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
        editor
            .set_string(pointer, value)
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
    let release = offers
        .iter()
        .find_map(|o| o.releases.get(&to))
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
/// version) and, when the target pins one, its new `sha256`: the published digest, else the
/// hash of the downloaded asset.
async fn archive_edits(
    context: &Context,
    target: &BinaryTarget,
    release: &Release,
    new: &str,
) -> Result<Vec<(String, String)>, String> {
    let (_, _, _, tag, file) = asset_path(target).expect("checked by github_repository");
    let archive = target.archive.as_deref().unwrap_or_default();
    let path = url::Url::parse(archive)
        .map(|u| u.path().to_string())
        .unwrap_or_default();
    let old = url_versions(&path)
        .into_iter()
        .next()
        .or_else(|| super::sources::tag_version(&tag).map(|v| v.to_string()))
        .unwrap_or_default();
    let wanted = replace_version(&file, &old, new);
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
    let mut edits = vec![(format!("{}/archive", target.pointer), asset.url.clone())];
    if target.sha256.is_some() {
        let sha256 = if let Some(digest) = &asset.sha256 {
            digest.clone()
        } else {
            let download = context
                .client
                .download(&asset.url, context.options.archive_cap)
                .await
                .map_err(|e| format!("cannot hash `{}`: {e}", asset.url))?;
            download.sha256
        };
        edits.push((format!("{}/sha256", target.pointer), sha256));
    }
    Ok(edits)
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
