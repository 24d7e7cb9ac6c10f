//! Path rules (`docs/collab-protocol.md#paths-and-links`): escape detection, POSIX ref
//! normalisation, folder resolution, and the symlink refusal
//! (`docs/collab-protocol.md#links-refused`) applied to every read, write
//! and hash inside a collaboration folder or deliverables directory.
//!
//! Reads go through the core's `fs`: regular files only, at most 64 MiB each
//! (`MAX_FILE_BYTES`).

use std::io;
use std::path::{Component, Path, PathBuf};

use acp_registry_core::fs;

/// A file could not be used: either it is (or lies under) a symlink, which is
/// a reportable protocol problem, or an I/O failure that ends the command.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The path is or passes through a symlink (the message to report).
    #[error("{0}")]
    Symlink(String),
    /// An I/O failure (the message to print).
    #[error("{0}")]
    Io(String),
}

/// True when a POSIX-style path is absolute or has a `..` component.
pub(crate) fn escapes(path: &str) -> bool {
    path.starts_with('/') || path.split('/').any(|c| c == "..")
}

/// Joins `dir` and `file` like Python's `PurePosixPath(dir) / file`: `.` and
/// empty components collapse, `..` is kept.
pub(crate) fn posix_join(dir: &str, file: &str) -> String {
    let parts: Vec<&str> = dir
        .split('/')
        .chain(file.split('/'))
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let absolute = if file.starts_with('/') {
        true
    } else {
        dir.starts_with('/')
    };
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// Resolves a `--folder` value: `~` expanded, made absolute, symlinks of the
/// existing prefix resolved, `..` applied (like Python's non-strict `resolve`).
pub(crate) fn resolve_folder(raw: &str) -> PathBuf {
    let expanded = if raw == "~" || raw.starts_with("~/") {
        match std::env::var_os("HOME") {
            Some(home) => {
                PathBuf::from(home).join(raw.trim_start_matches('~').trim_start_matches('/'))
            }
            None => PathBuf::from(raw),
        }
    } else {
        PathBuf::from(raw)
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        std::env::current_dir().unwrap_or_default().join(expanded)
    };
    resolve_lexically_with_links(&absolute)
}

/// Resolves symlinks for every existing prefix and applies `.`/`..` in order.
pub(crate) fn resolve_lexically_with_links(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => {
                out.push(other.as_os_str());
                if let Ok(real) = out.canonicalize() {
                    out = real;
                }
            }
        }
    }
    out
}

/// The message for a refused symlink; it names the path and what to do.
pub(crate) fn symlink_message(path: &Path) -> String {
    format!(
        "{} is a symlink; symlinks are not allowed inside a collaboration folder or deliverables directory, replace it with a regular file or directory",
        path.display()
    )
}

/// Refuses when `base/rel` or any directory between `base` and it is a
/// symlink (the core's [`fs::no_link_below`]). Components that do not exist yet are fine;
/// anything else wrong with the path is left to the read or write that follows.
pub(crate) fn check_no_symlink(base: &Path, rel: &str) -> Result<(), ReadError> {
    let rel: PathBuf = rel
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    match fs::no_link_below(base, &rel) {
        Err(fs::ReadError::Link { rel }) => {
            Err(ReadError::Symlink(symlink_message(&base.join(rel))))
        }
        _ => Ok(()),
    }
}

fn io_message(path: &Path, err: &dyn std::fmt::Display) -> String {
    format!("cannot read {}: {err}", path.display())
}

/// Size limit of every file a command reads (10,000 events take under 2 MiB).
pub(crate) const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Reads the raw bytes of `base/rel`; `Ok(None)` when it does not exist. Read through
/// [`acp_registry_core::fs`]: no link followed, regular files only (a FIFO never blocks), capped.
pub(crate) fn read_bytes(base: &Path, rel: &str) -> Result<Option<Vec<u8>>, ReadError> {
    check_no_symlink(base, rel)?;
    let path = base.join(rel);
    match fs::read_capped(base, Path::new(rel), MAX_FILE_BYTES) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(fs::ReadError::NotFound) => Ok(None),
        // A link that appeared after the check above.
        Err(fs::ReadError::Link { rel: link }) => {
            Err(ReadError::Symlink(symlink_message(&base.join(link))))
        }
        Err(fs::ReadError::Io(e)) => Err(ReadError::Io(io_message(&path, &e))),
        // The messages the operating system gave before for a folder where a file belongs
        // and the reverse.
        #[cfg(unix)]
        Err(fs::ReadError::IsDir) => Err(os_error(&path, libc::EISDIR)),
        #[cfg(unix)]
        Err(fs::ReadError::NotDir { .. }) => Err(os_error(&path, libc::ENOTDIR)),
        Err(e) => Err(ReadError::Io(io_message(&path, &e))),
    }
}

