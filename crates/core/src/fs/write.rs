//! Atomic writes into an untrusted tree: a file replaced or created whole, never through a
//! link, and what killed runs left beside it cleaned up first.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use super::atomic;
use super::read::{list_dir, open_regular, Kind, ReadError};

/// Replace the regular file `base/rel` with `contents` atomically: a new file beside it
/// (created new, never through a link), fsynced, renamed over it, the folder fsynced. The
/// path is checked like a read (no link at any component, a regular file at the end) before
/// writing and again just before the rename; the file keeps its permissions. On any failure
/// the old file is left as it was and the temporary file removed; temporary files of killed
/// runs beside it are removed first.
pub fn replace_file(base: &Path, rel: &Path, contents: &[u8]) -> Result<(), ReadError> {
    let identity = |file: &File| file.metadata().map(|m| file_id(&m)).map_err(ReadError::Io);
    let old = open_regular(base, rel)?;
    let (id, permissions) = (
        identity(&old)?,
        old.metadata().map_err(ReadError::Io)?.permissions(),
    );
    let path = base.join(rel);
    if path.file_name().is_none() {
        return Err(ReadError::IsDir);
    }
    remove_stale_temps(&path);
    let mut file = atomic::AtomicFile::create(&path).map_err(ReadError::Io)?;
    file.write_all(contents).map_err(ReadError::Io)?;
    file.set_permissions(permissions).map_err(ReadError::Io)?;
    file.sync().map_err(ReadError::Io)?;
    // The path must still name the file checked above (no link swapped in meanwhile).
    if identity(&open_regular(base, rel)?)? != id {
        return Err(ReadError::Io(io::Error::other(
            "the file changed while it was written",
        )));
    }
    file.commit().map_err(ReadError::Io)
}

/// Create `path`, which must not exist, with `contents` atomically (written beside it,
/// fsynced, renamed into place without replacing anything), so a kill never leaves a torn
/// file there; temporary files of killed runs beside it are removed first.
pub fn write_new(path: &Path, contents: &[u8]) -> Result<(), ReadError> {
    if path.file_name().is_none() {
        return Err(ReadError::IsDir);
    }
    remove_stale_temps(path);
    let mut file = atomic::AtomicFile::create(path).map_err(ReadError::Io)?;
    file.write_all(contents).map_err(ReadError::Io)?;
    file.commit_new().map_err(ReadError::Io)
}

/// A kill between creating a temporary file and renaming it leaves it behind (in an entry
/// folder it would be reported as an unexpected file). Only regular files with exactly our
/// pattern whose process is gone are removed.
fn remove_stale_temps(target: &Path) {
    let (Some(folder), Some(name)) = (target.parent(), target.file_name()) else {
        return;
    };
    let name = name.to_string_lossy();
    let folder = if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    };
    let Ok(children) = list_dir(folder) else {
        return;
    };
    for child in children {
        let file = child.name.to_string_lossy();
        let stale = child.kind == Kind::File
            && atomic::temporary_pid(&file, &name)
                .is_some_and(|pid| pid != std::process::id() && process_is_gone(pid));
        if stale {
            let _ = std::fs::remove_file(folder.join(&child.name));
        }
    }
}

/// Whether no live process has `pid` (our own pid counts as gone: callers name leftovers of
/// earlier runs, and this run has not created its own yet).
pub fn process_is_gone(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks whether the process exists.
        let result = unsafe { libc::kill(pid, 0) };
        result != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    true
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    (meta.len(), 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::read::Child;

    fn temp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn only_our_temporary_names_for_the_same_file_carry_a_pid() {
        assert_eq!(
            atomic::temporary_pid(".agent.json.123.0badf00d.tmp", "agent.json"),
            Some(123)
        );
        for other in [
            ".agent.json.123.0badf00d.tmp.x",
            ".agent.json.12a.0badf00d.tmp",
            ".agent.json.123.0badf00.tmp",
            ".agent.json..0badf00d.tmp",
            ".icon.svg.123.0badf00d.tmp",
            "agent.json.123.0badf00d.tmp",
        ] {
            assert_eq!(atomic::temporary_pid(other, "agent.json"), None, "{other}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_write_removes_what_a_killed_run_left_and_keeps_anything_else() {
        let dir = temp();
        // pid_max is at most 2^22 on Linux: no process has this pid.
        let dead = dir.path().join(".a.json.4194305.0badf00d.tmp");
        let alive = dir
            .path()
            .join(format!(".a.json.{}.0badf00d.tmp", std::process::id()));
        let foreign = dir.path().join(".a.json.notes.tmp");
        for path in [&dead, &alive, &foreign] {
            std::fs::write(path, "x").unwrap();
        }
        write_new(&dir.path().join("a.json"), b"{}").unwrap();
        replace_file(dir.path(), Path::new("a.json"), b"[]").unwrap();
        assert!(!dead.exists());
        assert!(alive.exists() && foreign.exists());
        assert_eq!(std::fs::read(dir.path().join("a.json")).unwrap(), b"[]");
        assert!(
            write_new(&dir.path().join("a.json"), b"{}").is_err(),
            "never replaces"
        );
    }

    #[test]
    fn replacing_a_file_writes_it_whole_and_keeps_its_mode() {
        let dir = temp();
        std::fs::write(dir.path().join("f"), "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::Permissions::from_mode(0o640);
            std::fs::set_permissions(dir.path().join("f"), mode).unwrap();
        }
        replace_file(dir.path(), Path::new("f"), b"new").unwrap();
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let meta = std::fs::metadata(dir.path().join("f")).unwrap();
            assert_eq!(meta.permissions().mode() & 0o777, 0o640);
        }
        let names: Vec<String> = list_dir(dir.path())
            .unwrap()
            .iter()
            .map(Child::name)
            .collect();
        assert_eq!(names, ["f"], "no temporary file is left");
    }

    #[cfg(unix)]
    #[test]
    fn replacing_refuses_a_link_and_leaves_its_target_alone() {
        let dir = temp();
        std::fs::write(dir.path().join("target"), "keep").unwrap();
        std::os::unix::fs::symlink("target", dir.path().join("f")).unwrap();
        let error = replace_file(dir.path(), Path::new("f"), b"new").unwrap_err();
        assert!(matches!(error, ReadError::Link { .. }), "{error:?}");
        assert_eq!(std::fs::read(dir.path().join("target")).unwrap(), b"keep");
        assert_eq!(list_dir(dir.path()).unwrap().len(), 2);
    }
}
