//! `skill check`: other people's skill indexes and plugin marketplaces, checked against the
//! files they list (docs/format.md#checking-skill-indexes).
//!
//! A source is a site (local folder or URL), an `index.json` of either discovery version, a
//! `marketplace.json`, a marketplace root or a plugin folder. Everything it names is untrusted:
//! local files are read through the core's `fs` (no link followed, regular files, capped),
//! URLs through `net` (https, public addresses, capped), each document's values counted before
//! a tree of it is built, archives unpacked by `fs::archive` into a private scratch folder that
//! is removed as soon as the skill is judged. Skills are judged one at a time, so a
//! 10,000-entry index costs the memory of one skill, and the whole run is capped in skills,
//! files and bytes (`limits`). Every problem is a `Diagnostic` of the `Indexes` family (or
//! a skill rule's own code, its file mapped back to the URL or path the index names),
//! pointing at the index's JSON by line and column.

mod artifact;
mod context;
mod document;
mod error;
pub(crate) mod limits;
mod marketplace;
mod origin;
mod skill;
mod v1;
mod v2;

use std::path::Path;

use crate::diagnostics::Report;
use crate::net::NetConfig;
use acp_registry_client::skill_index::{
    INDEX_FILE, MARKETPLACE_FILE, PLUGIN_DIR, PLUGIN_FILE, V1_DIR, V2_DIR,
};
use context::Ctx;
pub(crate) use error::CheckError;
use origin::{Fetched, Place};

/// What `skill check` checks and how it reaches it.
#[derive(Debug, Clone, Default)]
pub(crate) struct CheckOptions {
    /// Each a URL (`https://…`) or a local path, as the user wrote it.
    pub(crate) sources: Vec<String>,
    /// The network's settings (loopback, private hosts).
    pub(crate) net: NetConfig,
}

/// Check every source; the report holds every finding, sorted.
///
/// # Errors
/// A source that holds nothing to check or cannot be reached, or no scratch folder.
pub(crate) fn check(options: &CheckOptions) -> Result<Report, CheckError> {
    let mut ctx = Ctx::new(options.net.clone())?;
    for source in &options.sources {
        check_source(&mut ctx, source)?;
    }
    Ok(ctx.finish())
}

/// What a source is, once looked at.
enum Found {
    V2(Place),
    V1(Place),
    Marketplace(Place),
    Plugin(Place),
}

fn check_source(ctx: &mut Ctx, source: &str) -> Result<(), CheckError> {
    let found = if source.starts_with("https://") || source.starts_with("http://") {
        remote_documents(ctx, source)?
    } else {
        local_documents(source)?
    };
    for document in found {
        match document {
            Found::V2(place) => v2::check(ctx, &place),
            Found::V1(place) => v1::check(ctx, &place),
            Found::Marketplace(place) => marketplace::check(ctx, &place),
            Found::Plugin(place) => marketplace::check_plugin_folder(ctx, &place),
        }
    }
    Ok(())
}

/// The documents a URL names: the file itself when it names an `index.json` or a
/// `marketplace.json`, else a site's well-known indexes and marketplace.
fn remote_documents(ctx: &mut Ctx, source: &str) -> Result<Vec<Found>, CheckError> {
    let unreachable = |reason: String| CheckError::Unreachable {
        given: source.to_string(),
        reason,
    };
    let url = url::Url::parse(source).map_err(|e| unreachable(e.to_string()))?;
    let path = url.path().to_string();
    if path.ends_with(&format!("/{MARKETPLACE_FILE}")) {
        return Ok(vec![Found::Marketplace(Place::Remote(url))]);
    }
    if path.ends_with(&format!("/{INDEX_FILE}")) {
        return Ok(vec![version_of_remote(&url)]);
    }
    let mut site = url.clone();
    if !site.path().ends_with('/') {
        site.set_path(&format!("{}/", site.path()));
    }
    let mut found = Vec::new();
    let mut tried = Vec::new();
    for (rel, make) in [
        (
            format!("{V2_DIR}/{INDEX_FILE}"),
            Found::V2 as fn(Place) -> Found,
        ),
        (format!("{V1_DIR}/{INDEX_FILE}"), Found::V1),
        (
            format!("{PLUGIN_DIR}/{MARKETPLACE_FILE}"),
            Found::Marketplace,
        ),
    ] {
        let place = Place::Remote(site.join(&rel).map_err(|e| unreachable(e.to_string()))?);
        tried.push(place.shown());
        match ctx.probe(&place) {
            Fetched::Bytes(_) => found.push(make(place)),
            Fetched::Absent(_) => {}
            Fetched::Failed(reason) => {
                return Err(unreachable(format!("{}: {reason}", place.shown())))
            }
        }
    }
    if found.is_empty() {
        return Err(CheckError::NothingThere {
            given: source.to_string(),
            tried: tried.join(", "),
        });
    }
    Ok(found)
}

