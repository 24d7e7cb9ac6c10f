//! `skill install`: the skill checked (name, paths), every target folder checked before any is
//! written, then what each client will see, and a warning for each other skill of the same
//! name one of them also scans.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::clients::{agent, owner, seen_by, targets, uninstall_command, Target};
use super::error::SkillInstallError;
use super::names::{is_safe_file_path, is_skill_name};
use super::record::{
    checked_targets, classify, inspect, read_tree, with_record, write_tree, Found, RECORD_FILE,
};
use crate::fs::Kind;

/// A skill to install: its name (the folder's), its files and what the record says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The skill's name ([`is_skill_name`](super::is_skill_name)): the installed folder's name.
    pub name: String,
    /// Every file, by path below the skill folder ([`is_safe_file_path`](super::is_safe_file_path)).
    pub files: BTreeMap<String, Vec<u8>>,
    /// The paths of `files` written executable (mode 755).
    pub executable: BTreeSet<String>,
    /// What the record adds about the install (where the skill came from, its digest, the
    /// engine), written after `format` and `skill`, before `files`.
    pub about: serde_json::Map<String, Value>,
}

impl Skill {
    /// A skill whose `scripts/…` files are executable, the Agent Skills convention.
    #[must_use]
    pub fn new(name: &str, files: BTreeMap<String, Vec<u8>>) -> Skill {
        let executable = files
            .keys()
            .filter(|p| p.starts_with("scripts/"))
            .cloned()
            .collect();
        Skill {
            name: name.to_owned(),
            files,
            executable,
            about: serde_json::Map::new(),
        }
    }

    fn check(&self) -> Result<(), SkillInstallError> {
        if !is_skill_name(&self.name) {
            return Err(SkillInstallError::BadName(
                crate::escape::terminal(&self.name).into_owned(),
            ));
        }
        for path in self.files.keys() {
            let why = if !is_safe_file_path(path) {
                "the path could leave the skill folder"
            } else if path == RECORD_FILE {
                "it is the install record's name"
            } else if self
                .files
                .keys()
                .any(|p| path.starts_with(&format!("{p}/")))
            {
                "another file has its folder's name"
            } else {
                continue;
            };
            return Err(SkillInstallError::BadFile {
                name: self.name.clone(),
                path: crate::escape::terminal(path).into_owned(),
                why,
            });
        }
        Ok(())
    }
}

/// What an install did to one folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Written where nothing was.
    Installed,
    /// An earlier install (another version or source) replaced.
    Updated,
    /// Already exactly this install.
    Unchanged,
    /// A folder not written by an install replaced (`--force`).
    Replaced,
}

/// One installed skill folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The skill folder.
    pub dir: PathBuf,
    /// What happened to it.
    pub outcome: Outcome,
    /// The clients that scan the folder holding it, sorted.
    pub seen_by: Vec<&'static str>,
}

/// What an install did, and what clients will find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    /// The folders written (or found already written), in the agent's order.
    pub placed: Vec<Placed>,
    /// Other skills of the same name that a client seeing this install also scans.
    pub warnings: Vec<String>,
}

/// Installs `skill` for one agent: the skill and every target are checked before any folder
/// is removed or written.
///
/// # Errors
/// A bad name or path, an unknown agent, a link on the way, a folder in the way (without
/// `--force`), or a failed read or write.
pub fn install(skill: &Skill, target: &Target) -> Result<InstallReport, SkillInstallError> {
    skill.check()?;
    let agent = agent(&target.agent)?;
    let dirs = targets(agent, target.scope, &target.roots, &skill.name)?;
    let root = target.roots.base(target.scope)?;
    // Every link is refused before anything is removed or written (`--force` included).
    let real = checked_targets(root, &dirs, target.follow_links, target.tool)?;
    let files = with_record(&skill.name, &skill.files, &skill.about);
    let mut plan = Vec::new();
    for dir in &real {
        // Two targets reached through links may be one folder: it is planned once.
        let first = !plan.iter().any(|(seen, _)| seen == &dir.1);
        let outcome = if first {
            plan_one(&dir.1, &files, target)?
        } else {
            Outcome::Unchanged
        };
        plan.push((dir.1.clone(), outcome));
    }
    for ((base, at), (_, outcome)) in real.iter().zip(&plan) {
        if *outcome != Outcome::Unchanged {
            clear(at)?;
            write_tree(base, at, &files, &skill.executable, target.tool)?;
        }
    }
    let scanned = target.roots.scanned();
    let placed: Vec<Placed> = dirs
        .into_iter()
        .zip(plan)
        .map(|(dir, (_, outcome))| Placed {
            seen_by: seen_by(&scanned, &dir),
            dir,
            outcome,
        })
        .collect();
    let warnings = shadowing(target, &scanned, &placed, &skill.name)?;
    Ok(InstallReport { placed, warnings })
}

