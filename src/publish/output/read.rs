//! Reading the output folder without following links (through `acp_registry_core::fs`), and its paths
//! as they may be shown.

use std::ffi::OsString;
use std::path::Path;

use crate::diagnostics::escape;
use acp_registry_core::fs::{self, Kind};

/// The entries of `dir`, sorted by name, with their own type (links are not followed).
pub(super) fn entries(dir: &Path) -> std::io::Result<Vec<(OsString, Kind)>> {
    Ok(fs::list_dir(dir)?
        .into_iter()
        .map(|child| (child.name, child.kind))
        .collect())
}

/// At most `limit` bytes of a regular file; `None` when it is longer.
pub(super) fn read_capped(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    match fs::read_limited(fs::open_path(path)?, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(fs::ReadError::TooLarge { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A path as it may be shown on a terminal or in a CI log.
pub(super) fn shown(path: &str) -> String {
    escape::terminal(path).into_owned()
}

pub(super) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}
