//! The cache of online successes: one JSON file, `online-cache.json`, in the user's cache
//! folder (or `--cache DIR`). Only successes are stored, each with the time it was seen and
//! dropped after the maximum age; failures are always asked again. Archive digests are
//! stored with the identity of the download they hash (strong `ETag`, `Last-Modified`, length
//! and the URL that answered, in `validator`) and reused only while a probe announces the
//! same; a server that identifies nothing (weak or no `ETag`) is downloaded every run.
//!
//! The file carries a format marker: a file that is not ours (or of another format) is never
//! overwritten; the run goes uncached and says so. The provenance facts of a pinned version are
//! kept with the successes, so a cached run reports the same.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub(crate) const CACHE_FILE: &str = "online-cache.json";
const FORMAT: &str = "acp-registry-online-cache/1";
/// A cache file larger than this is not read (it is ours only if we could have written it).
const MAX_CACHE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// Seconds since the epoch when the success was seen.
    pub(crate) at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) validator: Option<String>,
    /// What a package registry said about a pinned version's provenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) facts: Option<super::provenance::Facts>,
}

#[derive(Serialize, Deserialize)]
struct File {
    format: String,
    entries: BTreeMap<String, Entry>,
}

pub(crate) struct Cache {
    /// `None`: disabled (`--no-cache`), or a file we must not overwrite.
    path: Option<PathBuf>,
    entries: BTreeMap<String, Entry>,
    max_age: u64,
    now: u64,
    changed: bool,
}

/// The user's cache folder for this tool: `$XDG_CACHE_HOME`, `~/Library/Caches` on macOS,
/// `%LOCALAPPDATA%` on Windows, else `~/.cache`.
pub(crate) fn default_dir() -> Option<PathBuf> {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        env("LOCALAPPDATA")
    } else if let Some(xdg) = env("XDG_CACHE_HOME") {
        Some(xdg)
    } else if cfg!(target_os = "macos") {
        env("HOME").map(|h| h.join("Library/Caches"))
    } else {
        env("HOME").map(|h| h.join(".cache"))
    };
    base.map(|b| b.join("acp-registry"))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Cache {
    pub(crate) fn disabled() -> Cache {
        Cache {
            path: None,
            entries: BTreeMap::new(),
            max_age: 0,
            now: now(),
            changed: false,
        }
    }

    /// Open the cache in `dir`. A file that is not a regular file, too large, or not in our
    /// format is left alone: the run goes on without a cache and says why.
    pub(crate) fn open(dir: &Path, max_age: Duration) -> (Cache, Option<String>) {
        let mut cache = Cache {
            path: Some(dir.join(CACHE_FILE)),
            max_age: max_age.as_secs(),
            ..Cache::disabled()
        };
        let path = dir.join(CACHE_FILE);
        let bytes = match acp_registry_core::fs::open_path(&path)
            .and_then(|file| acp_registry_core::fs::read_limited(file, MAX_CACHE_BYTES))
        {
            Err(acp_registry_core::fs::ReadError::NotFound) => return (cache, None), // no cache yet
            read => read.ok(),
        };
        let file = bytes
            .and_then(|bytes| serde_json::from_slice::<File>(&bytes).ok())
            .filter(|f| f.format == FORMAT);
        if let Some(file) = file {
            cache.entries = file.entries;
            (cache, None)
        } else {
            cache.path = None;
            let warning = format!(
                "{} is not an acp-registry cache file; it is left alone and this run is not cached (remove it or pass --cache DIR)",
                path.display()
            );
            (cache, Some(warning))
        }
    }

    /// A success seen for `key` within the maximum age.
    pub(crate) fn fresh(&self, key: &str) -> Option<&Entry> {
        self.path.as_ref()?;
        self.entries
            .get(key)
            .filter(|e| e.at <= self.now && self.now - e.at <= self.max_age)
    }

    /// Record a success.
    pub(crate) fn put(&mut self, key: String, sha256: Option<String>, validator: Option<String>) {
        if self.path.is_some() {
            let at = self.now;
            self.entries.insert(
                key,
                Entry {
                    at,
                    sha256,
                    validator,
                    facts: None,
                },
            );
            self.changed = true;
        }
    }

    /// Record what a registry said about a pinned version's provenance.
    pub(crate) fn put_facts(&mut self, key: String, facts: super::provenance::Facts) {
        if self.path.is_some() {
            let entry = Entry {
                at: self.now,
                sha256: None,
                validator: None,
                facts: Some(facts),
            };
            self.entries.insert(key, entry);
            self.changed = true;
        }
    }

    /// Write the file (expired entries dropped) through a temporary file and a rename.
    pub(crate) fn save(&mut self) -> Result<(), String> {
        let Some(path) = self.path.as_ref().filter(|_| self.changed) else {
            return Ok(());
        };
        let (now, max_age) = (self.now, self.max_age);
        self.entries
            .retain(|_, e| e.at <= now && now - e.at <= max_age);
        let file = File {
            format: FORMAT.into(),
            entries: std::mem::take(&mut self.entries),
        };
        let bytes = serde_json::to_vec(&file).expect("serialisable");
        self.entries = file.entries;
        write_replacing(path, &bytes)
            .map_err(|e| format!("cannot write the cache {}: {e}", path.display()))
    }
}

fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
    acp_registry_core::fs::atomic::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successes_survive_a_save_and_expire_with_age() {
        let dir = tempfile::tempdir().unwrap();
        let (mut cache, warning) = Cache::open(dir.path(), Duration::from_secs(60));
        assert!(warning.is_none());
        cache.put("probe https://a".into(), None, None);
        cache.save().unwrap();
        let (cache, _) = Cache::open(dir.path(), Duration::from_secs(60));
        assert!(cache.fresh("probe https://a").is_some());
        let (mut old, _) = Cache::open(dir.path(), Duration::from_secs(60));
        old.now += 61;
        assert!(old.fresh("probe https://a").is_none());
    }

    #[test]
    fn a_foreign_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CACHE_FILE), "not ours").unwrap();
        let (mut cache, warning) = Cache::open(dir.path(), Duration::from_secs(60));
        assert!(warning.unwrap().contains("left alone"));
        cache.put("probe https://a".into(), None, None);
        cache.save().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(CACHE_FILE)).unwrap(),
            "not ours"
        );
    }
}
