//! Reading an untrusted tree: no link followed, only regular files, sizes capped while
//! reading (the rules are in the `fs` module's doc).

use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// What a directory entry is, without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link (never followed).
    Link,
    /// Anything else: FIFO, socket, device.
    Special(Special),
}

/// A file that is neither regular, a folder nor a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A kind the platform does not name.
    Unknown,
}

impl fmt::Display for Special {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Special::Fifo => "a FIFO (named pipe)",
            Special::Socket => "a socket",
            Special::CharDevice => "a character device",
            Special::BlockDevice => "a block device",
            Special::Unknown => "a special file",
        })
    }
}

impl Kind {
    /// The kind of a file type as reported without following links.
    pub fn of(file_type: std::fs::FileType) -> Kind {
        if file_type.is_symlink() {
            return Kind::Link;
        }
        if file_type.is_dir() {
            return Kind::Dir;
        }
        if file_type.is_file() {
            return Kind::File;
        }
        Kind::Special(special(file_type))
    }
}

#[cfg(unix)]
fn special(file_type: std::fs::FileType) -> Special {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        Special::Fifo
    } else if file_type.is_socket() {
        Special::Socket
    } else if file_type.is_char_device() {
        Special::CharDevice
    } else if file_type.is_block_device() {
        Special::BlockDevice
    } else {
        Special::Unknown
    }
}

#[cfg(not(unix))]
fn special(_: std::fs::FileType) -> Special {
    Special::Unknown
}

/// Why a file could not be read. `rel` fields are the part of the requested relative path
/// that is at fault (the link, or the file where a folder belongs).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Nothing is at the path.
    #[error("it does not exist")]
    NotFound,
    /// A component of the path is a link.
    #[error("`{}` is a symbolic link", rel.display())]
    Link {
        /// The path up to the link.
        rel: PathBuf,
    },
    /// The file is a FIFO, socket or device.
    #[error("it is {0}, not a regular file")]
    NotRegular(Special),
    /// The path names a folder.
    #[error("it is a folder, not a file")]
    IsDir,
    /// The file has more than one name (a hard link): its content may be any file of the
    /// same file system, which no reviewer saw at this path.
    #[error("it is a hard link (the file has {links} names)")]
    HardLink {
        /// How many names the file has.
        links: u64,
    },
    /// A component where a folder belongs is something else.
    #[error("`{}` is not a folder", rel.display())]
    NotDir {
        /// The path up to that component.
        rel: PathBuf,
    },
    /// The file holds more than the limit.
    #[error("it is over the {limit}-byte limit")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
        /// The size the file's metadata reports, when that is over the limit too.
        reported: Option<u64>,
    },
    /// The relative path has `..`, a root or a prefix.
    #[error("the path leaves its folder")]
    Escapes,
    /// Any other I/O failure.
    #[error("{0}")]
    Io(io::Error),
}

/// The kind of `path` without following a final link; `Ok(None)` when nothing is there.
pub fn kind(path: &Path) -> io::Result<Option<Kind>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(Kind::of(meta.file_type()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// One child of a listed folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child {
    /// The file name, as the system gives it.
    pub name: OsString,
    /// What it is, without following a link.
    pub kind: Kind,
}

impl Child {
    /// The name for messages and comparisons (lossy for names that are not UTF-8).
    pub fn name(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }
}

/// The children of a folder with their kinds (links are reported, never followed), sorted by
/// name so that results never depend on the order the file system lists them in.
pub fn list_dir(path: &Path) -> io::Result<Vec<Child>> {
    let mut children = Vec::new();
    for item in std::fs::read_dir(path)? {
        let item = item?;
        let kind = Kind::of(item.file_type()?);
        children.push(Child {
            name: item.file_name(),
            kind,
        });
    }
    children.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(children)
}

/// Read `base/rel`, refusing links (hard links too), non-regular files and more than `limit`
/// bytes.
pub fn read_capped(base: &Path, rel: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let (file, reported) = open_regular_sized(base, rel, Names::One)?;
    read_reported(file, reported, limit)
}

/// [`read_capped`] of a file the user named on the command line, which may have several
/// names: a build output (cargo hard-links `target/<profile>/<bin>` to its copy in `deps/`) is
/// no sign of hostility there. Never for a file of an untrusted tree.
pub fn read_capped_named(base: &Path, rel: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let (file, reported) = open_regular_sized(base, rel, Names::Any)?;
    read_reported(file, reported, limit)
}

/// Whether a regular file may have more than one name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Names {
    /// One name only: a hard link is refused.
    One,
    /// Any number (a file the user named).
    Any,
}

