//! The output folder `build` and `site` replace: the tool's ownership manifest
//! (`.acp-registry-output.json`), the checks before replacing a folder (overlap with the
//! registry, ownership, removability), the atomic replacement and the `--check` comparison.
//!
//! - `ownership`: the manifest, written streamed and read back;
//! - `destination`: where an output may go (overlap with the registry, ownership,
//!   removability);
//! - `staging`: writing a [`Tree`] into a staging folder and swapping it in;
//! - `check`: `--check`, a fresh build compared with the folder file by file.
//!
//! The output folder may be a previous run's, a user's, or (in CI) part of an untrusted pull
//! request: it is read without following links, opened without blocking, and replaced only
//! when every path in it is one this tool wrote and nobody changed since.

mod check;
mod destination;
mod ownership;
mod staging;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::build::BuildError;
use crate::diagnostics::escape;
use crate::fs::digest::hex;
use crate::fs::{self, Kind};

pub(crate) use check::compare;
pub(crate) use destination::{check_destination, refuse_overlap};
pub(crate) use ownership::{write_ownership_manifest, OWNERSHIP_FILE};
pub(crate) use staging::write_atomically;

// --- reading without following links (through `crate::fs`) ----------------------------

/// The entries of `dir`, sorted by name, with their own type (links are not followed).
fn entries(dir: &Path) -> std::io::Result<Vec<(OsString, Kind)>> {
    Ok(fs::list_dir(dir)?
        .into_iter()
        .map(|child| (child.name, child.kind))
        .collect())
}

/// At most `limit` bytes of a regular file; `None` when it is longer.
fn read_capped(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    match fs::read_limited(fs::open_path(path)?, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(fs::ReadError::TooLarge { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A path as it may be shown on a terminal or in a CI log.
fn shown(path: &str) -> String {
    escape::terminal(path).into_owned()
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

// --- producing files ---------------------------------------------------------------------

/// Where the files of a [`Tree`] go as they are produced: written into staging, or compared
/// with the existing output. Called from several threads at once.
pub(crate) trait FileSink: Sync {
    /// Take the file at `path` (`/`-separated, relative), whose bytes `content` writes;
    /// returns their sha256 in lower-case hex.
    fn file(
        &self,
        path: &str,
        content: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<String, BuildError>;
}

/// The files of an output folder, produced one at a time so that no build holds them all.
pub(crate) trait Tree: Sync {
    /// Every path [`Tree::produce`] hands over, each once, sorted.
    fn paths(&self) -> Vec<&str>;
    /// Hand every file of [`Tree::paths`] to `sink` once, the ownership manifest (when there
    /// is one) last.
    fn produce(&self, sink: &dyn FileSink) -> Result<(), BuildError>;
}

/// Files already in memory (the ownership manifest, if any, among them).
impl Tree for BTreeMap<String, Vec<u8>> {
    fn paths(&self) -> Vec<&str> {
        self.keys().map(String::as_str).collect()
    }

    fn produce(&self, sink: &dyn FileSink) -> Result<(), BuildError> {
        self.par_iter()
            .filter(|(path, _)| *path != OWNERSHIP_FILE)
            .try_for_each(|(path, bytes)| {
                sink.file(path, &mut |out| out.write_all(bytes)).map(drop)
            })?;
        if let Some(bytes) = self.get(OWNERSHIP_FILE) {
            sink.file(OWNERSHIP_FILE, &mut |out| out.write_all(bytes))?;
        }
        Ok(())
    }
}

/// A writer that hashes what goes through it.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Run `content` into `inner` (buffered), hashing the bytes; returns `inner` and the digest.
fn hashed<W: Write>(
    inner: W,
    content: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<(W, String)> {
    let mut out = Hashing {
        inner: std::io::BufWriter::with_capacity(64 * 1024, inner),
        hasher: Sha256::new(),
    };
    content(&mut out)?;
    let digest = hex(&out.hasher.finalize());
    let inner = out
        .inner
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)?;
    Ok((inner, digest))
}

/// A tree of files each holding its own name, for the tests of the output steps.
#[cfg(test)]
fn test_files(names: &[&str]) -> BTreeMap<String, Vec<u8>> {
    names
        .iter()
        .map(|n| (n.to_string(), n.as_bytes().to_vec()))
        .collect()
}
