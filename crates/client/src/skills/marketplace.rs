//! A Claude Code plugin marketplace (`.claude-plugin/marketplace.json`): each plugin with a
//! relative `source` (`./plugins/<p>`), its skills under `<source>/skills/<name>/`. A local
//! marketplace is listed by reading its folders (links and special files refused); over HTTP
//! nothing can be listed, so the marketplace's `SHA256SUMS` names the files (and checks them).

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

/// The marketplace file's path below the root.
pub(crate) fn marketplace_rel() -> String {
    format!("{PLUGIN_DIR}/{MARKETPLACE_FILE}")
}

/// The plugins' relative sources of a marketplace, when the place serves one: `(plugin,
/// folder)`, the folder relative to the root and ending in `/`.
pub(crate) async fn plugins(
    client: &Client,
    place: &Place,
    opts: &FetchOptions,
) -> Result<Option<Vec<(String, String)>>, SkillFetchError> {
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
        let name = plugin
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| refused(&at, "a plugin needs a `name`"))?;
        // Only a relative source is below this marketplace; others (github, url, npm) are
        // installed by Claude Code itself.
        let Some(source) = plugin.get("source").and_then(Value::as_str) else {
            continue;
        };
        let folder = source
            .strip_prefix("./")
            .unwrap_or(source)
            .trim_end_matches('/');
        if folder.is_empty() || !acp_registry_core::skill_install::is_safe_file_path(folder) {
            return Err(refused(
                &at,
                format!("`source` `{source}` leaves the marketplace; write it as ./<folder>"),
            ));
        }
        out.push((name.to_owned(), format!("{folder}/")));
    }
    Ok(Some(out))
}

/// The skills of every plugin: local, the folders below `<source>/skills/`; over HTTP, the
/// folders `sums` lists there.
pub(crate) fn offered(
    place: &Place,
    plugins: &[(String, String)],
    sums: Option<&Sums>,
) -> Result<Vec<Offered>, SkillFetchError> {
    let mut out = Vec::new();
    for (plugin, folder) in plugins {
        let skills = format!("{folder}skills/");
        let names: Vec<String> = match (place.dir(), sums) {
            (Some(dir), _) => {
                let at = dir.join(&skills);
                match acp_registry_core::fs::kind(&at)
                    .map_err(|e| refused(&place.show(&skills), e))?
                {
                    None => Vec::new(),
                    Some(Kind::Dir) => {
                        acp_registry_core::fs::no_link_below(dir, std::path::Path::new(&skills))
                            .map_err(|e| refused(&place.show(&skills), e))?;
                        acp_registry_core::fs::list_dir(&at)
                            .map_err(|e| refused(&place.show(&skills), e))?
                            .into_iter()
                            .filter(|c| c.kind == Kind::Dir)
                            .map(|c| c.name())
                            .collect()
                    }
                    Some(_) => return Err(refused(&place.show(&skills), "it is not a folder")),
                }
            }
            (None, Some(sums)) => {
                let mut names: Vec<String> = sums
                    .below(&skills)
                    .filter_map(|p| p.split_once('/').map(|(n, _)| n.to_owned()))
                    .collect();
                names.dedup();
                names
            }
            (None, None) => Vec::new(),
        };
        for name in names {
            out.push(Offered {
                folder: format!("{skills}{name}/"),
                name,
                plugin: plugin.clone(),
            });
        }
    }
    Ok(out)
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