/// Read at most `limit + 1` bytes of an open file; more than `limit` is `TooLarge`.
pub fn read_limited(file: File, limit: u64) -> Result<Vec<u8>, ReadError> {
    let reported = file.metadata().map_or(0, |m| m.len());
    read_reported(file, reported, limit)
}

/// [`read_limited`] of a file whose size `reported` the caller has just read.
fn read_reported(file: File, reported: u64, limit: u64) -> Result<Vec<u8>, ReadError> {
    // The size the file reports, so a large file is read into one allocation (growing by
    // doubling would hold the old and the new buffer at once); never more than the limit,
    // and the pages of an allocation are only resident once written.
    let capacity = reported.saturating_add(1).min(limit.saturating_add(1));
    let mut bytes = Vec::with_capacity(capacity as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            limit,
            reported: (reported > limit).then_some(reported),
        });
    }
    Ok(bytes)
}

/// The normal components of `rel`; `..`, roots and prefixes are refused.
pub(super) fn components(rel: &Path) -> Result<Vec<&std::ffi::OsStr>, ReadError> {
    rel.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(ReadError::Escapes),
        })
        .collect()
}

/// Why opening `base/rel` failed, from what lies at each component (for the message only:
/// the refusal itself came from the open).
fn classify(base: &Path, parts: &[&std::ffi::OsStr], failed: usize, error: io::Error) -> ReadError {
    let mut path = base.to_path_buf();
    let mut rel = PathBuf::new();
    for (i, part) in parts.iter().enumerate().take(failed + 1) {
        path.push(part);
        rel.push(part);
        let last = i + 1 == parts.len();
        match kind(&path) {
            Ok(Some(Kind::Link)) => return ReadError::Link { rel },
            Ok(Some(Kind::Dir)) if last => return ReadError::IsDir,
            Ok(Some(Kind::Special(s))) if last => return ReadError::NotRegular(s),
            Ok(Some(Kind::Dir | Kind::File)) if last => break,
            Ok(Some(Kind::Dir)) => {}
            Ok(Some(_)) => return ReadError::NotDir { rel },
            Ok(None) => return ReadError::NotFound,
            Err(_) => break,
        }
    }
    match error.kind() {
        io::ErrorKind::NotFound => ReadError::NotFound,
        _ => ReadError::Io(error),
    }
}

/// Open the regular file at `path` for reading without following a final link or blocking;
/// for paths whose folders the caller has already checked (listed without following links).
pub fn open_path(path: &Path) -> Result<File, ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    let file = no_follow(&mut options)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => ReadError::NotFound,
            _ => match kind(path) {
                Ok(Some(Kind::Link)) => ReadError::Link {
                    rel: path.file_name().map(PathBuf::from).unwrap_or_default(),
                },
                _ => ReadError::Io(e),
            },
        })?;
    regular(file)
}

impl From<ReadError> for io::Error {
    fn from(error: ReadError) -> io::Error {
        match error {
            ReadError::Io(e) => e,
            ReadError::NotFound => io::Error::new(io::ErrorKind::NotFound, error.to_string()),
            other => io::Error::other(other.to_string()),
        }
    }
}

/// Options for opening a file of an untrusted tree for writing: a final link is not followed
/// and opening never blocks (a FIFO without a reader fails instead). Check the handle with
/// [`regular`] before writing.
pub fn no_follow(options: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    options
}

/// Check that an opened handle is a regular file.
pub fn regular(file: File) -> Result<File, ReadError> {
    regular_sized(file, Names::One).map(|(file, _)| file)
}

/// [`regular`], with the size the same `fstat` reported.
fn regular_sized(file: File, names: Names) -> Result<(File, u64), ReadError> {
    let metadata = file.metadata().map_err(ReadError::Io)?;
    match Kind::of(metadata.file_type()) {
        Kind::File => {
            if names == Names::One {
                single_name(&metadata)?;
            }
            Ok((file, metadata.len()))
        }
        Kind::Dir => Err(ReadError::IsDir),
        Kind::Special(s) => Err(ReadError::NotRegular(s)),
        // An fstat never reports a link; refuse it all the same.
        Kind::Link => Err(ReadError::Link {
            rel: PathBuf::new(),
        }),
    }
}

