//! Installs against a real local server: clean installs, every refusal leaving nothing in
//! the cache, pin policies, the lock, gc and uninstall.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_test_kit::server::{routes, Reply, Server};

use super::*;
use crate::document::Document;
use crate::net::NetConfig;
use crate::resolve::{resolve, ResolveOptions};

pub(crate) const SCRIPT: &[u8] = b"#!/bin/sh\necho \"agent $*\"\n";

fn client() -> Client {
    Client::new(NetConfig::for_local_tests()).unwrap()
}

fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    crate::net::runtime().unwrap().block_on(future)
}

/// A registry of one agent `a` with one linux-x86_64 target.
pub(crate) fn document(version: &str, archive: &str, cmd: &str, sha256: Option<&str>) -> Document {
    let mut target = serde_json::json!({"archive": archive, "cmd": cmd, "args": ["--acp"],
        "env": {"AGENT_MODE": "test"}});
    if let Some(sha) = sha256 {
        target["sha256"] = sha.into();
    }
    let json = serde_json::json!({"version": "1.0.0", "agents": [{"id": "a", "name": "A",
        "version": version, "description": "d",
        "distribution": {"binary": {"linux-x86_64": target}}}]});
    Document::parse(json.to_string().as_bytes(), "test").unwrap()
}

pub(crate) fn resolution(document: &Document) -> Resolution {
    let options = ResolveOptions {
        platform: Some("linux-x86_64".into()),
        ..ResolveOptions::default()
    };
    resolve(document, "a", &options).unwrap()
}

fn sha(bytes: &[u8]) -> String {
    acp_registry_core::fs::digest::sha256_hex(bytes)
}

/// A `.tar.gz` of `(path, bytes)` regular files, written with raw headers so hostile paths
/// stay as given.
pub(crate) fn tar_gz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_size(bytes.len() as u64);
        header.set_mode(0o755);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, *bytes).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

fn tar_gz_with_fifo() -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    let mut header = tar::Header::new_gnu();
    header.set_path("bin/agent").unwrap();
    header.set_size(SCRIPT.len() as u64);
    header.set_mode(0o755);
    header.set_cksum();
    builder.append(&header, SCRIPT).unwrap();
    let mut fifo = tar::Header::new_gnu();
    fifo.set_path("bin/pipe").unwrap();
    fifo.set_size(0);
    fifo.set_entry_type(tar::EntryType::Fifo);
    fifo.set_cksum();
    builder.append(&fifo, std::io::empty()).unwrap();
    builder.into_inner().unwrap().finish().unwrap()
}

fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, bytes) in files {
        let options = zip::write::SimpleFileOptions::default().unix_permissions(0o755);
        writer.start_file(*path, options).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// Everything under `agents/` and `tmp/` of the store.
pub(crate) fn leftovers(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(read) = std::fs::read_dir(dir) else {
            return;
        };
        for item in read.flatten() {
            out.push(item.path());
            if item.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&item.path(), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root.join("agents"), &mut out);
    walk(&root.join("tmp"), &mut out);
    out
}

fn new_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("cache")).unwrap();
    (dir, store)
}

fn gets(server: &Server, path: &str) -> usize {
    let wanted = format!("GET {path}");
    server.requests().iter().filter(|r| **r == wanted).count()
}

