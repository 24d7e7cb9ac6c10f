//! Archive extraction (`acp_registry::fs::archive`): hostile archives are refused as a
//! whole and leave nothing on disk; good ones unpack with their links and modes.
#![cfg(unix)]

use std::io::Write;
use std::path::Path;

use acp_registry::fs::archive::{extract, resolve_cmd, ArchiveError, Format, Limits};

enum Entry<'a> {
    File(&'a str, &'a [u8]),
    Symlink(&'a str, &'a str),
    Hardlink(&'a str, &'a str),
}

/// A `.tar.gz` written with raw headers, so names like `../x` and `/etc/x` get in.
fn tar_gz(entries: &[Entry]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for entry in entries {
        let mut header = tar::Header::new_gnu();
        let (name, data, kind, link): (&str, &[u8], tar::EntryType, Option<&str>) = match entry {
            Entry::File(n, d) => (n, d, tar::EntryType::Regular, None),
            Entry::Symlink(n, t) => (n, b"", tar::EntryType::Symlink, Some(t)),
            Entry::Hardlink(n, t) => (n, b"", tar::EntryType::Link, Some(t)),
        };
        header.set_entry_type(kind);
        header.set_size(data.len() as u64);
        header.set_mode(0o755);
        // Written into the raw name field: `set_path` refuses `..` itself.
        let raw = &mut header.as_old_mut().name;
        raw[..name.len()].copy_from_slice(name.as_bytes());
        if let Some(target) = link {
            let raw = &mut header.as_old_mut().linkname;
            raw[..target.len()].copy_from_slice(target.as_bytes());
        }
        header.set_cksum();
        builder.append(&header, data).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data) in files {
        writer
            .start_file(
                *name,
                zip::write::SimpleFileOptions::default().unix_permissions(0o755),
            )
            .unwrap();
        writer.write_all(data).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// Extract `bytes` into `<tmp>/out`; on refusal, check that the folder holds nothing but
/// the archive itself.
fn unpack(
    bytes: &[u8],
    format: Format,
    limits: Limits,
) -> (tempfile::TempDir, Result<(), ArchiveError>) {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive");
    std::fs::write(&archive, bytes).unwrap();
    let result = extract(&archive, format, &dir.path().join("out"), "agent", limits);
    if result.is_err() {
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["archive"], "something was left behind: {left:?}");
    }
    (dir, result)
}

fn refused(bytes: &[u8], format: Format) -> String {
    let (_dir, result) = unpack(bytes, format, Limits::default());
    result.expect_err("the archive must be refused").to_string()
}

#[test]
fn traversal_is_refused_with_nothing_left() {
    let message = refused(
        &tar_gz(&[Entry::File("ok", b"1"), Entry::File("a/../../evil", b"x")]),
        Format::TarGz,
    );
    assert!(message.contains("`..`"), "{message}");
    assert!(refused(&zip_of(&[("ok", b"1"), ("../evil", b"x")]), Format::Zip).contains("`..`"));
}

#[test]
fn absolute_paths_are_refused() {
    assert!(
        refused(&tar_gz(&[Entry::File("/tmp/evil", b"x")]), Format::TarGz).contains("absolute")
    );
    assert!(refused(&zip_of(&[("C:\\evil", b"x")]), Format::Zip).contains("absolute"));
}

#[test]
fn links_leading_out_are_refused() {
    assert!(refused(
        &tar_gz(&[Entry::Symlink("out", "../../etc")]),
        Format::TarGz
    )
    .contains("link"));
    assert!(refused(
        &tar_gz(&[Entry::Symlink("abs", "/etc/passwd")]),
        Format::TarGz
    )
    .contains("link"));
    // A chain that reads as inside but resolves outside: `y -> .`, `x -> y/y/../..`.
    let chain = tar_gz(&[
        Entry::Symlink("y", "."),
        Entry::Symlink("d/x", "../y/y/../.."),
    ]);
    assert!(refused(&chain, Format::TarGz).contains("link"));
    // Writing through a link declared earlier.
    let through = tar_gz(&[Entry::Symlink("dir", "sub"), Entry::File("dir/file", b"x")]);
    assert!(refused(&through, Format::TarGz).contains("through a link"));
}

#[test]
fn hard_links_to_anything_but_an_extracted_file_are_refused() {
    assert!(refused(
        &tar_gz(&[Entry::Hardlink("h", "/etc/passwd")]),
        Format::TarGz
    )
    .contains("hard link"));
    assert!(refused(
        &tar_gz(&[Entry::Hardlink("h", "../outside")]),
        Format::TarGz
    )
    .contains("hard link"));
}

#[test]
fn a_decompression_bomb_stops_at_the_size_cap() {
    let zeros = vec![0u8; 4 * 1024 * 1024];
    let bomb = tar_gz(&[Entry::File("a", &zeros), Entry::File("b", &zeros)]);
    assert!(bomb.len() < 64 * 1024, "the bomb should compress well");
    let limits = Limits {
        max_bytes: 6 * 1024 * 1024,
        max_entries: 10,
    };
    let (_dir, result) = unpack(&bomb, Format::TarGz, limits);
    assert!(
        matches!(result, Err(ArchiveError::TooLarge(_))),
        "{result:?}"
    );
}

#[test]
fn a_good_archive_unpacks_with_inside_links_and_cmd_resolves() {
    let good = tar_gz(&[
        Entry::File("pkg/bin/real-agent", b"#!/bin/sh\n"),
        Entry::Symlink("pkg/agent", "bin/real-agent"),
        Entry::Hardlink("pkg/copy", "pkg/bin/real-agent"),
    ]);
    let (dir, result) = unpack(&good, Format::TarGz, Limits::default());
    result.unwrap();
    let out = dir.path().join("out");
    assert!(std::fs::symlink_metadata(out.join("pkg/agent"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(out.join("pkg/copy")).unwrap(), b"#!/bin/sh\n");
    let cmd = resolve_cmd(&out, ".\\pkg\\agent").unwrap();
    assert!(cmd.ends_with("pkg/bin/real-agent"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&cmd).unwrap().permissions().mode() & 0o100,
        0o100
    );
    assert!(resolve_cmd(&out, "../archive").is_err());
    assert!(resolve_cmd(&out, "pkg/missing").is_err());
}

#[test]
fn zip_tar_bz2_tar_xz_and_raw_downloads_unpack() {
    let data: &[u8] = b"agent";
    let tar_plain = {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o755);
        header.set_cksum();
        builder.append_data(&mut header, "bin/agent", data).unwrap();
        builder.into_inner().unwrap()
    };
    let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    bz.write_all(&tar_plain).unwrap();
    let mut xz = xz2::write::XzEncoder::new(Vec::new(), 1);
    xz.write_all(&tar_plain).unwrap();
    for (bytes, format, path) in [
        (zip_of(&[("bin/agent", data)]), Format::Zip, "bin/agent"),
        (bz.finish().unwrap(), Format::TarBz2, "bin/agent"),
        (xz.finish().unwrap(), Format::TarXz, "bin/agent"),
        (data.to_vec(), Format::Raw, "agent"),
    ] {
        let (dir, result) = unpack(&bytes, format, Limits::default());
        result.unwrap_or_else(|e| panic!("{format:?}: {e}"));
        assert_eq!(
            std::fs::read(dir.path().join("out").join(path)).unwrap(),
            data,
            "{format:?}"
        );
        assert!(Path::new(&dir.path().join("out")).is_dir());
    }
}

#[test]
fn a_corrupt_archive_leaves_nothing() {
    let mut good = tar_gz(&[Entry::File("a", &[7u8; 100_000])]);
    good.truncate(good.len() / 2);
    refused(&good, Format::TarGz);
}
