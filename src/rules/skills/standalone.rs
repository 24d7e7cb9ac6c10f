//! Stand-alone skills: `<root>/skills/<name>/`, skills that belong to no agent, each checked
//! by the same rules as an agent's skill (docs/format.md#stand-alone-skills). `skills/` holds
//! only skill folders: a file, a link or a special file in it is a finding with its fix.

use std::path::Path;

use rayon::prelude::*;

use super::checked::CheckedSkill;
use super::folder::check_skill;
use super::skill_dir::{SkillDir, MAX_SKILL_BYTES};
use super::walk::{walk, Read};
use crate::diagnostics::{Code, Diagnostic};
use crate::rules::entry::{display_path, EntryDir};
use crate::rules::policy::Policy;
use crate::rules::read::{refused, unlistable};
use crate::rules::sink::Sink;
use acp_registry_core::fs::Kind;
use acp_registry_core::source::SourceFile;

/// The folder of stand-alone skills at the registry root (never an entry).
pub(crate) const SKILLS_DIR: &str = "skills";

/// What the rules found in one folder of `skills/`.
#[derive(Debug, Clone)]
pub(crate) struct SkillReport {
    /// The folder's name below `skills/`.
    pub(crate) folder: String,
    /// The skill as published, when it can be.
    pub(crate) skill: Option<CheckedSkill>,
    /// Its findings, policy applied.
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// The files read, for excerpts.
    pub(crate) sources: Vec<SourceFile>,
}

/// The rules on every folder of `<root>/skills/` (in parallel, reports in name order), and the
/// findings about `skills/` itself (stray files, links). Nothing when there is no `skills/`.
pub(crate) fn check_standalone(
    root: &Path,
    policy: &Policy,
) -> (Vec<SkillReport>, Vec<Diagnostic>) {
    let dir = EntryDir {
        name: SKILLS_DIR.into(),
        path: root.join(SKILLS_DIR),
        display: SKILLS_DIR.into(),
    };
    let mut sink = Sink::new(policy, None);
    if !matches!(acp_registry_core::fs::kind(&dir.path), Ok(Some(Kind::Dir))) {
        return (Vec::new(), Vec::new());
    }
    let children = match acp_registry_core::fs::list_dir(&dir.path) {
        Ok(children) => children,
        Err(e) => {
            sink.push(unlistable(SKILLS_DIR, &e));
            return (Vec::new(), sink.diagnostics);
        }
    };
    let mut folders = Vec::new();
    for child in children {
        let name = child.name();
        let shown = format!("{SKILLS_DIR}/{name}");
        match child.kind {
            Kind::Dir => folders.push(name),
            Kind::File => sink.push(
                Diagnostic::new(
                    Code::SkillLayout,
                    format!("`{shown}` is a file; skills/ holds only skill folders"),
                )
                .in_file(&shown)
                .help("move it into a skill's folder (skills/<name>/), or remove it"),
            ),
            kind => {
                if let Some(finding) = refused(kind, &shown) {
                    sink.push(finding);
                }
            }
        }
    }
    let reports = folders
        .par_iter()
        .map(|folder| check_one(&dir, folder, policy))
        .collect();
    (reports, sink.diagnostics)
}

/// The rules on `<dir>/<folder>/` (`skills/<folder>/`, or a skill fetched into a scratch
/// folder), findings' files shown below `dir`'s display path.
pub(super) fn check_one(dir: &EntryDir, folder: &str, policy: &Policy) -> SkillReport {
    let mut sink = Sink::new(policy, None);
    let mut sources = Vec::new();
    let mut read = Read::default();
    walk(dir, &dir.path.join(folder), folder, &mut sink, &mut read);
    let size = read.size;
    if size > MAX_SKILL_BYTES {
        sink.push(
            Diagnostic::new(
                Code::SkillTooLarge,
                format!(
                    "{}/ holds {size} bytes, over the 1 MiB limit",
                    display_path(dir, folder)
                ),
            )
            .in_file(display_path(dir, folder))
            .help("move large assets out of the skill; every client downloads all of it"),
        );
    }
    let skill = SkillDir {
        entry: dir,
        rel: folder.to_owned(),
        folder: Some(folder.to_owned()),
        standalone: true,
    };
    let prefix = format!("{folder}/");
    let paths = read.paths_below(&prefix);
    let files = read.files_below(&prefix, size);
    let skill = check_skill(&skill, &paths, files, &mut sink, &mut sources);
    SkillReport {
        folder: folder.to_owned(),
        skill,
        diagnostics: sink.diagnostics,
        sources,
    }
}