#[test]
fn a_pinned_tar_gz_installs_with_its_receipt_and_is_found_afterwards() {
    let archive = tar_gz(&[("bin/agent", SCRIPT)]);
    let server = Server::start(routes(vec![(
        "GET /a.tar.gz",
        vec![Reply::body(200, archive.clone())],
    )]));
    let (_dir, store) = new_store();
    let doc = document(
        "1.0.0",
        &server.url("/a.tar.gz"),
        "bin/agent",
        Some(&sha(&archive)),
    );
    let res = resolution(&doc);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let options = InstallOptions {
        progress: Some(Arc::new(move |p: &Progress| {
            seen.lock().unwrap().push(p.clone());
        })),
        ..InstallOptions::default()
    };
    let installed = run(install(&store, &client(), &res, &options)).unwrap();
    let folder = format!("linux-x86_64-binary-{}", &sha(&archive)[..12]);
    assert_eq!(
        installed.dir,
        store.root().join("agents/a/1.0.0").join(&folder)
    );
    assert_eq!(installed.program, installed.dir.join("files/bin/agent"));
    assert_eq!(installed.args, ["--acp"]);
    assert_eq!(installed.env["AGENT_MODE"], "test");
    assert_eq!(installed.sha256.as_deref(), Some(sha(&archive).as_str()));
    assert!(installed.warnings.is_empty());
    let receipt: serde_json::Value =
        serde_json::from_slice(&std::fs::read(installed.dir.join("install.json")).unwrap())
            .unwrap();
    assert_eq!(receipt["program"], "files/bin/agent");
    assert_eq!(receipt["source"], server.url("/a.tar.gz"));
    assert_eq!(receipt["kind"], "binary");
    assert_eq!(store.find(&res), Some(installed.clone()));
    assert_eq!(store.installed().unwrap(), vec![installed.clone()]);
    let events = events.lock().unwrap();
    let size = archive.len() as u64;
    assert!(events.contains(&Progress::Downloading {
        url: server.url("/a.tar.gz"),
        done: size,
        total: Some(size)
    }));
    assert_eq!(
        events[events.len() - 2..],
        [Progress::Unpacking, Progress::Done]
    );
    drop(events);
    let again = run(install(&store, &client(), &res, &options)).unwrap();
    assert_eq!(again, installed);
    assert_eq!(
        gets(&server, "/a.tar.gz"),
        1,
        "the second install is found, not fetched"
    );
    assert!(leftovers(store.root())
        .iter()
        .all(|p| p.starts_with(store.agents())));
}

#[test]
fn a_raw_executable_and_a_zip_install_and_run() {
    let zip = zip_of(&[("dist/agent", SCRIPT)]);
    let server = Server::start(routes(vec![
        ("GET /agent-linux", vec![Reply::body(200, SCRIPT)]),
        ("GET /a.zip", vec![Reply::body(200, zip.clone())]),
    ]));
    for (path, cmd, expect) in [
        ("/agent-linux", "agent-linux", "files/agent-linux"),
        ("/a.zip", "dist/agent", "files/dist/agent"),
    ] {
        let (_dir, store) = new_store();
        let doc = document("1.0.0", &server.url(path), cmd, None);
        let installed = run(install(
            &store,
            &client(),
            &resolution(&doc),
            &InstallOptions::default(),
        ))
        .unwrap();
        assert_eq!(installed.program, installed.dir.join(expect));
        let output = installed.command(&["x".into()]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "agent --acp x\n");
    }
}

/// Installs `archive` served at `path` (pinned to `pin` when given) and returns the error,
/// after checking nothing of the attempt is left.
fn refused(path: &str, reply: Reply, cmd: &str, pin: Option<&str>, unpack_cap: u64) -> String {
    let server = Server::start(routes(vec![(&format!("GET {path}"), vec![reply])]));
    let (_dir, store) = new_store();
    let doc = document("1.0.0", &server.url(path), cmd, pin);
    let options = InstallOptions {
        unpack_cap,
        ..InstallOptions::default()
    };
    let error = run(install(&store, &client(), &resolution(&doc), &options)).unwrap_err();
    assert_eq!(leftovers(store.root()), Vec::<PathBuf>::new(), "{error}");
    assert_eq!(store.installed().unwrap(), vec![]);
    error.to_string()
}

#[test]
fn a_tampered_archive_is_refused_naming_the_url_and_both_digests() {
    let archive = tar_gz(&[("bin/agent", SCRIPT)]);
    let pinned = sha(b"what was published");
    let error = refused(
        "/a.tar.gz",
        Reply::body(200, archive.clone()),
        "bin/agent",
        Some(&pinned),
        1 << 20,
    );
    assert!(error.contains("/a.tar.gz"), "{error}");
    assert!(
        error.contains(&pinned) && error.contains(&sha(&archive)),
        "{error}"
    );
}

