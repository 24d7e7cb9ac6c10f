//! Writing a [`Tree`] as the complete new content of an output folder: staged beside it,
//! flushed, then swapped in atomically; leftovers of killed runs are cleaned up.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::destination::Destination;
use super::ownership::{read_listing, write_ownership_manifest, OWNERSHIP_FILE};
use super::read::{entries, join, shown};
use super::tree::{hashed, FileSink, Tree};
use crate::publish::error::{io, BuildError};
use acp_registry_core::fs::atomic::{self, sync_dir, AtomicFile, Batch};
use acp_registry_core::fs::{self, Kind};
use rayon::prelude::*;

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
pub(crate) fn write_atomically(
    destination: &Destination,
    tree: &impl Tree,
) -> Result<(), BuildError> {
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
/// manifest renamed over the listing; then one [`Batch::sync`] of them all and, where that
/// could not flush the whole file system, an fsync of every folder, deepest first. No file or
/// folder is flushed on its own otherwise: 10,000 fsyncs cost more than the rest of the
/// writing, and nobody reads the staging folder before the swap.
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
    let dirs = create_dirs(destination, staging, &paths)?;
    tree.produce(&sink)?;
    sink.all_written()?;
    let whole = sink
        .batch
        .sync()
        .map_err(unchanged("flushing the new files to disk"))?;
    if !whole {
        sync_dirs(destination, staging, &dirs)?;
    }
    Ok(())
}

/// Create every folder the files of `paths` need in `staging`, a level at a time and each
/// level's folders in parallel (a skill's files sit three folders deep: one at a time, the
/// `mkdir`s were a third of a skills build); every folder, `staging` among them.
fn create_dirs(
    destination: &Destination,
    staging: &Path,
    paths: &[&str],
) -> Result<BTreeSet<PathBuf>, BuildError> {
    let mut levels: Vec<BTreeSet<&str>> = Vec::new();
    for path in paths {
        for (depth, (end, _)) in path.match_indices('/').enumerate() {
            if levels.len() <= depth {
                levels.push(BTreeSet::new());
            }
            levels[depth].insert(&path[..end]);
        }
    }
    for level in &levels {
        level.par_iter().try_for_each(|dir| {
            std::fs::create_dir(staging.join(dir))
                .map_err(unchanged(destination, &format!("creating {}", shown(dir))))
        })?;
    }
    let mut dirs = BTreeSet::from([staging.to_path_buf()]);
    dirs.extend(levels.iter().flatten().map(|dir| staging.join(dir)));
    Ok(dirs)
}

/// fsync every folder of `dirs`, deepest first.
fn sync_dirs(
    destination: &Destination,
    staging: &Path,
    dirs: &BTreeSet<PathBuf>,
) -> Result<(), BuildError> {
    for dir in dirs.iter().rev() {
        let relative = dir.strip_prefix(staging).unwrap_or(dir).to_string_lossy();
        let what = if relative.is_empty() {
            "flushing the new folder".to_string()
        } else {
            format!("flushing {}", shown(&relative))
        };
        sync_dir(dir).map_err(unchanged(destination, &what))?;
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

#[cfg(test)]
mod tests {
    use super::super::testing::test_files as files;
    use super::*;

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
