//! The files `pack` writes: the archive with its `sha256sum` line, and the entry's
//! `agent.json` edited in place (only the values that change, comments kept).
//!
//! Ours to replace: an archive is replaced only when its `.sha256` line (written by `pack`)
//! matches it, or when it already holds the bytes being written (a run killed between the archive
//! and its line). Both files are written beside and renamed, so a kill never tears them.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::package::{PackError, Package};
use crate::manifest::distribution::{BinaryTarget, Distribution};
use crate::manifest::edit::Editor;
use acp_registry_core::fs::digest::sha256_hex;

/// The largest archive `pack --check` reads back.
pub(crate) const MAX_ARCHIVE_BYTES: u64 = 1 << 30;

/// Where archives are published: `--base-url`, else the folder above `v<version>/` of the
/// platform's current archive URL, else the GitHub releases of the entry's `repository`.
pub(crate) fn base_url(flag: Option<&str>, manifest: &Value, key: &str) -> Result<String, String> {
    if let Some(url) = flag {
        return absolute(url.trim_end_matches('/'));
    }
    let version = manifest
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or("");
    let current = current_target(manifest, key).and_then(|t| t.archive);
    if let Some(base) = current
        .as_deref()
        .and_then(|url| url.split_once(&format!("/v{version}/")))
    {
        return Ok(base.0.to_owned());
    }
    match manifest.get("repository").and_then(Value::as_str) {
        Some(repo) if repo.starts_with("https://github.com/") => {
            Ok(format!("{}/releases/download", repo.trim_end_matches('/')))
        }
        _ => Err(format!(
            "cannot tell where `{key}` archives are published; pass --base-url URL"
        )),
    }
}

/// The platform's target as clients read it (a `binary` member, else a legacy key), from
/// the manifest's one distribution model; its pointer is from the manifest's root.
fn current_target(manifest: &Value, key: &str) -> Option<BinaryTarget> {
    let dist = Distribution::from_json(manifest.get("distribution")?);
    dist.target(key).cloned()
}

fn absolute(url: &str) -> Result<String, String> {
    match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "https" | "http") && u.host().is_some() => Ok(url.to_owned()),
        _ => Err(format!("--base-url `{url}` is not an absolute http(s) URL")),
    }
}

/// The platform's target as `pack` records it: `archive`, `cmd`, the current `args` and
/// `env` kept, `sha256`.
pub(crate) fn target_value(
    manifest: &Value,
    key: &str,
    archive: &str,
    cmd: &str,
    sha256: &str,
) -> Value {
    // `args` and `env` are kept as written, so the view only says where the target is.
    let current = current_target(manifest, key).and_then(|t| manifest.pointer(&t.pointer));
    let mut target = Map::new();
    target.insert("archive".into(), json!(archive));
    target.insert("cmd".into(), json!(cmd));
    for kept in ["args", "env"] {
        if let Some(value) = current.and_then(|c| c.get(kept)) {
            target.insert(kept.into(), value.clone());
        }
    }
    target.insert("sha256".into(), json!(sha256));
    Value::Object(target)
}

/// The manifest text with `version` and the package's target set through the shared JSONC
/// editor: only values that differ are written, each where it stands, so comments and
/// formatting survive.
pub(crate) fn update(text: &str, package: &Package) -> Result<String, String> {
    let mut editor = Editor::parse(text).map_err(|e| e.to_string())?;
    let mut set = |pointer: &str, value: &Value| {
        if value_at(editor.text(), pointer).as_ref() == Some(value) {
            return Ok(());
        }
        editor
            .set_or_insert(pointer, value)
            .map_err(|e| e.to_string())
    };
    set("/version", &json!(package.version))?;
    let key = package.platform.key;
    let pointer = format!("/distribution/binary/{key}");
    let current = value_at(text, &pointer);
    let binary = value_at(text, "/distribution/binary");
    match (current, binary, &package.target) {
        (Some(Value::Object(_)), _, Value::Object(fields)) => {
            for (field, value) in fields {
                set(&format!("{pointer}/{field}"), value)?;
            }
        }
        (_, Some(_), target) => set(&pointer, target)?,
        (_, None, target) => set("/distribution/binary", &json!({ key: target }))?,
    }
    Ok(editor.into_text())
}

