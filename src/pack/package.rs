//! What the steps of `pack` share: the [`Package`] composed in memory and [`PackError`], why
//! `pack` could not run.

use std::path::PathBuf;

use serde_json::Value;

use super::target::Platform;

/// Why `pack` could not run (exit 2). Mismatches found by `--check` are not errors.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PackError {
    #[error("{0}")]
    Usage(String),
    #[error("cannot read {what} `{path}`: {reason}")]
    Input {
        path: String,
        what: String,
        reason: String,
    },
    #[error("{path}: {message}")]
    Manifest { path: String, message: String },
    #[error("cannot write `{path}`: {reason}")]
    Output { path: String, reason: String },
}

/// A composed package, not yet written.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    pub(crate) platform: Platform,
    pub(crate) version: String,
    pub(crate) file_name: String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) sha256: String,
    /// The manifest's target for this platform, as `pack` writes it.
    pub(crate) target: Value,
    /// Where the archive goes: `<out>/v<version>/<file_name>`.
    pub(crate) path: PathBuf,
}
