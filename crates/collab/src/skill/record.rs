//! The record of an install: the files an install writes (with `.acp-collab-skill.json`,
//! every file's sha256 and the engine), reading a skill folder back and telling who wrote it
//! ([`Found`]), and writing one. A folder is replaced or removed only when it is exactly what
//! an install recorded, or, for a hand-edited install of ours, with `--force`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::bundle::{folder_name, skill_tree, ENGINE_VERSION, MARKER, POINTER};
use crate::error::CollabError;
use acp_registry_core::fs::digest::sha256_hex;
use acp_registry_core::fs::Kind;

/// The files an install writes: the skill, the launchers' pointer and the record.
pub(crate) fn install_files(binary: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = skill_tree();
    files.insert(
        POINTER.into(),
        format!("{}\n", binary.display()).into_bytes(),
    );
    let listed: serde_json::Map<String, Value> = files
        .iter()
        .map(|(p, b)| (p.clone(), json!(sha256_hex(b))))
        .collect();
    let record = json!({
        "format": 1,
        "skill": folder_name(),
        "engine": {"version": ENGINE_VERSION, "binary": binary.display().to_string()},
        "files": listed,
    });
    files.insert(MARKER.into(), format!("{record:#}\n").into_bytes());
    files
}

pub(crate) fn io(path: &Path, e: impl std::fmt::Display) -> CollabError {
    CollabError::Install {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Who wrote an existing skill folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing there.
    Absent,
    /// Exactly what an install recorded; `current` when it is this binary's skill.
    Ours {
        /// Its skill files are this engine's.
        current: bool,
        /// The engine version its record names (`None`: recorded before versions were).
        version: Option<String>,
        /// The binary its launchers run.
        binary: Option<PathBuf>,
    },
    /// An install of ours changed since (files edited, added or removed).
    Modified,
    /// No install record: another skill, or a copy made by hand.
    Foreign,
    /// Not a folder.
    NotAFolder,
}

/// Reads what is at `dir`.
pub(crate) fn inspect(dir: &Path) -> Result<Found, CollabError> {
    match acp_registry_core::fs::kind(dir).map_err(|e| io(dir, e))? {
        None => Ok(Found::Absent),
        Some(Kind::Dir) => Ok(classify(&read_tree(dir)?)),
        Some(_) => Ok(Found::NotAFolder),
    }
}

pub(crate) fn classify(current: &BTreeMap<String, Vec<u8>>) -> Found {
    let Some(record) = current
        .get(MARKER)
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
    else {
        return Found::Foreign;
    };
    if !matches_record(current, &record) {
        return Found::Modified;
    }
    let skill = skill_tree();
    let same_skill =
        skill.iter().all(|(p, b)| current.get(p) == Some(b)) && current.len() == skill.len() + 2;
    let engine = record.get("engine");
    let text = |key: &str| engine.and_then(|e| e.get(key)).and_then(Value::as_str);
    let pointer = current
        .get(POINTER)
        .map(|b| String::from_utf8_lossy(b).trim().to_owned());
    Found::Ours {
        current: same_skill,
        version: text("version").map(str::to_owned),
        binary: text("binary")
            .map(str::to_owned)
            .or(pointer)
            .map(PathBuf::from),
    }
}

/// Every regular file below `dir`; a link or special file makes the folder foreign.
pub(crate) fn read_tree(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, CollabError> {
    let mut out = BTreeMap::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let children = acp_registry_core::fs::list_dir(&dir.join(&rel)).map_err(|e| io(dir, e))?;
        for child in children {
            let path = if rel.is_empty() {
                child.name()
            } else {
                format!("{rel}/{}", child.name())
            };
            match child.kind {
                Kind::Dir => stack.push(path),
                Kind::File => {
                    let bytes = acp_registry_core::fs::read_capped(dir, Path::new(&path), 1 << 20)
                        .map_err(|e| io(&dir.join(&path), e))?;
                    out.insert(path, bytes);
                }
                // Not something an install writes: the folder is someone else's.
                _ => {
                    out.insert(path, Vec::new());
                    out.insert(MARKER.into(), Vec::new());
                }
            }
        }
    }
    Ok(out)
}

/// Whether `current` is exactly what `record` lists, unchanged.
pub(crate) fn matches_record(current: &BTreeMap<String, Vec<u8>>, record: &Value) -> bool {
    let Some(listed) = record.get("files").and_then(Value::as_object) else {
        return false;
    };
    current.len() == listed.len() + 1
        && listed.iter().all(|(path, sha)| {
            current
                .get(path)
                .is_some_and(|b| Some(sha256_hex(b).as_str()) == sha.as_str())
        })
}

/// Refuses a link at `dir` or any folder between `base` (the home or project folder, which
/// is followed: the user named it) and `dir`, so nothing is written or deleted through one.
pub(crate) fn refuse_links(base: &Path, dir: &Path) -> Result<(), CollabError> {
    let rel = dir.strip_prefix(base).unwrap_or(dir);
    match acp_registry_core::fs::no_link_below(base, rel) {
        Ok(()) => Ok(()),
        Err(acp_registry_core::fs::ReadError::Link { rel }) => {
            Err(CollabError::SkillLink(base.join(rel)))
        }
        Err(e) => Err(io(dir, e)),
    }
}

/// Every skill folder of `dirs` below `root`, resolved ([`resolve`]) and checked for links
/// ([`refuse_links`]) before anything is removed or written: `(base, dir)` per folder.
pub(crate) fn checked_targets(
    root: &Path,
    dirs: &[PathBuf],
    follow_links: bool,
) -> Result<Vec<(PathBuf, PathBuf)>, CollabError> {
    dirs.iter()
        .map(|dir| {
            let (base, at) = resolve(root, dir, follow_links)?;
            refuse_links(&base, &at)?;
            Ok((base, at))
        })
        .collect()
}

/// Where `skill install` / `skill uninstall` act on one skill folder: the folder it checks
/// links below (`base`) and the skill folder itself (`dir`).
pub(crate) fn resolve(
    base: &Path,
    dir: &Path,
    follow_links: bool,
) -> Result<(PathBuf, PathBuf), CollabError> {
    if !follow_links {
        return Ok((base.to_path_buf(), dir.to_path_buf()));
    }
    // `--follow-links`: the deepest existing folder above the skill folder is resolved
    // through its links and becomes the base; what lies below it (missing folders, the skill
    // folder and its files) is still checked and created link by link.
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Ok((base.to_path_buf(), dir.to_path_buf()));
    };
    let (mut existing, mut rest) = (parent.to_path_buf(), vec![name.to_os_string()]);
    loop {
        match existing.canonicalize() {
            Ok(real) => {
                let dir = rest.iter().rev().fold(real.clone(), |d, part| d.join(part));
                return Ok((real, dir));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && existing != base => {
                // Missing, or a dangling link: created (or refused) link by link below.
                let Some(part) = existing.file_name() else {
                    return Err(io(&existing, e));
                };
                rest.push(part.to_os_string());
                existing.pop();
            }
            Err(e) => return Err(io(&existing, e)),
        }
    }
}

/// Writes `files` into `dir` below `base`: folders created and files created new, never
/// through a link.
pub(crate) fn write_tree(
    base: &Path,
    dir: &Path,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<(), CollabError> {
    let below = dir.strip_prefix(base).unwrap_or(dir);
    for (rel, bytes) in files {
        let path = dir.join(rel);
        let parent = path.parent().expect("files are below the folder");
        let folder = below.join(rel);
        let folder = folder.parent().unwrap_or(below);
        acp_registry_core::fs::create_dirs_below(base, folder).map_err(|e| match e {
            acp_registry_core::fs::ReadError::Link { rel } => {
                CollabError::SkillLink(base.join(rel))
            }
            e => io(parent, e),
        })?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(if rel.starts_with("scripts/") {
                0o755
            } else {
                0o644
            });
        }
        let mut file = acp_registry_core::fs::no_follow(&mut options)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        std::io::Write::write_all(&mut file, bytes).map_err(|e| io(&path, e))?;
    }
    Ok(())
}
