//! The registry on disk: discovering entries, the configuration file, quarantine and git.

pub mod build;
pub mod check;
pub mod config;
pub mod git;
pub mod output;
pub mod variants;

use std::path::{Path, PathBuf};

pub use check::{check_registry, Checked};
pub use config::Config;

use crate::rules::EntryDir;

/// Folder names at the registry root that are never entries.
pub const NOT_ENTRIES: [&str; 3] = ["dist", "target", "node_modules"];

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("registry folder `{0}` does not exist; pass the registry root with --registry DIR")]
    Missing(PathBuf),
    #[error("`{0}` is not a folder; pass the registry root with --registry DIR")]
    NotAFolder(PathBuf),
    #[error("cannot list `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Git(#[from] git::GitError),
}

/// Whether a root-level folder name can be an entry.
pub fn is_entry_name(name: &str) -> bool {
    !(name.starts_with('.') || name.starts_with('_') || NOT_ENTRIES.contains(&name))
}

/// Every entry folder of the registry, sorted by name so results never depend on the order
/// the file system lists them in.
pub fn discover(root: &Path) -> Result<Vec<EntryDir>, RegistryError> {
    if !root.exists() {
        return Err(RegistryError::Missing(root.to_path_buf()));
    }
    if !root.is_dir() {
        return Err(RegistryError::NotAFolder(root.to_path_buf()));
    }
    let read = std::fs::read_dir(root).map_err(|source| RegistryError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    let mut entries = Vec::new();
    for item in read.flatten() {
        let Ok(kind) = item.file_type() else { continue };
        let name = item.file_name().to_string_lossy().into_owned();
        if kind.is_dir() && is_entry_name(&name) {
            entries.push(EntryDir {
                display: name.clone(),
                path: item.path(),
                name,
            });
        }
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}