#[test]
fn an_error_status_and_an_error_page_served_as_200_are_refused() {
    let error = refused("/a.tar.gz", Reply::status(404), "bin/agent", None, 1 << 20);
    assert!(error.contains("404"), "{error}");
    let page = b"<!DOCTYPE html><html>Not found</html>".to_vec();
    let error = refused(
        "/agent",
        Reply::body(200, page.clone()),
        "agent",
        None,
        1 << 20,
    );
    assert!(error.contains("HTML"), "{error}");
    let error = refused(
        "/a.tar.gz",
        Reply::body(200, page),
        "bin/agent",
        None,
        1 << 20,
    );
    assert!(error.contains("cannot be read"), "{error}");
}

#[test]
fn a_truncated_download_is_refused() {
    let archive = tar_gz(&[("bin/agent", SCRIPT)]);
    let short = Reply {
        content_length: Some(archive.len() as u64 + 100),
        ..Reply::body(200, archive)
    };
    let error = refused("/a.tar.gz", short, "bin/agent", None, 1 << 20);
    assert!(error.contains("cannot download"), "{error}");
}

#[test]
fn traversal_entries_in_tar_and_zip_are_refused() {
    let tar = tar_gz(&[("bin/agent", SCRIPT), ("../x", b"out")]);
    let error = refused(
        "/a.tar.gz",
        Reply::body(200, tar),
        "bin/agent",
        None,
        1 << 20,
    );
    assert!(error.contains("`../x` refused"), "{error}");
    let zip = zip_of(&[("bin/agent", SCRIPT), ("../x", b"out")]);
    let error = refused("/a.zip", Reply::body(200, zip), "bin/agent", None, 1 << 20);
    assert!(error.contains("`../x` refused"), "{error}");
}

#[test]
fn a_bomb_over_the_unpack_cap_and_a_special_file_are_refused() {
    let zeros = vec![0u8; 4 << 20];
    let bomb = tar_gz(&[("bin/agent", SCRIPT), ("data", &zeros)]);
    assert!(bomb.len() < 1 << 20, "the download itself is small");
    let error = refused(
        "/a.tar.gz",
        Reply::body(200, bomb),
        "bin/agent",
        None,
        1 << 20,
    );
    assert!(error.contains("more than 1048576 bytes"), "{error}");
    let error = refused(
        "/a.tar.gz",
        Reply::body(200, tar_gz_with_fifo()),
        "bin/agent",
        None,
        1 << 20,
    );
    assert!(error.contains("bin/pipe"), "{error}");
}

#[test]
fn unpinned_targets_follow_the_pin_policy() {
    let archive = tar_gz(&[("bin/agent", SCRIPT)]);
    let server = Server::start(routes(vec![(
        "GET /a.tar.gz",
        vec![Reply::body(200, archive.clone())],
    )]));
    let doc = document("1.0.0", &server.url("/a.tar.gz"), "bin/agent", None);
    let with = |pin_policy| InstallOptions {
        pin_policy,
        ..InstallOptions::default()
    };
    let (_dir, store) = new_store();
    let error = run(install(
        &store,
        &client(),
        &resolution(&doc),
        &with(PinPolicy::Refuse),
    ))
    .unwrap_err();
    assert!(matches!(error, InstallError::Unpinned { .. }), "{error}");
    assert!(error.to_string().contains("pin"), "{error}");
    assert_eq!(gets(&server, "/a.tar.gz"), 0, "refused before downloading");
    assert_eq!(leftovers(store.root()), Vec::<PathBuf>::new());
    let warned = run(install(
        &store,
        &client(),
        &resolution(&doc),
        &with(PinPolicy::Warn),
    ))
    .unwrap();
    assert_eq!(warned.warnings.len(), 1);
    assert!(
        warned.warnings[0].contains(&sha(&archive)),
        "{:?}",
        warned.warnings
    );
    assert_eq!(
        warned.sha256,
        Some(sha(&archive)),
        "the computed digest is recorded"
    );
    let (_dir2, other) = new_store();
    let allowed = run(install(
        &other,
        &client(),
        &resolution(&doc),
        &with(PinPolicy::Allow),
    ))
    .unwrap();
    assert!(allowed.warnings.is_empty());
}

