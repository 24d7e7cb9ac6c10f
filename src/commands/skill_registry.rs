//! `skill install` from a registry folder: its stand-alone skills (`skills/<name>/`) and its
//! agents' skills (`<id>/skill/<name>/`), found without following links, checked by the
//! registry's rules first (an error in the skill's folder refuses it, with the findings), then
//! read like any skill folder (`acp_registry_client::skills::read_folder`: regular files only,
//! bounded) and held to one name (the folder's and `SKILL.md`'s).

use std::path::Path;

use acp_registry_client::skills::{check_skill, read_folder, FetchLimits, FetchedSkill, Selection};
use acp_registry_core::escape;
use acp_registry_core::fs::Kind;

use super::error::CommandError;
use crate::diagnostics::{render, ReportFormat, Severity};
use crate::registry::check_registry;

/// The registry's configuration file, whose presence makes a folder a registry.
const CONFIG_FILE: &str = "acp-registry.jsonc";
/// The folder of a registry's stand-alone skills.
const SKILLS_DIR: &str = "skills";

/// Whether `dir` is a registry folder: it has `acp-registry.jsonc`, or it is no site or
/// marketplace (no `.well-known/`, no `.claude-plugin/`) and holds `skills/`.
pub(crate) fn is_registry(dir: &Path) -> bool {
    let is = |rel: &str, kind: Kind| {
        acp_registry_core::fs::kind(&dir.join(rel)).ok().flatten() == Some(kind)
    };
    is(CONFIG_FILE, Kind::File)
        || (!is(".well-known", Kind::Dir)
            && !is(".claude-plugin", Kind::Dir)
            && is(SKILLS_DIR, Kind::Dir))
}

/// The folders of every skill of the registry at `root`: `(name, folder relative to root)`.
fn offered(root: &Path) -> Result<Vec<(String, String)>, CommandError> {
    let dirs = |rel: &str| -> Result<Vec<String>, CommandError> {
        let at = root.join(rel);
        if acp_registry_core::fs::kind(&at)? != Some(Kind::Dir) {
            return Ok(Vec::new());
        }
        let mut names: Vec<String> = acp_registry_core::fs::list_dir(&at)?
            .into_iter()
            .filter(|c| c.kind == Kind::Dir)
            .map(|c| c.name())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        Ok(names)
    };
    let mut out: Vec<(String, String)> = dirs(SKILLS_DIR)?
        .into_iter()
        .map(|name| (name.clone(), format!("{SKILLS_DIR}/{name}")))
        .collect();
    for id in dirs("")? {
        if id == SKILLS_DIR {
            continue;
        }
        for name in dirs(&format!("{id}/skill"))? {
            out.push((name.clone(), format!("{id}/skill/{name}")));
        }
    }
    Ok(out)
}

/// The `selection` of the registry's skills, each checked by the registry's rules and read.
///
/// # Errors
/// A skill not offered (or offered twice), a skill with rule errors (the findings shown), a
/// file that cannot be read, a link, or a name that is not the folder's and `SKILL.md`'s.
pub(crate) fn skills(
    root: &Path,
    selection: &Selection,
) -> Result<Vec<FetchedSkill>, CommandError> {
    let offered = offered(root)?;
    let shown_root = escape::terminal(&root.display().to_string()).into_owned();
    let mut listed: Vec<&str> = offered.iter().map(|(n, _)| n.as_str()).collect();
    listed.sort_unstable();
    if let Some(pair) = listed.windows(2).find(|w| w[0] == w[1]) {
        return Err(CommandError::Usage(format!(
            "the registry {shown_root} holds two skills named `{}`: skill names must be unique across the registry",
            pair[0]
        )));
    }
    let chosen: Vec<&(String, String)> = match selection {
        Selection::All => offered.iter().collect(),
        Selection::Names(names) if names.is_empty() && offered.len() == 1 => offered.iter().collect(),
        Selection::Names(names) if names.is_empty() => {
            return Err(CommandError::Usage(format!(
                "the registry {shown_root} offers {} skills ({}): name the ones to install, or pass --all",
                offered.len(),
                listed.join(", ")
            )))
        }
        Selection::Names(names) => names
            .iter()
            .map(|name| {
                offered.iter().find(|(n, _)| n == name).ok_or_else(|| {
                    CommandError::Usage(format!(
                        "the registry {shown_root} offers no skill `{}`; it offers: {}",
                        escape::terminal(name),
                        listed.join(", ")
                    ))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    refuse_rule_errors(root, &chosen)?;
    let limits = FetchLimits::default();
    chosen
        .into_iter()
        .map(|(name, rel)| {
            let shown = root.join(rel).display().to_string();
            let fail = |e| CommandError::Failed(Box::new(e));
            acp_registry_core::fs::no_link_below(root, Path::new(rel))
                .map_err(|e| CommandError::Usage(format!("{}: {e}", escape::terminal(&shown))))?;
            let files = read_folder(&root.join(rel), &shown, &limits).map_err(fail)?;
            check_skill(name, &files, &shown, &limits).map_err(fail)?;
            Ok(FetchedSkill {
                name: name.clone(),
                files,
                source: shown,
                digest: None,
                verified_by: "the registry's skill rules".into(),
            })
        })
        .collect()
}

/// Runs the registry's rules; refuses when one finds an error in a chosen skill's folder.
fn refuse_rule_errors(root: &Path, chosen: &[&(String, String)]) -> Result<(), CommandError> {
    let mut checked = check_registry(root, None)?;
    let inside = |file: &str| {
        chosen
            .iter()
            .any(|(_, rel)| file == rel || file.starts_with(&format!("{rel}/")))
    };
    checked
        .report
        .diagnostics
        .retain(|d| d.severity == Severity::Error && inside(&d.file));
    if checked.report.diagnostics.is_empty() {
        return Ok(());
    }
    Err(CommandError::Usage(format!(
        "the registry's skill rules found errors in the skill; fix them first (acp-registry validate shows them all):\n{}",
        render(&checked.report, ReportFormat::Human, false).trim_end()
    )))
}
