//! `validate PATH…`: which entry folders the files a user (or pre-commit) names belong to.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use super::discover::{is_entry_name, RegistryError};
use crate::rules::SKILLS_DIR;

/// The entry folders holding `paths`, for reporting only those entries (the others are still
/// checked, as with `--changed-since`). `None`: a path names the registry root itself, so
/// every entry is reported. Paths are relative to the working directory, like `root`, and
/// must exist: a typo would otherwise select nothing and pass (the error names the entry it
/// was probably meant to be). A file at the root (`acp-registry.jsonc`, `quarantine.json`)
/// or in a folder that is not an entry (`.github/`) selects no entry: registry-wide findings
/// are reported whatever is selected.
pub(crate) fn entries_holding(
    root: &Path,
    paths: &[PathBuf],
) -> Result<Option<BTreeSet<String>>, RegistryError> {
    let cwd = std::env::current_dir().map_err(|source| RegistryError::Io {
        path: PathBuf::from("."),
        source,
    })?;
    let mut folders = BTreeSet::new();
    for path in paths {
        let relative = inside(root, path, &cwd).ok_or_else(|| RegistryError::Outside {
            path: path.clone(),
            root: root.to_path_buf(),
        })?;
        if matches!(std::fs::symlink_metadata(cwd.join(path)), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        {
            return Err(RegistryError::NoSuchPath {
                path: path.clone(),
                suggestion: suggestion(root, &relative),
            });
        }
        let mut parts = relative.components();
        match (parts.next(), parts.next()) {
            (None, _) => return Ok(None),
            // A stand-alone skill (`skills/<name>/…`) is selected as `skills/<name>`; `skills`
            // itself selects every one.
            (Some(Component::Normal(folder)), second) if folder == SKILLS_DIR => {
                folders.insert(match second {
                    Some(Component::Normal(skill)) => {
                        format!("{SKILLS_DIR}/{}", skill.to_string_lossy())
                    }
                    _ => SKILLS_DIR.to_owned(),
                });
            }
            (Some(Component::Normal(folder)), Some(_)) => {
                let folder = folder.to_string_lossy();
                if is_entry_name(&folder) {
                    folders.insert(folder.into_owned());
                }
            }
            // An entry folder named by itself (`registry/foo`).
            (Some(Component::Normal(name)), None) => {
                let name = name.to_string_lossy();
                if is_entry_name(&name) && root.join(&*name).is_dir() {
                    folders.insert(name.into_owned());
                }
            }
            _ => {}
        }
    }
    Ok(Some(folders))
}

/// `` (did you mean `<root>/<entry>/…`?)`` when the first part of `relative` is one or two
/// edits from an entry folder's name, else empty.
fn suggestion(root: &Path, relative: &Path) -> String {
    let mut parts = relative.components();
    let Some(Component::Normal(first)) = parts.next() else {
        return String::new();
    };
    let first = first.to_string_lossy();
    let Ok(listing) = std::fs::read_dir(root) else {
        return String::new();
    };
    let mut names: Vec<String> = listing
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| is_entry_name(name))
        .collect();
    names.sort();
    let nearest = names
        .iter()
        .map(|name| (strsim::damerau_levenshtein(&first, name), name))
        .filter(|(distance, _)| (1..=2).contains(distance))
        .min();
    match nearest {
        Some((_, name)) => {
            let mut meant = root.join(name);
            meant.extend(parts);
            format!(" (did you mean `{}`?)", meant.display())
        }
        None => String::new(),
    }
}

/// `path` relative to `root`: compared lexically first (so a deleted file still maps), then
/// with links resolved (`/tmp` through a link, an absolute path to a relative root).
fn inside(root: &Path, path: &Path, cwd: &Path) -> Option<PathBuf> {
    let named = lexical(&cwd.join(path));
    if let Ok(rest) = named.strip_prefix(lexical(&cwd.join(root))) {
        return Some(rest.to_path_buf());
    }
    let real_root = cwd.join(root).canonicalize().ok()?;
    let real = match cwd.join(path).canonicalize() {
        Ok(real) => real,
        Err(_) => named
            .parent()?
            .canonicalize()
            .ok()?
            .join(named.file_name()?),
    };
    real.strip_prefix(real_root).ok().map(Path::to_path_buf)
}

/// An absolute path with `.` and `..` resolved by name, not through the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_the_entry_folder_they_are_in_lexically() {
        let cwd = Path::new("/repo");
        let rel = |root: &str, path: &str| inside(Path::new(root), Path::new(path), cwd);
        assert_eq!(
            rel("registry", "registry/foo/agent.json"),
            Some("foo/agent.json".into())
        );
        assert_eq!(
            rel("./registry/", "/repo/registry/foo/../bar/icon.svg"),
            Some("bar/icon.svg".into())
        );
        assert_eq!(rel(".", "foo/agent.json"), Some("foo/agent.json".into()));
        assert_eq!(rel("registry", "registry"), Some("".into()));
    }
}
