//! Network faults and hostile downloads for `verify` and `update` (those of `--online` are in
//! `tests/registry/online_net.rs`): servers that reset the connection, stall before or inside an
//! answer, cut the body or send bytes that are not HTTP, and archives that must not be
//! unpacked. Each gives a finding or error naming the agent and the URL, the run exits 1,
//! and nothing partial stays behind: `verify` leaves no temporary files or cached partial
//! downloads, `update` leaves every manifest byte for byte. Stalls run through the library
//! with short network timeouts (the binaries' are 20 s per attempt).
#![cfg(unix)]

use crate::common;
use acp_test_kit::server as net_server;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use acp_registry::NetConfig;
use acp_test_kit::wheel::binary_everywhere;
use common::archives::{archive, Entry};
use common::update::{https, listener, manifest, npx, read, registry};
use common::verify::{command, run_command, Run};
use common::{fast_net, sha256_hex};
use net_server::{routes, Reply, Server};
use serde_json::{json, Value};

/// Written verbatim instead of an answer: not HTTP at all.
const GARBAGE: &[u8] = b"SSH-2.0-OpenSSH_9.6\r\n\r\n";
/// A status line and then a length that is not a number.
const BAD_LENGTH: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: twelve\r\n\r\nabc";

/// A body announced as 100 kB of which 7 bytes come, then silence for `hold`.
fn stall_mid_body(hold: Duration) -> Reply {
    Reply::raw(
        b"HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\npartial".to_vec(),
        hold,
    )
}

/// Short deadlines so a stall fails in well under a second per attempt.
fn quick_net() -> NetConfig {
    NetConfig {
        download_deadline: Duration::from_secs(2),
        retries: 1,
        ..fast_net(Duration::from_millis(300))
    }
}

/// Names under `dir`, recursively, relative to it.
fn files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for item in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = item.file_name().to_string_lossy().into_owned();
        if item.file_type().unwrap().is_dir() {
            out.extend(
                files(&item.path())
                    .into_iter()
                    .map(|f| format!("{name}/{f}")),
            );
        }
        out.insert(name);
    }
    out
}

/// An agent whose archive (every platform) is `url`, pinned to `sha256`.
fn agent(id: &str, url: &str, sha256: &str) -> Value {
    let target = json!({"archive": url, "cmd": "./agent", "sha256": sha256});
    json!({"id": id, "name": id, "version": "1.0.0", "description": "A test agent.",
           "distribution": binary_everywhere(&target)})
}

/// The findings of a `verify --format json` document as (agent folder, code, message).
fn verify_findings(run: &Run) -> Vec<(String, String, String)> {
    run.findings()
        .findings
        .into_iter()
        .map(|f| {
            let folder = f.file.split('/').next().unwrap_or_default().to_string();
            (folder, f.code, f.message)
        })
        .collect()
}

const NET_FAULTS: [(&str, &str); 4] = [
    ("reset", "/reset.tar.gz"),
    ("garbage", "/garbage.tar.gz"),
    ("bad-length", "/bad-length.tar.gz"),
    ("cut", "/cut.tar.gz"),
];

/// The hostile archives `verify` downloads: agent id, URL path, bytes.
fn hostile_downloads() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    use acp_registry::archive::ArchiveFormat;
    vec![
        (
            "traversal",
            "/traversal.tar.gz",
            archive(ArchiveFormat::TarGz, &[Entry::File("../agent", b"x")]),
        ),
        (
            "link-out",
            "/link-out.zip",
            archive(
                ArchiveFormat::Zip,
                &[Entry::Symlink("agent", "../../bin/sh")],
            ),
        ),
        (
            "device",
            "/device.tar.xz",
            archive(ArchiveFormat::TarXz, &[Entry::Device("agent")]),
        ),
        (
            "hard-link",
            "/hard-link.tar.bz2",
            archive(
                ArchiveFormat::TarBz2,
                &[Entry::Hardlink("agent", "/etc/passwd")],
            ),
        ),
    ]
}

