//! The install cache on disk: where it is, what is installed in it, and removing installs
//! (one agent's, or every one a registry document no longer lists).
//!
//! Layout under the root (docs/format.md, "Installing and the cache"):
//! `agents/<id>/<version>/<platform>-<kind>-<12 hex>/` holds one install (its files and the
//! receipt `install.json`, written before the folder is renamed into place, so a folder with a
//! valid receipt is complete); `packages/npm` and `packages/uv` are the package managers'
//! caches; `locks/<id>.lock` serialises everything done to one agent; `tmp/` holds installs
//! being assembled. Only folders with a valid receipt are ever used or removed, and only
//! leftovers of our own in `tmp/`.

mod receipt;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use acp_registry_core::fs::{list_dir, Kind as FileKind};

use crate::document::{is_safe_id, is_safe_version, Document};
use crate::platform::{Kind, PLATFORMS};
use crate::resolve::Resolution;

pub(crate) use receipt::{folder_name_of, identity, pinned, program_path, Receipt};
pub use receipt::{MAX_RECEIPT_BYTES, RECEIPT};

/// The environment variable naming the cache root, before the platform's default.
pub const CACHE_DIR_ENV: &str = "ACP_REGISTRY_CACHE_DIR";
/// How old a leftover in `tmp/` must be before [`Store::gc`] removes it.
pub const STALE_TMP: Duration = Duration::from_secs(3600);

/// The install cache at one root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    root: PathBuf,
}

/// One complete install, as its receipt describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The agent's id.
    pub id: String,
    /// The version installed.
    pub version: String,
    /// The platform it was installed for.
    pub platform: String,
    /// The distribution kind installed.
    pub kind: Kind,
    /// The install folder.
    pub dir: PathBuf,
    /// The program to run: a file in `dir`, or `uvx` (found on `PATH`) for a uvx package.
    pub program: PathBuf,
    /// The arguments given before the caller's.
    pub args: Vec<String>,
    /// The environment set over the inherited one.
    pub env: BTreeMap<String, String>,
    /// The download's sha256 (pinned, or computed when the registry pins none); `None` for
    /// packages.
    pub sha256: Option<String>,
    /// When it was installed (UTC, `YYYY-MM-DDTHH:MM:SSZ`).
    pub installed_at: String,
    /// The archive URL or the package spec installed.
    pub source: String,
    /// What the install had to say (such as an unpinned download under [`PinPolicy::Warn`](crate::install::PinPolicy::Warn)).
    pub warnings: Vec<String>,
}

/// What [`Store::gc`] removed (or, for a dry run, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Install folders no longer listed, and stale leftovers of `tmp/`.
    pub removed: Vec<PathBuf>,
    /// Their size in bytes.
    pub bytes: u64,
    /// Ids skipped because another process holds their lock (an install is under way).
    pub busy: Vec<String>,
}

/// Why the cache could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file-system operation failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// An id or version that cannot name a cache folder.
    #[error("`{}` is not a valid agent {what}", .name.escape_debug())]
    UnsafeName {
        /// `id` or `version`.
        what: &'static str,
        /// The name given.
        name: String,
    },
}

