//! Atomic file writes: the one copy that `build`, `pack`, `matrix`, the online cache,
//! downloads, `acp-collab` and [`super::replace_file`] use.
//!
//! The bytes go into a new temporary file beside the target (`.<name>.<pid>.<random>.tmp`,
//! created exclusively, never through a link), are fsynced, renamed over the target, and the
//! folder is fsynced so the rename survives a crash. Readers see the old file or the new one,
//! never part of one. Dropping an [`AtomicFile`] before [`AtomicFile::commit`] removes the
//! temporary file, so a failed write leaves nothing behind.
//!
//! A whole new tree that no reader sees until it is renamed into place (`build`'s staging
//! folder) is made durable by a [`Batch`] instead: its files are written without a flush each
//! and flushed together before the rename.
//!
//! Three kinds of write are not whole-file replacements and open their file directly: appends
//! (`events.jsonl`, the GitHub step summary), the files `acp-collab init` writes into the
//! collaboration folder it creates, and the files `skill install` creates.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Attempts at a fresh temporary name before giving up (each collision is a 1 in 2^32 draw).
const NAME_ATTEMPTS: usize = 8;

/// A file written under a temporary name beside its target until [`AtomicFile::commit`].
#[derive(Debug)]
pub struct AtomicFile {
    file: File,
    temp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl AtomicFile {
    /// A new, empty temporary file beside `target`.
    pub fn create(target: &Path) -> io::Result<Self> {
        let folder = folder_of(target);
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
        let mut last = None;
        for _ in 0..NAME_ATTEMPTS {
            let temp = folder.join(format!(
                ".{}.{}.{:08x}.tmp",
                name.to_string_lossy(),
                std::process::id(),
                fastrand::u32(..)
            ));
            // `create_new` never opens what is already there, a link included.
            match super::read::no_follow(File::options().write(true).create_new(true)).open(&temp) {
                Ok(file) => {
                    return Ok(AtomicFile {
                        file,
                        temp,
                        target: target.to_path_buf(),
                        committed: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
    }

    /// Give the new file these permissions (e.g. those of the file it replaces).
    pub fn set_permissions(&self, permissions: std::fs::Permissions) -> io::Result<()> {
        self.file.set_permissions(permissions)
    }

    /// Flush the written bytes to disk (done by the commits too; for checks made after it).
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_all()
    }

    /// Put the file in place of the target, replacing whatever the target path names.
    pub fn commit(mut self) -> io::Result<()> {
        self.file.sync_all()?;
        std::fs::rename(&self.temp, &self.target)?;
        self.finish();
        Ok(())
    }

    /// Put the file at the target only if nothing is there (an `AlreadyExists` error
    /// otherwise, the temporary file removed): for files that must not replace anything.
    pub(crate) fn commit_new(mut self) -> io::Result<()> {
        self.file.sync_all()?;
        rename_no_replace(&self.temp, &self.target)?;
        self.finish();
        Ok(())
    }

    /// Put the file in place of the target without flushing it: it becomes durable with the
    /// rest of `batch` at [`Batch::sync`]. For a tree no reader sees before then.
    pub fn commit_into(mut self, batch: &Batch) -> io::Result<()> {
        std::fs::rename(&self.temp, &self.target)?;
        self.committed = true;
        batch.record(&self.target);
        Ok(())
    }

    fn finish(&mut self) {
        self.committed = true;
        // Best effort: where folders cannot be synced (Windows) the rename is still done.
        let _ = sync_dir(&folder_of(&self.target));
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Write `bytes` as the new content of `path`, atomically.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// Whether `name` is the name [`AtomicFile::create`] gives the temporary file of a target
/// named `target` (`.<target>.<pid>.<8 hex digits>.tmp`), e.g. to recognise what a killed
/// writer left.
pub fn is_temporary(name: &str, target: &str) -> bool {
    temporary_pid(name, target).is_some()
}

/// The pid of the writer that named the temporary file `name` of `target`, if `name` is one.
pub(crate) fn temporary_pid(name: &str, target: &str) -> Option<u32> {
    let rest = name
        .strip_prefix('.')?
        .strip_prefix(target)?
        .strip_prefix('.')?
        .strip_suffix(".tmp")?;
    let (pid, random) = rest.split_once('.')?;
    let well_formed = !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && random.len() == 8
        && random.bytes().all(|b| b.is_ascii_hexdigit());
    if well_formed {
        pid.parse().ok()
    } else {
        None
    }
}

/// The files of a new folder tree, made durable together: each is written without a flush
/// of its own, and [`Batch::sync`] flushes them all once the last is written. On Linux that is
/// one `syncfs(2)` of the tree's file system (one journal commit for every file instead of one
/// per file); elsewhere, or where `syncfs` is missing, each file is fsynced then, after every
/// write, so the disk has overlapped the flushes with the writes. The caller still fsyncs the
/// tree's folders, then renames the tree into place only after `sync` succeeded: a crash
/// before that leaves the tree unseen, never a visible file that is not durable.
#[derive(Debug)]
pub struct Batch {
    /// The tree's root, opened before any file is written: `syncfs` reports the write-back
    /// errors of its file system since this handle was opened (Linux 5.8 and later).
    #[cfg(target_os = "linux")]
    root: File,
    files: Mutex<Vec<PathBuf>>,
}

impl Batch {
    /// A batch for the files to be written under `root`, an existing folder.
    pub fn new(root: &Path) -> io::Result<Batch> {
        #[cfg(not(target_os = "linux"))]
        let _ = root;
        Ok(Batch {
            #[cfg(target_os = "linux")]
            root: File::open(root)?,
            files: Mutex::new(Vec::new()),
        })
    }

    /// A new file at `path` (never opened through a link or over anything), part of the batch.
    /// One is created at a time: creations in one folder queue for its lock in the kernel,
    /// where a waiting thread spins on the CPU that the others need (a quarter of a parallel
    /// build's time on ext4); here they wait asleep, and writing the files stays parallel.
    pub fn create_new(&self, path: &Path) -> io::Result<File> {
        let mut files = self.files();
        let file =
            super::read::no_follow(File::options().write(true).create_new(true)).open(path)?;
        files.push(path.to_path_buf());
        Ok(file)
    }

    fn files(&self) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
        self.files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn record(&self, path: &Path) {
        self.files().push(path.to_path_buf());
    }

    /// Flush every file of the batch to disk; an error means some may not be durable.
    /// `Ok(true)`: the whole file system was flushed (`syncfs`), folders' entries included,
    /// so no folder below the root needs an fsync of its own; `Ok(false)`: each file was.
    pub fn sync(&self) -> io::Result<bool> {
        #[cfg(target_os = "linux")]
        if syncfs(&self.root)? {
            return Ok(true);
        }
        sync_each(&std::mem::take(&mut *self.files()))?;
        Ok(false)
    }
}

/// fsync each of `files`, the first failure naming its file.
fn sync_each(files: &[PathBuf]) -> io::Result<()> {
    for path in files {
        File::open(path)
            .and_then(|file| file.sync_all())
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// `syncfs(2)` of the file system holding `file`: `Ok(false)` where the kernel lacks it.
#[cfg(target_os = "linux")]
fn syncfs(file: &File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: `file` is an open descriptor for the duration of the call.
    if unsafe { libc::syncfs(file.as_raw_fd()) } == 0 {
        return Ok(true);
    }
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::ENOSYS) => Ok(false),
        _ => Err(error),
    }
}

/// Flush a folder's entries (creations, renames, removals) to disk.
pub fn sync_dir(path: &Path) -> io::Result<()> {
    File::open(path)?.sync_all()
}

/// The folder holding `path` (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `rename` that fails with `AlreadyExists` instead of replacing: Linux
/// `renameat2(RENAME_NOREPLACE)`, else (or where the file system lacks it) a hard link,
/// which never replaces either, and the removal of the old name.
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    if renameat2(from, to, libc::RENAME_NOREPLACE)? {
        return Ok(());
    }
    std::fs::hard_link(from, to)?;
    std::fs::remove_file(from)
}

/// Linux `renameat2(2)` with `flags` (`RENAME_NOREPLACE`, `RENAME_EXCHANGE`): `Ok(false)`
/// where the kernel or the file system does not support it, so the caller falls back.
#[cfg(target_os = "linux")]
pub fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> io::Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(from.as_os_str().as_bytes())?;
    let b = CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: both pointers are valid NUL-terminated strings for the duration of the call.
    let result = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            flags,
        )
    };
    if result == 0 {
        return Ok(true);
    }
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EINVAL | libc::ENOSYS) => Ok(false),
        _ => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_write_replaces_the_file_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        std::fs::write(&path, "old").unwrap();
        write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(names(dir.path()), ["f.json"]);
    }

    #[test]
    fn a_dropped_file_leaves_the_target_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        std::fs::write(&path, "old").unwrap();
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"half").unwrap();
        assert_eq!(
            names(dir.path()).len(),
            2,
            "the temporary file is beside the target"
        );
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["f.json"]);
    }

    #[test]
    fn temporary_names_are_recognised_only_for_their_target() {
        let dir = tempfile::tempdir().unwrap();
        let file = AtomicFile::create(&dir.path().join("m.json")).unwrap();
        let name = file.temp.file_name().unwrap().to_str().unwrap().to_string();
        assert!(is_temporary(&name, "m.json"), "{name}");
        assert!(!is_temporary(&name, "m"));
        for other in [
            ".m.json.1.0000000g.tmp",
            ".m.json..00000000.tmp",
            "m.json.1.00000000.tmp",
        ] {
            assert!(!is_temporary(other, "m.json"), "{other}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_batch_creates_only_new_files_and_syncs_them_with_the_renamed_ones() {
        let dir = tempfile::tempdir().unwrap();
        let batch = Batch::new(dir.path()).unwrap();
        let mut file = batch.create_new(&dir.path().join("a")).unwrap();
        file.write_all(b"a").unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("link")).unwrap();
        for taken in ["a", "link"] {
            let error = batch.create_new(&dir.path().join(taken)).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::AlreadyExists, "{taken}");
        }
        let target = dir.path().join("m.json");
        std::fs::write(&target, "listing").unwrap();
        let mut renamed = AtomicFile::create(&target).unwrap();
        renamed.write_all(b"real").unwrap();
        renamed.commit_into(&batch).unwrap();
        assert_eq!(
            *batch.files(),
            [dir.path().join("a"), target.clone()],
            "what the fallback would fsync"
        );
        batch.sync().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"real");
        assert_eq!(names(dir.path()), ["a", "link", "m.json"]);
    }

    #[test]
    fn syncing_each_file_names_the_one_that_fails() {
        let dir = tempfile::tempdir().unwrap();
        let (kept, gone) = (dir.path().join("kept"), dir.path().join("gone"));
        std::fs::write(&kept, "x").unwrap();
        sync_each(std::slice::from_ref(&kept)).unwrap();
        let error = sync_each(&[kept, gone.clone()]).unwrap_err();
        assert!(
            error.to_string().contains(&*gone.to_string_lossy()),
            "{error}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_never_replaces_what_appeared_at_its_path_even_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new");
        let file = AtomicFile::create(&path).unwrap();
        std::os::unix::fs::symlink("elsewhere", &path).unwrap();
        let error = file.commit_new().unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert!(std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(names(dir.path()), ["new"]);
        let other = dir.path().join("other");
        let mut file = AtomicFile::create(&other).unwrap();
        file.write_all(b"x").unwrap();
        file.commit_new().unwrap();
        assert_eq!(std::fs::read(&other).unwrap(), b"x");
    }
}
