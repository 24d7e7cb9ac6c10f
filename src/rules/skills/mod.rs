//! Skills shipped with an entry (`<id>/skill/<name>/`) and stand-alone skills
//! (`skills/<name>/`, `standalone`): the folder's layout, the front matter by the Agent Skills
//! specification, the body, links, paths and size. Each skill's files are read once here and
//! kept ([`CheckedSkill`]) for `build`.

mod checked;
mod frontmatter;
mod links;
mod skill_dir;
mod standalone;

use std::path::Path;

use super::entry::{display_path, EntryDir};
use super::files::Listing;
use super::read::{read_failure, read_text, refused, unlistable};
use super::sink::Sink;
use crate::diagnostics::{Code, Diagnostic};
use crate::manifest::skill::{self, BODY_LINES_MAX};
use acp_registry_core::fs::Kind;
use acp_registry_core::source::{SourceFile, Span};
use skill_dir::SkillDir;

pub(crate) use checked::{check_duplicate_skill_names, CheckedSkill};
pub(crate) use skill_dir::MAX_SKILL_BYTES;
pub(crate) use standalone::{check_standalone, SkillReport, SKILLS_DIR};

/// The skill rules on an entry's `skill/`; the skills that can be published.
pub(crate) fn check(
    entry: &EntryDir,
    listing: &Listing,
    sink: &mut Sink,
    sources: &mut Vec<SourceFile>,
) -> Vec<CheckedSkill> {
    if !listing.dirs.contains("skill") {
        return Vec::new();
    }
    let dir = entry.path.join("skill");
    let mut read = Read::default();
    walk(entry, &dir, "skill", sink, &mut read);
    let size = read.size;
    if size > MAX_SKILL_BYTES {
        sink.push(
            Diagnostic::new(
                Code::SkillTooLarge,
                format!("skill/ holds {size} bytes, over the 1 MiB limit"),
            )
            .in_file(display_path(entry, "skill"))
            .help("move large assets out of the skill; it is bundled into every archive"),
        );
    }
    let mut skills = Vec::new();
    for skill in layout(entry, &dir, sink) {
        let prefix = format!("{}/", skill.rel);
        let files = read.files_below(&prefix, size);
        skills.extend(check_skill(&skill, files, sink, sources));
    }
    skills
}

/// The skill folders below `skill/`, each layout problem reported: files directly in
/// `skill/` (the older layout, still checked as a skill), no folder, several folders.
fn layout<'a>(entry: &'a EntryDir, dir: &Path, sink: &mut Sink) -> Vec<SkillDir<'a>> {
    let Ok(children) = acp_registry_core::fs::list_dir(dir) else {
        return Vec::new(); // `walk` reported it.
    };
    let folders: Vec<String> = children
        .iter()
        .filter(|c| c.kind == Kind::Dir)
        .map(acp_registry_core::fs::Child::name)
        .collect();
    let files: Vec<String> = children
        .iter()
        .filter(|c| c.kind == Kind::File)
        .map(acp_registry_core::fs::Child::name)
        .collect();
    if files.iter().any(|f| f == "SKILL.md") {
        sink.push(
            Diagnostic::new(
                Code::SkillLayout,
                "skill/SKILL.md sits directly in skill/, a folder not named as the skill",
            )
            .in_file(display_path(entry, "skill/SKILL.md"))
            .help(format!(
                "move the skill's files into skill/{}/: clients and `agentskills validate` \
                 need the folder named as the skill",
                declared_name(entry, "skill").unwrap_or_else(|| entry.name.clone())
            )),
        );
        return vec![SkillDir {
            entry,
            rel: "skill".into(),
            folder: None,
            standalone: false,
        }];
    }
    for file in &files {
        let rel = format!("skill/{file}");
        sink.push(
            Diagnostic::new(
                Code::SkillLayout,
                format!("`{rel}` is outside the skill's folder"),
            )
            .in_file(display_path(entry, &rel))
            .help("skill/ holds only the skill's folder, skill/<name>/; move the file into it"),
        );
    }
    if folders.is_empty() {
        sink.push(
            Diagnostic::new(Code::SkillLayout, "skill/ holds no skill folder")
                .in_file(display_path(entry, "skill"))
                .help(format!(
                    "put the skill in skill/<name>/ (for example skill/{}/SKILL.md), or remove skill/",
                    entry.name
                )),
        );
    }
    if folders.len() > 1 {
        sink.push(
            Diagnostic::new(
                Code::SkillLayout,
                format!(
                    "skill/ holds {} folders ({}); an entry ships one skill",
                    folders.len(),
                    folders.join(", ")
                ),
            )
            .in_file(display_path(entry, "skill"))
            .help("keep one skill folder in skill/; publish other skills with their own entries"),
        );
    }
    folders
        .into_iter()
        .map(|folder| SkillDir {
            entry,
            rel: format!("skill/{folder}"),
            folder: Some(folder),
            standalone: false,
        })
        .collect()
}

/// The `name` of `<rel>/SKILL.md`, when it can be read.
fn declared_name(entry: &EntryDir, rel: &str) -> Option<String> {
    let bytes = acp_registry_core::fs::read_capped(
        &entry.path,
        Path::new(&format!("{rel}/SKILL.md")),
        MAX_SKILL_BYTES,
    )
    .ok()?;
    skill::declared_name(std::str::from_utf8(&bytes).ok()?)
        .filter(|n| skill::name_problem(n).is_none())
}

