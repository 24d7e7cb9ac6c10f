//! Version 0.2.0 (`.well-known/agent-skills/index.json`): the document, each entry's fields,
//! its artifact fetched once, its digest compared with the bytes, the artifact judged as a
//! `SKILL.md` or an archive, and the skill laid out in scratch and judged by the skill rules.

use std::collections::BTreeMap;

use acp_registry_client::skill_index::{digest_hex, is_skill_name, DISCOVERY_SCHEMA_V2};
use acp_registry_core::source::Span;

use super::artifact;
use super::context::Ctx;
use super::document::{self, Doc};
use super::limits::MAX_SKILLS;
use super::origin::{Fetched, Place};
use super::skill::{self, Listed};
use crate::diagnostics::{Code, Severity};
use crate::manifest::Node;

const ENTRY_KEYS: [&str; 5] = ["name", "description", "type", "url", "digest"];

/// Check the 0.2.0 index at `place`.
pub(crate) fn check(ctx: &mut Ctx, place: &Place) {
    let Some(doc) = document::read(ctx, place, Code::IndexFormat) else {
        return;
    };
    let Some(entries) = skills(ctx, &doc, true) else {
        return;
    };
    let mut names = BTreeMap::new();
    for entry in entries.iter().take(MAX_SKILLS) {
        ctx.counted();
        if let Some(fields) = entry_fields(ctx, &doc, entry, &mut names) {
            check_artifact(ctx, &doc, place, &fields);
        }
    }
}

/// The document's `skills`, after its top-level checks; `v2` says which version's.
pub(super) fn skills<'d>(ctx: &mut Ctx, doc: &'d Doc, v2: bool) -> Option<&'d [Node]> {
    let root = &doc.root;
    if root.as_object().is_none() {
        ctx.push(
            doc.at(
                Code::IndexFormat,
                root.span,
                "the index is not a JSON object",
            )
            .help("write `{\"skills\": [...]}`"),
        );
        return None;
    }
    schema(ctx, doc, v2);
    let known: &[&'static str] = if v2 {
        &["$schema", "skills"]
    } else {
        &["skills"]
    };
    for finding in document::unknown_keys(doc, root, known, Code::IndexFormat) {
        ctx.push(finding);
    }
    let Some(skills) = root.get("skills") else {
        ctx.push(
            doc.at(
                Code::IndexFormat,
                Span::new(root.span.start, root.span.start + 1),
                "the index has no `skills`",
            )
            .help("add `\"skills\": [...]`, one object per skill"),
        );
        return None;
    };
    let Some(items) = skills.as_array() else {
        ctx.push(
            doc.at(Code::IndexFormat, skills.span, "`skills` is not an array")
                .help("write `\"skills\": [...]`, one object per skill"),
        );
        return None;
    };
    if items.len() > MAX_SKILLS {
        ctx.push(
            doc.at(
                Code::IndexFormat,
                skills.span,
                format!(
                    "the index lists {} skills; only the first {MAX_SKILLS} are checked",
                    items.len()
                ),
            )
            .help("split the index, or check the rest another way"),
        );
    }
    Some(items)
}

/// `$schema`: exactly the 0.2.0 schema in a 0.2.0 index, absent from a 0.1.0 one.
fn schema(ctx: &mut Ctx, doc: &Doc, v2: bool) {
    let root = &doc.root;
    let schema = root.get("$schema");
    match (v2, schema) {
        (true, None) => ctx.push(
            doc.at(
                Code::IndexFormat,
                Span::new(root.span.start, root.span.start + 1),
                "a 0.2.0 index without `$schema`: the `skills` CLI refuses it",
            )
            .help(format!("add `\"$schema\": \"{DISCOVERY_SCHEMA_V2}\"`")),
        ),
        (true, Some(node)) if node.as_str() != Some(DISCOVERY_SCHEMA_V2) => ctx.push(
            doc.at(
                Code::IndexFormat,
                node.span,
                "`$schema` is not the 0.2.0 discovery schema: the `skills` CLI refuses the index",
            )
            .help(format!("set it to `{DISCOVERY_SCHEMA_V2}` exactly")),
        ),
        (false, Some(node)) => ctx.push(
            doc.at(
                Code::IndexFormat,
                node.span,
                "a 0.1.0 index (at .well-known/skills/) has no `$schema`",
            )
            .help(
                "remove `$schema`, or serve a 0.2.0 index at .well-known/agent-skills/index.json",
            ),
        ),
        _ => {}
    }
}