/// A server answering each path of [`NET_FAULTS`] badly and serving `hostile`.
fn faulty_server(hostile: &[(&str, &str, Vec<u8>)]) -> Server {
    let mut table = vec![
        ("GET /reset.tar.gz", vec![Reply::reset()]),
        (
            "GET /garbage.tar.gz",
            vec![Reply::raw(GARBAGE, Duration::ZERO)],
        ),
        (
            "GET /bad-length.tar.gz",
            vec![Reply::raw(BAD_LENGTH, Duration::ZERO)],
        ),
        (
            "GET /cut.tar.gz",
            vec![Reply {
                content_length: Some(5000),
                ..Reply::body(200, vec![7; 100])
            }],
        ),
    ];
    let keys: Vec<String> = hostile.iter().map(|(_, p, _)| format!("GET {p}")).collect();
    for ((_, _, bytes), key) in hostile.iter().zip(&keys) {
        table.push((key.as_str(), vec![Reply::body(200, bytes.clone())]));
    }
    Server::start(routes(table))
}

#[test]
fn verify_reports_each_broken_or_hostile_download_at_its_agent_and_leaves_nothing_behind() {
    let hostile = hostile_downloads();
    let server = faulty_server(&hostile);
    let mut entries: Vec<Value> = NET_FAULTS
        .iter()
        .map(|(id, path)| agent(id, &server.url(path), &"ab".repeat(32)))
        .collect();
    entries.extend(
        hostile
            .iter()
            .map(|(id, path, bytes)| agent(id, &server.url(path), &sha256_hex(bytes))),
    );
    let reg = acp_test_kit::wheel::registry(&entries);
    let (tmp, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut verify = command(
        &reg.root,
        &["verify", "--format", "json", "--timeout", "30", "-j", "2"],
    );
    // Pinned downloads are cached there; TMPDIR holds the run folder.
    verify
        .arg("--cache")
        .arg(cache.path())
        .env("TMPDIR", tmp.path());
    let run = run_command(&mut verify);
    assert_eq!(run.code, 1, "{}", run.all());
    let found = verify_findings(&run);
    for (id, path) in NET_FAULTS {
        let url = server.url(path);
        assert!(
            found.iter().any(|(f, code, m)| f == id
                && code == "agent-launch"
                && m.contains(&format!("cannot download {url}"))),
            "{id}: {found:#?}"
        );
    }
    for (id, _, _) in &hostile {
        assert!(
            found
                .iter()
                .any(|(f, code, _)| f == id && code == "archive-unsafe"),
            "{id}: {found:#?}"
        );
    }
    let doc = run.json();
    let statuses: Vec<&str> = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["failed"; 8], "{}", run.all());
    assert!(
        files(tmp.path()).is_empty(),
        "left in TMPDIR: {:?}",
        files(tmp.path())
    );
    // Only the complete, pinned downloads are cached; no partial file of the broken ones.
    let mut cached: BTreeSet<String> = hostile
        .iter()
        .map(|(_, _, b)| format!("archives/{}", sha256_hex(b)))
        .collect();
    cached.insert("archives".into());
    assert_eq!(files(cache.path()), cached);
}

/// `verify::run` over `entries` with [`quick_net`]: the findings and how long it took.
fn verify_quickly(entries: &[Value]) -> (Vec<(String, String, String)>, Duration, Vec<String>) {
    verify_with(entries, quick_net())
}

/// `verify::run` over `entries` with `net`: the findings, how long it took, and the run
/// folders of this process left behind (no other in-process `verify` runs meanwhile).
fn verify_with(
    entries: &[Value],
    net: NetConfig,
) -> (Vec<(String, String, String)>, Duration, Vec<String>) {
    let _alone = crate::common::verify::in_process();
    let reg = acp_test_kit::wheel::registry(entries);
    let checked = acp_registry::check_registry(&reg.root, None).unwrap();
    let options = acp_registry::verify::Options::with_network(net, Duration::from_secs(30));
    let started = Instant::now();
    let outcome = acp_registry::verify::run(&checked, &options).unwrap();
    let took = started.elapsed();
    let findings = outcome
        .report
        .diagnostics
        .iter()
        .map(|d| {
            let folder = d.file.split('/').next().unwrap_or_default().to_string();
            (folder, d.code.to_string(), d.message.clone())
        })
        .collect();
    (findings, took, our_run_folders())
}

