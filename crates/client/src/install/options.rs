//! How to install ([`InstallOptions`], [`PinPolicy`]) and what an install reports as it
//! advances ([`Progress`]).

use std::sync::Arc;
use std::time::Duration;

/// What to do with a binary target whose entry pins no `sha256`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PinPolicy {
    /// Install it.
    Allow,
    /// Install it, and say so in [`Installed::warnings`](crate::store::Installed::warnings).
    #[default]
    Warn,
    /// Refuse it ([`InstallError::Unpinned`](super::InstallError::Unpinned)).
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

pub(super) fn report(options: &InstallOptions, progress: &Progress) {
    if let Some(callback) = &options.progress {
        callback(progress);
    }
}