/// A string of the index and where it is.
pub(super) type Text<'d> = (&'d str, Span);

/// What a valid 0.2.0 entry says.
pub(super) struct Fields<'d> {
    pub(super) name: (&'d str, Span),
    pub(super) description: Option<(&'d str, Span)>,
    archive: bool,
    url: (&'d str, Span),
    digest: Option<(&'d str, Span)>,
}

/// The name and description of an entry (both versions), each problem reported; the name
/// when it is usable as a folder, with the duplicates of `names` reported.
pub(super) fn name_and_description<'d>(
    ctx: &mut Ctx,
    doc: &'d Doc,
    entry: &'d Node,
    names: &mut BTreeMap<String, Span>,
    skipped: &str,
) -> (Option<Text<'d>>, Option<Text<'d>>) {
    let name = match document::string(entry, "name") {
        Ok((name, span)) if is_skill_name(name) => Some((name, span)),
        Ok((name, span)) => {
            let problem = crate::manifest::skill::name_problem(name).unwrap_or_default();
            ctx.push(
                doc.at(Code::IndexEntry, span, format!("skill name `{name}` is not valid: {problem}; {skipped}"))
                    .help("use 1-64 lowercase letters, digits and single hyphens, as the skill's folder is named"),
            );
            None
        }
        Err(span) => {
            ctx.push(
                doc.at(
                    Code::IndexEntry,
                    span,
                    format!("the entry has no string `name`; {skipped}"),
                )
                .help("add `\"name\"`: the skill's name, as its SKILL.md says"),
            );
            None
        }
    };
    if let Some((name, span)) = name {
        if let Some(first) = names.insert(name.to_string(), span) {
            let line = doc.source.range(first).0.line;
            ctx.push(
                doc.at(Code::IndexDuplicateName, span, format!("skill `{name}` is listed twice (first on line {line}); both install into the folder `{name}`"))
                    .help("remove the stale entry or rename one skill"),
            );
        }
    }
    let limit = acp_registry_client::skill_index::MAX_DESCRIPTION_CHARS;
    let description = match document::string(entry, "description") {
        Ok((text, span)) if (1..=limit).contains(&text.chars().count()) => Some((text, span)),
        Ok((text, span)) => {
            ctx.push(
                doc.at(
                    Code::IndexEntry,
                    span,
                    format!(
                        "the description has {} characters, not 1-{limit}; {skipped}",
                        text.chars().count()
                    ),
                )
                .help("copy the description from the skill's SKILL.md (1-1024 characters)"),
            );
            None
        }
        Err(span) => {
            ctx.push(
                doc.at(
                    Code::IndexEntry,
                    span,
                    format!("the entry has no string `description`; {skipped}"),
                )
                .help("add `\"description\"`, as the skill's SKILL.md says"),
            );
            None
        }
    };
    (name, description)
}

fn entry_fields<'d>(
    ctx: &mut Ctx,
    doc: &'d Doc,
    entry: &'d Node,
    names: &mut BTreeMap<String, Span>,
) -> Option<Fields<'d>> {
    const SKIPPED: &str = "the `skills` CLI skips this entry";
    if entry.as_object().is_none() {
        ctx.push(
            doc.at(
                Code::IndexEntry,
                entry.span,
                "a skill entry is not an object",
            )
            .help("write `{\"name\", \"description\", \"type\", \"url\", \"digest\"}`"),
        );
        return None;
    }
    for finding in document::unknown_keys(doc, entry, &ENTRY_KEYS, Code::IndexFormat) {
        ctx.push(finding);
    }
    let (name, description) = name_and_description(ctx, doc, entry, names, SKIPPED);
    let archive = match document::string(entry, "type") {
        Ok(("archive", _)) => Some(true),
        Ok(("skill-md", _)) => Some(false),
        Ok((_, span)) | Err(span) => {
            ctx.push(doc.at(Code::IndexEntry, span, format!("`type` is not `skill-md` or `archive`; {SKIPPED}")).help("`skill-md` for a skill that is its SKILL.md alone, `archive` for a .tar.gz or .zip of the folder"));
            None
        }
    };
    let url = match document::string(entry, "url") {
        Ok((url, span)) if !url.trim().is_empty() => Some((url, span)),
        Ok((_, span)) | Err(span) => {
            ctx.push(
                doc.at(
                    Code::IndexEntry,
                    span,
                    format!("the entry has no `url`; {SKIPPED}"),
                )
                .help("add `\"url\"`: the artifact, relative to the index"),
            );
            None
        }
    };
    let digest = match document::string(entry, "digest") {
        Ok((digest, span)) if digest_hex(digest).is_some() => Some((digest, span)),
        Ok((_, span)) | Err(span) => {
            ctx.push(
                doc.at(
                    Code::IndexEntry,
                    span,
                    format!("`digest` is not `sha256:` and 64 lowercase hex digits; {SKIPPED}"),
                )
                .help("write the sha256 of the artifact's bytes as `sha256:<hex>`"),
            );
            None
        }
    };
    // The artifact is still checked when only the digest is malformed: its digest is given.
    Some(Fields {
        name: name?,
        description,
        archive: archive?,
        url: url?,
        digest,
    })
}