/// Run folders of this process left in the temporary folder (`verify` names them by pid).
fn our_run_folders() -> Vec<String> {
    let prefix = format!("acp-registry-verify-{}-", std::process::id());
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

#[test]
fn a_download_stalling_before_or_inside_its_answer_times_out_promptly_with_a_finding() {
    let hold = Duration::from_secs(30);
    let server = Server::start(routes(vec![
        ("GET /silent.tar.gz", vec![Reply::status(200).after(hold)]),
        ("GET /stalled.tar.gz", vec![stall_mid_body(hold)]),
    ]));
    let entries = [
        agent("silent", &server.url("/silent.tar.gz"), &"ab".repeat(32)),
        agent("stalled", &server.url("/stalled.tar.gz"), &"ab".repeat(32)),
    ];
    let (found, took, left) = verify_quickly(&entries);
    assert!(
        took < Duration::from_secs(10),
        "the stalls held verify for {took:?}"
    );
    for id in ["silent", "stalled"] {
        let url = server.url(&format!("/{id}.tar.gz"));
        assert!(
            found.iter().any(|(f, code, m)| f == id
                && code == "agent-launch"
                && m.contains(&url)
                && (m.contains("no answer within") || m.contains("timed out"))),
            "{id}: {found:#?}"
        );
    }
    assert!(left.is_empty(), "{left:?}");
}

const RELEASES: &str = "GET /api/repos/example/agent/releases?per_page=100&page=1";
const ASSET: &str = "/example/agent/releases/download/v2.0.0/agent-2.0.0-linux.tar.gz";

/// A GitHub release v2.0.0 whose Linux asset has no published digest (so `update` downloads
/// it to hash it).
fn release(base: &str) -> Reply {
    Reply::json(&json!([{
        "tag_name": "v2.0.0", "name": "v2.0.0", "draft": false, "prerelease": false,
        "published_at": "2026-01-01T00:00:00Z",
        "assets": [{"name": "agent-2.0.0-linux.tar.gz", "browser_download_url": https(base, ASSET),
                    "size": 4, "content_type": "application/gzip", "digest": null}],
    }]))
}

/// Entries of every source kind at 1.0.0: `(id, manifest)`.
fn update_entries(base: &str, npm: &[&str]) -> Vec<(String, String)> {
    let mut entries: Vec<(String, String)> = npm
        .iter()
        .map(|id| {
            (
                id.to_string(),
                manifest(id, "1.0.0", &npx(&format!("{id}@1.0.0"))),
            )
        })
        .collect();
    let pypi = json!({"uvx": {"package": "py-bad-length==1.0.0"}});
    entries.push((
        "py-bad-length".into(),
        manifest("py-bad-length", "1.0.0", &pypi),
    ));
    let archive = https(
        base,
        "/example/agent/releases/download/v1.0.0/agent-1.0.0-linux.tar.gz",
    );
    // Pinned, so the new asset must be downloaded to hash it.
    let target = json!({"archive": archive, "cmd": "./agent", "sha256": "0".repeat(64)});
    let binary = json!({"binary": {"linux-x86_64": target}});
    entries.push(("gh-asset".into(), manifest("gh-asset", "1.0.0", &binary)));
    entries
}

/// A registry of [`update_entries`], and the entries.
fn update_registry(base: &str, npm: &[&str]) -> (tempfile::TempDir, Vec<(String, String)>) {
    let entries = update_entries(base, npm);
    let borrowed: Vec<(&str, String)> = entries
        .iter()
        .map(|(i, t)| (i.as_str(), t.clone()))
        .collect();
    (registry(base, &borrowed), entries)
}

/// Each entry's manifest and the files beside it.
fn snapshot(root: &Path, entries: &[(String, String)]) -> Vec<(String, BTreeSet<String>)> {
    entries
        .iter()
        .map(|(id, _)| (read(root, id), files(&root.join(id))))
        .collect()
}

/// `(id, message)` of every error of an `update --format json` document or outcome.
fn update_errors(errors: &Value) -> Vec<(String, String)> {
    let list = errors.as_array().cloned().unwrap_or_default();
    list.iter()
        .map(|n| {
            (
                n["id"].as_str().unwrap().into(),
                n["message"].as_str().unwrap().into(),
            )
        })
        .collect()
}

fn assert_named(errors: &[(String, String)], id: &str, url: &str) {
    assert!(
        errors.iter().any(|(i, m)| i == id && m.contains(url)),
        "no error of {id} names {url}: {errors:#?}"
    );
}

/// Every entry of [`update_entries`] has an error naming the URL of its source.
fn assert_every_source_named(errors: &[(String, String)], base: &str, npm: &[&str]) {
    for id in npm {
        assert_named(errors, id, &https(base, &format!("/npm/{id}")));
    }
    let pypi = https(base, "/pypi-api/pypi/py-bad-length/json");
    assert_named(errors, "py-bad-length", &pypi);
    assert_named(errors, "gh-asset", &https(base, ASSET));
}

#[test]
fn update_reports_each_broken_source_at_its_agent_and_leaves_every_manifest_untouched() {
    let (listener, base) = listener();
    let cut = Reply {
        content_length: Some(5000),
        ..Reply::body(200, b"{\"name\": \"x\", \"versions\": {".to_vec())
    };
    let server = Server::start_with(
        listener,
        routes(vec![
            ("GET /npm/npm-reset", vec![Reply::reset()]),
            (
                "GET /npm/npm-garbage",
                vec![Reply::raw(GARBAGE, Duration::ZERO)],
            ),
            ("GET /npm/npm-cut", vec![cut]),
            (
                "GET /pypi-api/pypi/py-bad-length/json",
                vec![Reply::raw(BAD_LENGTH, Duration::ZERO)],
            ),
            (RELEASES, vec![release(&base)]),
            (&format!("GET {ASSET}"), vec![Reply::reset()]),
        ]),
    );
    let npm = ["npm-reset", "npm-garbage", "npm-cut"];
    let (root, entries) = update_registry(&base, &npm);
    let before = snapshot(root.path(), &entries);
    let (code, doc) = common::update::json_run(root.path(), &["--apply"]);
    assert_eq!(code, 3, "entries failed under --apply: {doc:#}");
    let errors = update_errors(&doc["errors"]);
    assert_every_source_named(&errors, &base, &npm);
    assert!(
        doc["updates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["applied"] == false),
        "{doc:#}"
    );
    assert_eq!(
        snapshot(root.path(), &entries),
        before,
        "a manifest changed"
    );
    drop(server);
}

#[test]
fn an_update_source_stalling_before_or_inside_its_answer_times_out_promptly() {
    let (listener, base) = listener();
    let hold = Duration::from_secs(30);
    let server = Server::start_with(
        listener,
        routes(vec![
            ("GET /npm/npm-silent", vec![Reply::status(200).after(hold)]),
            ("GET /npm/npm-stalled", vec![stall_mid_body(hold)]),
            (
                "GET /pypi-api/pypi/py-bad-length/json",
                vec![stall_mid_body(hold)],
            ),
            (RELEASES, vec![release(&base)]),
            (&format!("GET {ASSET}"), vec![stall_mid_body(hold)]),
        ]),
    );
    let npm = ["npm-silent", "npm-stalled"];
    let (root, entries) = update_registry(&base, &npm);
    let before = snapshot(root.path(), &entries);
    let options = apply_options(Vec::new(), quick_net());
    let started = Instant::now();
    let outcome = acp_registry::update::run(root.path(), &options).unwrap();
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "the stalls held update for {took:?}"
    );
    let errors = update_errors(&serde_json::to_value(&outcome.errors).unwrap());
    assert_every_source_named(&errors, &base, &npm);
    assert_eq!(
        snapshot(root.path(), &entries),
        before,
        "a manifest changed"
    );
    drop(server);
}

/// `update --apply` of the stable channel for `agents` (all when empty) through `net`, with
/// no token, no rate-limit wait and a 1 MiB archive cap.
fn apply_options(agents: Vec<String>, net: NetConfig) -> acp_registry::update::Options {
    acp_registry::update::Options {
        channel: acp_registry::update::Channel::Stable,
        agents,
        apply: true,
        record: false,
        net,
        endpoints: acp_registry::online::EndpointOverrides::default(),
        github_token: acp_registry::online::GitHubToken::default(),
        rate_limit_wait: Duration::ZERO,
        archive_cap: 1 << 20,
        min_age_days: None,
        now: 0,
    }
}

/// [`quick_net`] with a one-second rate window and a long overall deadline: a trickling
/// download fails within about a second, at its minimum rate.
fn trickle_net() -> NetConfig {
    NetConfig {
        min_download_rate: 1_000,
        rate_window: Duration::from_secs(1),
        download_deadline: Duration::from_secs(60),
        ..quick_net()
    }
}

/// 100 kB, one byte every 100 ms: never silent for the read timeout, 10 bytes/s.
fn trickle() -> Reply {
    Reply::trickle(vec![7; 100_000], Duration::from_millis(100))
}

const SLOW: &str = "slower than 1000 bytes/s over 1s, the minimum download rate";

/// `update --apply` of the `gh-asset` entry of [`update_registry`] with [`trickle_net`]: its
/// errors; every manifest is left as it was.
fn update_with_trickle_net(base: &str) -> Vec<(String, String)> {
    let (root, entries) = update_registry(base, &[]);
    let before = snapshot(root.path(), &entries);
    let options = apply_options(vec!["gh-asset".into()], trickle_net());
    let outcome = acp_registry::update::run(root.path(), &options).unwrap();
    assert_eq!(
        snapshot(root.path(), &entries),
        before,
        "a manifest changed"
    );
    update_errors(&serde_json::to_value(&outcome.errors).unwrap())
}

/// The online rules with `--verify-archives` and [`trickle_net`] over one entry whose
/// archive is `archive`: (code, message) of each finding.
fn verify_archives_with_trickle_net(base: &str, archive: &str) -> Vec<(String, String)> {
    let target = json!({"archive": archive, "cmd": "./agent", "sha256": "ab".repeat(32)});
    let dist = json!({"binary": {"linux-x86_64": target}});
    let root = registry(
        base,
        &[("archive-agent", manifest("archive-agent", "1.0.0", &dist))],
    );
    let checked = acp_registry::check_registry(root.path(), None).unwrap();
    let options = acp_registry::online::Options {
        net: trickle_net(),
        endpoints: acp_registry::online::Endpoints::default(),
        verify_archives: true,
        archive_cap: 1 << 20,
        cache_dir: None,
        max_age: Duration::from_secs(60),
        provenance: acp_registry::online::ProvenanceConfig::default(),
        github_token: acp_registry::online::GitHubToken::default(),
        baseline: None,
    };
    let progress = std::sync::Arc::new(acp_registry::online::Silent);
    let outcome = acp_registry::online::check(
        &checked.entries,
        None,
        &checked.config.policy,
        &options,
        progress,
    )
    .unwrap();
    outcome
        .diagnostics
        .iter()
        .map(|d| (d.code.to_string(), d.message.clone()))
        .collect()
}

#[test]
fn a_trickling_download_ends_at_the_minimum_rate_in_verify_update_and_verify_archives() {
    let (listener, base) = listener();
    let server = Server::start_with(
        listener,
        routes(vec![
            ("GET /trickle.tar.gz", vec![trickle()]),
            (RELEASES, vec![release(&base)]),
            (&format!("GET {ASSET}"), vec![trickle()]),
        ]),
    );
    let started = Instant::now();

    let url = server.url("/trickle.tar.gz");
    let (found, _, _) = verify_with(&[agent("trickle", &url, &"ab".repeat(32))], trickle_net());
    assert!(
        found.iter().any(|(f, code, m)| f == "trickle"
            && code == "agent-launch"
            && m.contains(&format!("cannot download {url}"))
            && m.contains(SLOW)),
        "verify: {found:#?}"
    );

    let errors = update_with_trickle_net(&base);
    let asset = https(&base, ASSET);
    assert!(
        errors
            .iter()
            .any(|(id, m)| id == "gh-asset" && m.contains(&asset) && m.contains(SLOW)),
        "update: {errors:#?}"
    );

    let findings = verify_archives_with_trickle_net(&base, &https(&base, "/trickle.tar.gz"));
    assert!(
        findings
            .iter()
            .any(|(code, m)| code == "archive-unreachable"
                && m.contains("could not be downloaded")
                && m.contains(SLOW)),
        "--verify-archives: {findings:#?}"
    );

    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "the trickles held the three runs for {took:?}"
    );
    drop(server);
}
