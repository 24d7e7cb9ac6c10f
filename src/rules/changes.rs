//! Change rules of `validate --changed-since REV`: each changed entry against its manifest at
//! `REV` (read from git by the caller): a version going backwards, a distribution changed
//! under the same version, an entry removed, and an id removed while another is added (a
//! likely rename).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::distribution::normalized_json;
use super::entry::{EntryReport, ManifestDoc};
use super::policy::Policy;
use super::sink::Sink;
use super::versions::Version;
use crate::diagnostics::{Code, Diagnostic};

/// What the change rules compare: the manifests at the base revision by folder (as
/// `registry::git::manifests_at` reads them), the revision as the user named it, and the
/// folders that changed since.
pub(crate) struct ChangeBase<'a> {
    /// The revision, for messages.
    pub rev: &'a str,
    /// Folder → `agent.json` text at the revision.
    pub manifests: &'a BTreeMap<String, String>,
    /// The folders with changes since the revision (committed, uncommitted, untracked).
    pub changed: &'a BTreeSet<String>,
}

/// Every change finding, policy applied, sorted by the report later.
pub(crate) fn check_changes(
    base: &ChangeBase,
    entries: &[EntryReport],
    policy: &Policy,
) -> Vec<Diagnostic> {
    let current: BTreeMap<&str, &EntryReport> =
        entries.iter().map(|e| (e.entry.name.as_str(), e)).collect();
    let mut found = Vec::new();
    let mut added: Vec<(&str, ManifestDoc)> = Vec::new();
    let mut removed: Vec<(&str, Value)> = Vec::new();
    for folder in base.changed {
        let before = base
            .manifests
            .get(folder)
            .and_then(|text| crate::manifest::parse(text).ok())
            .map(|root| normalized_json(&root));
        let now = current.get(folder.as_str()).copied();
        let mut sink = Sink::new(policy, Some(folder.clone()));
        match (before, now.and_then(EntryReport::manifest_doc)) {
            (Some(before), Some(doc)) => compare_versions(base.rev, &before, &doc, &mut sink),
            (Some(before), None) if now.is_none_or(manifest_gone) => {
                sink.push(removal(base.rev, folder, &before));
                removed.push((folder, before));
            }
            (None, Some(doc)) if !base.manifests.contains_key(folder) => {
                added.push((folder, doc.into_owned()));
            }
            _ => {}
        }
        found.extend(sink.diagnostics);
    }
    for (folder, doc, old, why) in renames(&added, &removed) {
        let mut sink = Sink::new(policy, Some(folder.to_string()));
        let new_id = doc.id().unwrap_or(folder);
        sink.push(
            doc.at(
                Code::IdRenamed,
                "/id",
                format!("`{new_id}` looks like a rename of `{old}`, removed in this change ({why})"),
            )
            .help(format!(
                "clients save the id in their settings, so a new id breaks every existing setup: keep the folder and id `{old}` and change `name` (the display name) instead"
            )),
        );
        found.extend(sink.diagnostics);
    }
    found
}

/// Whether an entry folder that still exists has no `agent.json` any more (the icon was left
/// behind): removed, not broken.
fn manifest_gone(entry: &EntryReport) -> bool {
    entry.manifest.is_none()
        && matches!(
            acp_registry_core::fs::kind(&entry.entry.path.join("agent.json")),
            Ok(None)
        )
}

/// `version-decreased` or `version-unchanged` for an entry present on both sides.
fn compare_versions(rev: &str, before: &Value, doc: &ManifestDoc, sink: &mut Sink) {
    let was = before.get("version").and_then(Value::as_str);
    let is = doc.root.get_str("version");
    let (Some(was), Some(is)) = (was, is) else {
        return;
    };
    // Only X.Y.Z is ordered; `version-format` reports a current version that is not.
    let (Some(old), Some(new)) = (Version::parse(was), Version::parse(is)) else {
        return;
    };
    if new < old {
        sink.push(
            doc.at(
                Code::VersionDecreased,
                "/version",
                format!("version `{is}` is lower than `{was}` at `{rev}`"),
            )
            .help(format!(
                "clients that installed `{was}` would not update, or would go back: publish a version above `{was}`"
            )),
        );
    } else if new == old {
        let distribution = normalized_json(&doc.root);
        if distribution.get("distribution") != before.get("distribution") {
            sink.push(
                doc.at(
                    Code::VersionUnchanged,
                    "/version",
                    format!("`distribution` changed since `{rev}` but the version stays `{is}`"),
                )
                .help(
                    "raise `version` with the distribution: clients and caches key what they downloaded by version and keep the old one",
                ),
            );
        }
    }
}

/// The note for a removed entry, at the manifest that is gone.
fn removal(rev: &str, folder: &str, before: &Value) -> Diagnostic {
    let id = before.get("id").and_then(Value::as_str).unwrap_or(folder);
    let named = match before.get("name").and_then(Value::as_str) {
        Some(name) => format!("entry `{id}` (\"{name}\")"),
        None => format!("entry `{id}`"),
    };
    Diagnostic::new(
        Code::EntryRemoved,
        format!("{named} was removed since `{rev}`: clients that installed it lose it"),
    )
    .in_file(format!("{folder}/agent.json"))
    .help("to keep it listed with a warning instead, restore it and give it a reason in quarantine.json")
}

/// Added entries paired with the removed entry they most likely replace: the first removed
/// one (by folder) sharing the repository, the name or the distribution, or the only one
/// when exactly one entry was removed and one added.
fn renames<'d>(
    added: &'d [(&'d str, ManifestDoc)],
    removed: &'d [(&'d str, Value)],
) -> Vec<(&'d str, &'d ManifestDoc, &'d str, &'static str)> {
    let mut paired = BTreeSet::new();
    let mut out = Vec::new();
    for (folder, doc) in added {
        let now = normalized_json(&doc.root);
        let evidence = removed.iter().find_map(|(old, before)| {
            (!paired.contains(old))
                .then(|| same_agent(&now, before))
                .flatten()
                .map(|why| (*old, why))
        });
        let only = (added.len() == 1 && removed.len() == 1).then(|| {
            (
                removed[0].0,
                "the only entry removed and the only one added",
            )
        });
        if let Some((old, why)) = evidence.or(only) {
            paired.insert(old);
            let old_id = removed
                .iter()
                .find(|(f, _)| *f == old)
                .and_then(|(_, v)| v.get("id").and_then(Value::as_str))
                .unwrap_or(old);
            out.push((*folder, doc, old_id, why));
        }
    }
    out
}

/// Why two manifests look like the same agent, if they do.
fn same_agent(a: &Value, b: &Value) -> Option<&'static str> {
    let repository = |v: &Value| {
        v.get("repository").and_then(Value::as_str).map(|r| {
            r.trim_end_matches('/')
                .trim_end_matches(".git")
                .to_ascii_lowercase()
        })
    };
    if repository(a).is_some() && repository(a) == repository(b) {
        return Some("same repository");
    }
    let name = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_lowercase);
    if name(a).is_some() && name(a) == name(b) {
        return Some("same name");
    }
    let distribution = a.get("distribution");
    (distribution.is_some() && distribution == b.get("distribution")).then_some("same distribution")
}
