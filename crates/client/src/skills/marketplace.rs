//! A Claude Code plugin marketplace (`.claude-plugin/marketplace.json`): each plugin with a
//! relative `source` (`./plugins/<p>`), its skills under `<source>/skills/<name>/` and in the
//! folders its entry's `skills` lists (a folder holding `SKILL.md` is a skill, named by the
//! folder; another holds skill folders). A local marketplace is listed by reading its folders
//! (links and special files refused); over HTTP nothing can be listed, so the marketplace's
//! `SHA256SUMS` names the files (and checks them).

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::{refused, SkillFetchError};
use super::fetched::{FetchOptions, FetchedSkill};
use super::place::Place;
use super::sums::{Sums, SUMS_FILE};
use super::tree::{check_skill, read_folder};
use crate::net::Client;
use crate::skill_index::{MARKETPLACE_FILE, PLUGIN_DIR};
use acp_registry_core::fs::Kind;

/// One skill a marketplace offers: its plugin and the skill folder (relative to the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Offered {
    /// The skill's name (its folder's).
    pub name: String,
    /// The plugin holding it.
    pub plugin: String,
    /// The skill folder, relative to the marketplace root, ending in `/`.
    pub folder: String,
}

/// A plugin of the marketplace with a relative source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plugin {
    /// Its name.
    pub name: String,
    /// Its folder, relative to the marketplace root, ending in `/` (empty: the root).
    pub folder: String,
    /// The folders its entry's `skills` lists, relative to the root, each ending in `/`.
    pub listed: Vec<String>,
}

/// The marketplace file's path below the root.
pub(crate) fn marketplace_rel() -> String {
    format!("{PLUGIN_DIR}/{MARKETPLACE_FILE}")
}

/// The plugins with a relative source of the marketplace, when the place serves one.
pub(crate) async fn plugins(
    client: &Client,
    place: &Place,
    opts: &FetchOptions,
) -> Result<Option<Vec<Plugin>>, SkillFetchError> {
    let rel = marketplace_rel();
    let Some(bytes) = place.get(client, &rel, opts.limits.index_bytes).await? else {
        return Ok(None);
    };
    let shown = place.show(&rel);
    let doc: Value =
        serde_json::from_slice(&bytes).map_err(|e| refused(&shown, format!("not JSON: {e}")))?;
    let list = doc
        .get("plugins")
        .and_then(Value::as_array)
        .ok_or_else(|| refused(&shown, "`plugins` must be an array"))?;
    if list.len() > opts.limits.skills {
        return Err(refused(
            &shown,
            format!("it lists more than {} plugins", opts.limits.skills),
        ));
    }
    let mut out = Vec::new();
    for (i, plugin) in list.iter().enumerate() {
        let at = format!("{shown} (plugins[{i}])");
        if let Some(plugin) = relative_plugin(plugin, &at, opts)? {
            out.push(plugin);
        }
    }
    Ok(Some(out))
}

/// One entry, when its source is relative: only those are below this marketplace; others
/// (github, url, npm) are installed by Claude Code itself.
fn relative_plugin(
    plugin: &Value,
    at: &str,
    opts: &FetchOptions,
) -> Result<Option<Plugin>, SkillFetchError> {
    let name = plugin
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| refused(at, "a plugin needs a `name`"))?;
    let Some(source) = plugin.get("source").and_then(Value::as_str) else {
        return Ok(None);
    };
    let folder = below(source).ok_or_else(|| {
        refused(
            at,
            format!("`source` `{source}` leaves the marketplace; write it as ./<folder>"),
        )
    })?;
    let mut listed = Vec::new();
    if let Some(skills) = plugin.get("skills") {
        let paths = skills
            .as_array()
            .ok_or_else(|| refused(at, "`skills` must be an array of ./ paths"))?;
        if paths.len() > opts.limits.skills {
            return Err(refused(
                at,
                format!("`skills` lists more than {} folders", opts.limits.skills),
            ));
        }
        for path in paths {
            let path = path.as_str().unwrap_or_default();
            let inner = below(path).ok_or_else(|| {
                refused(
                    at,
                    format!("`skills` path `{path}` leaves the plugin; write it as ./<folder>"),
                )
            })?;
            listed.push(format!("{folder}{inner}"));
        }
    }
    Ok(Some(Plugin {
        name: name.to_owned(),
        folder,
        listed,
    }))
}

/// A `./` path as a folder below its base, ending in `/` (empty for `./` itself); `None`
/// when it is absolute, climbs or is no path.
fn below(path: &str) -> Option<String> {
    let inner = path.strip_prefix("./")?.trim_end_matches('/');
    if inner.is_empty() {
        return Some(String::new());
    }
    acp_registry_core::skill_install::is_safe_file_path(inner).then(|| format!("{inner}/"))
}

/// The skills of every plugin: the folders below `<source>/skills/`, and each listed folder
/// that holds `SKILL.md` or, failing that, the folders below it; local, as the folders hold
/// them, over HTTP, as `sums` lists them. A folder offered twice is offered once.
pub(crate) fn offered(
    place: &Place,
    plugins: &[Plugin],
    sums: Option<&Sums>,
) -> Result<Vec<Offered>, SkillFetchError> {
    let mut out: Vec<Offered> = Vec::new();
    for plugin in plugins {
        let mut folders = children(place, &format!("{}skills/", plugin.folder), sums)?;
        for listed in &plugin.listed {
            if holds_skill(place, listed, sums)? {
                folders.push(listed.clone());
            } else {
                folders.extend(children(place, listed, sums)?);
            }
        }
        for folder in folders {
            if out.iter().any(|o| o.folder == folder) {
                continue;
            }
            // The marketplace root itself has no name of its own to install under.
            let name = folder
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default();
            if name.is_empty() {
                continue;
            }
            out.push(Offered {
                name: name.to_owned(),
                plugin: plugin.name.clone(),
                folder,
            });
        }
    }
    Ok(out)
}

