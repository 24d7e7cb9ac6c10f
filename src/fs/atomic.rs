//! Atomic file writes: the one copy that `build`, `pack`, `matrix`, the online cache,
//! downloads, `acp-collab` and [`super::replace_file`] use.
//!
//! The bytes go into a new temporary file beside the target (`.<name>.<pid>.<random>.tmp`,
//! created exclusively, never through a link), are fsynced, renamed over the target, and the
//! folder is fsynced so the rename survives a crash. Readers see the old file or the new one,
//! never part of one. Dropping an [`AtomicFile`] before [`AtomicFile::commit`] removes the
//! temporary file, so a failed write leaves nothing behind.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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
            match super::no_follow(File::options().write(true).create_new(true)).open(&temp) {
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
    pub fn commit_new(mut self) -> io::Result<()> {
        self.file.sync_all()?;
        rename_no_replace(&self.temp, &self.target)?;
        self.finish();
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
pub(crate) fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> io::Result<bool> {
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
