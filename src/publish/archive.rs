//! Deterministic archives: the same entries give the same bytes on every machine and run.
//! `pack` writes its packages with them, `build` the skills' archives (`publish::skills`).
//!
//! Entries are written sorted by path, folders before their contents, with fixed times,
//! owner 0/0 without names and modes 0644 (0755 for folders and executables). gzip
//! headers carry no name and no time; zip entries carry 1980-01-01 00:00 and Unix modes.

use std::collections::BTreeMap;
use std::io::{Cursor, Write};

use flate2::{Compression, GzBuilder};

/// The archive formats: `pack` writes `.tar.gz` everywhere but Windows, `.zip` there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PackFormat {
    TarGz,
    Zip,
}

impl PackFormat {
    /// The file name extension, without the leading dot.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            PackFormat::TarGz => "tar.gz",
            PackFormat::Zip => "zip",
        }
    }
}

/// One file of an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) bytes: Vec<u8>,
    pub(crate) executable: bool,
}

/// Files by `/`-separated relative path; a `BTreeMap` so the order is the sorted one.
pub(crate) type Entries = BTreeMap<String, Entry>;

const FILE_MODE: u32 = 0o644;
const EXEC_MODE: u32 = 0o755;

/// The folders that hold `entries`, each once, sorted (`a/`, `a/b/`).
fn folders(entries: &Entries) -> Vec<String> {
    let mut dirs = std::collections::BTreeSet::new();
    for path in entries.keys() {
        let mut end = 0;
        while let Some(i) = path[end..].find('/') {
            end += i + 1;
            dirs.insert(path[..end].to_owned());
        }
    }
    dirs.into_iter().collect()
}

/// Folders and files in one sorted sequence, a folder before everything inside it.
fn ordered(entries: &Entries) -> Vec<(String, Option<&Entry>)> {
    let mut all: Vec<(String, Option<&Entry>)> =
        folders(entries).into_iter().map(|d| (d, None)).collect();
    all.extend(entries.iter().map(|(p, e)| (p.clone(), Some(e))));
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// Whether `path` fits a ustar header's name fields (100 bytes, or a 155-byte prefix and a
/// 100-byte name split at a `/`), so no GNU or PAX long-name record is written: what readers
/// of ustar alone (the `skills` CLI) need. Folders are written with a trailing `/`.
pub(crate) fn fits_ustar(path: &str) -> bool {
    let fits = |p: &str| {
        p.len() <= 100
            || p.char_indices().filter(|(_, c)| *c == '/').any(|(i, _)| {
                let name = &p[i + 1..];
                i <= 155 && !name.is_empty() && name.len() <= 100
            })
    };
    fits(path) && folders_of(path).all(|f| fits(&f))
}

/// The folders above `path`, each with its trailing `/`.
fn folders_of(path: &str) -> impl Iterator<Item = String> + '_ {
    path.match_indices('/').map(|(i, _)| path[..=i].to_owned())
}

/// Writes `entries` in `format`. `mtime` is the tar entries' time (seconds since the
/// epoch); zip always uses its earliest time, 1980-01-01.
pub(crate) fn write(format: PackFormat, entries: &Entries, mtime: u64) -> std::io::Result<Vec<u8>> {
    match format {
        PackFormat::TarGz => tar_gz(entries, mtime),
        PackFormat::Zip => zip(entries),
    }
}

fn tar_gz(entries: &Entries, mtime: u64) -> std::io::Result<Vec<u8>> {
    // No file name, time 0 and "unknown" OS in the gzip header: nothing of this machine.
    let gz = GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (path, entry) in ordered(entries) {
        let mut header = tar::Header::new_ustar();
        header.set_uid(0);
        header.set_gid(0);
        header.set_username("")?;
        header.set_groupname("")?;
        header.set_mtime(mtime);
        match entry {
            None => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(EXEC_MODE);
                header.set_size(0);
                tar.append_data(&mut header, &path, std::io::empty())?;
            }
            Some(entry) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(if entry.executable {
                    EXEC_MODE
                } else {
                    FILE_MODE
                });
                header.set_size(entry.bytes.len() as u64);
                tar.append_data(&mut header, &path, entry.bytes.as_slice())?;
            }
        }
    }
    tar.into_inner()?.finish()
}

