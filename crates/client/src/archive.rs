//! Safe extraction of downloaded agent archives (`.zip`, `.tar.gz`/`.tgz`, `.tar.bz2`/`.tbz2`,
//! `.tar.xz`, or a raw executable), shared by `verify` and later `pack --check`.
//!
//! An archive is untrusted: entries are never unpacked by the archive crates' own `unpack`.
//! Every path is checked (no absolute or drive paths, no `..`), only files, folders and
//! links are accepted (no devices or FIFOs), links are created last and only when they stay
//! inside the folder (hard links become copies of a file already extracted), entries cannot
//! be written through a link, no two entries land on one path (see `Extractor::claim`),
//! files lose the setuid, setgid and sticky bits and group and world write, the total size
//! written is capped whatever the headers claim, and everything goes into a fresh staging
//! folder renamed into place only on success: a failure leaves nothing behind.
//!
//! Every path an entry names or implies is claimed in its folded form (NFC, lower-cased), so the
//! same path twice, a file where a folder is, and names that differ only in case or Unicode form
//! are refused alike in every format; the zip crate keeps only the last of a repeated name, so a
//! repeat is looked for in the central directory itself. Links are created after every file, and
//! only when they resolve inside (lexically, then once more with all links present, which catches
//! chains like `y -> .`). Files keep only `0755 | 0600` of their mode and folders are created
//! `0755`, whatever the umask lets through. The write cap is `verify --unpack-cap`, its own flag:
//! a download near `--archive-cap` may rightly unpack to several times that.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

/// How an archive is packed, from its file name: the one list of formats, shared with the
/// rules and the site's snippets.
pub use crate::platform::ArchiveFormat;

/// The default of `verify --unpack-cap`: the bytes one archive may unpack to, in MiB.
pub const DEFAULT_UNPACK_CAP_MIB: u64 = 2048;

/// What one extraction may write at most, whatever the archive's headers claim.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes written over all entries (hard links count as the copies they become).
    pub max_bytes: u64,
    /// Entries read.
    pub max_entries: u64,
}

impl Limits {
    /// The default entry limit with at most `max_bytes` unpacked.
    #[must_use]
    pub fn with_max_bytes(max_bytes: u64) -> Self {
        Self {
            max_bytes,
            ..Self::default()
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_UNPACK_CAP_MIB * 1024 * 1024,
            max_entries: 100_000,
        }
    }
}

/// Why an archive was refused or could not be extracted; nothing of it is left on disk.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// An entry's path, kind or link target is not allowed, or it lands where another entry
    /// did.
    #[error("archive entry `{entry}` refused: {reason}")]
    Unsafe {
        /// The entry's path as the archive names it.
        entry: String,
        /// Why it is refused.
        reason: String,
    },
    /// More bytes than `Limits::max_bytes`.
    #[error("the archive unpacks to more than {0} bytes")]
    TooLarge(u64),
    /// More entries than `Limits::max_entries`.
    #[error("the archive has more than {0} entries")]
    TooManyEntries(u64),
    /// The archive is not valid in its format.
    #[error("the archive cannot be read: {0}")]
    Corrupt(String),
    /// Writing the extracted files failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder being written.
        path: String,
        /// The system's error.
        source: io::Error,
    },
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Unpack `archive` into `dest`, which must not exist yet. `raw_name` names the file of a
/// [`ArchiveFormat::Raw`] download. On failure nothing is left at `dest` or beside it.
pub fn extract(
    archive: &Path,
    format: ArchiveFormat,
    dest: &Path,
    raw_name: &str,
    limits: Limits,
) -> Result<(), ArchiveError> {
    let staging = staging_path(dest);
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o755);
    builder.create(&staging).map_err(io_at(&staging))?;
    let result = unpack(archive, format, &staging, raw_name, limits)
        .and_then(|()| fs::rename(&staging, dest).map_err(io_at(dest)));
    if result.is_err() {
        // The staging folder is ours alone: created above with a unique name.
        let _ = fs::remove_dir_all(&staging);
    }
    result
}

