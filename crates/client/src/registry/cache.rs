//! The on-disk copy of one registry URL: `<cache root>/registry/<16 hex of sha256(URL)>/`
//! holds `registry.json` (the bytes as served) and `source.json` (the URL, its validators, when
//! it was fetched and the sha256 of `registry.json`). The lifecycle document beside a registry
//! is cached the same way under its own URL's folder, as `lifecycle.json`; for it a 404 is
//! recorded too (`source.json` with `absent`), so a registry that publishes none is not asked
//! again while that answer is fresh.
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
    /// The server answered 404: there is no document, and no file beside this one counts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    absent: bool,
}

/// A cached copy that checked out: the registry's [`Document`], or what a caller's parser
/// made of the file (or of its recorded absence).
#[derive(Debug)]
pub(super) struct Cached<T = Document> {
    pub(super) document: T,
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
    /// The copy's file name: `registry.json` or `lifecycle.json`.
    file: &'static str,
}

impl Cache {
    /// The cache of the registry document `source` (a URL) under `root`.
    pub(super) fn new(root: &Path, source: &str) -> Cache {
        Cache::named(root, source, "registry.json")
    }

    /// The cache of `source` (a URL) under `root`, its copy kept as `file`.
    pub(super) fn named(root: &Path, source: &str, file: &'static str) -> Cache {
        let digest = fs::digest::sha256_hex(source.as_bytes());
        Cache {
            root: root.to_path_buf(),
            rel: Path::new("registry").join(&digest[..16]),
            source: source.to_string(),
            file,
        }
    }

    /// The folder, for messages.
    pub(super) fn dir(&self) -> PathBuf {
        self.root.join(&self.rel)
    }

    /// The cached copy, when there is one that checks out; why one is ignored goes to
    /// `warnings`. No copy at all is no warning.
    pub(super) fn read(&self, warnings: &mut Vec<String>) -> Option<Cached> {
        self.read_with(warnings, |bytes| match bytes {
            Some(bytes) => Document::parse(bytes, "registry.json").map_err(|e| e.to_string()),
            None => Err("it records a 404, not a document".to_string()),
        })
    }

    /// The cached copy as `parse` reads its bytes (`None`: a recorded 404), when there is one
    /// that checks out; why one is ignored goes to `warnings`.
    pub(super) fn read_with<T>(
        &self,
        warnings: &mut Vec<String>,
        parse: impl FnOnce(Option<&[u8]>) -> Result<T, String>,
    ) -> Option<Cached<T>> {
        match self.read_checked(parse) {
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

    fn read_checked<T>(
        &self,
        parse: impl FnOnce(Option<&[u8]>) -> Result<T, String>,
    ) -> Result<Option<Cached<T>>, String> {
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
        let (document, sha256) = if meta.absent {
            (parse(None)?, meta.sha256)
        } else {
            let file = self.file;
            let bytes = fs::read_capped(&self.root, &self.rel.join(file), MAX_DOCUMENT_BYTES)
                .map_err(|e| format!("{file}: {e}"))?;
            let sha256 = fs::digest::sha256_hex(&bytes);
            if sha256 != meta.sha256 {
                return Err(format!(
                    "{file} does not match the digest source.json records"
                ));
            }
            (parse(Some(&bytes))?, sha256)
        };
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
        self.make_dirs()?;
        fs::atomic::write(&self.dir().join(self.file), bytes).map_err(|e| self.failed(&e))?;
        self.write_meta(validators, fs::digest::sha256_hex(bytes), false)
    }

    /// Record that the server answered 404 now: there is no document (a copy's file, if one
    /// is left, no longer counts).
    pub(super) fn store_absent(&self) -> Result<(), String> {
        self.make_dirs()?;
        self.write_meta(&Validators::default(), String::new(), true)
    }

    /// Record that the server confirmed `cached` (a 304) now.
    pub(super) fn touch<T>(&self, cached: &Cached<T>) -> Result<(), String> {
        self.write_meta(&cached.validators, cached.sha256.clone(), false)
    }

    fn make_dirs(&self) -> Result<(), String> {
        // The root itself is the caller's (followed, like any folder a user names).
        std::fs::create_dir_all(&self.root).map_err(|e| self.failed(&e))?;
        fs::create_dirs_below(&self.root, &self.rel).map_err(|e| self.failed(&e))
    }

    fn write_meta(
        &self,
        validators: &Validators,
        sha256: String,
        absent: bool,
    ) -> Result<(), String> {
        let meta = Meta {
            source: self.source.clone(),
            etag: validators.etag.clone(),
            last_modified: validators.last_modified.clone(),
            fetched_at: acp_registry_core::time::utc_now(),
            sha256,
            absent,
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
