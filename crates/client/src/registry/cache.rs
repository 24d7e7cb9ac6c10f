//! The on-disk copy of one registry URL: `<cache root>/registry/<16 hex of sha256(URL)>/`
//! holds `registry.json` (the bytes as served) and `source.json` (the URL, its validators, when
//! it was fetched and the sha256 of `registry.json`).
//!
//! Both files are written atomically (a reader sees the old file or the new one) and read back
//! like any untrusted file: no link followed, regular files only, size caps, and the document
//! parsed again with [`Document::parse`]. A copy that does not check out (unreadable, over a
//! cap, another URL's, a digest that does not match, not a document) is ignored with a
//! warning, never trusted; the next good answer replaces it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use acp_registry_core::fs::{self, ReadError};
use serde::{Deserialize, Serialize};

use crate::document::{Document, MAX_DOCUMENT_BYTES};
use crate::net::Validators;

/// The largest `source.json` read (it holds a URL, two validators and two short strings).
const MAX_META_BYTES: u64 = 64 * 1024;

/// `source.json`: what the copy beside it is.
#[derive(Debug, Serialize, Deserialize)]
struct Meta {
    /// The source text the copy was fetched from (the folder is named by its digest).
    source: String,
    etag: Option<String>,
    last_modified: Option<String>,
    /// When the server last gave or confirmed this copy, `YYYY-MM-DDTHH:MM:SSZ`.
    fetched_at: String,
    /// Lowercase hex sha256 of `registry.json`, so a copy and a `source.json` of different
    /// writes (a run killed between the two) are never paired.
    sha256: String,
}

/// A cached copy that checked out.
#[derive(Debug)]
pub(super) struct Cached {
    pub(super) document: Document,
    pub(super) validators: Validators,
    /// Now minus `fetched_at`; `None` when `fetched_at` is in the future or unreadable (such
    /// a copy is never fresh).
    pub(super) age: Option<Duration>,
    sha256: String,
}

/// The cache folder of one source.
pub(super) struct Cache {
    root: PathBuf,
    rel: PathBuf,
    source: String,
}

impl Cache {
    /// The cache of `source` (a URL) under `root`.
    pub(super) fn new(root: &Path, source: &str) -> Cache {
        let digest = fs::digest::sha256_hex(source.as_bytes());
        Cache {
            root: root.to_path_buf(),
            rel: Path::new("registry").join(&digest[..16]),
            source: source.to_string(),
        }
    }

    /// The folder, for messages.
    pub(super) fn dir(&self) -> PathBuf {
        self.root.join(&self.rel)
    }

    /// The cached copy, when there is one that checks out; why one is ignored goes to
    /// `warnings`. No copy at all is no warning.
    pub(super) fn read(&self, warnings: &mut Vec<String>) -> Option<Cached> {
        match self.read_checked() {
            Ok(cached) => cached,
            Err(reason) => {
                warnings.push(format!(
                    "ignoring the cached copy in {}: {reason}",
                    self.dir().display()
                ));
                None
            }
        }
    }

    fn read_checked(&self) -> Result<Option<Cached>, String> {
        let meta = match fs::read_capped(&self.root, &self.rel.join("source.json"), MAX_META_BYTES)
        {
            Err(ReadError::NotFound) => return Ok(None),
            other => other.map_err(|e| format!("source.json: {e}"))?,
        };
        let meta: Meta = serde_json::from_slice(&meta).map_err(|e| format!("source.json: {e}"))?;
        if meta.source != self.source {
            return Err(format!(
                "it is the copy of `{}`",
                meta.source.escape_debug()
            ));
        }
        let bytes = fs::read_capped(
            &self.root,
            &self.rel.join("registry.json"),
            MAX_DOCUMENT_BYTES,
        )
        .map_err(|e| format!("registry.json: {e}"))?;
        let sha256 = fs::digest::sha256_hex(&bytes);
        if sha256 != meta.sha256 {
            return Err("registry.json does not match the digest source.json records".into());
        }
        let document = Document::parse(&bytes, "registry.json").map_err(|e| e.to_string())?;
        let age = acp_registry_core::time::parse_iso_utc_seconds(&meta.fetched_at)
            .and_then(|at| u64::try_from(now_secs().checked_sub(at)?).ok())
            .map(Duration::from_secs);
        Ok(Some(Cached {
            document,
            validators: Validators {
                etag: meta.etag,
                last_modified: meta.last_modified,
            },
            age,
            sha256,
        }))
    }

    /// Keep `bytes` (a document that parsed) as the copy, fetched now with `validators`.
    pub(super) fn store(&self, bytes: &[u8], validators: &Validators) -> Result<(), String> {
        // The root itself is the caller's (followed, like any folder a user names).
        std::fs::create_dir_all(&self.root).map_err(|e| self.failed(&e))?;
        fs::create_dirs_below(&self.root, &self.rel).map_err(|e| self.failed(&e))?;
        fs::atomic::write(&self.dir().join("registry.json"), bytes).map_err(|e| self.failed(&e))?;
        self.write_meta(validators, fs::digest::sha256_hex(bytes))
    }

    /// Record that the server confirmed `cached` (a 304) now.
    pub(super) fn touch(&self, cached: &Cached) -> Result<(), String> {
        self.write_meta(&cached.validators, cached.sha256.clone())
    }

    fn write_meta(&self, validators: &Validators, sha256: String) -> Result<(), String> {
        let meta = Meta {
            source: self.source.clone(),
            etag: validators.etag.clone(),
            last_modified: validators.last_modified.clone(),
            fetched_at: acp_registry_core::time::utc_now(),
            sha256,
        };
        let text = serde_json::to_vec_pretty(&meta).map_err(|e| e.to_string())?;
        fs::no_link_below(&self.root, &self.rel.join("source.json"))
            .map_err(|e| self.failed(&e))?;
        fs::atomic::write(&self.dir().join("source.json"), &text).map_err(|e| self.failed(&e))
    }

    fn failed(&self, error: &dyn std::fmt::Display) -> String {
        format!(
            "cannot update the cache in {}: {error}",
            self.dir().display()
        )
    }
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
