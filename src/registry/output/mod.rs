//! The output folder `build` and `site` replace: the tool's ownership manifest
//! (`.acp-registry-output.json`), the checks before replacing a folder (overlap with the
//! registry, ownership, removability), the atomic replacement and the `--check` comparison.
//!
//! The output folder may be a previous run's, a user's, or (in CI) part of an untrusted pull
//! request: it is read without following links, opened without blocking, and replaced only
//! when every path in it is one this tool wrote and nobody changed since.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::build::{io, BuildError};
use crate::diagnostics::escape;
use crate::fs::atomic::{self, sync_dir, AtomicFile, Batch};
use crate::fs::digest::hex;
use crate::fs::{self, Kind};

/// The ownership manifest written at the top of every output folder (and of `site/`).
pub const OWNERSHIP_FILE: &str = ".acp-registry-output.json";
/// The key that identifies an ownership manifest and its format.
const FORMAT_KEY: &str = "acp-registry-output";
const FORMAT: u64 = 1;
/// A manifest larger than this is not ours (10,000 agents need about 4 MB).
const MANIFEST_LIMIT: u64 = 64 << 20;
/// At most this many problem paths are listed (and looked for) in a refusal.
const LISTED_LIMIT: usize = 50;
/// `<registry>/dist` may hold the output: discovery never treats `dist` as an entry.
const OUTPUT_IN_REGISTRY: &str = "dist";

/// Write the ownership manifest listing `digests` (path and sha256; the manifest itself left
/// out) to `out`, in the order given (sorted by path, each once, by every caller), so it is
/// as deterministic as the files it lists. Streamed: at 100,000 agents the listing is tens of
/// megabytes. The bytes are those of `serde_json`'s pretty printer, plus a final newline.
pub fn write_ownership_manifest<'a>(
    out: &mut dyn Write,
    digests: impl Iterator<Item = (&'a str, &'a str)>,
) -> std::io::Result<()> {
    write!(out, "{{\n  \"{FORMAT_KEY}\": {FORMAT},\n  \"files\": {{")?;
    let mut first = true;
    for (path, digest) in digests.filter(|(path, _)| *path != OWNERSHIP_FILE) {
        out.write_all(if first { b"\n    " } else { b",\n    " })?;
        serde_json::to_writer(&mut *out, path)?;
        out.write_all(b": ")?;
        serde_json::to_writer(&mut *out, digest)?;
        first = false;
    }
    out.write_all(if first { b"}\n}\n" } else { b"\n  }\n}\n" })
}

/// The paths and digests listed by the manifest in `dir`; `None` when there is no readable
/// manifest of ours there (absent, a link, too large, or not our format).
fn read_listing(dir: &Path) -> Option<BTreeMap<String, String>> {
    let bytes = read_capped(&dir.join(OWNERSHIP_FILE), MANIFEST_LIMIT).ok()??;
    let doc: Value = serde_json::from_slice(&bytes).ok()?;
    if doc.get(FORMAT_KEY)?.as_u64()? != FORMAT {
        return None;
    }
    doc.get("files")?
        .as_object()?
        .iter()
        .map(|(path, digest)| Some((path.clone(), digest.as_str()?.to_string())))
        .collect()
}

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

