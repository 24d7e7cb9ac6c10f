//! `skill install`: every target folder checked before any is written, then what each client
//! will see, and a warning for each other skill of the same name one of them also scans.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::bundle::folder_name;
use super::clients::{agent, seen_by, targets, Roots, Scope};
use super::record::{
    checked_targets, classify, inspect, install_files, io, read_tree, write_tree, Found,
};
use crate::error::CollabError;
use acp_registry_core::fs::Kind;

/// The `skill install` flags.
#[derive(Debug, Clone)]
pub(crate) struct InstallOptions {
    /// `--agent`.
    pub agent: String,
    /// `--global` or `--project`.
    pub scope: Scope,
    /// The home and project folders.
    pub roots: Roots,
    /// The `acp-collab` the launchers will run.
    pub binary: PathBuf,
    /// `--force`: replace a hand-edited install, or a folder not written by an install.
    pub force: bool,
    /// `--follow-links`: follow links above the skill folder (never at it or inside it).
    pub follow_links: bool,
}

/// What an install did to one folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Written where nothing was.
    Installed,
    /// An earlier install of ours (another version or binary) replaced.
    Updated,
    /// Already exactly this install.
    Unchanged,
    /// A folder not written by an install replaced (`--force`).
    Replaced,
}

/// One installed skill folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placed {
    /// The skill folder.
    pub dir: PathBuf,
    /// What happened to it.
    pub outcome: Outcome,
    /// The clients that scan the folder holding it, sorted.
    pub seen_by: Vec<&'static str>,
}

/// What an install did, and what clients will find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InstallReport {
    /// The folders written (or found already written), in the agent's order.
    pub placed: Vec<Placed>,
    /// Other skills of the same name that a client seeing this install also scans.
    pub warnings: Vec<String>,
}

/// Installs the skill for one agent: every target is checked before any is written.
pub(crate) fn install(opts: &InstallOptions) -> Result<InstallReport, CollabError> {
    let agent = agent(&opts.agent)?;
    let dirs = targets(agent, opts.scope, &opts.roots)?;
    let root = opts.roots.base(opts.scope)?;
    // Every link is refused before anything is removed or written (`--force` included).
    let real = checked_targets(root, &dirs, opts.follow_links)?;
    let files = install_files(&opts.binary);
    let mut plan = Vec::new();
    for (dir, (base, at)) in dirs.iter().zip(&real) {
        // Two targets reached through links may be one folder: it is written once.
        let first = !plan.iter().any(|(_, _, seen, _)| seen == &at);
        let outcome = if first {
            plan_one(at, &files, opts.force)?
        } else {
            Outcome::Unchanged
        };
        plan.push((dir, base, at, outcome));
    }
    for (_, base, at, outcome) in &plan {
        if *outcome != Outcome::Unchanged {
            write_tree(base, at, &files)?;
        }
    }
    let scanned = opts.roots.scanned();
    let placed: Vec<Placed> = plan
        .into_iter()
        .map(|(dir, _, _, outcome)| Placed {
            seen_by: seen_by(&scanned, dir),
            dir: dir.clone(),
            outcome,
        })
        .collect();
    let warnings = shadowing(&scanned, &placed)?;
    Ok(InstallReport { placed, warnings })
}

/// What installing into `dir` will do; clears the way when it may replace what is there.
fn plan_one(
    dir: &Path,
    files: &BTreeMap<String, Vec<u8>>,
    force: bool,
) -> Result<Outcome, CollabError> {
    let refuse = |what| CollabError::InTheWay {
        dir: dir.to_path_buf(),
        what,
    };
    match acp_registry_core::fs::kind(dir).map_err(|e| io(dir, e))? {
        None => Ok(Outcome::Installed),
        Some(Kind::Dir) => {
            let current = read_tree(dir)?;
            if &current == files {
                return Ok(Outcome::Unchanged);
            }
            let outcome = match classify(&current) {
                Found::Ours { .. } => Outcome::Updated,
                Found::Modified if force => Outcome::Updated,
                _ if force => Outcome::Replaced,
                Found::Modified => return Err(refuse("is an install of this skill edited since")),
                _ => {
                    return Err(refuse(
                        "holds a different skill (not written by acp-collab skill install)",
                    ))
                }
            };
            std::fs::remove_dir_all(dir).map_err(|e| io(dir, e))?;
            Ok(outcome)
        }
        Some(_) if force => {
            std::fs::remove_file(dir).map_err(|e| io(dir, e))?;
            Ok(Outcome::Replaced)
        }
        Some(_) => Err(refuse("exists and is not a folder")),
    }
}

/// A warning for every other folder of the same name that a client seeing `placed` scans.
fn shadowing(
    scanned: &BTreeMap<PathBuf, Vec<&'static str>>,
    placed: &[Placed],
) -> Result<Vec<String>, CollabError> {
    let ours: Vec<&Path> = placed.iter().map(|p| p.dir.as_path()).collect();
    let mut warnings = Vec::new();
    for (folder, clients) in scanned {
        let dir = folder.join(folder_name());
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
        let what = match inspect(&dir)? {
            Found::Absent => continue,
            Found::Ours { current: true, .. } => "an identical copy of this skill",
            Found::Ours { .. } => "an older install of this skill",
            Found::Modified => "a hand-edited install of this skill",
            Found::Foreign | Found::NotAFolder => "another skill",
        };
        warnings.push(format!(
            "{} also scan{} {}, which holds {what} named {}: one shadows the other; \
             remove one of them",
            affected.join(", "),
            if affected.len() == 1 { "s" } else { "" },
            dir.display(),
            folder_name()
        ));
    }
    Ok(warnings)
}