/// A regular file with more than one name is refused: a hard link can make any file of the
/// same file system (a credential, another user's file) appear inside an untrusted tree, and
/// unlike a symbolic link nothing at the path shows it.
#[cfg(unix)]
fn single_name(metadata: &std::fs::Metadata) -> Result<(), ReadError> {
    use std::os::unix::fs::MetadataExt;
    match metadata.nlink() {
        0 | 1 => Ok(()),
        links => Err(ReadError::HardLink { links }),
    }
}

#[cfg(not(unix))]
fn single_name(_: &std::fs::Metadata) -> Result<(), ReadError> {
    Ok(())
}

/// Open `base/rel` for reading: every component of `rel` without following links, the last
/// one only when it is a regular file.
pub(crate) fn open_regular(base: &Path, rel: &Path) -> Result<File, ReadError> {
    open_regular_sized(base, rel, Names::One).map(|(file, _)| file)
}

/// [`open_regular`], with the file's size.
#[cfg(unix)]
fn open_regular_sized(base: &Path, rel: &Path, names: Names) -> Result<(File, u64), ReadError> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;

    let parts = components(rel)?;
    let Some(last) = parts.len().checked_sub(1) else {
        return Err(ReadError::IsDir);
    };
    let c_string = |bytes: &[u8]| {
        std::ffi::CString::new(bytes)
            .map_err(|e| ReadError::Io(io::Error::new(io::ErrorKind::InvalidInput, e)))
    };
    // `None`: the first component is opened by its full path (`base` followed as given, the
    // component itself not), one open and close fewer than opening `base` first.
    let mut dir: Option<File> = None;
    for (i, part) in parts.iter().enumerate() {
        // Refuse a special file before opening it: opening some devices has effects.
        if i == last {
            if let Ok(Some(Kind::Special(s))) = kind(&base.join(rel)) {
                return Err(ReadError::NotRegular(s));
            }
        }
        let mut flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
        if i < last {
            flags |= libc::O_DIRECTORY;
        }
        let fd = match &dir {
            None => {
                let path = c_string(base.join(part).as_os_str().as_bytes())?;
                // SAFETY: `path` is a NUL-terminated string.
                unsafe { libc::open(path.as_ptr(), flags) }
            }
            Some(dir) => {
                let name = c_string(part.as_bytes())?;
                // SAFETY: `dir` is an open directory handle and `name` a NUL-terminated string.
                unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) }
            }
        };
        if fd < 0 {
            return Err(classify(base, &parts, i, io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just opened and is owned by nobody else.
        let file = unsafe { File::from_raw_fd(fd) };
        if i == last {
            return regular_sized(file, names);
        }
        dir = Some(file);
    }
    unreachable!("the loop returns at the last component")
}

/// Open `base/rel` for reading: every component of `rel` checked with `symlink_metadata`
/// (no `openat` here), the last one only when it is a regular file.
#[cfg(not(unix))]
fn open_regular_sized(base: &Path, rel: &Path, names: Names) -> Result<(File, u64), ReadError> {
    let parts = components(rel)?;
    let Some(last) = parts.len().checked_sub(1) else {
        return Err(ReadError::IsDir);
    };
    let mut path = base.to_path_buf();
    for part in &parts {
        path.push(part);
    }
    let checked = classify(
        base,
        &parts,
        last,
        io::Error::new(io::ErrorKind::Other, "cannot open"),
    );
    if !matches!(checked, ReadError::Io(_)) {
        return Err(checked);
    }
    let file = File::open(&path).map_err(|e| classify(base, &parts, last, e))?;
    regular_sized(file, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn a_regular_file_within_the_limit_is_read_whole() {
        let dir = temp();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/f.txt"), "hello").unwrap();
        let bytes = read_capped(dir.path(), Path::new("a/f.txt"), 5).unwrap();
        assert_eq!(bytes, b"hello");
    }

    #[test]
    fn one_byte_over_the_limit_is_too_large() {
        let dir = temp();
        std::fs::write(dir.path().join("f"), "hello!").unwrap();
        let error = read_capped(dir.path(), Path::new("f"), 5).unwrap_err();
        assert!(matches!(
            error,
            ReadError::TooLarge {
                limit: 5,
                reported: Some(6)
            }
        ));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_limit_holds_for_a_file_whose_metadata_says_zero_bytes() {
        // procfs reports 0 bytes for /proc/self/maps, which holds far more.
        assert_eq!(std::fs::metadata("/proc/self/maps").unwrap().len(), 0);
        let error = read_capped(Path::new("/proc/self"), Path::new("maps"), 16).unwrap_err();
        assert!(
            matches!(
                error,
                ReadError::TooLarge {
                    limit: 16,
                    reported: None
                }
            ),
            "{error:?}"
        );
        let whole = read_capped(Path::new("/proc/self"), Path::new("maps"), 1 << 24).unwrap();
        assert!(whole.len() > 16);
    }

    #[cfg(unix)]
    #[test]
    fn links_are_refused_as_the_file_and_as_an_intermediate_folder() {
        let dir = temp();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::fs::write(dir.path().join("real/f"), "x").unwrap();
        std::os::unix::fs::symlink("real/f", dir.path().join("file-link")).unwrap();
        std::os::unix::fs::symlink("real", dir.path().join("dir-link")).unwrap();
        let error = read_capped(dir.path(), Path::new("file-link"), 10).unwrap_err();
        assert!(matches!(&error, ReadError::Link { rel } if rel == Path::new("file-link")));
        let error = read_capped(dir.path(), Path::new("dir-link/f"), 10).unwrap_err();
        assert!(matches!(&error, ReadError::Link { rel } if rel == Path::new("dir-link")));
    }

    #[cfg(unix)]
    #[test]
    fn a_hard_linked_file_is_refused_by_every_reader() {
        let dir = temp();
        std::fs::write(dir.path().join("secret"), "token").unwrap();
        std::fs::hard_link(dir.path().join("secret"), dir.path().join("icon.svg")).unwrap();
        let error = read_capped(dir.path(), Path::new("icon.svg"), 10).unwrap_err();
        assert!(
            matches!(error, ReadError::HardLink { links: 2 }),
            "{error:?}"
        );
        let error = open_path(&dir.path().join("icon.svg")).unwrap_err();
        assert!(
            matches!(error, ReadError::HardLink { links: 2 }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "it is a hard link (the file has 2 names)"
        );
        let named = read_capped_named(dir.path(), Path::new("icon.svg"), 10).unwrap();
        assert_eq!(
            named, b"token",
            "a file the user names may have several names"
        );
        std::fs::remove_file(dir.path().join("secret")).unwrap();
        assert_eq!(
            read_capped(dir.path(), Path::new("icon.svg"), 10).unwrap(),
            b"token"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = temp();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let error = read_capped(dir.path(), Path::new("pipe"), 10).unwrap_err();
        assert!(
            matches!(error, ReadError::NotRegular(Special::Fifo)),
            "{error:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_device_is_refused_before_reading() {
        let error = read_capped(Path::new("/dev"), Path::new("zero"), 10).unwrap_err();
        assert!(
            matches!(error, ReadError::NotRegular(Special::CharDevice)),
            "{error:?}"
        );
    }

    #[test]
    fn folders_where_files_belong_and_files_where_folders_belong_are_named() {
        let dir = temp();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert!(matches!(
            read_capped(dir.path(), Path::new("d"), 10),
            Err(ReadError::IsDir)
        ));
        let error = read_capped(dir.path(), Path::new("f/x"), 10).unwrap_err();
        assert!(
            matches!(&error, ReadError::NotDir { rel } if rel == Path::new("f")),
            "{error:?}"
        );
        assert!(matches!(
            read_capped(dir.path(), Path::new("nope"), 10),
            Err(ReadError::NotFound)
        ));
        assert!(matches!(
            read_capped(dir.path(), Path::new("../f"), 10),
            Err(ReadError::Escapes)
        ));
    }

    #[cfg(unix)]
    #[test]
    fn listing_reports_links_and_special_files_sorted_by_name() {
        let dir = temp();
        std::fs::write(dir.path().join("b"), "x").unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("c")).unwrap();
        let kinds: Vec<(String, Kind)> = list_dir(dir.path())
            .unwrap()
            .iter()
            .map(|c| (c.name(), c.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("a".into(), Kind::Dir),
                ("b".into(), Kind::File),
                ("c".into(), Kind::Link)
            ]
        );
    }
}
