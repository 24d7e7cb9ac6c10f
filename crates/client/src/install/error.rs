//! Why an install failed ([`InstallError`]).

use std::path::PathBuf;

use crate::archive::ArchiveError;
use crate::net::NetError;
use crate::resolve::Resolution;
use crate::store::{StoreError, RECEIPT};

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
    /// The target pins no sha256 and the policy is [`PinPolicy::Refuse`](super::PinPolicy::Refuse).
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
    /// npm or uv took longer than [`InstallOptions::package_timeout`](super::InstallOptions::package_timeout) and was stopped.
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

pub(super) fn unusable(resolution: &Resolution, reason: &str) -> InstallError {
    InstallError::Unusable {
        id: resolution.entry.id.clone(),
        reason: reason.to_string(),
    }
}
