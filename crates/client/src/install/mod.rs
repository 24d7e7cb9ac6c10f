//! Installing a resolved agent into the [`Store`]: under the agent's lock, a binary target's
//! download is checked (status, size cap, deadline, https, sha256 when pinned, the
//! [`PinPolicy`] otherwise), unpacked by [`crate::archive`] and its `cmd` resolved; an npx or
//! uvx package is installed into the cache with its pinned version so a later launch needs no
//! network. Everything is assembled in `tmp/` and renamed into `agents/` last, so an install
//! is there complete or not at all: on any failure nothing of the attempt is left.
//!
//! [`fetch_archive`] and [`unpack`] are the download-and-verify and unpack steps on their own,
//! shared with the `acp-registry` tool's `verify`.

mod error;
mod fetch;
mod options;
mod package;

use std::path::{Path, PathBuf};

use crate::net::Client;
use crate::platform::Kind;
use crate::resolve::Resolution;
use crate::store::{Installed, Receipt, Store, StoreError, RECEIPT};

use error::unusable;
pub use error::InstallError;
pub use fetch::{fetch_archive, unpack, FetchRequest, Fetched};
use options::report;
pub use options::{InstallOptions, PinPolicy, Progress, ProgressFn};
#[doc(hidden)]
pub use package::read_tail;

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
    if !crate::store::names_a_folder(resolution) {
        return Err(unusable(
            resolution,
            "its id, version or platform cannot name a cache folder",
        ));
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

#[cfg(test)]
mod tests;
