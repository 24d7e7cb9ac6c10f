//! Paths SKILL.md mentions: each must exist inside the skill's folder (`skill-link`), and the
//! Markdown files it links to should refer to no file SKILL.md does not refer to itself
//! (`skill-reference-depth`: references one level deep).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;

use super::skill_dir::{SkillDir, MAX_SKILL_BYTES};
use crate::diagnostics::{Code, Diagnostic};
use crate::rules::sink::Sink;
use acp_registry_core::fs::Kind;
use acp_registry_core::source::{SourceFile, Span};

/// Where a mentioned path leads, below the skill's folder.
enum Target {
    Outside,
    Missing,
    Found(PathBuf, Kind),
}

/// What the walk of the skill's folder already knows: every regular file's path and, when all
/// could be read, their bytes (both relative to the folder).
pub(super) struct Known<'a> {
    pub(super) paths: &'a [String],
    pub(super) files: Option<&'a BTreeMap<String, Vec<u8>>>,
}

impl Known<'_> {
    /// The kind of `rel` when the walk saw it: a file it listed, or a folder holding one.
    fn kind(&self, rel: &Path) -> Option<Kind> {
        let rel = rel.to_str()?;
        if self.paths.iter().any(|p| p == rel) {
            return Some(Kind::File);
        }
        let folder = format!("{rel}/");
        (!rel.is_empty() && self.paths.iter().any(|p| p.starts_with(&folder))).then_some(Kind::Dir)
    }
}

/// `path` below the skill folder `dir`, resolved from `from` (a folder below it): from what
/// the walk saw, else on disk (a missing path, a link, an empty folder).
fn resolve(dir: &Path, known: &Known<'_>, from: &Path, path: &str) -> Target {
    let relative = Path::new(path);
    if relative.is_absolute() {
        return Target::Outside;
    }
    let mut parts: Vec<&std::ffi::OsStr> = from.iter().collect();
    for c in relative.components() {
        match c {
            Component::ParentDir if parts.pop().is_none() => return Target::Outside,
            Component::Normal(p) => parts.push(p),
            _ => {}
        }
    }
    let rel: PathBuf = parts.into_iter().collect();
    if let Some(kind) = known.kind(&rel) {
        return Target::Found(rel, kind);
    }
    match acp_registry_core::fs::kind(&dir.join(&rel)) {
        Ok(None) => Target::Missing,
        Ok(Some(kind)) => Target::Found(rel, kind),
        // Unreadable: not this rule's to report.
        Err(_) => Target::Found(rel, Kind::File),
    }
}

fn missing(source: &SourceFile, span: Span, path: &str, outside: bool) -> Diagnostic {
    if outside {
        Diagnostic::new(
            Code::SkillLink,
            format!("`{path}` points outside the skill's folder"),
        )
        .at(source, span)
        .help("a skill can only refer to files inside its own folder")
    } else {
        Diagnostic::new(
            Code::SkillLink,
            format!("`{path}` does not exist in the skill's folder"),
        )
        .at(source, span)
        .help("add the file or fix the path")
    }
}

pub(super) fn check(
    source: &SourceFile,
    skill: &SkillDir<'_>,
    known: &Known<'_>,
    sink: &mut Sink,
    sources: &mut Vec<SourceFile>,
) {
    let dir = skill.path();
    let mut direct = BTreeSet::new();
    let mut markdown = Vec::new();
    for (path, span) in mentioned_paths(&source.text) {
        match resolve(&dir, known, Path::new(""), &path) {
            Target::Outside => sink.push(missing(source, span, &path, true)),
            Target::Missing => sink.push(missing(source, span, &path, false)),
            Target::Found(rel, kind) => {
                let is_markdown = rel.extension().is_some_and(|e| e == "md");
                if kind == Kind::File && is_markdown && !markdown.contains(&rel) {
                    markdown.push(rel.clone());
                }
                direct.insert(rel);
            }
        }
    }
    direct.insert(PathBuf::from("SKILL.md"));
    for rel in markdown {
        if let Some(referenced) = check_referenced(skill, known, &rel, &direct, sink) {
            sources.push(referenced);
        }
    }
}

/// The links of `rel`, a Markdown file SKILL.md refers to; the file when it has findings.
fn check_referenced(
    skill: &SkillDir<'_>,
    known: &Known<'_>,
    rel: &Path,
    direct: &BTreeSet<PathBuf>,
    sink: &mut Sink,
) -> Option<SourceFile> {
    let dir = skill.path();
    // Unreadable or not UTF-8: reported where the folder is read, not again here.
    let walked = known
        .files
        .and_then(|files| files.get(rel.to_str()?))
        .cloned();
    let bytes = match walked {
        Some(bytes) => bytes,
        None => acp_registry_core::fs::read_capped(&dir, rel, MAX_SKILL_BYTES).ok()?,
    };
    let text = String::from_utf8(bytes).ok()?;
    let shown = rel.to_string_lossy().replace('\\', "/");
    let source = SourceFile::new(skill.display(&shown), text);
    let from = rel.parent().unwrap_or(Path::new(""));
    let mut found = false;
    for (path, span) in mentioned_paths(&source.text) {
        // Links are relative to the file; paths written from the skill's root are common too.
        let target = match resolve(&dir, known, from, &path) {
            Target::Missing => resolve(&dir, known, Path::new(""), &path),
            other => other,
        };
        let finding = match target {
            Target::Outside => missing(&source, span, &path, true),
            Target::Missing => missing(&source, span, &path, false),
            Target::Found(target, _) if target != rel && !direct.contains(&target) => {
                Diagnostic::new(
                    Code::SkillReferenceDepth,
                    format!(
                        "`{path}` is referred to from {shown}, which SKILL.md refers to, but \
                         not from SKILL.md itself"
                    ),
                )
                .at(&source, span)
                .help(format!(
                    "link `{}` from SKILL.md too: agents may read {shown} only in part",
                    target.to_string_lossy().replace('\\', "/")
                ))
            }
            Target::Found(..) => continue,
        };
        sink.push(finding);
        found = true;
    }
    found.then_some(source)
}

/// Relative Markdown link targets and `references/…`/`scripts/…` paths mentioned in the text.
fn mentioned_paths(text: &str) -> Vec<(String, Span)> {
    static LINK: OnceLock<Regex> = OnceLock::new();
    static MENTION: OnceLock<Regex> = OnceLock::new();
    let link = LINK
        .get_or_init(|| Regex::new(r"\]\(\s*<?([^)\s>]+)>?(?:\s+[^)]*)?\)").expect("valid regex"));
    let mention = MENTION.get_or_init(|| {
        Regex::new(
            r"(?:^|[\s`'(\[])((?:\./)?(?:references|scripts|assets)/[A-Za-z0-9._/-]*[A-Za-z0-9_-])",
        )
        .expect("valid regex")
    });
    let mut found = Vec::new();
    for c in link.captures_iter(text) {
        let target = c.get(1).expect("group");
        let value = target.as_str();
        if value.contains("://") || value.starts_with('#') || value.starts_with("mailto:") {
            continue;
        }
        let path = value.split('#').next().unwrap_or(value);
        if !path.is_empty() {
            found.push((path.to_string(), Span::new(target.start(), target.end())));
        }
    }
    for c in mention.captures_iter(text) {
        let target = c.get(1).expect("group");
        if !found
            .iter()
            .any(|(_, s)| s.start <= target.start() && target.end() <= s.end)
        {
            found.push((
                target.as_str().to_string(),
                Span::new(target.start(), target.end()),
            ));
        }
    }
    found
}
