//! Version 0.1.0 (`.well-known/skills/index.json`): the document, each entry's `files`, every
//! listed file fetched from `<index folder>/<name>/<path>` into scratch, the files a local site
//! serves beside them but does not list, and the skill judged by the skill rules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use acp_registry_client::skill_index::is_safe_listed_path;
use acp_registry_core::fs::Kind;
use acp_registry_core::source::Span;

use super::context::Ctx;
use super::document::{self, Doc};
use super::limits::{MAX_SKILLS, MAX_SKILL_BYTES, MAX_SKILL_FILES};
use super::origin::{Fetched, Place};
use super::skill::{self, Listed};
use super::v2::{name_and_description, skills};
use crate::diagnostics::Code;
use crate::manifest::Node;

const DROPS: &str =
    "the `skills` CLI drops the WHOLE index (every skill of it) for one invalid entry";

/// Check the 0.1.0 index at `place`.
pub(crate) fn check(ctx: &mut Ctx, place: &Place) {
    let Some(doc) = document::read(ctx, place, Code::IndexFormat) else {
        return;
    };
    let Some(entries) = skills(ctx, &doc, false) else {
        return;
    };
    let folder = place.parent();
    let mut names = BTreeMap::new();
    for entry in entries.iter().take(MAX_SKILLS) {
        ctx.counted();
        if entry.as_object().is_none() {
            ctx.push(
                doc.at(
                    Code::IndexEntry,
                    entry.span,
                    format!("a skill entry is not an object; {DROPS}"),
                )
                .help("write `{\"name\", \"description\", \"files\"}`"),
            );
            continue;
        }
        for finding in document::unknown_keys(
            &doc,
            entry,
            &["name", "description", "files"],
            Code::IndexFormat,
        ) {
            ctx.push(finding);
        }
        let (name, description) = name_and_description(ctx, &doc, entry, &mut names, DROPS);
        let files = listed_files(ctx, &doc, entry);
        if let (Some(name), Some(files)) = (name, files) {
            let listed = Listed {
                doc: &doc,
                name,
                description,
            };
            if let Some(skill) = folder.child(name.0) {
                fetch_skill(ctx, &skill, &listed, &files);
                if !skill.is_remote() {
                    unlisted(ctx, &skill, &files);
                }
            }
        }
    }
}

/// The entry's `files` with their spans, when every one is valid.
fn listed_files<'d>(ctx: &mut Ctx, doc: &'d Doc, entry: &'d Node) -> Option<Vec<(&'d str, Span)>> {
    let Some(node) = entry.get("files") else {
        ctx.push(
            doc.at(
                Code::IndexEntry,
                entry.span,
                format!("the entry has no `files`; {DROPS}"),
            )
            .help("add `\"files\": [\"SKILL.md\", ...]`"),
        );
        return None;
    };
    let items = match node.as_array() {
        Some(items) if !items.is_empty() => items,
        _ => {
            ctx.push(
                doc.at(
                    Code::IndexEntry,
                    node.span,
                    format!("`files` is not a non-empty array; {DROPS}"),
                )
                .help("list every file of the skill, `SKILL.md` first"),
            );
            return None;
        }
    };
    let mut files = Vec::new();
    let mut valid = true;
    for item in items {
        match item.as_str() {
            Some(path) if is_safe_listed_path(path) => files.push((path, item.span)),
            _ => {
                valid = false;
                ctx.push(doc.at(Code::IndexEntry, item.span, format!("a listed path that is not a relative forward-slash path without `..`; {DROPS}")).help("list paths relative to the skill's folder, such as `scripts/run.py`"));
            }
        }
    }
    if !files.iter().any(|(path, _)| *path == "SKILL.md") {
        valid = false;
        ctx.push(
            doc.at(
                Code::IndexEntry,
                entry.get("files").map_or(entry.span, |n| n.span),
                format!("`files` does not list `SKILL.md`; {DROPS}"),
            )
            .help("add `\"SKILL.md\"` to `files`"),
        );
    }
    if files.len() > MAX_SKILL_FILES {
        valid = false;
        ctx.push(
            doc.at(
                Code::IndexEntry,
                entry.span,
                format!(
                    "{} files, over the {MAX_SKILL_FILES} a skill may have",
                    files.len()
                ),
            )
            .help("move large collections out of the skill"),
        );
    }
    valid.then_some(files)
}

