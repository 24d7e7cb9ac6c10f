//! The registry root: its entry folders, sorted, and [`RegistryError`], why a registry (or a
//! path named in it) could not be read.

use std::path::{Path, PathBuf};

use super::config::CONFIG_FILE;
use super::git::GitError;
use crate::diagnostics::Diagnostic;
use crate::rules::{self, EntryDir, SKILLS_DIR};
use acp_registry_core::fs::{self, Kind};

/// Folder names at the registry root that are never entries.
pub(crate) const NOT_ENTRIES: [&str; 3] = ["dist", "target", "node_modules"];

/// Why a registry could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("registry folder `{0}` does not exist; pass the registry root with --registry DIR")]
    /// The root does not exist.
    Missing(PathBuf),
    #[error("`{0}` is not a folder; pass the registry root with --registry DIR")]
    /// The root is not a folder.
    NotAFolder(PathBuf),
    #[error("cannot list `{path}`: {source}")]
    /// Listing a folder failed.
    Io {
        /// The folder.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    #[error("`{}` holds no agent folders ({found}){hint}", path.display())]
    /// The root holds no entry folder.
    Empty {
        /// The root.
        path: PathBuf,
        /// What it holds instead, counted.
        found: String,
        /// A second line: `hint: …`.
        hint: String,
    },
    #[error("`{}` is not inside the registry `{}`; name files of its entries, or pass the registry root with --registry DIR", path.display(), root.display())]
    /// A path named on the command line lies outside the registry.
    Outside {
        /// The path as named.
        path: PathBuf,
        /// The registry root.
        root: PathBuf,
    },
    #[error("`{}` does not exist{suggestion}; name files or folders of the registry's entries", path.display())]
    /// A path named on the command line does not exist.
    NoSuchPath {
        /// The path as named.
        path: PathBuf,
        /// `` (did you mean `…`?)`` when an entry's name is close, else empty.
        suggestion: String,
    },
    #[error(transparent)]
    /// `--changed-since` could not ask git.
    Git(#[from] GitError),
}

/// Whether a root-level folder name can be an entry (`skills/` holds stand-alone skills).
pub(crate) fn is_entry_name(name: &str) -> bool {
    !(name.starts_with('.')
        || name.starts_with('_')
        || NOT_ENTRIES.contains(&name)
        || name == SKILLS_DIR)
}

/// What discovery found at the registry root.
#[derive(Debug, Default)]
pub(crate) struct Discovered {
    /// Entry folders, sorted by name.
    pub entries: Vec<EntryDir>,
    /// Links in the place of entry folders (`file-link`); never followed.
    pub findings: Vec<Diagnostic>,
    /// Whether the root holds `skills/`, the stand-alone skills.
    pub skills: bool,
}

/// Every entry folder of the registry, sorted by name so results never depend on the order
/// the file system lists them in. A root without a single folder holding `agent.json` is a
/// usage error (most likely the wrong `--registry`), unless it holds `acp-registry.jsonc`
/// (a configured registry with no entries yet, as `init` writes it) or `skills/` (a registry
/// of stand-alone skills).
pub(crate) fn discover(root: &Path) -> Result<Discovered, RegistryError> {
    if !root.exists() {
        return Err(RegistryError::Missing(root.to_path_buf()));
    }
    if !root.is_dir() {
        return Err(RegistryError::NotAFolder(root.to_path_buf()));
    }
    let children = fs::list_dir(root).map_err(|source| RegistryError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    let mut discovered = Discovered::default();
    let mut found = Found::default();
    for child in children {
        let name = child.name();
        let path = root.join(&child.name);
        match child.kind {
            Kind::Dir if name == SKILLS_DIR => discovered.skills = true,
            Kind::Link if name == SKILLS_DIR => {
                discovered
                    .findings
                    .extend(rules::refused(Kind::Link, &name));
            }
            Kind::Dir if is_entry_name(&name) => {
                // An unreadable folder may well be an entry: it is reported, not skipped.
                let manifest = !matches!(fs::kind(&path.join("agent.json")), Ok(None));
                found.with_manifest |= manifest;
                found.without_manifest += usize::from(!manifest);
                discovered.entries.push(EntryDir {
                    display: name.clone(),
                    path,
                    name,
                });
            }
            Kind::Dir => found.skipped += 1,
            // Only a link that would be an entry folder is refused; stat-ing its target
            // reads nothing.
            Kind::Link if is_entry_name(&name) && path.is_dir() => {
                discovered
                    .findings
                    .extend(rules::refused(Kind::Link, &name));
            }
            Kind::Link => found.links += 1,
            Kind::File => found.files += 1,
            Kind::Special(_) => found.special += 1,
        }
    }
    let configured = !matches!(fs::kind(&root.join(CONFIG_FILE)), Ok(None));
    if !found.with_manifest && discovered.findings.is_empty() && !configured && !discovered.skills {
        return Err(found.empty_error(root));
    }
    Ok(discovered)
}

/// Counts for the message of an empty registry.
#[derive(Default)]
struct Found {
    with_manifest: bool,
    without_manifest: usize,
    files: usize,
    skipped: usize,
    links: usize,
    special: usize,
}

impl Found {
    fn empty_error(&self, root: &Path) -> RegistryError {
        let counts: Vec<String> = [
            (
                self.without_manifest,
                "folder without agent.json",
                "folders without agent.json",
            ),
            (self.files, "file", "files"),
            (
                self.skipped,
                "hidden or skipped folder",
                "hidden or skipped folders",
            ),
            (self.links, "link", "links"),
            (self.special, "special file", "special files"),
        ]
        .into_iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
        .collect();
        let found = if counts.is_empty() {
            "it is empty".to_string()
        } else {
            format!("found: {}", counts.join(", "))
        };
        let hint = if !matches!(fs::kind(&root.join("agent.json")), Ok(None)) {
            "\nhint: this folder is itself an entry (it has agent.json): pass its parent with --registry".to_string()
        } else if matches!(fs::kind(&root.join("registry")), Ok(Some(Kind::Dir))) {
            format!(
                "\nhint: it holds a `registry/` folder: pass --registry {}",
                root.join("registry").display()
            )
        } else {
            "\nhint: pass the registry root, the folder holding one folder per agent, with --registry DIR".to_string()
        };
        RegistryError::Empty {
            path: root.to_path_buf(),
            found,
            hint,
        }
    }
}