/// Whether `folder` (below the root, ending in `/`; empty: the root) holds a `SKILL.md`.
fn holds_skill(place: &Place, folder: &str, sums: Option<&Sums>) -> Result<bool, SkillFetchError> {
    let rel = format!("{folder}SKILL.md");
    match (place.dir(), sums) {
        (Some(dir), _) => {
            acp_registry_core::fs::no_link_below(dir, std::path::Path::new(&rel))
                .map_err(|e| refused(&place.show(&rel), e))?;
            let kind = acp_registry_core::fs::kind(&dir.join(&rel))
                .map_err(|e| refused(&place.show(&rel), e))?;
            Ok(kind == Some(Kind::File))
        }
        (None, Some(sums)) => Ok(sums.below(&rel).any(str::is_empty)),
        (None, None) => Ok(false),
    }
}

/// The folders directly below `folder` (below the root, ending in `/`), each ending in `/`.
fn children(
    place: &Place,
    folder: &str,
    sums: Option<&Sums>,
) -> Result<Vec<String>, SkillFetchError> {
    let names: Vec<String> = match (place.dir(), sums) {
        (Some(dir), _) => {
            let at = dir.join(folder);
            match acp_registry_core::fs::kind(&at).map_err(|e| refused(&place.show(folder), e))? {
                None => Vec::new(),
                Some(Kind::Dir) => {
                    acp_registry_core::fs::no_link_below(dir, std::path::Path::new(folder))
                        .map_err(|e| refused(&place.show(folder), e))?;
                    acp_registry_core::fs::list_dir(&at)
                        .map_err(|e| refused(&place.show(folder), e))?
                        .into_iter()
                        .filter(|c| c.kind == Kind::Dir)
                        .map(|c| c.name())
                        .collect()
                }
                Some(_) => return Err(refused(&place.show(folder), "it is not a folder")),
            }
        }
        (None, Some(sums)) => {
            let mut names: Vec<String> = sums
                .below(folder)
                .filter_map(|p| p.split_once('/').map(|(n, _)| n.to_owned()))
                .collect();
            names.dedup();
            names
        }
        (None, None) => Vec::new(),
    };
    Ok(names.into_iter().map(|n| format!("{folder}{n}/")).collect())
}

/// One skill of a marketplace, every file checked against `sums` (each listed file present
/// and equal, no file the sums do not list), or unverified when the caller allows it.
pub(crate) async fn fetch(
    client: &Client,
    place: &Place,
    skill: &Offered,
    sums: Option<&Sums>,
    opts: &FetchOptions,
) -> Result<FetchedSkill, SkillFetchError> {
    let shown = place.show(&skill.folder);
    let files: BTreeMap<String, Vec<u8>> = if let Some(dir) = place.dir() {
        acp_registry_core::fs::no_link_below(dir, std::path::Path::new(&skill.folder))
            .map_err(|e| refused(&shown, e))?;
        read_folder(
            &dir.join(&skill.folder),
            shown.trim_end_matches('/'),
            &opts.limits,
        )?
    } else {
        let sums =
            sums.ok_or_else(|| refused(&shown, "a marketplace over HTTP needs a SHA256SUMS"))?;
        let mut files = BTreeMap::new();
        let mut left = opts.limits.skill_bytes;
        for path in sums.below(&skill.folder) {
            if files.len() >= opts.limits.files {
                return Err(refused(
                    &shown,
                    format!("the skill has more than {} files", opts.limits.files),
                ));
            }
            let rel = format!("{}{path}", skill.folder);
            let bytes = place.get(client, &rel, left).await?.ok_or_else(|| {
                refused(
                    &place.show(&rel),
                    "SHA256SUMS lists it but it does not exist",
                )
            })?;
            left = left.saturating_sub(bytes.len() as u64);
            files.insert(path.to_owned(), bytes);
        }
        files
    };
    if let Some(sums) = sums {
        for (path, bytes) in &files {
            let rel = format!("{}{path}", skill.folder);
            sums.verify(&rel, bytes, &place.show(&rel))?;
        }
        if let Some(missing) = sums.below(&skill.folder).find(|p| !files.contains_key(*p)) {
            return Err(refused(
                &place.show(&format!("{}{missing}", skill.folder)),
                format!("{} lists it but it does not exist", sums.shown()),
            ));
        }
    }
    check_skill(&skill.name, &files, &shown, &opts.limits)?;
    Ok(FetchedSkill {
        name: skill.name.clone(),
        files,
        source: shown,
        digest: None,
        verified_by: sums.map_or_else(
            || "nothing (--allow-unverified)".to_owned(),
            |s| s.shown().to_owned(),
        ),
    })
}

/// Whether `SUMS_FILE` is required and missing: over HTTP always, locally unless allowed.
pub(crate) fn require_sums(
    place: &Place,
    sums: Option<&Sums>,
    opts: &FetchOptions,
) -> Result<(), SkillFetchError> {
    if sums.is_some() {
        return Ok(());
    }
    if !place.is_local() {
        return Err(refused(
            &place.show(SUMS_FILE),
            "a marketplace over HTTP lists no files and this one serves no SHA256SUMS naming them: install from a checkout of it instead",
        ));
    }
    if opts.allow_unverified {
        return Ok(());
    }
    Err(refused(
        &place.show(SUMS_FILE),
        "missing, so the marketplace's files cannot be verified; pass --allow-unverified to install them as the folder holds them",
    ))
}