pub(crate) fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Store {
    /// The default root: `$ACP_REGISTRY_CACHE_DIR`, else `$XDG_CACHE_HOME/acp-registry`, else
    /// `~/Library/Caches/acp-registry` on macOS, `%LOCALAPPDATA%\acp-registry` on Windows,
    /// `~/.cache/acp-registry` elsewhere. `None` when none of them can be told (relative
    /// values are ignored).
    #[must_use]
    pub fn default_root() -> Option<PathBuf> {
        let var = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        if let Some(dir) = var(CACHE_DIR_ENV) {
            return Some(dir);
        }
        if let Some(dir) = var("XDG_CACHE_HOME") {
            return Some(dir.join("acp-registry"));
        }
        if cfg!(windows) {
            return var("LOCALAPPDATA").map(|d| d.join("acp-registry"));
        }
        let home = var("HOME")?;
        if cfg!(target_os = "macos") {
            Some(home.join("Library/Caches/acp-registry"))
        } else {
            Some(home.join(".cache/acp-registry"))
        }
    }

    /// The cache at `root`, created if missing.
    ///
    /// # Errors
    /// [`StoreError::Io`] when the folder cannot be created.
    pub fn open(root: PathBuf) -> Result<Store, StoreError> {
        std::fs::create_dir_all(&root).map_err(io_at(&root))?;
        Ok(Store { root })
    }

    /// The cache's root folder.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every complete install, sorted by id, version, platform and kind.
    ///
    /// # Errors
    /// [`StoreError::Io`] when a folder of the cache cannot be listed.
    pub fn installed(&self) -> Result<Vec<Installed>, StoreError> {
        let mut all = Vec::new();
        for id in safe_children(&self.agents(), is_safe_id)? {
            for version in safe_children(&self.agents().join(&id), is_safe_version)? {
                all.extend(self.installs_of(&id, &version)?.into_iter().map(|(_, i)| i));
            }
        }
        all.sort_by(|a, b| {
            (&a.id, &a.version, &a.platform, a.kind).cmp(&(&b.id, &b.version, &b.platform, b.kind))
        });
        Ok(all)
    }

    /// The complete install of exactly this resolution (same source, pin, `cmd`, args and
    /// env), if there is one.
    #[must_use]
    pub fn find(&self, resolution: &Resolution) -> Option<Installed> {
        let entry = &resolution.entry;
        if !names_a_folder(resolution) {
            return None;
        }
        let folder = self.install_dir(resolution);
        let receipt = Receipt::load(&folder, &entry.id, &entry.version)?;
        (receipt.identity == identity(resolution) && receipt.platform == resolution.platform)
            .then(|| installed(&folder, receipt))
    }

    /// Remove the installs of `id` (of one `version` when given), under the id's lock.
    /// Returns the folders removed.
    ///
    /// # Errors
    /// [`StoreError::UnsafeName`] for an id or version that cannot be in the cache;
    /// [`StoreError::Io`] when a folder cannot be listed or removed.
    pub fn uninstall(&self, id: &str, version: Option<&str>) -> Result<Vec<PathBuf>, StoreError> {
        check_names(id, version)?;
        let _lock = self.lock(id)?;
        let versions = match version {
            Some(v) => vec![v.to_string()],
            None => safe_children(&self.agents().join(id), is_safe_version)?,
        };
        let mut removed = Vec::new();
        for version in versions {
            for (folder, _) in self.installs_of(id, &version)? {
                self.remove_install(id, &folder)?;
                removed.push(folder);
            }
        }
        self.prune(id);
        Ok(removed)
    }

    /// Remove every install whose (id, version) `keep` does not list, and leftovers of
    /// `tmp/` older than [`STALE_TMP`] nothing is working on; only report when `dry_run`.
    /// An id whose lock another process holds is skipped and named in [`GcReport::busy`].
    ///
    /// # Errors
    /// [`StoreError::Io`] when a folder cannot be listed or removed.
    pub fn gc(&self, keep: &Document, dry_run: bool) -> Result<GcReport, StoreError> {
        let mut report = GcReport::default();
        for id in safe_children(&self.agents(), is_safe_id)? {
            let current = keep.get(&id).map(|e| e.version.as_str());
            let versions: Vec<String> = safe_children(&self.agents().join(&id), is_safe_version)?
                .into_iter()
                .filter(|v| Some(v.as_str()) != current)
                .collect();
            if versions.is_empty() {
                continue;
            }
            let Some(_lock) = self.try_lock(&id)? else {
                report.busy.push(id);
                continue;
            };
            for version in versions {
                for (folder, _) in self.installs_of(&id, &version)? {
                    report.bytes += size_of(&folder);
                    if !dry_run {
                        self.remove_install(&id, &folder)?;
                    }
                    report.removed.push(folder);
                }
            }
            if !dry_run {
                self.prune(&id);
            }
        }
        self.gc_tmp(dry_run, &mut report)?;
        Ok(report)
    }

    /// Stale leftovers of `tmp/` (named `<id>.<16 hex>` by an install of that id), each
    /// removed under its id's lock when no one holds it.
    fn gc_tmp(&self, dry_run: bool, report: &mut GcReport) -> Result<(), StoreError> {
        let tmp = self.tmp();
        let children = match list_dir(&tmp) {
            Ok(children) => children,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_at(&tmp)(e)),
        };
        for child in children {
            let name = child.name();
            let Some(id) = tmp_owner(&name) else { continue };
            let path = tmp.join(&name);
            let stale = std::fs::symlink_metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= STALE_TMP);
            if !stale || !matches!(child.kind, FileKind::Dir | FileKind::File) {
                continue;
            }
            let Some(_lock) = self.try_lock(id)? else {
                continue;
            };
            report.bytes += size_of(&path);
            if !dry_run {
                remove_any(&path)?;
            }
            report.removed.push(path);
        }
        Ok(())
    }

    pub(crate) fn agents(&self) -> PathBuf {
        self.root.join("agents")
    }

    pub(crate) fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// The install folder of `resolution` (which may not exist).
    pub(crate) fn install_dir(&self, resolution: &Resolution) -> PathBuf {
        self.agents()
            .join(&resolution.entry.id)
            .join(&resolution.entry.version)
            .join(folder_name_of(resolution))
    }

    /// A fresh, unique path in `tmp/` for work on `id` (not created).
    pub(crate) fn tmp_path(&self, id: &str) -> PathBuf {
        self.tmp().join(format!("{id}.{:016x}", fastrand::u64(..)))
    }

    /// The lock of `id`, waiting for another holder to let go. Blocks the thread.
    pub(crate) fn lock(&self, id: &str) -> Result<File, StoreError> {
        let file = self.lock_file(id)?;
        file.lock().map_err(io_at(&self.lock_path(id)))?;
        Ok(file)
    }

    /// The lock of `id` when no one else holds it.
    fn try_lock(&self, id: &str) -> Result<Option<File>, StoreError> {
        let file = self.lock_file(id)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(io_at(&self.lock_path(id))(e)),
        }
    }

    fn lock_path(&self, id: &str) -> PathBuf {
        self.root.join("locks").join(format!("{id}.lock"))
    }

    fn lock_file(&self, id: &str) -> Result<File, StoreError> {
        let path = self.lock_path(id);
        let dir = self.root.join("locks");
        std::fs::create_dir_all(&dir).map_err(io_at(&dir))?;
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        let file = acp_registry_core::fs::no_follow(&mut options)
            .open(&path)
            .map_err(io_at(&path))?;
        acp_registry_core::fs::regular(file).map_err(|e| io_at(&path)(e.into()))
    }

    /// The install folders of one version with a valid receipt.
    fn installs_of(
        &self,
        id: &str,
        version: &str,
    ) -> Result<Vec<(PathBuf, Installed)>, StoreError> {
        let dir = self.agents().join(id).join(version);
        let names = safe_children(&dir, |_| true)?;
        Ok(names
            .into_iter()
            .filter_map(|name| {
                let folder = dir.join(name);
                let receipt = Receipt::load(&folder, id, version)?;
                Some((folder.clone(), installed(&folder, receipt)))
            })
            .collect())
    }

    /// Move an install folder (ours: it has our receipt) into `tmp/`, then delete it: the
    /// move is atomic, so no half-removed install is ever left with its receipt in place.
    pub(crate) fn remove_install(&self, id: &str, folder: &Path) -> Result<(), StoreError> {
        let tmp = self.tmp();
        std::fs::create_dir_all(&tmp).map_err(io_at(&tmp))?;
        let gone = self.tmp_path(id);
        std::fs::rename(folder, &gone).map_err(io_at(folder))?;
        remove_any(&gone)
    }

    /// Remove the version and id folders of `id` left empty (never anything in them).
    fn prune(&self, id: &str) {
        let dir = self.agents().join(id);
        if let Ok(versions) = safe_children(&dir, |_| true) {
            for version in versions {
                let _ = std::fs::remove_dir(dir.join(version));
            }
        }
        let _ = std::fs::remove_dir(dir);
    }
}

