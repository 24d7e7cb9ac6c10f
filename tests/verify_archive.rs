//! Archive extraction (`acp_registry::fs::archive`): hostile archives are refused as a
//! whole and leave nothing on disk; good ones unpack with their links and modes. The hostile
//! corpus (traversal, absolute paths, links and hard links leading out, devices, FIFOs, a
//! decompression bomb) is built in each format that can express it: zip, tar.gz, tar.xz and
//! tar.bz2. `tests/net_faults.rs` serves some of them to `verify`.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

mod common;

use acp_registry::fs::archive::{extract, resolve_cmd, ArchiveError, Format, Limits};
use common::archives::{archive, tar_gz, Entry, FORMATS};

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
fn a_link_chain_that_reads_as_inside_but_resolves_outside_is_refused() {
    // `y -> .`, then `x -> y/y/../..`: lexically inside, really the parent of the folder.
    let chain = [
        Entry::Symlink("y", "."),
        Entry::Symlink("d/x", "../y/y/../.."),
    ];
    for format in FORMATS {
        let message = refused(&archive(format, &chain), format);
        assert!(message.contains("link"), "{format:?}: {message}");
    }
}

/// The hostile corpus: a name, the entries, and what the refusal must say.
fn hostile_cases() -> Vec<(&'static str, Vec<Entry<'static>>, &'static str)> {
    use Entry::*;
    let only = "only files, folders and links are accepted";
    vec![
        (
            "traversal",
            vec![File("ok", b"1"), File("a/../../evil", b"x")],
            "`..`",
        ),
        ("parent", vec![File("../evil", b"x")], "`..`"),
        ("absolute", vec![File("/tmp/evil", b"x")], "absolute path"),
        ("drive", vec![File("C:\\evil", b"x")], "absolute path"),
        (
            "symlink out",
            vec![Symlink("out", "../../etc")],
            "a link pointing out",
        ),
        (
            "absolute symlink",
            vec![Symlink("abs", "/etc/passwd")],
            "a link pointing out",
        ),
        (
            "write through a symlink",
            vec![Symlink("dir", "sub"), File("dir/file", b"x")],
            "through a link",
        ),
        (
            "hard link out",
            vec![Hardlink("h", "../outside")],
            "hard link",
        ),
        (
            "absolute hard link",
            vec![Hardlink("h", "/etc/passwd")],
            "hard link",
        ),
        ("device", vec![File("ok", b"1"), Device("null")], only),
        ("fifo", vec![Fifo("pipe")], only),
    ]
}

#[test]
fn every_hostile_case_is_refused_in_every_format_that_can_hold_it() {
    let mut checked = 0;
    for format in FORMATS {
        for (name, entries, words) in hostile_cases() {
            let hard = entries.iter().any(|e| matches!(e, Entry::Hardlink(..)));
            if format == Format::Zip && hard {
                continue;
            }
            let message = refused(&archive(format, &entries), format);
            assert!(message.contains(words), "{format:?} {name}: {message}");
            checked += 1;
        }
    }
    assert_eq!(checked, 4 * hostile_cases().len() - 2);
}

#[test]
fn a_small_download_expanding_past_the_cap_is_refused_in_every_format() {
    // Generated here rather than committed: 8 MiB of zeros in each format.
    let zeros = vec![0u8; 8 << 20];
    let limits = Limits {
        max_bytes: 4 << 20,
        max_entries: 10,
    };
    for format in FORMATS {
        let bomb = archive(format, &[Entry::File("a", &zeros)]);
        assert!(bomb.len() < 64 * 1024, "{format:?}: {} bytes", bomb.len());
        let (_dir, result) = unpack(&bomb, format, limits);
        assert!(
            matches!(result, Err(ArchiveError::TooLarge(_))),
            "{format:?}: {result:?}"
        );
    }
}

#[test]
fn more_entries_than_the_limit_are_refused_in_every_format() {
    let names: Vec<String> = (0..12).map(|i| format!("f{i}")).collect();
    let entries: Vec<Entry> = names.iter().map(|n| Entry::File(n, b"x")).collect();
    let limits = Limits {
        max_bytes: 1 << 20,
        max_entries: 10,
    };
    for format in FORMATS {
        let (_dir, result) = unpack(&archive(format, &entries), format, limits);
        assert!(
            matches!(result, Err(ArchiveError::TooManyEntries(10))),
            "{format:?}: {result:?}"
        );
    }
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
    let entries = [Entry::File("bin/agent", data)];
    let mut cases: Vec<_> = [Format::Zip, Format::TarBz2, Format::TarXz]
        .into_iter()
        .map(|f| (archive(f, &entries), f, "bin/agent"))
        .collect();
    cases.push((data.to_vec(), Format::Raw, "agent"));
    for (bytes, format, path) in cases {
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
