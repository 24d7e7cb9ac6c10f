//! Archive extraction (`acp_registry::archive`): hostile archives are refused as a
//! whole and leave nothing on disk; good ones unpack with their links and modes. The hostile
//! corpus (traversal, absolute paths, links and hard links leading out, devices, FIFOs, a
//! decompression bomb) is built in each format that can express it: zip, tar.gz, tar.xz and
//! tar.bz2. `tests/registry/net_faults.rs` serves some of them to `verify`; the unpack cap is served
//! here, through `verify --unpack-cap`.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common;
use acp_test_kit::server as net_server;

use acp_registry::archive::{extract, resolve_cmd, ArchiveError, ArchiveFormat, Limits};
use common::archives::{archive, tar_gz, Entry, FORMATS};

/// Extract `bytes` into `<tmp>/out`; on refusal, check that the folder holds nothing but
/// the archive itself.
fn unpack(
    bytes: &[u8],
    format: ArchiveFormat,
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

fn refused(bytes: &[u8], format: ArchiveFormat) -> String {
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
    let (out, hard) = ("a link pointing out", "hard link");
    let through = vec![Symlink("dir", "sub"), File("dir/file", b"x")];
    vec![
        (
            "traversal",
            vec![File("ok", b"1"), File("a/../../evil", b"x")],
            "`..`",
        ),
        ("parent", vec![File("../evil", b"x")], "`..`"),
        ("absolute", vec![File("/tmp/evil", b"x")], "absolute path"),
        ("drive", vec![File("C:\\evil", b"x")], "absolute path"),
        ("symlink out", vec![Symlink("out", "../../etc")], out),
        ("absolute symlink", vec![Symlink("abs", "/etc/passwd")], out),
        ("write through a symlink", through, "through a link"),
        ("hard link out", vec![Hardlink("h", "../outside")], hard),
        (
            "absolute hard link",
            vec![Hardlink("h", "/etc/passwd")],
            hard,
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
            if format == ArchiveFormat::Zip && hard {
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
    let (dir, result) = unpack(&good, ArchiveFormat::TarGz, Limits::default());
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
    let mut cases: Vec<_> = [
        ArchiveFormat::Zip,
        ArchiveFormat::TarBz2,
        ArchiveFormat::TarXz,
    ]
    .into_iter()
    .map(|f| (archive(f, &entries), f, "bin/agent"))
    .collect();
    cases.push((data.to_vec(), ArchiveFormat::Raw, "agent"));
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
    refused(&good, ArchiveFormat::TarGz);
}

/// Two files landing on one path: `first` holding "good", then `second` holding "evil".
fn good_then_evil(first: &'static str, second: &'static str) -> Vec<Entry<'static>> {
    vec![Entry::File(first, b"good"), Entry::File(second, b"evil")]
}

/// Two files on clashing paths: `first` holding "x", then `second` holding "y".
fn x_then_y(first: &'static str, second: &'static str) -> Vec<Entry<'static>> {
    vec![Entry::File(first, b"x"), Entry::File(second, b"y")]
}

/// Archives whose entries land on one path, and what the refusal must say.
fn collision_cases() -> Vec<(&'static str, Vec<Entry<'static>>, &'static str)> {
    use Entry::*;
    let twice = "appears twice";
    let both = "both as a file and as a folder";
    let case = "case-insensitive file systems";
    let link_and_file = vec![
        File("real", b"good"),
        Symlink("agent", "real"),
        File("agent", b"evil"),
    ];
    vec![
        (
            "one name twice",
            good_then_evil("bin/agent", "bin/agent"),
            twice,
        ),
        (
            "one path spelt twice",
            good_then_evil("bin/agent", "./bin//agent"),
            twice,
        ),
        ("a link and a file", link_and_file, "twice"),
        (
            "a file, then a path below it",
            x_then_y("bin", "bin/agent"),
            both,
        ),
        (
            "a path, then a file where its folder is",
            x_then_y("bin/agent", "bin"),
            both,
        ),
        (
            "a folder, then a file of the same name",
            vec![Dir("bin"), File("bin", b"y")],
            both,
        ),
        (
            "names differing in case",
            good_then_evil("bin/Agent", "bin/agent"),
            case,
        ),
        (
            "folders differing in case, one file in both",
            good_then_evil("Bin/agent", "bin/agent"),
            case,
        ),
        (
            "composed and decomposed accents",
            good_then_evil("caf\u{e9}", "cafe\u{301}"),
            case,
        ),
    ]
}

#[test]
fn two_entries_landing_on_one_path_are_refused_in_every_format() {
    for format in FORMATS {
        for (name, entries, words) in collision_cases() {
            let message = refused(&archive(format, &entries), format);
            assert!(message.contains(words), "{format:?} {name}: {message}");
        }
    }
}

/// The zip crate keeps one entry per name, the last: the first copy must not be lost
/// silently, and the refusal names the path.
#[test]
fn a_zip_naming_one_path_twice_is_refused_and_names_it() {
    let zip = archive(
        ArchiveFormat::Zip,
        &[
            Entry::File("agent", b"first"),
            Entry::File("agent", b"last!"),
        ],
    );
    let message = refused(&zip, ArchiveFormat::Zip);
    assert!(
        message.contains("`agent`") && message.contains("appears twice"),
        "{message}"
    );
}

#[test]
fn folders_named_again_and_folders_differing_only_in_case_merge() {
    use Entry::*;
    let entries = [
        Dir("bin"),
        File("bin/agent", b"1"),
        Dir("bin"),
        Dir("./bin/"),
        File("Lib/a", b"2"),
        File("lib/b", b"3"),
    ];
    for format in FORMATS {
        let (dir, result) = unpack(&archive(format, &entries), format, Limits::default());
        result.unwrap_or_else(|e| panic!("{format:?}: {e}"));
        assert_eq!(
            std::fs::read(dir.path().join("out/bin/agent")).unwrap(),
            b"1"
        );
    }
}

/// Sets the process umask for the life of the value (tests in this file do not depend on it).
struct Umask(libc::mode_t);

impl Umask {
    fn set(mask: libc::mode_t) -> Self {
        // SAFETY: umask only swaps the process's file creation mask.
        Umask(unsafe { libc::umask(mask) })
    }
}

impl Drop for Umask {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::umask(self.0) };
    }
}