fn file_digest(path: &Path) -> std::io::Result<String> {
    let mut file = fs::open_path(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 64 * 1024];
    loop {
        match file.read(&mut buffer)? {
            0 => return Ok(hex(&hasher.finalize())),
            n => hasher.update(&buffer[..n]),
        }
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

// --- where the output may go ------------------------------------------------------------

/// The output folder: as the user named it (for messages) and with links resolved (where
/// it is written, so a link the user chose as `--out` is kept and its target replaced).
#[derive(Debug, Clone)]
pub struct Destination {
    /// As the user named it.
    pub shown: PathBuf,
    /// Absolute, links resolved.
    pub path: PathBuf,
}

/// `path` absolute with every link resolved: the longest existing prefix canonicalised,
/// the rest (which does not exist, so holds no link) appended.
fn resolved(path: &Path) -> Result<PathBuf, BuildError> {
    let absolute = std::path::absolute(path).map_err(io(path))?;
    let parts: Vec<Component> = absolute.components().collect();
    for existing in (1..=parts.len()).rev() {
        let head: PathBuf = parts[..existing].iter().collect();
        match std::fs::canonicalize(&head) {
            Ok(mut out) => {
                for part in &parts[existing..] {
                    match part {
                        Component::ParentDir => {
                            out.pop();
                        }
                        Component::CurDir => {}
                        other => out.push(other),
                    }
                }
                return Ok(out);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(path)(e)),
        }
    }
    Ok(absolute)
}

/// Refuse an output (a folder or a file) that overlaps the registry, links resolved on both
/// sides: inside it, except below `<registry>/dist` (discovery never reads it as an entry, so
/// a registry at the repository root builds into `dist/` there), or holding it. Every command
/// that writes somewhere named by `--out` asks this first.
pub fn refuse_overlap(out: &Path, registry: &Path) -> Result<(), BuildError> {
    let (path, registry_path) = (resolved(out)?, resolved(registry)?);
    let inside = path.starts_with(&registry_path)
        && !path.starts_with(registry_path.join(OUTPUT_IN_REGISTRY));
    if inside || registry_path.starts_with(&path) {
        return Err(BuildError::OverlapsRegistry {
            out: out.to_path_buf(),
            registry: registry.to_path_buf(),
        });
    }
    Ok(())
}

/// Refuse an output that overlaps the registry ([`refuse_overlap`]), is not a
/// folder, holds paths this tool did not write, or cannot be removed.
pub fn check_destination(out: &Path, registry: &Path) -> Result<Destination, BuildError> {
    refuse_overlap(out, registry)?;
    let path = resolved(out)?;
    let destination = Destination {
        shown: out.to_path_buf(),
        path,
    };
    match std::fs::symlink_metadata(&destination.path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(destination),
        Err(e) => return Err(io(out)(e)),
        Ok(meta) if !meta.is_dir() => return Err(BuildError::NotAFolder(out.to_path_buf())),
        Ok(_) => {}
    }
    let mut problems = Problems::default();
    removable(&destination.path, Kind::Dir, "", &mut problems);
    judge_folder(&destination.path, "", &mut problems)?;
    problems.into_result(out)?;
    Ok(destination)
}

/// What stops a folder from being replaced, in walk order.
#[derive(Default)]
struct Problems {
    foreign: Vec<String>,
    stuck: Vec<String>,
    truncated: bool,
    /// A non-empty folder without any manifest of ours (e.g. an older acp-registry's output).
    unmarked: bool,
}

impl Problems {
    fn full(&self) -> bool {
        self.foreign.len() + self.stuck.len() >= LISTED_LIMIT
    }

    fn foreign(&mut self, path: &str, why: &str) {
        if self.full() {
            self.truncated = true;
        } else {
            self.foreign.push(format!("{} ({why})", shown(path)));
        }
    }

    fn stuck(&mut self, path: &str, error: &std::io::Error) {
        if self.full() {
            self.truncated = true;
        } else {
            self.stuck.push(format!("{} ({error})", shown(path)));
        }
    }

    fn into_result(self, out: &Path) -> Result<(), BuildError> {
        let more = if self.truncated { "\n  …" } else { "" };
        let list = |paths: &[String]| format!("  {}{more}", paths.join("\n  "));
        if !self.foreign.is_empty() {
            let hint = if self.unmarked {
                format!("\n(there is no {OWNERSHIP_FILE}: an output written by an earlier acp-registry must be deleted by hand once)")
            } else {
                String::new()
            };
            return Err(BuildError::ForeignOutput {
                out: out.to_path_buf(),
                paths: format!("{}{hint}", list(&self.foreign)),
            });
        }
        if !self.stuck.is_empty() {
            return Err(BuildError::ReadOnlyOutput {
                out: out.to_path_buf(),
                paths: list(&self.stuck),
            });
        }
        Ok(())
    }
}

/// Judge `dir` by its own manifest (none: every path in it is foreign).
fn judge_folder(dir: &Path, shown_prefix: &str, problems: &mut Problems) -> Result<(), BuildError> {
    let listing = read_listing(dir);
    if listing.is_none() && !entries(dir).map_err(io(dir))?.is_empty() {
        problems.unmarked = true;
        if std::fs::symlink_metadata(dir.join(OWNERSHIP_FILE)).is_ok() {
            let display = join(shown_prefix, OWNERSHIP_FILE);
            problems.foreign(&display, "not a manifest acp-registry wrote");
        }
    }
    judge(
        dir,
        "",
        &listing.unwrap_or_default(),
        shown_prefix,
        problems,
    )
}

/// Every path under `dir` must be listed in `listing` (keys relative to the listing's
/// folder, `key` being `dir`'s) with an unchanged digest, or lie in a sub-folder carrying a
/// valid manifest of its own (e.g. `site/` replaced by `acp-registry site`). Listed files
/// that are missing are fine: replacing the folder loses nothing of anyone's.
fn judge(
    dir: &Path,
    key: &str,
    listing: &BTreeMap<String, String>,
    shown_prefix: &str,
    problems: &mut Problems,
) -> Result<(), BuildError> {
    for (name, kind) in entries(dir).map_err(io(dir))? {
        if problems.full() {
            problems.truncated = true;
            return Ok(());
        }
        let path = dir.join(&name);
        let display = join(shown_prefix, &name.to_string_lossy());
        let Some(name) = name.to_str() else {
            problems.foreign(&display, "a name that is not UTF-8");
            continue;
        };
        let rel = join(key, name);
        removable(&path, kind, &display, problems);
        match kind {
            Kind::Link => problems.foreign(&display, "a symbolic link"),
            Kind::Special(_) => problems.foreign(&display, "not a regular file"),
            Kind::Dir if read_listing(&path).is_some() => judge_folder(&path, &display, problems)?,
            Kind::Dir => judge(&path, &rel, listing, &display, problems)?,
            Kind::File if rel == OWNERSHIP_FILE => {}
            Kind::File => match listing.get(&rel) {
                None => problems.foreign(&display, "not written by acp-registry"),
                Some(digest) if file_digest(&path).ok().as_ref() != Some(digest) => {
                    problems.foreign(&display, "changed since acp-registry wrote it");
                }
                Some(_) => {}
            },
        }
    }
    Ok(())
}

/// Whether this process may remove `path` (a folder also needs its entries removable):
/// `access(2)` sees modes, read-only mounts and the immutable/append-only attributes that
/// stop even root, so the old output is never half removed.
fn removable(path: &Path, kind: Kind, display: &str, problems: &mut Problems) {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mode = match kind {
            Kind::Dir => libc::W_OK | libc::X_OK,
            Kind::File => libc::W_OK,
            Kind::Link | Kind::Special(_) => return,
        };
        let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return;
        };
        // SAFETY: a valid NUL-terminated path for the duration of the call.
        let result =
            unsafe { libc::faccessat(libc::AT_FDCWD, c_path.as_ptr(), mode, libc::AT_EACCESS) };
        if result != 0 {
            let error = std::io::Error::last_os_error();
            problems.stuck(if display.is_empty() { "." } else { display }, &error);
        }
    }
    #[cfg(not(unix))]
    let _ = (path, kind, display, problems);
}

