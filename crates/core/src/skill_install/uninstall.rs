//! `skill uninstall` (only what an install recorded, never a folder it did not write) and
//! `skill list` (every copy of a skill a known client scans, and who wrote it).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::clients::{agent, seen_by, targets, Roots, Target};
use super::error::SkillInstallError;
use super::names::is_skill_name;
use super::record::{checked_targets, inspect, read_tree, Found, RECORD_FILE};
use crate::fs::Kind;

fn io(path: &Path, e: impl std::fmt::Display) -> SkillInstallError {
    SkillInstallError::io(path, e)
}

/// What an uninstall did to one folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// The folder is gone.
    Removed,
    /// Nothing was installed there.
    NotInstalled,
    /// The recorded files are gone; these others, not written by an install, were kept.
    Kept(Vec<String>),
}

/// Removes what an install wrote of the skill `name` for one agent; every target is checked
/// first, and a folder without an install record is never touched.
///
/// # Errors
/// A bad name, an unknown agent, a link on the way, an edited install (without `--force`), a
/// folder no install wrote, or a failed read or removal.
pub fn uninstall(name: &str, opts: &Target) -> Result<Vec<(PathBuf, Removal)>, SkillInstallError> {
    if !is_skill_name(name) {
        return Err(SkillInstallError::BadName(
            crate::escape::terminal(name).into_owned(),
        ));
    }
    let agent = agent(&opts.agent)?;
    let dirs = targets(agent, opts.scope, &opts.roots, name)?;
    let root = opts.roots.base(opts.scope)?;
    let real: Vec<PathBuf> = checked_targets(root, &dirs, opts.follow_links, opts.tool)?
        .into_iter()
        .map(|(_, at)| at)
        .collect();
    for dir in &real {
        match inspect(dir)? {
            Found::Absent | Found::Ours { .. } => {}
            Found::Modified if opts.force => {}
            Found::Modified => return Err(SkillInstallError::EditedInstall(dir.clone())),
            Found::Foreign | Found::NotAFolder => {
                return Err(SkillInstallError::ForeignInstall {
                    dir: dir.clone(),
                    tool: opts.tool,
                })
            }
        }
    }
    dirs.into_iter()
        .zip(real)
        .map(|(dir, at)| {
            let removal = remove_recorded_files(&at)?;
            Ok((dir, removal))
        })
        .collect()
}

/// Deletes the files the record lists (and the record), then the folders left empty.
fn remove_recorded_files(dir: &Path) -> Result<Removal, SkillInstallError> {
    if crate::fs::kind(dir).map_err(|e| io(dir, e))?.is_none() {
        return Ok(Removal::NotInstalled);
    }
    let current = read_tree(dir)?;
    let record: Value = current
        .get(RECORD_FILE)
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or_default();
    let listed = record.get("files").and_then(Value::as_object);
    let mut kept = Vec::new();
    for path in current.keys() {
        if path == RECORD_FILE || listed.is_some_and(|l| l.contains_key(path)) {
            std::fs::remove_file(dir.join(path)).map_err(|e| io(dir, e))?;
        } else {
            kept.push(path.clone());
        }
    }
    prune_empty(dir)?;
    Ok(if kept.is_empty() {
        Removal::Removed
    } else {
        Removal::Kept(kept)
    })
}

/// Removes `dir` and the folders below it that are empty, deepest first.
fn prune_empty(dir: &Path) -> Result<(), SkillInstallError> {
    for child in crate::fs::list_dir(dir).map_err(|e| io(dir, e))? {
        if child.kind == Kind::Dir {
            prune_empty(&dir.join(child.name()))?;
        }
    }
    if crate::fs::list_dir(dir).map_err(|e| io(dir, e))?.is_empty() {
        std::fs::remove_dir(dir).map_err(|e| io(dir, e))?;
    }
    Ok(())
}