#[test]
fn unpacked_files_and_folders_lose_group_and_world_write_and_special_bits() {
    use Entry::*;
    // A verifier started with umask 0 (as some CI containers are) must not hand the bits on.
    let _umask = Umask::set(0);
    let entries = [
        Dir("open"),
        Mode("open/agent", b"#!/bin/sh\n", 0o6777),
        Mode("open/data", b"x", 0o666),
        File("implied/deeper/file", b"y"),
    ];
    for format in FORMATS {
        let (dir, result) = unpack(&archive(format, &entries), format, Limits::default());
        result.unwrap_or_else(|e| panic!("{format:?}: {e}"));
        let out = dir.path().join("out");
        let mode = |rel: &str| {
            std::fs::symlink_metadata(out.join(rel))
                .unwrap()
                .permissions()
                .mode()
                & 0o7777
        };
        assert_eq!(mode("open/agent"), 0o755, "{format:?}");
        assert_eq!(mode("open/data"), 0o644, "{format:?}");
        for folder in ["", "open", "implied", "implied/deeper"] {
            assert_eq!(mode(folder) & 0o7022, 0, "{format:?} `{folder}`");
        }
    }
}

/// An archive of the test agent and 3 MiB of padding, unpacked by `verify` under
/// `--unpack-cap 2` (refused) and `--unpack-cap 4` (the agent passes).
#[test]
fn verify_refuses_an_archive_unpacking_past_unpack_cap_and_runs_one_within_it() {
    use acp_test_kit::wheel::{agent_script, binary_everywhere};
    use common::verify::{command, run_command};
    use net_server::{routes, Reply, Server};
    let script = agent_script();
    let padding = vec![0u8; 3 << 20];
    let tgz = archive(
        ArchiveFormat::TarGz,
        &[
            Entry::File("bin/acp-agent", &script),
            Entry::File("padding", &padding),
        ],
    );
    let server = Server::start(routes(vec![(
        "GET /agent.tar.gz",
        vec![Reply::body(200, tgz)],
    )]));
    let target =
        serde_json::json!({"archive": server.url("/agent.tar.gz"), "cmd": "bin/acp-agent"});
    let entry = serde_json::json!({"id": "padded", "name": "Padded", "version": "1.0.0",
        "description": "A test agent.", "distribution": binary_everywhere(&target)});
    let reg = acp_test_kit::wheel::registry(&[entry]);
    let verify = |cap: &str| {
        let args = [
            "verify",
            "--format",
            "json",
            "--no-cache",
            "--unpack-cap",
            cap,
        ];
        run_command(&mut command(&reg.root, &args))
    };
    let over = verify("2");
    assert_eq!(over.code, 1, "{}", over.all());
    assert!(
        over.findings()
            .with_code("archive-unsafe")
            .any(|f| f.message.contains(&format!("more than {} bytes", 2 << 20))),
        "{}",
        over.all()
    );
    let within = verify("4");
    assert_eq!(within.code, 0, "{}", within.all());
    assert_eq!(
        within.json()["agents"][0]["status"],
        "passed",
        "{}",
        within.all()
    );
}
