//! The files `pack` writes: the archive with its `sha256sum` line, and the entry's
//! `agent.json` edited in place (only the values that change, comments kept).

use std::io::Write;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::{PackError, Package};
use crate::registry::output::digest_hex;

/// The largest archive `pack --check` reads back.
pub const MAX_ARCHIVE_BYTES: u64 = 512 << 20;

/// Where archives are published: `--base-url`, else the folder above `v<version>/` of the
/// platform's current archive URL, else the GitHub releases of the entry's `repository`.
pub fn base_url(flag: Option<&str>, manifest: &Value, key: &str) -> Result<String, String> {
    if let Some(url) = flag {
        return absolute(url.trim_end_matches('/'));
    }
    let version = manifest
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or("");
    let current = manifest
        .pointer(&format!("/distribution/binary/{key}/archive"))
        .and_then(Value::as_str);
    if let Some(base) = current.and_then(|url| url.split_once(&format!("/v{version}/"))) {
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

fn absolute(url: &str) -> Result<String, String> {
    match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "https" | "http") && u.host().is_some() => Ok(url.to_owned()),
        _ => Err(format!("--base-url `{url}` is not an absolute http(s) URL")),
    }
}

/// The platform's target as `pack` records it: `archive`, `cmd`, the current `args` and
/// `env` kept, `sha256`.
pub fn target_value(manifest: &Value, key: &str, archive: &str, cmd: &str, sha256: &str) -> Value {
    let current = manifest.pointer(&format!("/distribution/binary/{key}"));
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

/// The manifest text with `version` and the package's target set, each value edited where
/// it stands so that comments and formatting survive.
pub fn update(text: &str, package: &Package) -> Result<String, String> {
    let mut text = set_or_insert(text, "/version", &json!(package.version))?;
    let pointer = format!("/distribution/binary/{}", package.platform.key);
    let current = crate::manifest::jsonc::parse(&text)
        .map_err(|e| e.message)?
        .pointer(&pointer)
        .map(|(node, _)| node.to_json());
    match (current, &package.target) {
        (Some(Value::Object(_)), Value::Object(fields)) => {
            for (field, value) in fields {
                text = set_or_insert(&text, &format!("{pointer}/{field}"), value)?;
            }
            Ok(text)
        }
        _ => set_or_insert(&text, &pointer, &package.target),
    }
}

/// Writes the archive and `<file>.sha256` (`sha256sum` format) atomically. An archive
/// already there is replaced only when its `.sha256` line says `pack` wrote it unchanged.
pub fn write_archive(package: &Package) -> Result<(), PackError> {
    let path = &package.path;
    let dir = path.parent().expect("the archive path has a folder");
    let fail = |p: &Path, e: &dyn std::fmt::Display| PackError::Output {
        path: p.display().to_string(),
        reason: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(dir, &e))?;
    let sidecar = dir.join(format!("{}.sha256", package.file_name));
    ensure_ours(path, &sidecar, &package.file_name)?;
    let line = format!("{}  {}\n", package.sha256, package.file_name);
    atomic_write(path, &package.bytes).map_err(|e| fail(path, &e))?;
    atomic_write(&sidecar, line.as_bytes()).map_err(|e| fail(&sidecar, &e))
}

/// Refuses to replace an archive that `pack` did not write or that changed since.
fn ensure_ours(path: &Path, sidecar: &Path, file_name: &str) -> Result<(), PackError> {
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    if !exists(path) && !exists(sidecar) {
        return Ok(());
    }
    let read = |p: &Path, limit| super::contents::read_named(p, limit, "a previous package");
    let ours = match (read(path, MAX_ARCHIVE_BYTES), read(sidecar, 4096)) {
        (Ok(bytes), Ok(line)) => {
            line == format!("{}  {file_name}\n", digest_hex(&bytes)).as_bytes()
        }
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

/// Writes `agent.json` through a temporary sibling and a rename, so a failure leaves the
/// old manifest.
pub fn write_manifest(dir: &Path, text: &str) -> Result<(), PackError> {
    let path = dir.join("agent.json");
    crate::fs::kind(&path)
        .ok()
        .flatten()
        .filter(|k| *k == crate::fs::Kind::File)
        .ok_or_else(|| PackError::Output {
            path: path.display().to_string(),
            reason: "it is not a regular file".into(),
        })?;
    atomic_write(&path, text.as_bytes()).map_err(|e| PackError::Output {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file =
            crate::fs::no_follow(std::fs::OpenOptions::new().write(true).create_new(true))
                .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Interim JSONC editor until the shared CST editor lands: replaces the value at `pointer`
/// in place, or inserts the member after the last one of its parent object.
fn set_or_insert(text: &str, pointer: &str, value: &Value) -> Result<String, String> {
    use crate::manifest::jsonc::{parse, NodeValue};
    let root = parse(text).map_err(|e| e.message)?;
    if let Some((node, _)) = root.pointer(pointer) {
        let indent = line_indent(text, node.span.start);
        let mut out = text.to_owned();
        out.replace_range(node.span.start..node.span.end, &render(value, &indent));
        return Ok(out);
    }
    let (parent, key) = pointer
        .rsplit_once('/')
        .ok_or("cannot replace the whole document")?;
    let Some((node, _)) = root.pointer(parent) else {
        let mut object = Map::new();
        object.insert(key.to_owned(), value.clone());
        return set_or_insert(text, parent, &Value::Object(object));
    };
    let NodeValue::Object(members) = &node.value else {
        return Err(format!("`{parent}` is not an object"));
    };
    let (at, indent, lead) = match members.last() {
        Some(last) => (
            last.value.span.end,
            line_indent(text, last.key_span.start),
            ",",
        ),
        None => (
            node.span.start + 1,
            format!("{}  ", line_indent(text, node.span.start)),
            "",
        ),
    };
    let member = format!("{lead}\n{indent}{}: {}", json!(key), render(value, &indent));
    let mut out = text.to_owned();
    out.insert_str(at, &member);
    if members.is_empty() {
        out.insert_str(
            at + member.len(),
            &format!("\n{}", line_indent(text, node.span.start)),
        );
    }
    Ok(out)
}

fn line_indent(text: &str, offset: usize) -> String {
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    text[start..offset]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect()
}

fn render(value: &Value, indent: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).expect("JSON values serialise");
    pretty.replace('\n', &format!("\n{indent}"))
}
