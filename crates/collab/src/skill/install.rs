//! The bundled skill through the core's installer (`acp_registry_core::skill_install`):
//! the files an install writes (the skill, the launchers' pointer, the engine in the record),
//! and what `skill list` says of each copy (current or outdated, the engine it runs).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::bundle::{folder_name, skill_tree, ENGINE_VERSION, POINTER};
use crate::error::CollabError;
use acp_registry_core::skill_install::{
    self as core, Found, InstallReport, Listed, Removal, Target,
};

/// The command group the installer's messages name.
pub(crate) const TOOL: &str = "acp-collab skill";

/// The bundled skill as the installer takes it: its files, the pointer to `binary`, and the
/// engine (version and binary) in the record.
fn bundled(binary: &Path) -> core::Skill {
    let mut files = skill_tree();
    files.insert(
        POINTER.into(),
        format!("{}\n", binary.display()).into_bytes(),
    );
    let mut skill = core::Skill::new(folder_name(), files);
    skill.about.insert(
        "engine".into(),
        json!({"version": ENGINE_VERSION, "binary": binary.display().to_string()}),
    );
    skill
}

/// Installs the bundled skill, its launchers running `binary`.
pub(crate) fn install(binary: &Path, target: &Target) -> Result<InstallReport, CollabError> {
    Ok(core::install(&bundled(binary), target)?)
}

/// Removes what an install of the bundled skill wrote.
pub(crate) fn uninstall(target: &Target) -> Result<Vec<(PathBuf, Removal)>, CollabError> {
    Ok(core::uninstall(folder_name(), target)?)
}

/// Every copy of the bundled skill a known client scans.
pub(crate) fn list(roots: &core::Roots) -> Result<Vec<Listed>, CollabError> {
    Ok(core::list(roots, Some(folder_name()))?)
}

/// Of an install of ours: whether its skill files are this engine's, the engine version its
/// record names and the binary its launchers run.
fn ours(found: &Found) -> Option<(bool, Option<String>, Option<PathBuf>)> {
    let Found::Ours { record, files } = found else {
        return None;
    };
    let skill = skill_tree();
    let current =
        skill.iter().all(|(p, b)| files.get(p) == Some(b)) && files.len() == skill.len() + 2;
    let engine = record.get("engine");
    let text = |key: &str| engine.and_then(|e| e.get(key)).and_then(Value::as_str);
    let pointer = files
        .get(POINTER)
        .map(|b| String::from_utf8_lossy(b).trim().to_owned());
    let binary = text("binary")
        .map(str::to_owned)
        .or(pointer)
        .map(PathBuf::from);
    Some((current, text("version").map(str::to_owned), binary))
}

/// The state line of `skill list`.
pub(crate) fn state(item: &Listed) -> String {
    if let Found::Ours { record, .. } = &item.found {
        if record.get("engine").is_none() {
            // Written by another tool through the same installer (`acp-registry skill install`).
            let by = record
                .get("installed_by")
                .and_then(Value::as_str)
                .unwrap_or("another tool");
            return format!(
                "installed by {}, without this engine's launchers; `acp-collab skill install` replaces it",
                acp_registry_core::escape::terminal(by)
            );
        }
    }
    if let Some((current, version, _)) = ours(&item.found) {
        return if current {
            "current".to_owned()
        } else {
            format!(
                "outdated: installed by acp-collab {}, this is {ENGINE_VERSION}; \
                 `acp-collab skill install` updates it",
                version.as_deref().unwrap_or("(an earlier version)")
            )
        };
    }
    match item.found {
        Found::Modified => {
            "edited since it was installed (`skill install --force` replaces it)".to_owned()
        }
        Found::Absent => "absent".to_owned(),
        _ => "not written by acp-collab skill install".to_owned(),
    }
}

/// The engine line of `skill list`, when the folder is an install of ours.
pub(crate) fn engine(item: &Listed) -> Option<String> {
    let (_, version, binary) = ours(&item.found)?;
    let binary = binary?;
    let missing = if binary.is_file() { "" } else { " (missing)" };
    Some(format!(
        "scripts run {}{missing}, acp-collab {}",
        binary.display(),
        version.as_deref().unwrap_or("of an unrecorded version")
    ))
}