/// The plain value at `pointer` in a JSONC text, if any.
fn value_at(text: &str, pointer: &str) -> Option<Value> {
    let root = crate::manifest::jsonc::parse(text).ok()?;
    Some(root.pointer(pointer)?.0.to_json())
}

/// Writes the archive and `<file>.sha256` (`sha256sum` format) atomically. An archive
/// already there is replaced only when its `.sha256` line says `pack` wrote it unchanged.
pub(crate) fn write_archive(package: &Package) -> Result<(), PackError> {
    let path = &package.path;
    let dir = path.parent().expect("the archive path has a folder");
    let fail = |p: &Path, e: &dyn std::fmt::Display| PackError::Output {
        path: p.display().to_string(),
        reason: e.to_string(),
    };
    // `--out` is the user's choice (followed); the version folder below it is never reached
    // through a link.
    let (out, version) = (
        dir.parent().unwrap_or(Path::new(".")),
        dir.file_name().unwrap_or_default(),
    );
    std::fs::create_dir_all(out).map_err(|e| fail(out, &e))?;
    acp_registry_core::fs::create_dirs_below(out, Path::new(version)).map_err(|e| fail(dir, &e))?;
    let sidecar = dir.join(format!("{}.sha256", package.file_name));
    ensure_ours(path, &sidecar, package)?;
    let line = format!("{}  {}\n", package.sha256, package.file_name);
    write_file(path, &package.bytes)?;
    write_file(&sidecar, line.as_bytes())
}

/// Refuses to replace an archive that `pack` did not write or that changed since. An archive
/// holding exactly the bytes about to be written is accepted whatever its `.sha256` says: a
/// run killed between writing the two left it, and rewriting it loses nothing.
fn ensure_ours(path: &Path, sidecar: &Path, package: &Package) -> Result<(), PackError> {
    let file_name = &package.file_name;
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    if !exists(path) && !exists(sidecar) {
        return Ok(());
    }
    let read = |p: &Path, limit| super::contents::read_named(p, limit, "a previous package");
    let ours = match (read(path, MAX_ARCHIVE_BYTES), read(sidecar, 4096)) {
        (Ok(bytes), Ok(line)) => {
            bytes == package.bytes
                || line == format!("{}  {file_name}\n", sha256_hex(&bytes)).as_bytes()
        }
        (Ok(bytes), Err(_)) => bytes == package.bytes,
        _ => false,
    };
    if ours {
        return Ok(());
    }
    Err(PackError::Output {
        path: path.display().to_string(),
        reason: "it was not written by pack, or changed since (its .sha256 line does not match); \
                 move it away or choose another --out"
            .into(),
    })
}

/// Writes `agent.json` in place atomically (`fs::replace_file`), so a failure leaves the
/// old manifest.
pub(crate) fn write_manifest(dir: &Path, text: &str) -> Result<(), PackError> {
    acp_registry_core::fs::replace_file(dir, Path::new("agent.json"), text.as_bytes()).map_err(
        |e| PackError::Output {
            path: dir.join("agent.json").display().to_string(),
            reason: e.to_string(),
        },
    )
}

/// Writes `path`: through `fs::replace_file` when it exists (the caller checked it is ours),
/// else as a new file through `fs::write_new`, which never replaces what appeared meanwhile;
/// either way atomically (`fs::atomic`), so a kill never tears it.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), PackError> {
    let fail = |e: &dyn std::fmt::Display| PackError::Output {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let (dir, name) = (
        path.parent().unwrap_or(Path::new(".")),
        path.file_name().unwrap_or_default(),
    );
    if std::fs::symlink_metadata(path).is_ok() {
        return acp_registry_core::fs::replace_file(dir, Path::new(name), bytes)
            .map_err(|e| fail(&e));
    }
    acp_registry_core::fs::write_new(path, bytes).map_err(|e| fail(&e))
}
