//! Installing a resolved agent into the [`Store`]: under the agent's lock, a binary target's
//! download is checked (status, size cap, deadline, https, sha256 when pinned, the
//! [`PinPolicy`] otherwise), unpacked by [`crate::archive`] and its `cmd` resolved; an npx or
//! uvx package is installed into the cache with its pinned version so a later launch needs no
//! network. Everything is assembled in `tmp/` and renamed into `agents/` last, so an install
//! is there complete or not at all: on any failure nothing of the attempt is left.
//!
//! [`fetch_archive`] and [`unpack`] are the download-and-verify and unpack steps on their own,
//! shared with the `acp-registry` tool's `verify`.

mod fetch;
mod package;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::archive::ArchiveError;
use crate::document::{is_safe_id, is_safe_version};
use crate::net::{Client, NetError};
use crate::platform::Kind;
use crate::resolve::Resolution;
use crate::store::{Installed, Receipt, Store, StoreError, RECEIPT};

pub use fetch::{fetch_archive, unpack, FetchRequest, Fetched};

/// What to do with a binary target whose entry pins no `sha256`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PinPolicy {
    /// Install it.
    Allow,
    /// Install it, and say so in [`Installed::warnings`].
    #[default]
    Warn,
    /// Refuse it ([`InstallError::Unpinned`]).
    Refuse,
}

/// What an install is doing, for a progress display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Bytes of the download so far, and its declared length when the server sent one.
    Downloading {
        /// The archive's URL.
        url: String,
        /// Bytes received so far (a retried download starts again from 0).
        done: u64,
        /// `Content-Length`, when declared.
        total: Option<u64>,
    },
    /// The download is checked and being unpacked.
    Unpacking,
    /// npm or uv is installing the package.
    Installing,
    /// The install is complete (also sent when it was already installed).
    Done,
}

/// A progress callback.
pub type ProgressFn = dyn Fn(&Progress) + Send + Sync;

/// How to install.
#[derive(Clone)]
pub struct InstallOptions {
    /// Binary targets without a pinned sha256.
    pub pin_policy: PinPolicy,
    /// The largest download accepted, in bytes.
    pub download_cap: u64,
    /// The most an archive may unpack to, in bytes.
    pub unpack_cap: u64,
    /// How long npm or uv may take to install a package before it is stopped.
    pub package_timeout: Duration,
    /// Called as the install advances.
    pub progress: Option<Arc<ProgressFn>>,
}

impl Default for InstallOptions {
    /// [`PinPolicy::Warn`], downloads up to 1 GiB, archives unpacking to up to 2 GiB (as
    /// `verify`), 10 minutes for a package install, no progress callback.
    fn default() -> Self {
        Self {
            pin_policy: PinPolicy::Warn,
            download_cap: 1024 * 1024 * 1024,
            unpack_cap: crate::archive::DEFAULT_UNPACK_CAP_MIB * 1024 * 1024,
            package_timeout: Duration::from_secs(600),
            progress: None,
        }
    }
}

impl std::fmt::Debug for InstallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstallOptions")
            .field("pin_policy", &self.pin_policy)
            .field("download_cap", &self.download_cap)
            .field("unpack_cap", &self.unpack_cap)
            .field("package_timeout", &self.package_timeout)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// Why an install failed; nothing of the attempt is left in the cache.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The download failed (status, size, deadline, address, connection, …).
    #[error("cannot download {url}: {error}")]
    Download {
        /// The archive's URL.
        url: String,
        /// What the HTTP client said.
        error: NetError,
    },
    /// The download is not what the registry pins.
    #[error("{url}: the download's sha256 is {actual}, the registry pins {expected}; nothing was installed")]
    Sha256Mismatch {
        /// The archive's URL.
        url: String,
        /// The pinned sha256.
        expected: String,
        /// The sha256 of what was downloaded.
        actual: String,
    },
    /// The target pins no sha256 and the policy is [`PinPolicy::Refuse`].
    #[error("agent `{id}`: {url} has no sha256 pin in the registry; pin one, or allow unpinned downloads (pin policy)")]
    Unpinned {
        /// The agent's id.
        id: String,
        /// The archive's URL.
        url: String,
    },
    /// The archive was refused or could not be unpacked.
    #[error("{url}: {error}")]
    Archive {
        /// The archive's URL.
        url: String,
        /// Why.
        error: ArchiveError,
    },
    /// The program the entry names is missing or is not a program.
    #[error("{source_name}: {reason}")]
    Program {
        /// The archive URL or package spec.
        source_name: String,
        /// Why.
        reason: String,
    },
    /// npm or uv could not be started.
    #[error("cannot run `{program}` to install `{spec}`: {error}")]
    Launcher {
        /// `npm` or `uvx`.
        program: String,
        /// The package spec.
        spec: String,
        /// The system's error.
        error: std::io::Error,
    },
    /// npm or uv failed; the last lines it wrote to stderr.
    #[error("`{program}` could not install `{spec}`: {tail}")]
    Package {
        /// `npm` or `uvx`.
        program: String,
        /// The package spec.
        spec: String,
        /// The end of its stderr.
        tail: String,
    },
    /// npm or uv took longer than [`InstallOptions::package_timeout`] and was stopped.
    #[error("installing `{spec}` took longer than {seconds} s; stopped")]
    Timeout {
        /// The package spec.
        spec: String,
        /// The timeout.
        seconds: u64,
    },
    /// The resolution has no target or package for its kind, or an unsafe id or version.
    #[error("agent `{id}`: {reason}")]
    Unusable {
        /// The agent's id.
        id: String,
        /// What is missing.
        reason: String,
    },
    /// The install's folder exists and is not an install of ours.
    #[error("{}: exists without a valid {RECEIPT}; it was not written by this client, remove it", .path.display())]
    Occupied {
        /// The folder.
        path: PathBuf,
    },
    /// The cache could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Install `resolution` into `store` (or find it installed): see the module doc. Takes the
