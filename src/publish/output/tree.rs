//! The files of an output folder as a build produces them ([`Tree`]), where they go
//! ([`FileSink`]), and the hashing of each file as it is written.

use std::collections::BTreeMap;
use std::io::Write;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::ownership::OWNERSHIP_FILE;
use crate::publish::error::BuildError;
use acp_registry_core::fs::digest::hex;

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
pub(super) fn hashed<W: Write>(
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