#[test]
fn two_concurrent_installs_of_one_agent_download_once_and_both_succeed() {
    let archive = tar_gz(&[("bin/agent", SCRIPT)]);
    let slow = Reply::body(200, archive.clone()).after(Duration::from_millis(400));
    let server = Server::start(routes(vec![("GET /a.tar.gz", vec![slow])]));
    let (_dir, store) = new_store();
    let doc = document(
        "1.0.0",
        &server.url("/a.tar.gz"),
        "bin/agent",
        Some(&sha(&archive)),
    );
    let res = resolution(&doc);
    let results: Vec<Installed> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    run(install(&store, &client(), &res, &InstallOptions::default())).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results[0], results[1]);
    assert_eq!(gets(&server, "/a.tar.gz"), 1);
    assert_eq!(store.installed().unwrap().len(), 1);
}

#[test]
fn a_version_bump_installs_beside_the_old_one_and_gc_removes_only_the_old() {
    let archive = tar_gz(&[("bin/agent", SCRIPT)]);
    let server = Server::start(routes(vec![(
        "GET /a.tar.gz",
        vec![Reply::body(200, archive.clone())],
    )]));
    let (_dir, store) = new_store();
    let url = server.url("/a.tar.gz");
    let old = document("1.0.0", &url, "bin/agent", Some(&sha(&archive)));
    let new = document("1.1.0", &url, "bin/agent", Some(&sha(&archive)));
    let opts = InstallOptions::default();
    let first = run(install(&store, &client(), &resolution(&old), &opts)).unwrap();
    let second = run(install(&store, &client(), &resolution(&new), &opts)).unwrap();
    assert_eq!(second.version, "1.1.0");
    assert_eq!(store.find(&resolution(&new)), Some(second.clone()));
    // Not ours: no receipt. gc must leave it.
    let foreign = store.agents().join("a/0.9.0/notes");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("keep.txt"), "mine").unwrap();
    let dry = store.gc(&new, true).unwrap();
    assert_eq!(dry.removed, vec![first.dir.clone()]);
    assert!(first.dir.exists(), "a dry run removes nothing");
    let report = store.gc(&new, false).unwrap();
    assert_eq!(report.removed, vec![first.dir.clone()]);
    assert!(report.bytes >= SCRIPT.len() as u64);
    assert!(!first.dir.exists());
    assert!(
        !store.agents().join("a/1.0.0").exists(),
        "the empty version folder goes too"
    );
    assert!(foreign.join("keep.txt").exists());
    assert_eq!(store.installed().unwrap(), vec![second]);
}