/// One skill folder `skill list` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The skill folder (its name is the skill's).
    pub dir: PathBuf,
    /// Who wrote it.
    pub found: Found,
    /// The clients scanning the folder holding it, sorted.
    pub seen_by: Vec<&'static str>,
}

/// The skill folders in every folder some client scans, sorted by path: with `name`, every
/// folder of that name (whoever wrote it); without, every folder an install wrote (its
/// record found, edited since or not).
///
/// # Errors
/// [`SkillInstallError::Install`] when a folder cannot be read.
pub fn list(roots: &Roots, name: Option<&str>) -> Result<Vec<Listed>, SkillInstallError> {
    let scanned = roots.scanned();
    let mut out = Vec::new();
    for folder in scanned.keys() {
        let names = match name {
            Some(name) => vec![name.to_owned()],
            None => recorded_children(folder)?,
        };
        for name in names {
            let dir = folder.join(name);
            let found = inspect(&dir)?;
            if found != Found::Absent {
                out.push(Listed {
                    seen_by: seen_by(&scanned, &dir),
                    dir,
                    found,
                });
            }
        }
    }
    Ok(out)
}

/// The folders below `folder` (a skills folder) named like a skill and holding a record.
fn recorded_children(folder: &Path) -> Result<Vec<String>, SkillInstallError> {
    if crate::fs::kind(folder).map_err(|e| io(folder, e))? != Some(Kind::Dir) {
        return Ok(Vec::new());
    }
    let mut names = Vec::new();
    for child in crate::fs::list_dir(folder).map_err(|e| io(folder, e))? {
        let name = child.name();
        let record = folder.join(&name).join(RECORD_FILE);
        if child.kind == Kind::Dir
            && is_skill_name(&name)
            && crate::fs::kind(&record).map_err(|e| io(&record, e))? == Some(Kind::File)
        {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use super::*;
    use crate::skill_install::clients::Scope;
    use crate::skill_install::install::{install, Outcome, Skill};

    fn target(project: &Path) -> Target {
        Target {
            agent: "codex".into(),
            scope: Scope::Project,
            roots: Roots {
                home: None,
                project: project.to_path_buf(),
            },
            force: false,
            follow_links: false,
            tool: "test skill",
            uninstall_names_skill: true,
        }
    }

    #[test]
    fn any_skill_installs_with_its_record_and_a_path_that_climbs_is_refused_first() {
        let tmp = tempfile::tempdir().unwrap();
        let files = BTreeMap::from([
            ("SKILL.md".to_owned(), b"---\nname: pdf\n---\n".to_vec()),
            ("scripts/x.sh".to_owned(), b"echo\n".to_vec()),
        ]);
        let mut skill = Skill::new("pdf", files.clone());
        skill
            .about
            .insert("source".into(), serde_json::json!({"from": "here"}));
        let report = install(&skill, &target(tmp.path())).unwrap();
        assert_eq!(report.placed[0].outcome, Outcome::Installed);
        let dir = tmp.path().join(".agents/skills/pdf");
        let Found::Ours { record, .. } = inspect(&dir).unwrap() else {
            panic!("not recognised as an install");
        };
        assert_eq!(record["source"]["from"], "here");
        let again = install(&skill, &target(tmp.path())).unwrap();
        assert_eq!(again.placed[0].outcome, Outcome::Unchanged);

        for bad in ["../evil", RECORD_FILE, "SKILL.md/x"] {
            let mut hostile = files.clone();
            hostile.insert(bad.into(), Vec::new());
            let err = install(&Skill::new("pdf", hostile), &target(tmp.path())).unwrap_err();
            assert!(
                matches!(err, SkillInstallError::BadFile { .. }),
                "{bad}: {err}"
            );
        }
        assert!(matches!(
            install(&Skill::new("../pdf", files), &target(tmp.path())),
            Err(SkillInstallError::BadName(_))
        ));
        assert!(!tmp.path().join("evil").exists());
        assert_eq!(
            uninstall("pdf", &target(tmp.path())).unwrap()[0].1,
            Removal::Removed
        );
    }
}