/// Fetch every listed file into scratch and judge the skill (when its SKILL.md came: without
/// it the missing file is the finding).
fn fetch_skill(ctx: &mut Ctx, skill: &Place, listed: &Listed<'_>, files: &[(&str, Span)]) {
    let name = listed.name.0;
    let mut dir = None;
    let mut total = 0u64;
    let mut has_skill_md = false;
    for (path, span) in files {
        let Some(place) = skill.child(path) else {
            continue;
        };
        let shown = place.shown();
        let bytes = match ctx.file(&place) {
            Fetched::Bytes(bytes) => bytes,
            Fetched::Absent(why) | Fetched::Failed(why) => {
                ctx.push(listed.doc.at(Code::IndexFileMissing, *span, format!("cannot fetch {shown}: {why}")).help("serve the file there (the 0.1.0 CLI silently skips it and installs the skill incomplete), or remove it from `files`"));
                continue;
            }
        };
        total += bytes.len() as u64;
        if total > MAX_SKILL_BYTES {
            ctx.push(
                listed
                    .doc
                    .at(
                        Code::IndexFileMissing,
                        *span,
                        format!("not read: the skill's files pass {MAX_SKILL_BYTES} bytes here"),
                    )
                    .help("keep a skill under 50 MiB, the `skills` CLI's limit"),
            );
            break;
        }
        if dir.is_none() {
            match ctx.scratch_dir() {
                Ok(fresh) => dir = Some(fresh),
                Err(_) => return,
            }
        }
        let Some(dir) = &dir else { return };
        let target = Path::new(name).join(path);
        match acp_registry_core::fs::write_below(dir, &target, &bytes) {
            Ok(()) => has_skill_md |= *path == "SKILL.md",
            Err(e) => ctx.push(
                listed
                    .doc
                    .at(
                        Code::IndexFileMissing,
                        *span,
                        format!("{shown} cannot be laid out in scratch: {e}"),
                    )
                    .help("list each path once, never a file where a folder is listed"),
            ),
        }
    }
    let Some(dir) = dir else { return };
    if has_skill_md {
        skill::judge(ctx, &dir, listed, &|rel| {
            skill
                .child(rel)
                .map_or_else(|| rel.to_string(), |p| p.shown())
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The files a local site serves in the skill's folder that `files` does not list.
fn unlisted(ctx: &mut Ctx, skill: &Place, files: &[(&str, Span)]) {
    let Place::Local { base, rel } = skill else {
        return;
    };
    let listed: BTreeSet<&str> = files.iter().map(|(path, _)| *path).collect();
    let mut pending = vec![String::new()];
    let mut seen = 0usize;
    while let Some(sub) = pending.pop() {
        let dir = base.join(rel).join(&sub);
        let Ok(children) = acp_registry_core::fs::list_dir(&dir) else {
            continue;
        };
        for child in children {
            seen += 1;
            if seen > MAX_SKILL_FILES * 2 {
                return;
            }
            let path = if sub.is_empty() {
                child.name()
            } else {
                format!("{sub}/{}", child.name())
            };
            match child.kind {
                Kind::Dir => pending.push(path),
                _ if listed.contains(path.as_str()) => {}
                kind => {
                    let shown = skill
                        .child(&path)
                        .map_or_else(|| format!("{}/{path}", skill.shown()), |p| p.shown());
                    let what = match kind {
                        Kind::File => "is served but not listed in `files`: clients never install it".to_string(),
                        _ => "is a link or special file in the skill's folder (not followed): clients cannot install it".to_string(),
                    };
                    ctx.push(
                        crate::diagnostics::Diagnostic::new(
                            Code::IndexFileUnlisted,
                            format!("{shown} {what}"),
                        )
                        .in_file(shown)
                        .help("list the file in the index's `files`, or remove it"),
                    );
                }
            }
        }
    }
}
