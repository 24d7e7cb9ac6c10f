//! The record of an install ([`RECORD_FILE`]: every file's sha256 and where the skill came
//! from), reading a skill folder back and telling who wrote it ([`Found`]), and writing one,
//! never through a link.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::error::SkillInstallError;
use crate::fs::digest::sha256_hex;
use crate::fs::Kind;

/// The record of an install, inside the installed folder. The name acp-collab's first
/// installs used, kept so those are recognised, updated and removed; every install by either
/// tool writes it.
pub const RECORD_FILE: &str = ".acp-collab-skill.json";

/// The most bytes one file of an installed folder may hold when it is read back.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The most files an installed folder may hold when it is read back.
const MAX_FILES: usize = 10_000;

fn io(path: &Path, e: impl std::fmt::Display) -> SkillInstallError {
    SkillInstallError::io(path, e)
}

/// `files` with their record: `{"format": 1, "skill": name, <about>…, "files": {path: sha256}}`.
pub(crate) fn with_record(
    name: &str,
    files: &BTreeMap<String, Vec<u8>>,
    about: &serde_json::Map<String, Value>,
) -> BTreeMap<String, Vec<u8>> {
    let listed: serde_json::Map<String, Value> = files
        .iter()
        .map(|(p, b)| (p.clone(), json!(sha256_hex(b))))
        .collect();
    let mut record = serde_json::Map::new();
    record.insert("format".into(), json!(1));
    record.insert("skill".into(), json!(name));
    for (key, value) in about {
        record.insert(key.clone(), value.clone());
    }
    record.insert("files".into(), Value::Object(listed));
    let mut out = files.clone();
    out.insert(
        RECORD_FILE.into(),
        format!("{:#}\n", Value::Object(record)).into_bytes(),
    );
    out
}

/// Who wrote an existing skill folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Nothing there.
    Absent,
    /// Exactly what an install recorded.
    Ours {
        /// The record (`skill`, `files`, and what the installing tool added).
        record: Value,
        /// The folder's files, the record included.
        files: BTreeMap<String, Vec<u8>>,
    },
    /// An install changed since (files edited, added or removed).
    Modified,
    /// No install record: another skill, or a copy made by hand.
    Foreign,
    /// Not a folder.
    NotAFolder,
}

/// Reads what is at `dir`.
///
/// # Errors
/// [`SkillInstallError::Install`] when the folder cannot be read.
pub fn inspect(dir: &Path) -> Result<Found, SkillInstallError> {
    match crate::fs::kind(dir).map_err(|e| io(dir, e))? {
        None => Ok(Found::Absent),
        Some(Kind::Dir) => Ok(classify(read_tree(dir)?)),
        Some(_) => Ok(Found::NotAFolder),
    }
}

pub(crate) fn classify(current: BTreeMap<String, Vec<u8>>) -> Found {
    let Some(record) = current
        .get(RECORD_FILE)
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
    else {
        return Found::Foreign;
    };
    if !matches_record(&current, &record) {
        return Found::Modified;
    }
    Found::Ours {
        record,
        files: current,
    }
}

/// Every regular file below `dir`; a link or special file makes the folder foreign.
///
/// # Errors
/// [`SkillInstallError::Install`] when a file cannot be read or the folder holds more than
/// an install ever writes.
pub fn read_tree(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, SkillInstallError> {
    let mut out = BTreeMap::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let children = crate::fs::list_dir(&dir.join(&rel)).map_err(|e| io(dir, e))?;
        for child in children {
            let path = if rel.is_empty() {
                child.name()
            } else {
                format!("{rel}/{}", child.name())
            };
            match child.kind {
                Kind::Dir => stack.push(path),
                Kind::File => {
                    let bytes = crate::fs::read_capped(dir, Path::new(&path), MAX_FILE_BYTES)
                        .map_err(|e| io(&dir.join(&path), e))?;
                    out.insert(path, bytes);
                }
                // Not something an install writes: the folder is someone else's.
                _ => {
                    out.insert(path, Vec::new());
                    out.insert(RECORD_FILE.into(), Vec::new());
                }
            }
            if out.len() > MAX_FILES {
                return Err(io(dir, format!("it holds more than {MAX_FILES} files")));
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
pub(crate) fn refuse_links(
    base: &Path,
    dir: &Path,
    tool: &'static str,
) -> Result<(), SkillInstallError> {
    let rel = dir.strip_prefix(base).unwrap_or(dir);
    match crate::fs::no_link_below(base, rel) {
        Ok(()) => Ok(()),
        Err(crate::fs::ReadError::Link { rel }) => Err(SkillInstallError::SkillLink {
            path: base.join(rel),
            tool,
        }),
        Err(e) => Err(io(dir, e)),
    }
}

/// Every skill folder of `dirs` below `root`, resolved ([`resolve`]) and checked for links
/// ([`refuse_links`]) before anything is removed or written: `(base, dir)` per folder.
pub(crate) fn checked_targets(
    root: &Path,
    dirs: &[PathBuf],
    follow_links: bool,
    tool: &'static str,
) -> Result<Vec<(PathBuf, PathBuf)>, SkillInstallError> {
    dirs.iter()
        .map(|dir| {
            let (base, at) = resolve(root, dir, follow_links)?;
            refuse_links(&base, &at, tool)?;
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
) -> Result<(PathBuf, PathBuf), SkillInstallError> {
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
/// through a link; the paths in `executable` get mode 755, the others 644.
pub(crate) fn write_tree(
    base: &Path,
    dir: &Path,
    files: &BTreeMap<String, Vec<u8>>,
    executable: &BTreeSet<String>,
    tool: &'static str,
) -> Result<(), SkillInstallError> {
    let below = dir.strip_prefix(base).unwrap_or(dir);
    for (rel, bytes) in files {
        let path = dir.join(rel);
        let parent = path.parent().unwrap_or(dir);
        let folder = below.join(rel);
        let folder = folder.parent().unwrap_or(below);
        crate::fs::create_dirs_below(base, folder).map_err(|e| match e {
            crate::fs::ReadError::Link { rel } => SkillInstallError::SkillLink {
                path: base.join(rel),
                tool,
            },
            e => io(parent, e),
        })?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(if executable.contains(rel) {
                0o755
            } else {
                0o644
            });
        }
        let mut file = crate::fs::no_follow(&mut options)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        std::io::Write::write_all(&mut file, bytes).map_err(|e| io(&path, e))?;
    }
    Ok(())
}