/// What installing into `dir` will do; nothing is removed yet.
fn plan_one(
    dir: &Path,
    files: &BTreeMap<String, Vec<u8>>,
    target: &Target,
) -> Result<Outcome, SkillInstallError> {
    let refuse = |what: String| SkillInstallError::InTheWay {
        dir: dir.to_path_buf(),
        what,
    };
    let force = target.force;
    match crate::fs::kind(dir).map_err(|e| SkillInstallError::io(dir, e))? {
        None => Ok(Outcome::Installed),
        Some(Kind::Dir) => {
            let current = read_tree(dir)?;
            if &current == files {
                return Ok(Outcome::Unchanged);
            }
            match classify(current) {
                Found::Ours { .. } => Ok(Outcome::Updated),
                Found::Modified if force => Ok(Outcome::Updated),
                _ if force => Ok(Outcome::Replaced),
                Found::Modified => Err(refuse("is an install of this skill edited since".into())),
                _ => Err(refuse(format!(
                    "holds a different skill (not written by {} install)",
                    target.tool
                ))),
            }
        }
        Some(_) if force => Ok(Outcome::Replaced),
        Some(_) => Err(refuse("exists and is not a folder".into())),
    }
}

/// Removes what is at `dir` (checked by `plan_one` and for links), so the new files go in.
fn clear(dir: &Path) -> Result<(), SkillInstallError> {
    let io = |e| SkillInstallError::io(dir, e);
    match crate::fs::kind(dir).map_err(io)? {
        None => Ok(()),
        Some(Kind::Dir) => std::fs::remove_dir_all(dir).map_err(io),
        Some(_) => std::fs::remove_file(dir).map_err(io),
    }
}

/// A warning for every other folder of the same name that a client seeing `placed` scans,
/// ending with the command that removes it (or, for a folder no install wrote, this install).
fn shadowing(
    target: &Target,
    scanned: &BTreeMap<PathBuf, Vec<&'static str>>,
    placed: &[Placed],
    name: &str,
) -> Result<Vec<String>, SkillInstallError> {
    let ours: Vec<&Path> = placed.iter().map(|p| p.dir.as_path()).collect();
    // The files the install listed: a copy listing the same ones (any source) is identical.
    let listed = |found: &Found| match found {
        Found::Ours { record, .. } => record.get("files").cloned(),
        _ => None,
    };
    let ours_listed = match placed.first() {
        Some(p) => listed(&inspect(&p.dir)?),
        None => None,
    };
    let mut warnings = Vec::new();
    for (folder, clients) in scanned {
        let dir = folder.join(name);
        if ours.contains(&dir.as_path()) {
            continue;
        }
        let affected: Vec<&str> = clients
            .iter()
            .copied()
            .filter(|c| placed.iter().any(|p| p.seen_by.contains(c)))
            .collect();
        if affected.is_empty() {
            continue;
        }
        let found = inspect(&dir)?;
        let what = match &found {
            Found::Absent => continue,
            found @ Found::Ours { .. } if listed(found) == ours_listed => {
                "an identical copy of this skill"
            }
            Found::Ours { .. } => "an older install of this skill",
            Found::Modified => "a hand-edited install of this skill",
            Found::Foreign | Found::NotAFolder => "another skill",
        };
        warnings.push(format!(
            "{} also scan{} {}, which holds {what} named {name}: one shadows the other; {}",
            affected.join(", "),
            if affected.len() == 1 { "s" } else { "" },
            dir.display(),
            removal(target, &found, &dir, name),
        ));
    }
    Ok(warnings)
}

/// How to end a shadowing: the `uninstall` that removes the other copy when an install wrote
/// it, else (no install of ours wrote it, so `uninstall` leaves it) by hand or this install's.
fn removal(target: &Target, found: &Found, dir: &Path, name: &str) -> String {
    let this_install = || {
        agent(&target.agent).map_or_else(
            |_| format!("{} uninstall", target.tool),
            |agent| uninstall_command(target, agent, target.scope, name),
        )
    };
    match (found, owner(dir, &target.roots, name)) {
        (Found::Ours { .. }, Some((agent, scope))) => format!(
            "remove that copy with: {}",
            uninstall_command(target, agent, scope, name)
        ),
        (Found::Modified, Some((agent, scope))) => format!(
            "remove that copy's installed files (its other files are kept) with: {} --force",
            uninstall_command(target, agent, scope, name)
        ),
        _ => format!(
            "{} install did not write that copy, so rename or remove it yourself, or remove \
             this install with: {}",
            target.tool,
            this_install()
        ),
    }
}