// --- producing files ---------------------------------------------------------------------

/// Where the files of a [`Tree`] go as they are produced: written into staging, or compared
/// with the existing output. Called from several threads at once.
pub trait FileSink: Sync {
    /// Take the file at `path` (`/`-separated, relative), whose bytes `content` writes;
    /// returns their sha256 in lower-case hex.
    fn file(
        &self,
        path: &str,
        content: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<String, BuildError>;
}

/// The files of an output folder, produced one at a time so that no build holds them all.
pub trait Tree: Sync {
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

// --- writing ---------------------------------------------------------------------------

fn parent_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn folder_name(out: &Path) -> String {
    out.file_name()
        .map_or("dist".into(), |n| n.to_string_lossy().into_owned())
}

/// `.<name>.<tag>-<pid>` beside `out`: staging (`tmp`) and the old tree during a swap
/// without `RENAME_EXCHANGE` (`old`).
fn sibling(out: &Path, tag: &str) -> PathBuf {
    out.with_file_name(format!(
        ".{}.{tag}-{}",
        folder_name(out),
        std::process::id()
    ))
}

/// The pid in a leftover's name when it has our pattern `.<name>.(tmp|old)-<pid>`.
fn leftover_pid(file: &str, out_name: &str) -> Option<u32> {
    let rest = file.strip_prefix(&format!(".{out_name}."))?;
    let pid = rest
        .strip_prefix("tmp-")
        .or_else(|| rest.strip_prefix("old-"))?;
    pid.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| pid.parse().ok())?
}

/// Whether every path under `dir` (`key` in the listing) is listed, or is the temporary
/// file of the real manifest at the top.
fn all_listed(dir: &Path, key: &str, listing: &BTreeMap<String, String>) -> bool {
    let Ok(list) = entries(dir) else { return false };
    list.into_iter().all(|(name, kind)| {
        let Some(name) = name.to_str() else {
            return false;
        };
        let rel = join(key, name);
        match kind {
            // A kill while the real manifest was written leaves its temporary file.
            Kind::File => {
                rel == OWNERSHIP_FILE
                    || listing.contains_key(&rel)
                    || (key.is_empty() && atomic::is_temporary(name, OWNERSHIP_FILE))
            }
            Kind::Dir => {
                let prefix = format!("{rel}/");
                listing.keys().any(|k| k.starts_with(&prefix))
                    && all_listed(&dir.join(name), &rel, listing)
            }
            Kind::Link | Kind::Special(_) => false,
        }
    })
}

/// Whether a leftover folder is provably one of ours: every path in it is listed by the
/// manifest we write into staging first (a kill may leave a file half written, so digests
/// are not compared), or it holds nothing but a manifest cut short.
fn leftover_is_ours(dir: &Path) -> bool {
    let listing = read_listing(dir).unwrap_or_default();
    all_listed(dir, "", &listing)
}

/// Remove staging and old trees of killed runs of ours beside `out`. A folder that only
/// looks like one (a live process's, or one holding anything we did not write) is kept.
fn remove_leftovers(out: &Path) {
    let name = folder_name(out);
    let parent = parent_of(out);
    let Ok(list) = entries(&parent) else { return };
    for (file, kind) in list {
        let Some(pid) = file.to_str().and_then(|f| leftover_pid(f, &name)) else {
            continue;
        };
        let path = parent.join(&file);
        if kind == Kind::Dir && fs::process_is_gone(pid) && leftover_is_ours(&path) {
            // Best effort: a leftover that cannot be removed harms nothing.
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Write the files of `tree` as the complete new content of the destination: into a fresh
/// folder beside it, as they are produced, flushed to disk, then swapped in with one atomic
/// exchange. A failure or a kill at any moment leaves the old complete folder or the new
/// complete one; a failure removes the staging folder and names the step that failed.
pub fn write_atomically(destination: &Destination, tree: &impl Tree) -> Result<(), BuildError> {
    let out = &destination.path;
    let unchanged = |what: &str| unchanged(destination, what);
    let parent = parent_of(out);
    std::fs::create_dir_all(&parent).map_err(unchanged("creating its parent folder"))?;
    remove_leftovers(out);
    let staging = sibling(out, "tmp");
    // The staging folder's name is ours, not the user's: messages name the output instead.
    std::fs::create_dir(&staging).map_err(unchanged("creating a folder beside it"))?;
    let staged = stage(destination, &staging, tree)
        .and_then(|()| sync_dir(&parent).map_err(unchanged("flushing its parent folder")));
    if let Err(error) = staged {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(error);
    }
    replace(destination, &staging)
}

/// A failure of step `what` that left the destination as it was.
fn unchanged<'a>(
    destination: &'a Destination,
    what: &str,
) -> impl FnOnce(std::io::Error) -> BuildError + 'a {
    let what = what.to_string();
    move |source| BuildError::Unchanged {
        out: destination.shown.clone(),
        what,
        source,
    }
}

/// Every file of `tree` into `staging`, durable before this returns: first a listing of every
/// path (it marks the folder as ours should the run be killed, so it is flushed at once;
/// digests are not known yet), then each file as it is produced, and last the real ownership
/// manifest renamed over the listing; then one [`Batch::sync`] of them all and an fsync of
/// every folder, deepest first. No file is flushed on its own: 10,000 fsyncs cost more than
/// the rest of the writing, and nobody reads the staging folder before the swap.
fn stage(destination: &Destination, staging: &Path, tree: &impl Tree) -> Result<(), BuildError> {
    let paths = tree.paths();
    let unchanged = |what: &str| unchanged(destination, what);
    let sink = Staging {
        destination,
        staging,
        expected: paths.iter().copied().collect(),
        written: AtomicUsize::new(0),
        batch: Batch::new(staging).map_err(unchanged("opening the new folder"))?,
    };
    if sink.expected.contains(OWNERSHIP_FILE) {
        let listed = paths.iter().map(|path| (*path, ""));
        let target = staging.join(OWNERSHIP_FILE);
        let (file, _) = hashed(
            sink.batch
                .create_new(&target)
                .map_err(sink.failed(OWNERSHIP_FILE))?,
            &mut |out| write_ownership_manifest(out, listed.clone()),
        )
        .map_err(sink.failed(OWNERSHIP_FILE))?;
        file.sync_all().map_err(sink.failed(OWNERSHIP_FILE))?;
    }
    let mut dirs = BTreeSet::from([staging.to_path_buf()]);
    for path in &paths {
        if let Some(dir) = staging.join(path).parent() {
            if dirs.insert(dir.to_path_buf()) {
                std::fs::create_dir_all(dir)
                    .map_err(unchanged(&format!("creating {}", shown(path))))?;
            }
        }
    }
    tree.produce(&sink)?;
    sink.all_written()?;
    sink.batch
        .sync()
        .map_err(unchanged("flushing the new files to disk"))?;
    for dir in dirs.iter().rev() {
        let relative = dir.strip_prefix(staging).unwrap_or(dir).to_string_lossy();
        let what = if relative.is_empty() {
            "flushing the new folder".to_string()
        } else {
            format!("flushing {}", shown(&relative))
        };
        sync_dir(dir).map_err(unchanged(&what))?;
    }
    Ok(())
}

/// The staging folder as a [`FileSink`]: only the planned paths, each written once, into
/// one [`Batch`].
struct Staging<'a> {
    destination: &'a Destination,
    staging: &'a Path,
    expected: BTreeSet<&'a str>,
    written: AtomicUsize,
    batch: Batch,
}

impl Staging<'_> {
    fn failed(&self, path: &str) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
        unchanged(self.destination, &format!("writing {}", shown(path)))
    }

    /// Every planned file arrived (a file produced twice fails on `create_new`).
    fn all_written(&self) -> Result<(), BuildError> {
        let written = self.written.load(Ordering::SeqCst);
        if written == self.expected.len() {
            return Ok(());
        }
        Err(BuildError::Unchanged {
            out: self.destination.shown.clone(),
            what: "writing every planned file".into(),
            source: std::io::Error::other(format!(
                "{written} of {} planned files were produced",
                self.expected.len()
            )),
        })
    }
}