/// A remote `index.json`: version 0.2.0 under `.well-known/agent-skills/`, else 0.1.0 (the
/// document itself says which when it is elsewhere: `$schema` is 0.2.0's).
fn version_of_remote(url: &url::Url) -> Found {
    if url.path().ends_with(&format!("{V1_DIR}/{INDEX_FILE}")) {
        Found::V1(Place::Remote(url.clone()))
    } else {
        Found::V2(Place::Remote(url.clone()))
    }
}

/// The documents a local path names.
fn local_documents(source: &str) -> Result<Vec<Found>, CheckError> {
    let path = Path::new(source);
    let kind = acp_registry_core::fs::kind(path).map_err(|e| CheckError::Unreachable {
        given: source.to_string(),
        reason: e.to_string(),
    })?;
    match kind {
        None => Err(CheckError::Unreachable {
            given: source.to_string(),
            reason: "it does not exist".into(),
        }),
        Some(acp_registry_core::fs::Kind::Dir) => local_folder(source),
        Some(_) => Ok(local_file(source)),
    }
}

fn local_file(source: &str) -> Vec<Found> {
    let path = Path::new(source);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    if name == PLUGIN_FILE && dir.ends_with(PLUGIN_DIR) {
        let plugin = dir.parent().map(Path::to_path_buf).unwrap_or_default();
        return vec![Found::Plugin(Place::local(&plugin, ""))];
    }
    // The site root is above the well-known folder (or `.claude-plugin`), so a relative URL
    // or source may reach the rest of the site but nothing above it.
    for (folder, make) in [
        (V2_DIR, Found::V2 as fn(Place) -> Found),
        (V1_DIR, Found::V1),
        (PLUGIN_DIR, Found::Marketplace),
    ] {
        if dir.ends_with(folder) {
            let depth = folder.split('/').count();
            let site = dir
                .ancestors()
                .nth(depth)
                .map(Path::to_path_buf)
                .unwrap_or_default();
            let place = Place::local(&site, &format!("{folder}/{name}"));
            return vec![match (folder, name == MARKETPLACE_FILE) {
                (PLUGIN_DIR, false) => Found::V2(place),
                (_, true) => Found::Marketplace(place),
                _ => make(place),
            }];
        }
    }
    let place = Place::local(&dir, &name);
    if name == MARKETPLACE_FILE {
        return vec![Found::Marketplace(place)];
    }
    vec![Found::V2(place)]
}

fn local_folder(source: &str) -> Result<Vec<Found>, CheckError> {
    let root = Path::new(source);
    let mut found = Vec::new();
    let mut tried = Vec::new();
    let exists = |rel: &str| {
        acp_registry_core::fs::kind(&root.join(rel))
            .ok()
            .flatten()
            .is_some()
    };
    for (rel, make) in [
        (
            format!("{V2_DIR}/{INDEX_FILE}"),
            Found::V2 as fn(Place) -> Found,
        ),
        (format!("{V1_DIR}/{INDEX_FILE}"), Found::V1),
        (
            format!("{PLUGIN_DIR}/{MARKETPLACE_FILE}"),
            Found::Marketplace,
        ),
    ] {
        tried.push(rel.clone());
        if exists(&rel) {
            found.push(make(Place::local(root, &rel)));
        }
    }
    let plugin = format!("{PLUGIN_DIR}/{PLUGIN_FILE}");
    tried.push(plugin.clone());
    if found.is_empty() && exists(&plugin) {
        found.push(Found::Plugin(Place::local(root, "")));
    }
    if found.is_empty() {
        return Err(CheckError::NothingThere {
            given: source.to_string(),
            tried: tried.join(", "),
        });
    }
    Ok(found)
}
