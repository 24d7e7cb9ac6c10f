//! Atomic writes into an untrusted tree: a file replaced or created whole, never through a
//! link, and what killed runs left beside it cleaned up first.
//!
//! Writers into a user's project (`init`, `skill install`, `new`, …) name a root the user
//! chose and a path below it that a cloned repository may have filled with links (a
//! `.claude` pointing at `~/.ssh`): [`no_link_below`], [`create_dirs_below`] and
//! [`write_below`] refuse a link at every component below the root, so nothing is written,
//! replaced or deleted outside it. The root itself is followed (the user named it).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::atomic;
use super::read::{components, kind, list_dir, open_regular, Kind, ReadError};

/// Refuse a link at any existing component of `rel` below `base` (the final one included),
/// and a non-folder where a folder belongs; components that do not exist yet are fine. Call
/// it before deleting or writing below `base` so nothing is reached through a link.
pub fn no_link_below(base: &Path, rel: &Path) -> Result<(), ReadError> {
    let parts = components(rel)?;
    let (mut path, mut shown) = (base.to_path_buf(), PathBuf::new());
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        shown.push(part);
        match kind(&path).map_err(ReadError::Io)? {
            None => return Ok(()),
            Some(Kind::Link) => return Err(ReadError::Link { rel: shown }),
            Some(Kind::Dir) => {}
            Some(_) if i + 1 == parts.len() => {}
            Some(_) => return Err(ReadError::NotDir { rel: shown }),
        }
    }
    Ok(())
}

/// Create the folder `base/rel` and every missing folder between, refusing a link (or a
/// file) at any component instead of creating through it.
pub fn create_dirs_below(base: &Path, rel: &Path) -> Result<(), ReadError> {
    let (mut path, mut shown) = (base.to_path_buf(), PathBuf::new());
    for part in components(rel)? {
        path.push(part);
        shown.push(part);
        // `create_dir` never follows a link at the last component: a link there (dangling
        // or not) is `AlreadyExists`, then refused below.
        match std::fs::create_dir(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
        match kind(&path).map_err(ReadError::Io)? {
            Some(Kind::Dir) => {}
            Some(Kind::Link) => return Err(ReadError::Link { rel: shown }),
            _ => return Err(ReadError::NotDir { rel: shown }),
        }
    }
    Ok(())
}

/// Write the file `base/rel` whole, never through a link below `base`: missing folders are
/// created ([`create_dirs_below`]), an existing regular file is replaced ([`replace_file`],
/// keeping its mode), a missing one created new ([`write_new`]).
pub fn write_below(base: &Path, rel: &Path, contents: &[u8]) -> Result<(), ReadError> {
    no_link_below(base, rel)?;
    let parent = rel.parent().unwrap_or(Path::new(""));
    create_dirs_below(base, parent)?;
    match kind(&base.join(rel)).map_err(ReadError::Io)? {
        None => write_new(&base.join(rel), contents),
        Some(_) => replace_file(base, rel, contents),
    }
}

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

    #[cfg(unix)]
    #[test]
    fn writing_below_a_root_refuses_a_linked_folder_a_linked_file_and_a_dangling_link() {
        let (root, outside) = (temp(), temp());
        std::fs::write(outside.path().join("f"), "keep").unwrap();
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, root.path().join(name)).unwrap();
        };
        link(outside.path(), "dir");
        link(&outside.path().join("f"), "file");
        link(&outside.path().join("nothing"), "dangling");
        for rel in ["dir/new", "dir/f", "file", "dangling", "dangling/x"] {
            let error = write_below(root.path(), Path::new(rel), b"new").unwrap_err();
            assert!(matches!(error, ReadError::Link { .. }), "{rel}: {error:?}");
        }
        for rel in ["dir/sub", "dangling"] {
            let error = create_dirs_below(root.path(), Path::new(rel)).unwrap_err();
            assert!(matches!(error, ReadError::Link { .. }), "{rel}: {error:?}");
        }
        let names: Vec<String> = list_dir(outside.path())
            .unwrap()
            .iter()
            .map(Child::name)
            .collect();
        assert_eq!(names, ["f"], "nothing is created outside");
        assert_eq!(std::fs::read(outside.path().join("f")).unwrap(), b"keep");
    }

    #[test]
    fn writing_below_a_root_creates_folders_and_replaces_a_regular_file() {
        let root = temp();
        write_below(root.path(), Path::new("a/b/c.txt"), b"one").unwrap();
        write_below(root.path(), Path::new("a/b/c.txt"), b"two").unwrap();
        assert_eq!(
            std::fs::read(root.path().join("a/b/c.txt")).unwrap(),
            b"two"
        );
        no_link_below(root.path(), Path::new("a/b/c.txt/missing")).unwrap_err();
        no_link_below(root.path(), Path::new("a/x/y")).unwrap();
    }
}