/// Whether the id, version and platform of `resolution` can name cache folders: a safe id
/// and version, and one of the six platform keys.
pub(crate) fn names_a_folder(resolution: &Resolution) -> bool {
    let entry = &resolution.entry;
    is_safe_id(&entry.id)
        && is_safe_version(&entry.version)
        && PLATFORMS.contains(&resolution.platform.as_str())
}

fn check_names(id: &str, version: Option<&str>) -> Result<(), StoreError> {
    if !is_safe_id(id) {
        return Err(StoreError::UnsafeName {
            what: "id",
            name: id.into(),
        });
    }
    match version {
        Some(v) if !is_safe_version(v) => Err(StoreError::UnsafeName {
            what: "version",
            name: v.into(),
        }),
        _ => Ok(()),
    }
}

/// The id a `tmp/` leftover belongs to, when it is named like ours (`<id>.<16 hex>`).
fn tmp_owner(name: &str) -> Option<&str> {
    let (id, suffix) = name.rsplit_once('.')?;
    let ours = suffix.len() == 16 && suffix.bytes().all(|b| b.is_ascii_hexdigit());
    (ours && is_safe_id(id)).then_some(id)
}

/// The names of the folders (not links) in `dir` that `accept` takes; none when `dir` is
/// missing.
fn safe_children(dir: &Path, accept: impl Fn(&str) -> bool) -> Result<Vec<String>, StoreError> {
    let children = match list_dir(dir) {
        Ok(children) => children,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_at(dir)(e)),
    };
    Ok(children
        .into_iter()
        .filter(|c| c.kind == FileKind::Dir)
        .map(|c| c.name())
        .filter(|name| accept(name))
        .collect())
}

fn remove_any(path: &Path) -> Result<(), StoreError> {
    let result = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    result.map_err(io_at(path))
}

/// Bytes of the regular files under `path` (links not followed).
fn size_of(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return if meta.is_file() { meta.len() } else { 0 };
    }
    list_dir(path).map_or(0, |children| {
        children.iter().map(|c| size_of(&path.join(&c.name))).sum()
    })
}

/// The [`Installed`] a valid receipt in `folder` describes.
fn installed(folder: &Path, receipt: Receipt) -> Installed {
    let program = receipt::program_path(folder, receipt.kind, &receipt.program)
        .unwrap_or_else(|| folder.join(&receipt.program));
    Installed {
        id: receipt.id,
        version: receipt.version,
        platform: receipt.platform,
        kind: receipt.kind,
        dir: folder.to_path_buf(),
        program,
        args: receipt.args,
        env: receipt.env,
        sha256: receipt.sha256,
        installed_at: receipt.installed_at,
        source: receipt.source,
        warnings: receipt.warnings,
    }
}

#[cfg(test)]
mod tests;