#[cfg(unix)]
fn os_error(path: &Path, code: i32) -> ReadError {
    ReadError::Io(io_message(path, &io::Error::from_raw_os_error(code)))
}

/// Reads `base/rel` as UTF-8 text; `Ok(None)` when it does not exist.
pub(crate) fn read_text(base: &Path, rel: &str) -> Result<Option<String>, ReadError> {
    match read_bytes(base, rel)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| ReadError::Io(format!("{} is not valid UTF-8", base.join(rel).display()))),
    }
}

/// SHA-256 (lowercase hex) of `base/rel`; `Ok(None)` when it does not exist.
pub(crate) fn sha256_file(base: &Path, rel: &str) -> Result<Option<String>, ReadError> {
    Ok(read_bytes(base, rel)?.map(|bytes| acp_registry_core::fs::digest::sha256_hex(&bytes)))
}

/// True when `base/rel` exists without following a final symlink.
pub(crate) fn exists_no_follow(base: &Path, rel: &str) -> bool {
    std::fs::symlink_metadata(base.join(rel)).is_ok()
}

/// A folder beside a `--folder` that does not exist, the one its name most likely meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sibling {
    /// The folder.
    pub path: PathBuf,
    /// It holds a `protocol.json` (a collaboration folder).
    pub collaboration: bool,
}

/// The sibling folder whose name is closest (edit distance) to `folder`'s, which does not
/// exist: among the collaboration folders (holding `protocol.json`) when there are any, else
/// among the other folders when the name is close (a typo, not another name). Links are not
/// followed; `None` when the parent cannot be listed or nothing is close.
pub(crate) fn closest_sibling(folder: &Path) -> Option<Sibling> {
    let name = folder.file_name()?.to_string_lossy().into_owned();
    let parent = folder.parent()?;
    let folders: Vec<(String, bool)> = fs::list_dir(parent)
        .ok()?
        .iter()
        .filter(|c| c.kind == fs::Kind::Dir)
        .map(|c| {
            let child = c.name();
            // `spec::PROTOCOL_FILE`; this module imports nothing of the crate.
            let holds = fs::kind(&parent.join(&child).join("protocol.json"));
            let collaboration = matches!(holds, Ok(Some(fs::Kind::File)));
            (child, collaboration)
        })
        .collect();
    let any_collaboration = folders.iter().any(|(_, c)| *c);
    let close_enough = (name.chars().count() / 3).max(2);
    folders
        .into_iter()
        .filter(|(_, c)| *c == any_collaboration)
        .map(|(child, c)| (strsim::levenshtein(&name, &child), child, c))
        .filter(|(distance, _, c)| *c || *distance <= close_enough)
        .min()
        .map(|(_, child, collaboration)| Sibling {
            path: parent.join(child),
            collaboration,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_rules_follow_the_spec_table() {
        for ok in ["x..md", "./x.md", "~/x.md", "a/b/c.md", "..\\x.md", ""] {
            assert!(!escapes(ok), "{ok}");
        }
        for bad in ["a/../b.md", "..", "/abs.md"] {
            assert!(escapes(bad), "{bad}");
        }
    }

    #[test]
    fn the_closest_sibling_is_a_collaboration_folder_when_there_is_one() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path();
        for dir in ["collab-api", "collab-ui", "notes"] {
            std::fs::create_dir(base.join(dir)).unwrap();
        }
        std::fs::write(base.join("collab-ui/protocol.json"), "{}").unwrap();
        std::fs::write(base.join("collab-api/protocol.json"), "{}").unwrap();
        let found = closest_sibling(&base.join("colab-api")).unwrap();
        assert_eq!(found.path, base.join("collab-api"));
        assert!(found.collaboration);
        // Without collaboration folders, only a near name is suggested.
        let plain = tempfile::tempdir().unwrap();
        std::fs::create_dir(plain.path().join("reviews")).unwrap();
        let near = closest_sibling(&plain.path().join("review")).unwrap();
        assert_eq!(
            (near.path, near.collaboration),
            (plain.path().join("reviews"), false)
        );
        assert_eq!(closest_sibling(&plain.path().join("something-else")), None);
        assert_eq!(closest_sibling(&plain.path().join("none/deeper")), None);
    }

    #[test]
    fn posix_join_normalises_like_purepath() {
        assert_eq!(
            posix_join("deliverables", "design-spec.md"),
            "deliverables/design-spec.md"
        );
        assert_eq!(posix_join("./d/", "./x.md"), "d/x.md");
        assert_eq!(posix_join("", "x.md"), "x.md");
        assert_eq!(posix_join("a//b", "../x.md"), "a/b/../x.md");
    }
}