impl FileSink for Staging<'_> {
    fn file(
        &self,
        path: &str,
        content: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<String, BuildError> {
        if !self.expected.contains(path) {
            return Err(self.failed(path)(std::io::Error::other(
                "not a planned file",
            )));
        }
        let target = self.staging.join(path);
        let mut write = || {
            if path == OWNERSHIP_FILE {
                // Renamed over the listing, so a kill leaves one or the other, whole.
                let (file, digest) = hashed(AtomicFile::create(&target)?, content)?;
                file.commit_into(&self.batch).map(|()| digest)
            } else {
                let (_, digest) = hashed(self.batch.create_new(&target)?, content)?;
                Ok(digest)
            }
        };
        let digest = write().map_err(self.failed(path))?;
        self.written.fetch_add(1, Ordering::SeqCst);
        Ok(digest)
    }
}

/// Put the complete `staging` tree in place of the destination and remove the old tree.
fn replace(destination: &Destination, staging: &Path) -> Result<(), BuildError> {
    let out = &destination.path;
    let exists = std::fs::symlink_metadata(out).is_ok();
    let moved = if exists {
        swap(staging, out)
    } else {
        std::fs::rename(staging, out)
    };
    if let Err(source) = moved {
        let _ = std::fs::remove_dir_all(staging);
        return Err(unchanged(destination, "putting the new output in place")(
            source,
        ));
    }
    if exists {
        // `staging` now holds the previous tree.
        std::fs::remove_dir_all(staging).map_err(|source| BuildError::OldOutputLeft {
            out: destination.shown.clone(),
            old: staging.to_path_buf(),
            source,
        })?;
    }
    sync_dir(&parent_of(out)).map_err(io(out))
}