fn check_artifact(ctx: &mut Ctx, doc: &Doc, index: &Place, fields: &Fields<'_>) {
    let (url, url_span) = fields.url;
    let place = match index.resolve(url) {
        Ok((place, other_origin)) => {
            if other_origin {
                let mut finding = doc
                    .at(
                        Code::IndexUrl,
                        url_span,
                        format!("`{url}` is on another origin than the index"),
                    )
                    .help(
                        "serve the artifact beside the index, so the site controls what it lists",
                    );
                finding.severity = Severity::Warning;
                ctx.push(finding);
            }
            place
        }
        Err(why) => {
            let mut finding = doc
                .at(Code::IndexUrl, url_span, why)
                .help("point `url` at a file of the site, relative to the index");
            if index.is_remote() || !url.contains("://") {
                ctx.push(finding);
            } else {
                finding.severity = Severity::Warning;
                ctx.push(finding);
            }
            return;
        }
    };
    let shown = place.shown();
    let bytes = match ctx.file(&place) {
        Fetched::Bytes(bytes) => bytes,
        Fetched::Absent(why) | Fetched::Failed(why) => {
            ctx.push(
                doc.at(
                    Code::IndexFileMissing,
                    url_span,
                    format!("cannot fetch {shown}: {why}"),
                )
                .help("serve the artifact at `url`, or fix `url`"),
            );
            return;
        }
    };
    let served = format!(
        "sha256:{}",
        acp_registry_core::fs::digest::sha256_hex(&bytes)
    );
    if let Some((digest, span)) = fields.digest {
        if digest != served {
            ctx.push(
                doc.at(
                    Code::IndexDigest,
                    span,
                    format!(
                        "the bytes {shown} serves have digest {served}; clients refuse the skill"
                    ),
                )
                .help(format!(
                    "set `digest` to `{served}` if those bytes are the ones you publish"
                )),
            );
        }
    }
    lay_out_and_judge(ctx, doc, fields, &shown, &bytes);
}

/// The artifact laid out in scratch (a `SKILL.md`, or an archive unpacked) and the skill
/// judged; each problem of the artifact reported at its `url`.
fn lay_out_and_judge(ctx: &mut Ctx, doc: &Doc, fields: &Fields<'_>, shown: &str, bytes: &[u8]) {
    let url_span = fields.url.1;
    let listed = Listed {
        doc,
        name: fields.name,
        description: fields.description,
    };
    let Ok(dir) = ctx.scratch_dir() else {
        return;
    };
    let laid_out = if fields.archive {
        artifact::unpack(bytes, &dir, fields.name.0)
    } else {
        artifact::skill_md(bytes, &dir, fields.name.0)
    };
    match laid_out {
        Ok(()) => skill::judge(ctx, &dir, &listed, &|rel| {
            if fields.archive {
                format!("{shown}#{rel}")
            } else {
                shown.to_string()
            }
        }),
        Err(problems) => {
            for problem in problems {
                ctx.push(doc.at(Code::IndexArtifact, url_span, format!("{shown}: {problem}")).help(if fields.archive {
                    "pack the skill folder's contents (SKILL.md at the root) as a plain .tar.gz or .zip of regular files"
                } else {
                    "serve the skill's SKILL.md, starting with its `---` front matter"
                }));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
