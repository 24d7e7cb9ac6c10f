//! Trees of files written from a list and read back, copies, FIFOs, symbolic links, digests.

use std::collections::BTreeMap;
use std::path::Path;

/// Writes each `(relative path, bytes)` below `root`, making the folders on the way.
pub fn write_tree<P: AsRef<Path>, B: AsRef<[u8]>>(root: &Path, files: &[(P, B)]) {
    for (path, bytes) in files {
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create the folder");
        }
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
}

/// Every file below `root` (links not followed), by `/`-separated relative path, with its
/// bytes: for comparing a folder before and after a command.
pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
        for item in std::fs::read_dir(dir).expect("read the folder") {
            let item = item.expect("a folder entry");
            let name = item.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            if item.file_type().expect("a file type").is_dir() {
                walk(&item.path(), &rel, out);
            } else {
                out.insert(rel, std::fs::read(item.path()).expect("read the file"));
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(root, "", &mut files);
    files
}

/// Copies a folder recursively, the copies writable (data under test is never edited in
/// place, and a read-only checkout must not make read-only copies).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy");
    for item in std::fs::read_dir(from).expect("read the folder") {
        let item = item.expect("a folder entry");
        let target = to.join(item.file_name());
        if item.file_type().expect("a file type").is_dir() {
            copy_dir(&item.path(), &target);
        } else {
            std::fs::copy(item.path(), &target).expect("copy the file");
            let mut perms = std::fs::metadata(&target).expect("stat").permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&target, perms).expect("make it writable");
        }
    }
}

/// A symbolic link at `path` to `target` (relative targets resolve from the link's folder).
pub fn symlink(target: impl AsRef<Path>, path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, path);
    #[cfg(windows)]
    return std::os::windows::fs::symlink_file(target, path);
}

/// A FIFO (named pipe) at `path`.
pub fn fifo(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
        // SAFETY: a NUL-terminated path.
        if unsafe { libc::mkfifo(c.as_ptr(), 0o644) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(unix))]
    return Err(std::io::Error::other(format!(
        "no FIFOs here: {}",
        path.display()
    )));
}

/// Lowercase hex sha256, as manifests, `.sha256` lines and `SHA256SUMS` write it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// Lowercase hex, two digits a byte; the tests' own encoder, independent of the tool's.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}