/// Exchange two folders atomically (Linux `renameat2(RENAME_EXCHANGE)`); elsewhere, or on
/// file systems without it, two renames (a kill between them leaves the old tree under a
/// hidden name, which the next build cleans up; a failed second rename is undone).
fn swap(new: &Path, out: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if atomic::renameat2(new, out, libc::RENAME_EXCHANGE)? {
        return Ok(());
    }
    let old = sibling(out, "old");
    std::fs::rename(out, &old)?;
    if let Err(error) = std::fs::rename(new, out) {
        let _ = std::fs::rename(&old, out);
        return Err(error);
    }
    std::fs::rename(&old, new)
}

// --- `--check` -------------------------------------------------------------------------

/// A difference between a fresh build and an existing folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// A file of the build is not in the folder.
    Missing(String),
    /// A path of the folder is not in the build.
    Extra(String),
    /// The folder's file differs, or is not a regular file.
    Changed(String),
}

impl Difference {
    fn path(&self) -> &str {
        match self {
            Difference::Missing(p) | Difference::Extra(p) | Difference::Changed(p) => p,
        }
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let label = match self {
            Difference::Missing(_) => "missing ",
            Difference::Extra(_) => "extra   ",
            Difference::Changed(_) => "changed ",
        };
        write!(f, "{label} {}", shown(self.path()))
    }
}