fn staging_path(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map_or("archive".into(), |n| n.to_string_lossy().into_owned());
    dest.with_file_name(format!(
        ".{name}.partial-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ))
}

fn unpack(
    archive: &Path,
    format: ArchiveFormat,
    root: &Path,
    raw_name: &str,
    limits: Limits,
) -> Result<(), ArchiveError> {
    let file = File::open(archive).map_err(io_at(archive))?;
    let mut out = Extractor::new(root, limits);
    match format {
        ArchiveFormat::Raw => {
            let rel = entry_path(raw_name)?;
            out.file(&rel, &mut io::BufReader::new(file), 0o755)?;
        }
        ArchiveFormat::Zip => unzip(file, &mut out)?,
        ArchiveFormat::TarGz => untar(
            flate2::read::GzDecoder::new(io::BufReader::new(file)),
            &mut out,
        )?,
        ArchiveFormat::TarBz2 => untar(
            bzip2::read::BzDecoder::new(io::BufReader::new(file)),
            &mut out,
        )?,
        ArchiveFormat::TarXz => untar(
            xz2::read::XzDecoder::new(io::BufReader::new(file)),
            &mut out,
        )?,
    }
    out.finish()
}

fn corrupt(e: impl std::fmt::Display) -> ArchiveError {
    ArchiveError::Corrupt(e.to_string())
}

fn untar(reader: impl Read, out: &mut Extractor) -> Result<(), ArchiveError> {
    use tar::EntryType;
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries().map_err(corrupt)? {
        let mut entry = entry.map_err(corrupt)?;
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        out.count(&raw)?;
        let kind = entry.header().entry_type();
        let mode = entry.header().mode().unwrap_or(0o644);
        match kind {
            // Metadata records of pax and GNU tar, not entries.
            EntryType::XGlobalHeader
            | EntryType::XHeader
            | EntryType::GNULongName
            | EntryType::GNULongLink => continue,
            _ => {}
        }
        let Some(rel) = optional_path(&raw)? else {
            continue;
        };
        let link = || -> Result<String, ArchiveError> {
            let name = entry
                .link_name_bytes()
                .ok_or_else(|| corrupt(format!("link `{raw}` has no target")))?;
            Ok(String::from_utf8_lossy(&name).into_owned())
        };
        match kind {
            EntryType::Directory => out.dir(&rel)?,
            EntryType::Regular | EntryType::Continuous => out.file(&rel, &mut entry, mode)?,
            EntryType::Symlink => {
                let target = link()?;
                out.symlink(&rel, &target)?;
            }
            EntryType::Link => {
                let target = link()?;
                out.hardlink(&rel, &target)?;
            }
            _ => {
                return Err(unsafe_entry(
                    &raw,
                    "only files, folders and links are accepted",
                ))
            }
        }
    }
    Ok(())
}

fn unzip(file: File, out: &mut Extractor) -> Result<(), ArchiveError> {
    let mut archive = zip::ZipArchive::new(io::BufReader::new(file)).map_err(corrupt)?;
    if archive.has_duplicate_names() {
        // The zip crate keeps one entry per name, the last copy: the others never reach the
        // claims below, so a repeated name is looked for in the central directory itself.
        let start = archive.central_directory_start();
        let mut reader = io::BufReader::new(archive.into_inner().into_inner());
        let repeated = repeated_zip_name(&mut reader, start, out.limits.max_entries)
            .unwrap_or_else(|| Some("(a name listed twice)".into()));
        if let Some(name) = repeated {
            return Err(unsafe_entry(&name, APPEARS_TWICE));
        }
        let file = reader.into_inner();
        archive = zip::ZipArchive::new(io::BufReader::new(file)).map_err(corrupt)?;
    }
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(corrupt)?;
        let raw = String::from_utf8_lossy(entry.name_raw()).into_owned();
        out.count(&raw)?;
        let Some(rel) = optional_path(&raw)? else {
            continue;
        };
        let mode = entry.unix_mode().unwrap_or(0o644);
        if entry.is_symlink() {
            let mut target = String::new();
            entry
                .by_ref()
                .take(4096)
                .read_to_string(&mut target)
                .map_err(corrupt)?;
            out.symlink(&rel, &target)?;
        } else if entry.is_dir() {
            out.dir(&rel)?;
        } else if mode & 0o170000 != 0 && mode & 0o170000 != 0o100000 {
            return Err(unsafe_entry(
                &raw,
                "only files, folders and links are accepted",
            ));
        } else {
            out.file(&rel, &mut entry, mode)?;
        }
    }
    Ok(())
}

/// The first name other than a folder's (`…/`) that the zip's central directory lists twice,
/// `Some(None)` when only folders repeat, read from its records (46 fixed bytes, then the
/// name, the extra field and the comment) up to the end of the directory or `limit`
/// records; `None` when they cannot be read.
fn repeated_zip_name(
    reader: &mut (impl Read + Seek),
    start: u64,
    limit: u64,
) -> Option<Option<String>> {
    reader.seek(SeekFrom::Start(start)).ok()?;
    let mut seen = BTreeSet::new();
    for _ in 0..=limit {
        let mut header = [0u8; 46];
        if reader.read_exact(&mut header).is_err() || header[..4] != *b"PK\x01\x02" {
            return Some(None);
        }
        let length = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]);
        let mut name = vec![0; usize::from(length(28))];
        reader.read_exact(&mut name).ok()?;
        let skipped = i64::from(length(30)) + i64::from(length(32));
        reader.seek(SeekFrom::Current(skipped)).ok()?;
        let folder = name.ends_with(b"/") || name.ends_with(b"\\");
        if let Some(name) = seen.replace(name).filter(|_| !folder) {
            return Some(Some(String::from_utf8_lossy(&name).into_owned()));
        }
    }
    None
}