/// The rules on one skill folder; `files`: its files as read (relative to the folder), `None`
/// when they could not all be read (over the size limit). The skill as published when it can
/// be.
fn check_skill(
    skill: &SkillDir<'_>,
    files: Option<Vec<(String, Vec<u8>)>>,
    sink: &mut Sink,
    sources: &mut Vec<SourceFile>,
) -> Option<CheckedSkill> {
    if let Some(files) = &files {
        checked::check_paths(skill, files, sink);
    }
    let display = skill.display("SKILL.md");
    // Only absence is "no SKILL.md": a link, a folder or an unreadable file is reported by reading.
    if matches!(
        acp_registry_core::fs::kind(&skill.path().join("SKILL.md")),
        Ok(None)
    ) {
        sink.push(
            Diagnostic::new(
                Code::SkillFrontmatter,
                format!("{}/ has no SKILL.md", skill.rel),
            )
            .in_file(display)
            .help(format!(
                "add SKILL.md starting with `---`, `name: {}`, `description: …`, `---`",
                skill.folder.as_deref().unwrap_or(&skill.entry.name)
            )),
        );
        return None;
    }
    let text = read_text(
        &skill.entry.path,
        &format!("{}/SKILL.md", skill.rel),
        &display,
        MAX_SKILL_BYTES,
        sink,
    )?;
    let source = SourceFile::new(display, text);
    let front = frontmatter::check(&source, skill, sink);
    if let Some(front) = &front {
        check_body_length(&source, front.body_start, sink);
    }
    // Every mentioned path is looked up on disk: not worth it when the findings are dropped.
    if sink.keeps(Code::SkillLink) || sink.keeps(Code::SkillReferenceDepth) {
        links::check(&source, skill, sink, sources);
    }
    let published = match (front, files) {
        (Some(front), Some(files)) => checked::checked_skill(skill, &source, &front, files),
        _ => None,
    };
    sources.push(source);
    published
}

fn check_body_length(source: &SourceFile, body_start: usize, sink: &mut Sink) {
    let body = &source.text[body_start..];
    let lines = body.lines().count();
    if lines <= BODY_LINES_MAX {
        return;
    }
    // Point at the first line past the recommendation.
    let past: usize = body
        .split_inclusive('\n')
        .take(BODY_LINES_MAX)
        .map(str::len)
        .sum();
    let at = body_start + past;
    sink.push(
        Diagnostic::new(
            Code::SkillBodyLong,
            format!(
                "the body of SKILL.md has {lines} lines, over the {BODY_LINES_MAX} the Agent Skills specification recommends"
            ),
        )
        .at(source, Span::new(at, at))
        .help("move detailed sections into references/ files linked from SKILL.md; agents read those only when needed"),
    );
}

/// What [`walk`] read: the regular files' total size, and their bytes (`rel` below the entry)
/// while that total stays within [`MAX_SKILL_BYTES`].
#[derive(Default)]
struct Read {
    size: u64,
    files: Vec<(String, Vec<u8>)>,
    /// A file could not be read: the skill's files are incomplete.
    failed: bool,
}

impl Read {
    /// The files below `prefix`, relative to it; `None` when not all of them were read.
    fn files_below(&mut self, prefix: &str, size: u64) -> Option<Vec<(String, Vec<u8>)>> {
        if self.failed || size > MAX_SKILL_BYTES {
            return None;
        }
        let (below, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.files)
            .into_iter()
            .partition(|(rel, _)| rel.starts_with(prefix));
        self.files = rest;
        Some(
            below
                .into_iter()
                .map(|(rel, bytes)| (rel[prefix.len()..].to_owned(), bytes))
                .collect(),
        )
    }
}

/// The regular files under `dir` (`rel` below the entry), each read once (through `fs`,
/// capped) into `read`, reporting links, special files, files and folders that cannot be read;
/// none of them is followed or counted.
fn walk(entry: &EntryDir, dir: &Path, rel: &str, sink: &mut Sink, read: &mut Read) {
    let children = match acp_registry_core::fs::list_dir(dir) {
        Ok(children) => children,
        Err(e) => {
            sink.push(unlistable(&display_path(entry, rel), &e));
            read.failed = true;
            return;
        }
    };
    for child in children {
        let child_rel = format!("{rel}/{}", child.name());
        let path = dir.join(&child.name);
        match child.kind {
            Kind::Dir => walk(entry, &path, &child_rel, sink, read),
            Kind::File => {
                let len = std::fs::symlink_metadata(&path).map_or(0, |m| m.len());
                read.size += len;
                if read.size > MAX_SKILL_BYTES {
                    continue; // `skill-too-large`: nothing more is read.
                }
                let bytes = acp_registry_core::fs::read_capped(
                    &entry.path,
                    Path::new(&child_rel),
                    MAX_SKILL_BYTES,
                );
                match bytes {
                    Ok(bytes) => read.files.push((child_rel, bytes)),
                    Err(e) => {
                        sink.push(read_failure(&e, &display_path(entry, &child_rel)));
                        read.failed = true;
                    }
                }
            }
            kind => {
                if let Some(refused) = refused(kind, &display_path(entry, &child_rel)) {
                    sink.push(refused);
                }
                read.failed = true;
            }
        }
    }
}