/// Every path under `root` with its own type (links not followed).
fn list_paths(
    root: &Path,
    prefix: &str,
    out: &mut BTreeMap<String, (PathBuf, Kind)>,
) -> Result<(), BuildError> {
    for (name, kind) in entries(root).map_err(io(root))? {
        let relative = join(prefix, &name.to_string_lossy());
        let path = root.join(&name);
        if kind == Kind::Dir {
            list_paths(&path, &relative, out)?;
        } else {
            out.insert(relative, (path, kind));
        }
    }
    Ok(())
}

/// Compare a fresh build with the folder `out` (sorted by path), file by file as they are
/// produced. Links and special files are differences, never read.
pub fn compare(out: &Path, tree: &impl Tree) -> Result<Vec<Difference>, BuildError> {
    let mut existing = BTreeMap::new();
    if std::fs::symlink_metadata(out).is_ok_and(|m| m.is_dir()) {
        list_paths(out, "", &mut existing)?;
    }
    let comparison = Comparison {
        existing: &existing,
        differences: Mutex::new(Vec::new()),
    };
    tree.produce(&comparison)?;
    let mut differences = comparison
        .differences
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let planned: BTreeSet<&str> = tree.paths().into_iter().collect();
    for path in existing.keys() {
        if !planned.contains(path.as_str()) {
            differences.push(Difference::Extra(path.clone()));
        }
    }
    differences.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(differences)
}

/// The existing output as a [`FileSink`]: notes each produced file that is missing there
/// or differs.
struct Comparison<'a> {
    existing: &'a BTreeMap<String, (PathBuf, Kind)>,
    differences: Mutex<Vec<Difference>>,
}

impl FileSink for Comparison<'_> {
    fn file(
        &self,
        path: &str,
        content: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<String, BuildError> {
        let (digest, difference) = match self.existing.get(path) {
            Some((disk, Kind::File)) => {
                let mut read = |disk| {
                    let file = std::io::BufReader::new(fs::open_path(disk)?);
                    let (same, digest) = hashed(SameBytes::new(file), content)?;
                    Ok::<_, std::io::Error>((digest, same.at_end()?))
                };
                let (digest, same) = read(disk).map_err(io(disk))?;
                (
                    digest,
                    (!same).then(|| Difference::Changed(path.to_string())),
                )
            }
            other => {
                let (_, digest) = hashed(std::io::sink(), content).map_err(io(Path::new(path)))?;
                let difference = match other {
                    None => Difference::Missing(path.to_string()),
                    Some(_) => Difference::Changed(path.to_string()),
                };
                (digest, Some(difference))
            }
        };
        if let Some(difference) = difference {
            self.differences
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(difference);
        }
        Ok(digest)
    }
}

/// A writer that checks the bytes written equal those read from `disk`.
struct SameBytes<R> {
    disk: R,
    same: bool,
    scratch: Vec<u8>,
}

impl<R: Read> SameBytes<R> {
    fn new(disk: R) -> Self {
        SameBytes {
            disk,
            same: true,
            scratch: Vec::new(),
        }
    }