/// The reason given for a path named twice, in every format.
const APPEARS_TWICE: &str = "the path appears twice (each path may appear once)";

fn unsafe_entry(entry: &str, reason: &str) -> ArchiveError {
    ArchiveError::Unsafe {
        entry: entry.to_string(),
        reason: reason.to_string(),
    }
}

/// A relative path inside the folder, from an entry name (`\` is a separator too, as
/// Windows tools write it); `None` for the folder itself (`./`).
fn optional_path(raw: &str) -> Result<Option<PathBuf>, ArchiveError> {
    let normal = raw.replace('\\', "/");
    if normal.starts_with('/') || has_drive(&normal) {
        return Err(unsafe_entry(raw, "absolute path"));
    }
    let mut out = PathBuf::new();
    for part in normal.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(unsafe_entry(raw, "`..` leads out of the folder")),
            name if name.contains('\0') => return Err(unsafe_entry(raw, "NUL in a name")),
            name => out.push(name),
        }
    }
    Ok((!out.as_os_str().is_empty()).then_some(out))
}

fn has_drive(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

fn entry_path(raw: &str) -> Result<PathBuf, ArchiveError> {
    optional_path(raw)?.ok_or_else(|| unsafe_entry(raw, "empty path"))
}

/// Resolve a link's target lexically from the link's folder; `None` when it leaves `root`.
fn inside(link: &Path, target: &str) -> Option<PathBuf> {
    let target = target.replace('\\', "/");
    if target.starts_with('/') || has_drive(&target) {
        return None;
    }
    let mut parts: Vec<String> = link
        .parent()
        .map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name.to_string()),
        }
    }
    Some(parts.iter().collect())
}

enum Link {
    Symbolic(String),
    Hard(PathBuf),
}

/// What an entry, or a folder an entry's path implies, puts at its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    Folder,
    /// A file or a link: content (or a target) that a second claim would replace.
    Leaf,
}

/// The form of `rel` that case-insensitive, normalisation-insensitive file systems (APFS and
/// HFS+ on macOS, NTFS on Windows) compare: Unicode NFC, lower-cased, `/`-separated.
fn folded(rel: &Path) -> String {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
        .collect();
    icu_normalizer::ComposingNormalizerBorrowed::new_nfc()
        .normalize(&parts.join("/"))
        .into_owned()
}

struct Extractor {
    root: PathBuf,
    limits: Limits,
    written: u64,
    entries: u64,
    files: BTreeSet<PathBuf>,
    /// Every path an entry named or implied, by its [`folded`] form: as first named, and what.
    claims: BTreeMap<String, (PathBuf, Claim)>,
    /// Links, created after every file so no entry is written through one.
    links: Vec<(PathBuf, Link)>,
}

impl Extractor {
    fn new(root: &Path, limits: Limits) -> Self {
        Self {
            root: root.to_path_buf(),
            limits,
            written: 0,
            entries: 0,
            files: BTreeSet::new(),
            claims: BTreeMap::new(),
            links: Vec::new(),
        }
    }

