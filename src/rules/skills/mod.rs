//! Skills shipped with an entry (`<id>/skill/<name>/`) and stand-alone skills
//! (`skills/<name>/`, `standalone`): the folder's layout, the front matter by the Agent Skills
//! specification, the body, links, paths and size. Each skill's files are read once here and
//! kept ([`CheckedSkill`]) for `build`.

pub(super) mod checked;
mod folder;
mod frontmatter;
mod links;
mod skill_dir;
mod standalone;
mod walk;

use std::path::Path;

use super::entry::{display_path, EntryDir};
use super::files::Listing;
use super::sink::Sink;
use crate::diagnostics::{Code, Diagnostic};
use crate::manifest::skill;
use acp_registry_core::fs::Kind;
use acp_registry_core::source::SourceFile;
use folder::check_skill;
use skill_dir::SkillDir;
use walk::{walk, Read};

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
        let paths = read.paths_below(&prefix);
        let files = read.files_below(&prefix, size);
        skills.extend(check_skill(&skill, &paths, files, sink, sources));
    }
    skills
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
    let dir = EntryDir {
        name: name.to_string(),
        path: root.to_path_buf(),
        display: String::new(),
    };
    let report = standalone::check_one(&dir, name, policy);
    (report.diagnostics, report.sources)
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