    /// Whether everything matched and the file holds nothing more.
    fn at_end(mut self) -> std::io::Result<bool> {
        Ok(self.same && self.disk.read(&mut [0])? == 0)
    }
}

impl<R: Read> Write for SameBytes<R> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.same {
            self.scratch.resize(buf.len(), 0);
            match self.disk.read_exact(&mut self.scratch) {
                Ok(()) => self.same = self.scratch == buf,
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => self.same = false,
                Err(e) => return Err(e),
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(names: &[&str]) -> BTreeMap<String, Vec<u8>> {
        names
            .iter()
            .map(|n| (n.to_string(), n.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn the_manifest_lists_every_other_path_with_its_digest_sorted() {
        let mut set = files(&["b.json", "a/x.svg", "SHA256SUMS"]);
        set.insert(OWNERSHIP_FILE.into(), b"stale".to_vec());
        let digests: BTreeMap<String, String> = set
            .iter()
            .map(|(path, bytes)| (path.clone(), crate::fs::digest::sha256_hex(bytes)))
            .collect();
        let listed = digests.iter().map(|(p, d)| (p.as_str(), d.as_str()));
        let mut bytes = Vec::new();
        write_ownership_manifest(&mut bytes, listed).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&String> = doc["files"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["SHA256SUMS", "a/x.svg", "b.json"]);
        assert_eq!(
            doc["files"]["b.json"],
            crate::fs::digest::sha256_hex(b"b.json")
        );
        assert!(text.ends_with("}\n"));
    }

    /// The streamed manifest is byte for byte what the pretty printer gave before it was
    /// streamed (earlier outputs keep verifying as ours), empty and escaped paths included.
    #[test]
    fn the_streamed_manifest_is_the_pretty_printed_json() {
        let cases: [&[(&str, &str)]; 3] = [
            &[],
            &[("a \"quoted\"\\path\u{7}é", "00")],
            &[
                ("SHA256SUMS", "ab"),
                (OWNERSHIP_FILE, "x"),
                ("site/i.html", "cd"),
            ],
        ];
        for listed in cases {
            let mut streamed = Vec::new();
            write_ownership_manifest(&mut streamed, listed.iter().copied()).unwrap();
            let files: serde_json::Map<String, Value> = listed
                .iter()
                .filter(|(path, _)| *path != OWNERSHIP_FILE)
                .map(|(path, digest)| ((*path).to_string(), Value::from(*digest)))
                .collect();
            let doc = serde_json::json!({ FORMAT_KEY: FORMAT, "files": files });
            let mut pretty = serde_json::to_vec_pretty(&doc).unwrap();
            pretty.push(b'\n');
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                String::from_utf8(pretty).unwrap()
            );
        }
    }

    #[test]
    fn leftover_names_match_only_our_pattern() {
        assert_eq!(leftover_pid(".dist.tmp-123", "dist"), Some(123));
        assert_eq!(leftover_pid(".dist.old-7", "dist"), Some(7));
        for name in [
            ".dist.tmp-",
            ".dist.tmp-12a",
            ".dist.new-1",
            ".site.tmp-1",
            "dist.tmp-1",
            ".dist.tmp-+1",
        ] {
            assert_eq!(leftover_pid(name, "dist"), None, "{name}");
        }
    }

    /// A name the file system refuses (longer than any file name may be) fails the build
    /// after other files were staged: the old output stays, and no staging folder is left.
    #[test]
    fn a_name_the_file_system_refuses_leaves_the_old_output_and_no_staging_folder() {
        let work = tempfile::tempdir().unwrap();
        let out = work.path().join("dist");
        let destination = Destination {
            shown: out.clone(),
            path: out.clone(),
        };
        let old = files(&["registry.json", "site/index.html"]);
        write_atomically(&destination, &old).unwrap();
        let mut new = files(&["registry.json", "other.json"]);
        new.insert(format!("{}.json", "x".repeat(300)), b"{}".to_vec());
        let error = write_atomically(&destination, &new)
            .unwrap_err()
            .to_string();
        assert!(error.contains("is left as it was"), "{error}");
        assert!(error.contains("xxxx.json"), "{error}");
        assert_eq!(
            std::fs::read(out.join("site/index.html")).unwrap(),
            b"site/index.html"
        );
        assert!(!out.join("other.json").exists());
        let names: Vec<_> = std::fs::read_dir(work.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["dist"]);
    }
}