/// agent's lock (`<root>/locks/<id>.lock`); another process installing the same agent
/// waits, then finds the finished install and returns it without downloading.
///
/// # Errors
/// [`InstallError`]; nothing of the failed attempt is left in the cache.
pub async fn install(
    store: &Store,
    client: &Client,
    resolution: &Resolution,
    options: &InstallOptions,
) -> Result<Installed, InstallError> {
    let entry = &resolution.entry;
    if !is_safe_id(&entry.id) || !is_safe_version(&entry.version) {
        return Err(unusable(resolution, "its id or version cannot name a cache folder"));
    }
    let locker = store.clone();
    let id = entry.id.clone();
    let lock = tokio::task::spawn_blocking(move || locker.lock(&id))
        .await
        .map_err(|e| StoreError::Io {
            path: store.root().to_path_buf(),
            source: std::io::Error::other(e),
        })??;
    if let Some(found) = store.find(resolution) {
        report(options, &Progress::Done);
        return Ok(found);
    }
    let work = Work::create(store, &entry.id)?;
    let installed = assemble(store, client, resolution, options, &work.0).await?;
    drop(work);
    drop(lock);
    report(options, &Progress::Done);
    Ok(installed)
}

/// The attempt's folder in `tmp/`, removed when dropped (on success its `install/` has been
/// renamed away; on failure or cancellation everything goes).
struct Work(PathBuf);

impl Work {
    fn create(store: &Store, id: &str) -> Result<Work, StoreError> {
        let tmp = store.tmp();
        std::fs::create_dir_all(&tmp).map_err(crate::store::io_at(&tmp))?;
        let path = store.tmp_path(id);
        std::fs::create_dir(&path).map_err(crate::store::io_at(&path))?;
        Ok(Work(path))
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        // Ours alone: created above under a fresh random name.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Build the install in `work/install`, then rename it into place.
async fn assemble(
    store: &Store,
    client: &Client,
    resolution: &Resolution,
    options: &InstallOptions,
    work: &Path,
) -> Result<Installed, InstallError> {
    let staged = work.join("install");
    std::fs::create_dir(&staged).map_err(crate::store::io_at(&staged))?;
    let receipt = match resolution.kind {
        Kind::Binary => fetch::binary(client, resolution, options, work, &staged).await?,
        Kind::Npx | Kind::Uvx => package::install(store, resolution, options, &staged).await?,
    };
    let json = serde_json::to_vec_pretty(&receipt).expect("a receipt serialises");
    let at = staged.join(RECEIPT);
    acp_registry_core::fs::atomic::write(&at, &json).map_err(crate::store::io_at(&at))?;
    place(store, resolution, &staged)?;
    store
        .find(resolution)
        .ok_or_else(|| unusable(resolution, "the install just written cannot be read back"))
}

/// Rename `staged` to the install's folder. A folder already there with a valid receipt is
/// an install of ours for other settings (say, a changed `cmd` under the same pin): it is
/// replaced. Anything else there is left alone and refused.
fn place(store: &Store, resolution: &Resolution, staged: &Path) -> Result<(), InstallError> {
    let entry = &resolution.entry;
    let dest = store.install_dir(resolution);
    let parent = dest.parent().expect("under agents/");
    std::fs::create_dir_all(parent).map_err(crate::store::io_at(parent))?;
    if std::fs::symlink_metadata(&dest).is_ok() {
        if Receipt::load(&dest, &entry.id, &entry.version).is_none() {
            return Err(InstallError::Occupied { path: dest });
        }
        store.remove_install(&entry.id, &dest)?;
    }
    std::fs::rename(staged, &dest).map_err(crate::store::io_at(&dest))?;
    let _ = acp_registry_core::fs::atomic::sync_dir(parent);
    Ok(())
}

fn unusable(resolution: &Resolution, reason: &str) -> InstallError {
    InstallError::Unusable {
        id: resolution.entry.id.clone(),
        reason: reason.to_string(),
    }
}

fn report(options: &InstallOptions, progress: &Progress) {
    if let Some(callback) = &options.progress {
        callback(progress);
    }
}

#[cfg(test)]
mod tests;
