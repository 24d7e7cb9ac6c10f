//! Arbitrary bytes as each archive format through `fs::archive::extract`, the way `verify`
//! unpacks a download: with the production limits, then again with tight ones.
//! `cargo fuzz run archive_extract`
//!
//! Beyond "no panic": nothing appears outside the destination (the archive sits three
//! folders deep in a fresh temporary folder and the whole temporary tree is walked), a
//! failure leaves only the archive, the result holds only files, folders and symbolic links
//! that resolve inside it, no file shares an inode (hard links become copies), no setuid or
//! setgid bit nor group or world write survives, no two files or links (or a file and a
//! folder) differ only in case, and the bytes and entries written stay within the limits.
#![no_main]

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use acp_registry::archive::{extract, ArchiveFormat, Limits};
use libfuzzer_sys::fuzz_target;

const FORMATS: [ArchiveFormat; 4] = [ArchiveFormat::Zip, ArchiveFormat::TarGz, ArchiveFormat::TarBz2, ArchiveFormat::TarXz];

/// Small enough that a few kilobytes of compressed input can exceed both.
const TIGHT: Limits = Limits {
    max_bytes: 64 * 1024,
    max_entries: 16,
};

/// What a successful extraction wrote: regular-file bytes, and files plus links (each needs
/// an entry of its own; folders may be implied by a deeper path).
struct Tree {
    bytes: u64,
    entries: u64,
}

fuzz_target!(|data: &[u8]| {
    for format in FORMATS {
        if let Some(tree) = run(data, format, Limits::default()) {
            let tight = run(data, format, TIGHT);
            // A tree over the tight limits must be refused under them.
            if tree.bytes > TIGHT.max_bytes || tree.entries > TIGHT.max_entries {
                assert!(tight.is_none(), "{format:?}: {} bytes, {} entries passed {TIGHT:?}", tree.bytes, tree.entries);
            }
        }
    }
});

/// Extract `data` as `format` under `limits`, check every property, and return what a
/// success wrote (`None` on refusal).
fn run(data: &[u8], format: ArchiveFormat, limits: Limits) -> Option<Tree> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path().join("a/b/work");
    fs::create_dir_all(&work).expect("mkdir");
    let archive = work.join("archive");
    fs::write(&archive, data).expect("write");
    let dest = work.join("out");
    let result = extract(&archive, format, &dest, "agent", limits);
    let mut seen = Vec::new();
    walk(tmp.path(), &mut seen);
    let outside: Vec<_> = seen
        .iter()
        .filter(|p| !p.starts_with(&dest) && !work.starts_with(p) && **p != archive)
        .collect();
    assert!(outside.is_empty(), "{format:?}: written outside the destination: {outside:?} ({result:?})");
    if result.is_err() {
        assert!(!dest.exists(), "{format:?}: a refused archive left {dest:?}");
        return None;
    }
    let tree = check_tree(&dest, &seen);
    assert!(tree.bytes <= limits.max_bytes, "{format:?}: {} bytes over {limits:?}", tree.bytes);
    assert!(tree.entries <= limits.max_entries, "{format:?}: {} entries over {limits:?}", tree.entries);
    Some(tree)
}

/// Every path under `dir`, links not followed.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for item in fs::read_dir(dir).expect("read_dir") {
        let path = item.expect("entry").path();
        out.push(path.clone());
        if fs::symlink_metadata(&path).expect("lstat").is_dir() {
            walk(&path, out);
        }
    }
}

/// The extracted tree's kinds, links, modes and size.
fn check_tree(dest: &Path, seen: &[PathBuf]) -> Tree {
    let real_dest = dest.canonicalize().expect("dest resolves");
    let mut tree = Tree { bytes: 0, entries: 0 };
    // Lower-cased path -> whether it is a folder: folders may merge, nothing else may.
    let mut folded = std::collections::BTreeMap::new();
    for path in seen.iter().filter(|p| p.starts_with(dest) && *p != dest) {
        let meta = fs::symlink_metadata(path).expect("lstat");
        let kind = meta.file_type();
        if !kind.is_dir() {
            tree.entries += 1;
        }
        let key = path.strip_prefix(dest).expect("inside").to_string_lossy().to_lowercase();
        if let Some(was_dir) = folded.insert(key, kind.is_dir()) {
            assert!(was_dir && kind.is_dir(), "{path:?} collides with another path in another case");
        }
        if !kind.is_symlink() {
            assert_eq!(meta.permissions().mode() & 0o022, 0, "{path:?} is writable by group or others");
        }
        if kind.is_symlink() {
            let real = path.canonicalize();
            assert!(
                real.as_ref().is_ok_and(|r| r.starts_with(&real_dest)),
                "link {path:?} -> {:?} resolves to {real:?}",
                fs::read_link(path)
            );
        } else if kind.is_file() {
            assert_eq!(meta.nlink(), 1, "{path:?} shares its inode");
            assert_eq!(meta.permissions().mode() & 0o7000, 0, "{path:?} keeps a special mode bit");
            tree.bytes += meta.len();
        } else {
            assert!(kind.is_dir(), "{path:?} is neither a file, a folder nor a link: {kind:?}");
        }
    }
    tree
}