fn zip(entries: &Entries) -> std::io::Result<Vec<u8>> {
    use zip::write::SimpleFileOptions;
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = |mode: u32| {
        SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .compression_level(Some(6))
            .last_modified_time(zip::DateTime::default())
            .system(zip::System::Unix)
            .unix_permissions(mode)
    };
    for (path, entry) in ordered(entries) {
        match entry {
            None => zip.add_directory(path, options(EXEC_MODE)),
            Some(entry) => {
                let mode = if entry.executable {
                    EXEC_MODE
                } else {
                    FILE_MODE
                };
                zip.start_file(path, options(mode))
                    .and_then(|()| Ok(zip.write_all(&entry.bytes)?))
            }
        }
        .map_err(std::io::Error::other)?;
    }
    Ok(zip.finish().map_err(std::io::Error::other)?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Entries {
        let mut e = Entries::new();
        let file = |s: &str, x| Entry {
            bytes: s.as_bytes().to_vec(),
            executable: x,
        };
        e.insert("skill/scripts/a.py".into(), file("print(1)\n", true));
        e.insert("bin".into(), file("\x7fELF", true));
        e.insert("skill/SKILL.md".into(), file("---\n", false));
        e
    }

    #[test]
    fn folders_come_before_their_contents_in_sorted_order() {
        let order: Vec<String> = ordered(&sample()).into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            order,
            [
                "bin",
                "skill/",
                "skill/SKILL.md",
                "skill/scripts/",
                "skill/scripts/a.py"
            ]
        );
    }

    #[test]
    fn tar_gz_has_no_time_name_or_owner_and_fixed_modes() {
        let bytes = write(PackFormat::TarGz, &sample(), 0).unwrap();
        // gzip: magic, deflate, no flags (no name), mtime 0, no extra flags, "unknown" OS.
        assert_eq!(&bytes[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
        let tar = flate2::read::GzDecoder::new(bytes.as_slice());
        let mut archive = tar::Archive::new(tar);
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let entry = entry.unwrap();
            let h = entry.header();
            assert_eq!((h.uid().unwrap(), h.gid().unwrap()), (0, 0));
            assert_eq!(h.username().unwrap(), Some(""));
            assert_eq!(h.mtime().unwrap(), 0);
            let path = entry.path().unwrap().display().to_string();
            seen.push((path, h.mode().unwrap()));
        }
        assert_eq!(
            seen,
            [
                ("bin".to_owned(), 0o755),
                ("skill/".to_owned(), 0o755),
                ("skill/SKILL.md".to_owned(), 0o644),
                ("skill/scripts/".to_owned(), 0o755),
                ("skill/scripts/a.py".to_owned(), 0o755),
            ]
        );
    }

    #[test]
    fn zip_entries_have_the_1980_time_and_unix_modes() {
        let bytes = write(PackFormat::Zip, &sample(), 12345).unwrap();
        let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        assert_eq!(archive.len(), 5);
        for i in 0..archive.len() {
            let file = archive.by_index(i).unwrap();
            let name = file.name().unwrap().into_owned();
            assert_eq!(file.last_modified(), Some(zip::DateTime::default()));
            let mode = file.unix_mode().unwrap() & 0o777;
            let expected = if name == "skill/SKILL.md" {
                0o644
            } else {
                0o755
            };
            assert_eq!(mode, expected, "{name}");
        }
    }

    #[test]
    fn a_path_fits_ustar_when_it_or_a_split_at_a_slash_fits_the_name_fields() {
        assert!(fits_ustar("SKILL.md"));
        assert!(fits_ustar(&"a".repeat(100)));
        assert!(!fits_ustar(&"a".repeat(101)));
        // A 155-byte prefix and a 100-byte name.
        let prefix = format!("{}/{}", "a".repeat(99), "b".repeat(55));
        assert!(fits_ustar(&format!("{prefix}/{}", "n".repeat(100))));
        assert!(!fits_ustar(&format!("{prefix}b/{}", "n".repeat(100))));
        // A folder above the file must fit too (it is written as its own entry).
        assert!(!fits_ustar(&format!("{}/x", "d".repeat(101))));
        assert!(fits_ustar(&format!("{}/x", "d".repeat(99))));
    }

    #[test]
    fn the_same_entries_give_the_same_bytes_and_one_byte_changes_them() {
        for format in [PackFormat::TarGz, PackFormat::Zip] {
            let a = write(format, &sample(), 0).unwrap();
            assert_eq!(a, write(format, &sample(), 0).unwrap());
            let mut changed = sample();
            changed.get_mut("bin").unwrap().bytes[0] ^= 1;
            assert_ne!(a, write(format, &changed, 0).unwrap());
        }
    }
}