    fn count(&mut self, _raw: &str) -> Result<(), ArchiveError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(ArchiveError::TooManyEntries(self.limits.max_entries));
        }
        Ok(())
    }

    /// Record that `rel` is `claim` and each folder above it a folder. Refused: a path
    /// named twice (which copy wins would depend on the extractor), a file or link where a
    /// folder is named or implied, and two paths that differ only in case or Unicode form
    /// (one file on macOS and Windows clients, so what they unpack is not what was
    /// verified). A folder named again, in any case, is accepted: it holds nothing to lose.
    fn claim(&mut self, rel: &Path, claim: Claim) -> Result<(), ArchiveError> {
        let depth = rel.components().count();
        let mut path = PathBuf::new();
        for (i, part) in rel.components().enumerate() {
            path.push(part);
            let kind = if i + 1 == depth { claim } else { Claim::Folder };
            let key = folded(&path);
            match self.claims.get(&key) {
                None => {
                    self.claims.insert(key, (path.clone(), kind));
                }
                Some((_, Claim::Folder)) if kind == Claim::Folder => {}
                Some((first, first_kind)) => {
                    let reason = if *first != path {
                        format!(
                            "it is the same path as `{}` on case-insensitive file systems (macOS, Windows)",
                            first.display()
                        )
                    } else if *first_kind == kind {
                        APPEARS_TWICE.to_string()
                    } else {
                        format!(
                            "`{}` is named both as a file and as a folder",
                            path.display()
                        )
                    };
                    return Err(unsafe_entry(&rel.display().to_string(), &reason));
                }
            }
        }
        Ok(())
    }

    /// Refuse a path below a link declared earlier: writing it would follow the link.
    fn not_through_link(&self, rel: &Path, raw: &Path) -> Result<(), ArchiveError> {
        let through = self.links.iter().any(|(link, _)| rel.starts_with(link));
        if through {
            return Err(unsafe_entry(
                &raw.display().to_string(),
                "a path through a link or a link declared twice",
            ));
        }
        Ok(())
    }

    fn dir(&mut self, rel: &Path) -> Result<(), ArchiveError> {
        self.not_through_link(rel, rel)?;
        self.claim(rel, Claim::Folder)?;
        create_dirs(&self.root.join(rel))
    }

    fn file(&mut self, rel: &Path, reader: &mut dyn Read, mode: u32) -> Result<(), ArchiveError> {
        self.not_through_link(rel, rel)?;
        self.claim(rel, Claim::Leaf)?;
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            create_dirs(parent)?;
        }
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // Never setuid, setgid or sticky, nor writable by group or others (a run's other
            // users must not change what runs); the owner can always read and write.
            options.mode((mode & 0o755) | 0o600);
        }
        let _ = mode;
        let mut file = options.open(&path).map_err(|e| match e.kind() {
            // Names the claims above tell apart that this file system does not.
            io::ErrorKind::AlreadyExists => unsafe_entry(&rel.display().to_string(), APPEARS_TWICE),
            _ => io_at(&path)(e),
        })?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = reader.read(&mut buf).map_err(corrupt)?;
            if n == 0 {
                break;
            }
            self.written += n as u64;
            if self.written > self.limits.max_bytes {
                return Err(ArchiveError::TooLarge(self.limits.max_bytes));
            }
            file.write_all(&buf[..n]).map_err(io_at(&path))?;
        }
        self.files.insert(rel.to_path_buf());
        Ok(())
    }

    fn symlink(&mut self, rel: &Path, target: &str) -> Result<(), ArchiveError> {
        if inside(rel, target).is_none() {
            return Err(unsafe_entry(
                &rel.display().to_string(),
                "a link pointing out of the folder",
            ));
        }
        self.not_through_link(rel, rel)?;
        self.claim(rel, Claim::Leaf)?;
        self.links
            .push((rel.to_path_buf(), Link::Symbolic(target.to_string())));
        Ok(())
    }

    fn hardlink(&mut self, rel: &Path, target: &str) -> Result<(), ArchiveError> {
        // Hard-link targets are named from the archive root, not the link's folder.
        let target_rel = optional_path(target)
            .ok()
            .flatten()
            .filter(|t| self.files.contains(t))
            .ok_or_else(|| {
                unsafe_entry(
                    &rel.display().to_string(),
                    "a hard link to something that is not a file extracted before it",
                )
            })?;
        self.not_through_link(rel, rel)?;
        self.claim(rel, Claim::Leaf)?;
        self.links.push((rel.to_path_buf(), Link::Hard(target_rel)));
        Ok(())
    }

    fn finish(self) -> Result<(), ArchiveError> {
        let mut written = self.written;
        for (rel, link) in &self.links {
            let path = self.root.join(rel);
            if let Some(parent) = path.parent() {
                create_dirs(parent)?;
            }
            if fs::symlink_metadata(&path).is_ok() {
                return Err(unsafe_entry(&rel.display().to_string(), APPEARS_TWICE));
            }
            match link {
                Link::Hard(target) => {
                    // A copy: the same bytes without sharing an inode with anything.
                    let from = self.root.join(target);
                    written += fs::metadata(&from).map_err(io_at(&from))?.len();
                    if written > self.limits.max_bytes {
                        return Err(ArchiveError::TooLarge(self.limits.max_bytes));
                    }
                    fs::copy(&from, &path).map_err(io_at(&path))?;
                }
                Link::Symbolic(target) => symlink(target, &path)?,
            }
        }
        self.check_links()
    }

    /// Lexical checks cannot see chains (`y -> .` makes `y/y/..` shallower than it reads),
    /// so every link is resolved once all exist; nothing has read through them yet.
    fn check_links(&self) -> Result<(), ArchiveError> {
        let real_root = self.root.canonicalize().map_err(io_at(&self.root))?;
        for (rel, link) in &self.links {
            if let Link::Symbolic(_) = link {
                let resolved = self.root.join(rel).canonicalize();
                if !resolved.is_ok_and(|r| r.starts_with(&real_root)) {
                    return Err(unsafe_entry(
                        &rel.display().to_string(),
                        "a link pointing out of the folder or to nothing",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `path` and the folders above it, created `rwxr-xr-x` (less the umask) whatever the
/// archive says: nobody else may add to what runs.
fn create_dirs(path: &Path) -> Result<(), ArchiveError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o755);
    }
    builder.create(path).map_err(io_at(path))
}

#[cfg(unix)]
fn symlink(target: &str, path: &Path) -> Result<(), ArchiveError> {
    std::os::unix::fs::symlink(target, path).map_err(io_at(path))
}

#[cfg(not(unix))]
fn symlink(_target: &str, path: &Path) -> Result<(), ArchiveError> {
    Err(unsafe_entry(
        &path.display().to_string(),
        "links are not supported on this system",
    ))
}

/// The executable `cmd` names inside the unpacked `root` (relative, `\` allowed), made
/// executable. It must resolve, links included, to a regular file inside `root`.
pub fn resolve_cmd(root: &Path, cmd: &str) -> Result<PathBuf, String> {
    let rel = optional_path(cmd)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "`cmd` is empty".to_string())?;
    let real_root = root
        .canonicalize()
        .map_err(|e| format!("{}: {e}", root.display()))?;
    let path = real_root.join(&rel);
    let real = path
        .canonicalize()
        .map_err(|_| format!("`{cmd}` is not in the archive"))?;
    if !real.starts_with(&real_root) || real.components().any(|c| c == Component::ParentDir) {
        return Err(format!("`{cmd}` leads out of the unpacked archive"));
    }
    let meta = fs::metadata(&real).map_err(|e| format!("`{cmd}`: {e}"))?;
    if !meta.is_file() {
        return Err(format!("`{cmd}` is not a file in the archive"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        fs::set_permissions(&real, fs::Permissions::from_mode((mode & 0o777) | 0o700))
            .map_err(|e| format!("cannot make `{cmd}` executable: {e}"))?;
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_come_from_the_name() {
        assert_eq!(
            ArchiveFormat::of("https://x/a-1.0.0.TGZ?x=1"),
            ArchiveFormat::TarGz
        );
        assert_eq!(ArchiveFormat::of("a.tar.bz2"), ArchiveFormat::TarBz2);
        assert_eq!(ArchiveFormat::of("a.tbz2"), ArchiveFormat::TarBz2);
        assert_eq!(ArchiveFormat::of("a.tar.xz"), ArchiveFormat::TarXz);
        assert_eq!(ArchiveFormat::of("a.zip"), ArchiveFormat::Zip);
        assert_eq!(ArchiveFormat::of("agent-linux"), ArchiveFormat::Raw);
    }

    #[test]
    fn entry_paths_stay_inside() {
        assert_eq!(optional_path("./a/b").unwrap(), Some(PathBuf::from("a/b")));
        assert_eq!(
            optional_path("a\\b.exe").unwrap(),
            Some(PathBuf::from("a/b.exe"))
        );
        assert_eq!(optional_path("./").unwrap(), None);
        for bad in ["/etc/passwd", "a/../../x", "..", "C:/x", "c:\\x"] {
            assert!(optional_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn folded_paths_meet_where_macos_and_windows_make_one_file() {
        let fold = |p: &str| folded(Path::new(p));
        assert_eq!(fold("Bin/AGENT"), fold("bin/agent"));
        assert_eq!(fold("caf\u{e9}"), fold("cafe\u{301}"));
        assert_eq!(fold("\u{c9}T\u{c9}"), fold("e\u{301}t\u{e9}"));
        assert_ne!(fold("bin/agent"), fold("bin/agent2"));
        assert_ne!(fold("a/b"), fold("a-b"));
    }

    #[test]
    fn links_resolve_lexically_from_their_folder() {
        assert_eq!(
            inside(Path::new("bin/a"), "../lib/a"),
            Some(PathBuf::from("lib/a"))
        );
        assert_eq!(inside(Path::new("a"), "b/./c"), Some(PathBuf::from("b/c")));
        assert_eq!(inside(Path::new("bin/a"), "../../x"), None);
        assert_eq!(inside(Path::new("a"), "/etc"), None);
    }
}
