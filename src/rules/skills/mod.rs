//! Skills shipped with an entry (`<id>/skill/<name>/`): the folder's layout, the front matter
//! by the Agent Skills specification, the body, links and size.

mod frontmatter;
mod links;
mod skill_dir;

use std::path::Path;

use super::entry::{display_path, EntryDir};
use super::files::Listing;
use super::read::{read_text, refused, unlistable};
use super::sink::Sink;
use crate::diagnostics::{Code, Diagnostic};
use crate::manifest::skill::{self, BODY_LINES_MAX};
use acp_registry_core::fs::Kind;
use acp_registry_core::source::{SourceFile, Span};
use skill_dir::SkillDir;

pub(crate) use skill_dir::MAX_SKILL_BYTES;

pub(crate) fn check(
    entry: &EntryDir,
    listing: &Listing,
    sink: &mut Sink,
    sources: &mut Vec<SourceFile>,
) {
    if !listing.dirs.contains("skill") {
        return;
    }
    let dir = entry.path.join("skill");
    let size = walk(entry, &dir, "skill", sink);
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
    for skill in layout(entry, &dir, sink) {
        check_skill(&skill, sink, sources);
    }
}

/// The skill rules on one skill folder outside any entry, `root/<name>/` (a skill fetched
/// from someone else's index into a scratch folder, or a plugin's `skills/<name>/`): the same
/// checks as an entry's skill, findings' files relative to `root` (`<name>/SKILL.md`), the
/// files read returned for excerpts.
pub(crate) fn check_skill_folder(
    root: &Path,
    name: &str,
    policy: &super::policy::Policy,
) -> (Vec<Diagnostic>, Vec<SourceFile>) {
    let entry = EntryDir {
        name: name.to_string(),
        path: root.to_path_buf(),
        display: String::new(),
    };
    let mut sink = Sink::new(policy, Some(name.to_string()));
    let mut sources = Vec::new();
    let size = walk(&entry, &root.join(name), name, &mut sink);
    if size > MAX_SKILL_BYTES {
        sink.push(
            Diagnostic::new(
                Code::SkillTooLarge,
                format!("{name}/ holds {size} bytes, over the 1 MiB limit"),
            )
            .in_file(name)
            .help("move large assets out of the skill"),
        );
    }
    let skill = SkillDir {
        entry: &entry,
        rel: name.to_string(),
        folder: Some(name.to_string()),
    };
    check_skill(&skill, &mut sink, &mut sources);
    (sink.diagnostics, sources)
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

fn check_skill(skill: &SkillDir<'_>, sink: &mut Sink, sources: &mut Vec<SourceFile>) {
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
        return;
    }
    let Some(text) = read_text(
        &skill.entry.path,
        &format!("{}/SKILL.md", skill.rel),
        &display,
        MAX_SKILL_BYTES,
        sink,
    ) else {
        return;
    };
    let source = SourceFile::new(display, text);
    if let Some(body_start) = frontmatter::check(&source, skill, sink) {
        check_body_length(&source, body_start, sink);
    }
    // Every mentioned path is looked up on disk: not worth it when the findings are dropped.
    if sink.keeps(Code::SkillLink) || sink.keeps(Code::SkillReferenceDepth) {
        links::check(&source, skill, sink, sources);
    }
    sources.push(source);
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

/// The bytes of the regular files under `dir` (`rel` below the entry), reporting links,
/// special files and folders that cannot be listed; none of them is followed or counted.
fn walk(entry: &EntryDir, dir: &Path, rel: &str, sink: &mut Sink) -> u64 {
    let children = match acp_registry_core::fs::list_dir(dir) {
        Ok(children) => children,
        Err(e) => {
            sink.push(unlistable(&display_path(entry, rel), &e));
            return 0;
        }
    };
    let mut size = 0;
    for child in children {
        let child_rel = format!("{rel}/{}", child.name());
        let path = dir.join(&child.name);
        match child.kind {
            Kind::Dir => size += walk(entry, &path, &child_rel, sink),
            Kind::File => size += std::fs::symlink_metadata(&path).map_or(0, |m| m.len()),
            kind => {
                if let Some(refused) = refused(kind, &display_path(entry, &child_rel)) {
                    sink.push(refused);
                }
            }
        }
    }
    size
}
