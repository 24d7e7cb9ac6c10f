//! `skill uninstall` (only what an install recorded, never a folder it did not write) and
//! `skill list` (every copy of the skill a known client scans, and its state).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::bundle::{folder_name, ENGINE_VERSION, MARKER};
use super::clients::{agent, seen_by, targets, Roots, Scope};
use super::record::{checked_targets, inspect, io, read_tree, Found};
use crate::error::CollabError;
use acp_registry_core::fs::Kind;

/// The `skill uninstall` flags.
#[derive(Debug, Clone)]
pub(crate) struct UninstallOptions {
    /// `--agent`.
    pub agent: String,
    /// `--global` or `--project`.
    pub scope: Scope,
    /// The home and project folders.
    pub roots: Roots,
    /// `--force`: also remove an install of ours edited since (its recorded files only).
    pub force: bool,
    /// `--follow-links`: follow links above the skill folder (never at it or inside it).
    pub follow_links: bool,
}

/// What an uninstall did to one folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Removal {
    /// The folder is gone.
    Removed,
    /// Nothing was installed there.
    NotInstalled,
    /// The recorded files are gone; these others, not written by an install, were kept.
    Kept(Vec<String>),
}

/// Removes what an install wrote for one agent; every target is checked first, and a
/// folder without an install record is never touched.
pub(crate) fn uninstall(opts: &UninstallOptions) -> Result<Vec<(PathBuf, Removal)>, CollabError> {
    let agent = agent(&opts.agent)?;
    let dirs = targets(agent, opts.scope, &opts.roots)?;
    let root = opts.roots.base(opts.scope)?;
    let real: Vec<PathBuf> = checked_targets(root, &dirs, opts.follow_links)?
        .into_iter()
        .map(|(_, at)| at)
        .collect();
    for dir in &real {
        match inspect(dir)? {
            Found::Absent | Found::Ours { .. } => {}
            Found::Modified if opts.force => {}
            Found::Modified => return Err(CollabError::EditedInstall(dir.clone())),
            Found::Foreign | Found::NotAFolder => {
                return Err(CollabError::ForeignInstall(dir.clone()))
            }
        }
    }
    dirs.into_iter()
        .zip(real)
        .map(|(dir, at)| {
            let removal = remove_recorded(&at)?;
            Ok((dir, removal))
        })
        .collect()
}

/// Deletes the files the record lists (and the record), then the folders left empty.
fn remove_recorded(dir: &Path) -> Result<Removal, CollabError> {
    if acp_registry_core::fs::kind(dir)
        .map_err(|e| io(dir, e))?
        .is_none()
    {
        return Ok(Removal::NotInstalled);
    }
    let current = read_tree(dir)?;
    let record: Value = current
        .get(MARKER)
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or_default();
    let listed = record.get("files").and_then(Value::as_object);
    let mut kept = Vec::new();
    for path in current.keys() {
        if path == MARKER || listed.is_some_and(|l| l.contains_key(path)) {
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
fn prune_empty(dir: &Path) -> Result<(), CollabError> {
    for child in acp_registry_core::fs::list_dir(dir).map_err(|e| io(dir, e))? {
        if child.kind == Kind::Dir {
            prune_empty(&dir.join(child.name()))?;
        }
    }
    if acp_registry_core::fs::list_dir(dir)
        .map_err(|e| io(dir, e))?
        .is_empty()
    {
        std::fs::remove_dir(dir).map_err(|e| io(dir, e))?;
    }
    Ok(())
}

/// One skill folder `skill list` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    /// The skill folder.
    pub dir: PathBuf,
    /// Who wrote it.
    pub found: Found,
    /// The clients scanning the folder holding it, sorted.
    pub seen_by: Vec<&'static str>,
}

/// Every folder named like the skill in a folder some client scans, sorted by path.
pub(crate) fn list(roots: &Roots) -> Result<Vec<Listed>, CollabError> {
    let scanned = roots.scanned();
    let mut out = Vec::new();
    for folder in scanned.keys() {
        let dir = folder.join(folder_name());
        let found = inspect(&dir)?;
        if found != Found::Absent {
            out.push(Listed {
                seen_by: seen_by(&scanned, &dir),
                dir,
                found,
            });
        }
    }
    Ok(out)
}

impl Listed {
    /// The state line of `skill list`.
    pub(crate) fn state(&self) -> String {
        match &self.found {
            Found::Ours { current: true, .. } => "current".to_owned(),
            Found::Ours { version, .. } => format!(
                "outdated: installed by acp-collab {}, this is {ENGINE_VERSION}; \
                 `acp-collab skill install` updates it",
                version.as_deref().unwrap_or("(an earlier version)")
            ),
            Found::Modified => {
                "edited since it was installed (`skill install --force` replaces it)".to_owned()
            }
            Found::Foreign | Found::NotAFolder => {
                "not written by acp-collab skill install".to_owned()
            }
            Found::Absent => "absent".to_owned(),
        }
    }

    /// The engine line of `skill list`, when the folder is an install of ours.
    pub(crate) fn engine(&self) -> Option<String> {
        let Found::Ours {
            version, binary, ..
        } = &self.found
        else {
            return None;
        };
        let binary = binary.as_ref()?;
        let missing = if binary.is_file() { "" } else { " (missing)" };
        Some(format!(
            "scripts run {}{missing}, acp-collab {}",
            binary.display(),
            version.as_deref().unwrap_or("of an unrecorded version")
        ))
    }
}