#[test]
fn gc_removes_stale_leftovers_of_tmp_but_not_fresh_ones_or_foreign_files() {
    let (_dir, store) = new_store();
    std::fs::create_dir_all(store.tmp()).unwrap();
    let stale = store.tmp().join("a.0123456789abcdef");
    let fresh = store.tmp().join("a.fedcba9876543210");
    let foreign = store.tmp().join("someone-elses");
    for path in [&stale, &fresh, &foreign] {
        std::fs::create_dir(path).unwrap();
    }
    let old = std::time::SystemTime::now() - Duration::from_secs(7200);
    for path in [&stale, &foreign] {
        std::fs::File::open(path)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let report = store.gc(&Document::default(), false).unwrap();
    assert_eq!(report.removed, vec![stale.clone()]);
    assert!(!stale.exists() && fresh.exists() && foreign.exists());
}

#[test]
fn uninstall_removes_one_version_or_all_and_refuses_unsafe_names() {
    let archive = tar_gz(&[("bin/agent", SCRIPT)]);
    let server = Server::start(routes(vec![(
        "GET /a.tar.gz",
        vec![Reply::body(200, archive.clone())],
    )]));
    let (_dir, store) = new_store();
    let url = server.url("/a.tar.gz");
    let opts = InstallOptions::default();
    let v1 = document("1.0.0", &url, "bin/agent", Some(&sha(&archive)));
    let v2 = document("2.0.0", &url, "bin/agent", Some(&sha(&archive)));
    let one = run(install(&store, &client(), &resolution(&v1), &opts)).unwrap();
    let two = run(install(&store, &client(), &resolution(&v2), &opts)).unwrap();
    assert_eq!(store.uninstall("a", Some("1.0.0")).unwrap(), vec![one.dir]);
    assert_eq!(store.installed().unwrap(), vec![two.clone()]);
    assert_eq!(store.uninstall("a", None).unwrap(), vec![two.dir]);
    assert_eq!(leftovers(store.root()), Vec::<PathBuf>::new());
    assert!(store.uninstall("../etc", None).is_err());
    assert!(store.uninstall("a", Some("../../x")).is_err());
}

/// Whether `program --version` runs here (npm is not on every machine that runs the tests).
fn available(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn an_npx_package_is_installed_into_the_cache_and_launches_without_npm() {
    if !available("npm") {
        eprintln!("npm is not installed: skipped");
        return;
    }
    let manifest =
        br#"{"name":"acp-test-agent","version":"1.0.0","bin":{"acp-test-agent":"cli.js"}}"#;
    let cli = b"#!/usr/bin/env node\nconsole.log(['agent', ...process.argv.slice(2), process.env.AGENT_MODE].join(' '))\n";
    let tarball = tar_gz(&[("package/package.json", manifest), ("package/cli.js", cli)]);
    let (dir, store) = new_store();
    let spec = dir.path().join("acp-test-agent-1.0.0.tgz");
    std::fs::write(&spec, tarball).unwrap();
    let json = serde_json::json!({"agents": [{"id": "a", "name": "A", "version": "1.0.0",
        "distribution": {"npx": {"package": spec.display().to_string(), "args": ["--acp"],
            "env": {"AGENT_MODE": "npx"}}}}]});
    let doc = Document::parse(json.to_string().as_bytes(), "test").unwrap();
    let res = resolution(&doc);
    assert_eq!(res.kind, Kind::Npx);
    let installed = run(install(&store, &client(), &res, &InstallOptions::default())).unwrap();
    assert_eq!(
        installed.program,
        installed.dir.join("npm/node_modules/acp-test-agent/cli.js")
    );
    assert!(
        store.root().join("packages/npm").is_dir(),
        "npm's cache is the store's"
    );
    std::fs::remove_file(&spec).unwrap();
    let output = installed.command(&["x".into()]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "agent --acp x npx\n"
    );
    assert_eq!(store.find(&res), Some(installed));
}

#[test]
fn a_failing_package_install_quotes_npm_and_leaves_nothing() {
    if !available("npm") {
        eprintln!("npm is not installed: skipped");
        return;
    }
    let (dir, store) = new_store();
    let missing = dir.path().join("no-such-package-1.0.0.tgz");
    let json = serde_json::json!({"agents": [{"id": "a", "name": "A", "version": "1.0.0",
        "distribution": {"npx": {"package": missing.display().to_string()}}}]});
    let doc = Document::parse(json.to_string().as_bytes(), "test").unwrap();
    let error = run(install(
        &store,
        &client(),
        &resolution(&doc),
        &InstallOptions::default(),
    ))
    .unwrap_err();
    assert!(matches!(error, InstallError::Package { .. }), "{error}");
    assert!(error.to_string().contains("npm"), "{error}");
    assert_eq!(leftovers(store.root()), Vec::<PathBuf>::new());
}

#[test]
fn a_resolution_whose_platform_or_version_could_leave_the_cache_is_refused() {
    let (_dir, store) = new_store();
    let doc = document("1.0.0", "https://x.test/a.tar.gz", "bin/agent", None);
    let mut bad_platform = resolution(&doc);
    bad_platform.platform = "../../../escape".into();
    let mut bad_version = resolution(&doc);
    bad_version.entry.version = "../1".into();
    for res in [bad_platform, bad_version] {
        let error = run(install(&store, &client(), &res, &InstallOptions::default())).unwrap_err();
        assert!(matches!(error, InstallError::Unusable { .. }), "{error}");
        assert_eq!(store.find(&res), None);
    }
    assert!(
        std::fs::read_dir(store.root()).unwrap().next().is_none(),
        "nothing written"
    );
}
