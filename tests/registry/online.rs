//! `validate --online` end to end: the binary against scripted servers on 127.0.0.1.

use crate::common;
use acp_test_kit::git::git;
use acp_test_kit::server as net_server;
use acp_test_kit::{sha256_hex, Run};

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use net_server::{routes, Reply, Server};
use serde_json::{json, Value};

const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\"><circle cx=\"8\" cy=\"8\" r=\"6\" fill=\"currentColor\"/></svg>\n";
const ARCHIVE: &str = "/releases/download/v1.0.0/agent-linux-x86_64.tar.gz";
const NPM_DOC_PATH: &str = "/npm/@example%2fagent";

/// One platform is enough for these entries.
fn config(server: &str) -> String {
    json!({
        // A registry of its own (no base-url-public warning among the findings compared).
        "base_url": "https://agents.example.com/registry/v1/latest",
        "severity": {"platform-coverage": "off"},
        "online": {"npm_registry": format!("{server}/npm"), "pypi": format!("{server}/pypi-api")}
    })
    .to_string()
}

fn manifest(id: &str, distribution: Value) -> Value {
    let mut doc = json!({
        "id": id, "name": "Example Agent", "version": "1.0.0",
        "description": "A coding agent that reads, edits and runs code in a project.",
        "repository": "https://github.com/example/example-agent", "authors": ["Example Inc."],
        "license": "MIT", "license_url": "https://github.com/example/example-agent/blob/main/LICENSE",
    });
    doc["distribution"] = distribution;
    doc
}

/// A binary distribution of `url` written as `https`, as every rule requires: the test-only
/// loopback switch fetches it from the local server over plain http.
fn binary(url: &str, sha256: Option<&str>) -> Value {
    let url = url.replacen("http://", "https://", 1);
    let mut target = json!({"archive": url, "cmd": "./agent"});
    if let Some(sha) = sha256 {
        target["sha256"] = json!(sha);
    }
    json!({"binary": {"linux-x86_64": target}})
}

fn write_entry(root: &Path, manifest: &Value) {
    let dir = root.join(manifest["id"].as_str().unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("agent.json"),
        serde_json::to_string_pretty(manifest).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("icon.svg"), ICON).unwrap();
}

fn registry(server: &str, manifests: &[Value]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("acp-registry.jsonc"), config(server)).unwrap();
    for m in manifests {
        write_entry(dir.path(), m);
    }
    dir
}

/// A registry of one entry `id` whose only distribution is [`ARCHIVE`] on `server`, pinned.
fn one_archive_entry(server: &Server, id: &str) -> tempfile::TempDir {
    registry(
        &server.url(""),
        &[manifest(
            id,
            binary(&server.url(ARCHIVE), Some(&"a".repeat(64))),
        )],
    )
}

/// A `validate --format json` run, its findings as (severity, code, `file:line:col`, message)
/// with `null` for the line and column of a whole-file finding.
struct Validated {
    code: i32,
    findings: Vec<(String, String, String, String)>,
    stderr: String,
}

/// `validate --format json` with `args`, the test-only loopback switch on.
fn validate(root: &Path, args: &[&str]) -> Validated {
    validate_with(root, args, true)
}

fn validate_with(root: &Path, args: &[&str], allow_loopback: bool) -> Validated {
    parsed(
        &validate_command(root, args, allow_loopback)
            .output()
            .unwrap(),
    )
}

fn validate_command(root: &Path, args: &[&str], allow_loopback: bool) -> Command {
    let mut command = Command::new(crate::REGISTRY);
    // Inside the registry with `--registry .`, findings name `<entry>/agent.json`.
    command
        .args(["validate", "--registry", ".", "--format", "json"])
        .current_dir(root)
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("ACP_REGISTRY_TEST_ALLOW_LOOPBACK");
    if allow_loopback {
        command.env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1");
    }
    command
}

/// The exit code, findings and stderr of a `validate --format json` run.
fn parsed(output: &std::process::Output) -> Validated {
    let run = Run::from(output.clone());
    let findings = run
        .findings()
        .findings
        .into_iter()
        .map(|f| {
            let at = |n: Option<usize>| n.map_or_else(|| "null".to_owned(), |n| n.to_string());
            let place = format!("{}:{}:{}", f.file, at(f.line), at(f.column));
            (f.severity, f.code, place, f.message)
        })
        .collect();
    Validated {
        code: run.code,
        findings,
        stderr: run.stderr,
    }
}

fn codes(run: &Validated) -> Vec<&str> {
    run.findings
        .iter()
        .map(|f| f.1.as_str())
        .filter(|c| !c.contains("sha256-missing") && *c != "client-incompatible")
        .collect()
}

fn npm_doc() -> Value {
    json!({"name": "@example/agent", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {}}})
}

/// npm's version document of `@example/agent@1.0.0` with `repository`, advertising
/// attestations (at a host that is not the configured registry) when `attested`.
fn npm_version_doc(repository: Value, attested: bool) -> Value {
    let mut doc = json!({"name": "@example/agent", "version": "1.0.0", "dist": {
        "tarball": "https://registry.example/@example/agent/-/agent-1.0.0.tgz"}});
    if !repository.is_null() {
        doc["repository"] = repository;
    }
    if attested {
        doc["dist"]["attestations"] = json!({
            "url": "https://elsewhere.example/-/npm/v1/attestations/@example%2fagent@1.0.0",
            "provenance": {"predicateType": "https://slsa.dev/provenance/v1"}
        });
    }
    doc
}

/// npm's attestations answer: a publish attestation and a SLSA v1 provenance statement
/// whose workflow ran in `repository`.
fn slsa_attestations(repository: &str) -> Value {
    use base64::Engine as _;
    let statement = json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "pkg:npm/%40example/agent@1.0.0", "digest": {"sha512": "00"}}],
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {"buildDefinition": {
            "buildType": "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1",
            "externalParameters": {"workflow": {
                "ref": "refs/tags/v1.0.0", "repository": repository,
                "path": ".github/workflows/release.yml"}}}}
    });
    let payload = base64::engine::general_purpose::STANDARD.encode(statement.to_string());
    let bundle = |predicate: &str, payload: &str| {
        json!({"predicateType": predicate, "bundle": {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "dsseEnvelope": {"payload": payload, "payloadType": "application/vnd.in-toto+json",
                "signatures": [{"sig": "MEUC", "keyid": ""}]}}})
    };
    json!({"attestations": [
        bundle("https://github.com/npm/attestation/tree/main/specs/publish/v0.1", "e30="),
        bundle("https://slsa.dev/provenance/v1", &payload),
    ]})
}

#[test]
fn a_second_run_is_answered_from_the_cache() {
    let attested = npm_version_doc(json!("github:example/example-agent"), true);
    let server = Server::start(routes(vec![
        (&format!("HEAD {ARCHIVE}"), vec![Reply::status(200)]),
        (
            &format!("GET {NPM_DOC_PATH}"),
            vec![Reply::json(&npm_doc())],
        ),
        (
            "GET /npm/@example/agent/1.0.0",
            vec![Reply::json(&attested)],
        ),
        (
            "GET /npm/-/npm/v1/attestations/@example%2fagent@1.0.0",
            vec![Reply::json(&slsa_attestations(
                "https://github.com/example/example-agent",
            ))],
        ),
    ]));
    let base = server.url("");
    let root = registry(
        &base,
        &[
            manifest(
                "archive-agent",
                binary(&server.url(ARCHIVE), Some(&"a".repeat(64))),
            ),
            manifest(
                "npm-agent",
                json!({"npx": {"package": "@example/agent@1.0.0"}}),
            ),
        ],
    );
    let cache = tempfile::tempdir().unwrap();
    let args = ["--online", "--cache", cache.path().to_str().unwrap()];
    let first = validate(root.path(), &args);
    assert_eq!(
        (first.code, codes(&first)),
        (0, vec!["package-provenance"]),
        "{}",
        first.stderr
    );
    assert_eq!(server.requests().len(), 4, "{:?}", server.requests());
    let second = validate(root.path(), &args);
    assert_eq!(
        second.findings, first.findings,
        "the cache keeps the provenance facts"
    );
    assert_eq!(
        server.requests().len(),
        4,
        "the second run asked again: {:?}",
        server.requests()
    );
    // --no-cache asks again.
    validate(root.path(), &["--online", "--no-cache"]);
    assert_eq!(server.requests().len(), 8);
}

#[test]
fn failures_are_never_cached() {
    let server = Server::start(routes(vec![]));
    let root = one_archive_entry(&server, "gone-agent");
    let cache = tempfile::tempdir().unwrap();
    let args = ["--online", "--cache", cache.path().to_str().unwrap()];
    for run in 1..=2 {
        let result = validate(root.path(), &args);
        assert_eq!(codes(&result), ["archive-unreachable"]);
        assert_eq!(server.requests().len(), run);
    }
}

#[test]
fn a_cached_digest_is_reused_while_the_etag_holds() {
    let body = b"archive bytes".to_vec();
    let etag = std::sync::Arc::new(std::sync::Mutex::new("\"v1\"".to_string()));
    let current = etag.clone();
    let served = body.clone();
    let server = Server::start(move |_: &net_server::Request, _| {
        Reply::body(200, served.clone()).header("etag", &current.lock().unwrap())
    });
    let root = registry(
        &server.url(""),
        &[manifest("pinned-agent", binary(&server.url(ARCHIVE), None))],
    );
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "--verify-archives",
        "--cache",
        cache.path().to_str().unwrap(),
    ];
    let first = validate(root.path(), &args);
    assert_eq!(codes(&first), ["archive-digest"]);
    assert_eq!(
        server.requests(),
        [format!("HEAD {ARCHIVE}"), format!("GET {ARCHIVE}")]
    );
    let second = validate(root.path(), &args);
    assert_eq!(first.findings, second.findings);
    assert_eq!(
        server.requests().len(),
        3,
        "only a HEAD: {:?}",
        server.requests()
    );
    *etag.lock().unwrap() = "\"v2\"".into();
    validate(root.path(), &args);
    assert_eq!(server.requests().last().unwrap(), &format!("GET {ARCHIVE}"));
}

/// What a re-uploaded archive's server says with the new bytes: the `ETag` kept, and which of
/// `Last-Modified` and the length changed.
struct Retag {
    etag: &'static str,
    modified: [&'static str; 2],
    bytes: [&'static str; 2],
}

#[test]
fn a_retag_that_keeps_its_etag_is_downloaded_again_with_a_warm_cache() {
    let (d1, d2) = (
        "Tue, 01 Dec 2026 07:28:00 GMT",
        "Wed, 02 Dec 2026 07:28:00 GMT",
    );
    let cases = [
        // A weak ETag promises equivalent content, not the same bytes.
        (
            "weak etag",
            Retag {
                etag: "W/\"v1\"",
                modified: ["", ""],
                bytes: [RELEASED, RE_UPLOADED],
            },
        ),
        // The same strong ETag but a new date (an ETag of the path, a CDN that keeps it).
        (
            "new date",
            Retag {
                etag: "\"v1\"",
                modified: [d1, d2],
                bytes: ["released: 1\n", "released: 2\n"],
            },
        ),
        // The same strong ETag and no date, but another length.
        (
            "new length",
            Retag {
                etag: "\"v1\"",
                modified: ["", ""],
                bytes: [RELEASED, RE_UPLOADED],
            },
        ),
    ];
    for (name, retag) in cases {
        let round = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let now = round.clone();
        let (etag, modified, bytes) = (retag.etag, retag.modified.map(str::to_string), retag.bytes);
        let server = Server::start(move |_: &net_server::Request, _| {
            let i = now.load(std::sync::atomic::Ordering::SeqCst);
            let reply = Reply::body(200, bytes[i]).header("etag", etag);
            match modified[i].as_str() {
                "" => reply,
                date => reply.header("last-modified", date),
            }
        });
        let pin = sha256_hex(bytes[0].as_bytes());
        let root = registry(
            &server.url(""),
            &[manifest(
                "pinned-agent",
                binary(&server.url(ARCHIVE), Some(&pin)),
            )],
        );
        let cache = tempfile::tempdir().unwrap();
        let args = [
            "--verify-archives",
            "--cache",
            cache.path().to_str().unwrap(),
        ];
        let first = validate(root.path(), &args);
        assert_eq!(
            codes(&first),
            Vec::<&str>::new(),
            "{name}: {:?}",
            first.findings
        );
        round.store(1, std::sync::atomic::Ordering::SeqCst);
        let second = validate(root.path(), &args);
        assert_eq!(
            codes(&second),
            ["sha256-mismatch"],
            "{name}: {:?}",
            second.findings
        );
        assert_eq!(
            server.requests().last().unwrap(),
            &format!("GET {ARCHIVE}"),
            "{name}: downloaded again"
        );
    }
}

#[test]
fn duplicate_archive_urls_are_requested_once_per_run() {
    let server = Server::start(routes(vec![(
        &format!("HEAD {ARCHIVE}"),
        vec![Reply::status(200)],
    )]));
    let url = server.url(ARCHIVE);
    let root = registry(
        &server.url(""),
        &[
            manifest("first-agent", binary(&url, Some(&"a".repeat(64)))),
            manifest("second-agent", binary(&url, Some(&"a".repeat(64)))),
        ],
    );
    let run = validate(root.path(), &["--online", "--no-cache"]);
    assert_eq!(run.code, 0, "{:?}", run.findings);
    assert_eq!(server.requests(), [format!("HEAD {ARCHIVE}")]);
}

#[test]
fn preview_artefacts_are_not_probed() {
    let server = Server::start(routes(vec![(
        &format!("HEAD {ARCHIVE}"),
        vec![Reply::status(200)],
    )]));
    let mut m = manifest(
        "preview-agent",
        binary(&server.url(ARCHIVE), Some(&"a".repeat(64))),
    );
    m["preview"] = json!({
        "version": "1.1.0-preview.1",
        "distribution": binary(&server.url("/releases/download/v1.1.0-preview.1/agent.tar.gz"), Some(&"b".repeat(64)))
    });
    let root = registry(&server.url(""), &[m]);
    validate(root.path(), &["--online", "--no-cache"]);
    assert_eq!(server.requests(), [format!("HEAD {ARCHIVE}")]);
}

#[test]
fn with_changed_since_only_changed_entries_go_online() {
    let server = Server::start(|_: &net_server::Request, _| Reply::status(200));
    let root = registry(
        &server.url(""),
        &[
            manifest(
                "old-agent",
                binary(&server.url("/old.tar.gz"), Some(&"a".repeat(64))),
            ),
            manifest(
                "new-agent",
                binary(&server.url("/new.tar.gz"), Some(&"a".repeat(64))),
            ),
        ],
    );
    acp_test_kit::git::init_base(root.path()).unwrap();
    write_entry(
        root.path(),
        &manifest(
            "new-agent",
            binary(&server.url("/newer.tar.gz"), Some(&"a".repeat(64))),
        ),
    );
    let run = validate(
        root.path(),
        &["--online", "--no-cache", "--changed-since", "HEAD"],
    );
    assert_eq!(run.code, 0, "{:?} {}", run.findings, run.stderr);
    assert_eq!(server.requests(), ["HEAD /newer.tar.gz"]);
}

#[test]
fn without_network_the_run_ends_promptly_with_coded_findings() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let root = registry(
        &dead,
        &[
            manifest(
                "closed-agent",
                binary(&format!("{dead}{ARCHIVE}"), Some(&"a".repeat(64))),
            ),
            manifest(
                "nowhere-agent",
                binary(
                    &format!("https://downloads.invalid{ARCHIVE}"),
                    Some(&"a".repeat(64)),
                ),
            ),
            manifest(
                "npm-agent",
                json!({"npx": {"package": "@example/agent@1.0.0"}}),
            ),
            manifest(
                "pypi-agent",
                json!({"uvx": {"package": "example-agent==1.0.0"}}),
            ),
        ],
    );
    let start = Instant::now();
    let run = validate(root.path(), &["--online", "--no-cache"]);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        codes(&run),
        [
            "archive-unreachable",
            "archive-unreachable",
            "package-unreachable",
            "package-unreachable"
        ],
        "{:?}",
        run.findings
    );
    assert!(
        run.findings[1]
            .3
            .contains("cannot resolve downloads.invalid"),
        "{:?}",
        run.findings[1]
    );
}

#[test]
fn loopback_servers_are_refused_without_the_test_switch() {
    let server = Server::start(|_: &net_server::Request, _| Reply::status(200));
    let root = registry(
        &server.url(""),
        &[manifest(
            "local-agent",
            binary(&server.url(ARCHIVE), Some(&"a".repeat(64))),
        )],
    );
    let run = validate_with(root.path(), &["--online", "--no-cache"], false);
    assert_eq!(codes(&run), ["url-refused"]);
    assert!(server.requests().is_empty());
}

#[test]
fn flags_override_the_configured_endpoints_and_exemptions_apply() {
    let server = Server::start(routes(vec![(
        &format!("GET {NPM_DOC_PATH}"),
        vec![Reply::json(&npm_doc())],
    )]));
    let root = registry(
        "http://127.0.0.1:1",
        &[
            manifest(
                "npm-agent",
                json!({"npx": {"package": "@example/agent@1.0.0"}}),
            ),
            manifest(
                "exempt-agent",
                json!({"npx": {"package": "@example/agent@1.0.0"}}),
            ),
        ],
    );
    let mut config: Value = serde_json::from_str(&config("http://127.0.0.1:1")).unwrap();
    config["exemptions"] = json!({"exempt-agent": ["package-unreachable"]});
    std::fs::write(root.path().join("acp-registry.jsonc"), config.to_string()).unwrap();
    let configured = validate(root.path(), &["--online", "--no-cache"]);
    assert_eq!(
        configured
            .findings
            .iter()
            .map(|f| (f.1.as_str(), f.2.split('/').next().unwrap()))
            .collect::<Vec<_>>(),
        [("package-unreachable", "npm-agent")]
    );
    let npm = server.url("/npm");
    let flagged = validate(
        root.path(),
        &["--online", "--no-cache", "--npm-registry", &npm],
    );
    assert_eq!(
        codes(&flagged),
        Vec::<&str>::new(),
        "{:?}",
        flagged.findings
    );
}

#[test]
fn a_misspelt_or_malformed_online_setting_is_a_config_finding() {
    // One entry, so the folder is a registry; only the configuration findings are compared.
    let root = registry(
        "http://127.0.0.1:1",
        &[manifest(
            "npm-agent",
            json!({"npx": {"package": "@example/agent@1.0.0"}}),
        )],
    );
    std::fs::write(
        root.path().join("acp-registry.jsonc"),
        "{\n  \"online\": { \"npm_registy\": \"https://r.example\", \"pypi\": \"ftp://p.example\" }\n}\n",
    )
    .unwrap();
    let run = validate(root.path(), &[]);
    let found: Vec<(&str, &str)> = run
        .findings
        .iter()
        .map(|f| (f.1.as_str(), f.2.as_str()))
        .filter(|(code, _)| code.starts_with("config-"))
        .collect();
    assert_eq!(
        found,
        [
            ("config-invalid", "acp-registry.jsonc:2:15"),
            ("config-invalid", "acp-registry.jsonc:2:59")
        ]
    );
    assert!(
        run.findings
            .iter()
            .any(|f| f.1 == "config-invalid" && f.3.contains("npm_registy")),
        "{:?}",
        run.findings[0]
    );
}

/// An online finding in a manifest with no offline finding still shows its source line: the
/// checked registry keeps excerpts only for files with findings, and the online findings add
/// theirs.
#[test]
fn online_findings_in_a_clean_manifest_show_their_excerpt() {
    let server = Server::start(routes(vec![]));
    let root = one_archive_entry(&server, "archive-agent");
    let offline = validate(root.path(), &[]);
    assert_eq!(
        (offline.code, codes(&offline)),
        (0, vec![]),
        "{}",
        offline.stderr
    );
    let output = Command::new(crate::REGISTRY)
        .args([
            "validate",
            "--registry",
            ".",
            "--format",
            "human",
            "--online",
            "--no-cache",
        ])
        .current_dir(root.path())
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    let excerpt = shown
        .lines()
        .find(|line| line.contains("| ") && line.contains("\"archive\": \"https://127.0.0.1"));
    assert!(
        excerpt.is_some(),
        "no excerpt of the archive line:\n{shown}"
    );
}

#[test]
fn amplified_package_documents_are_read_in_bounded_memory() {
    use common::update::{zeros, AMPLIFIED_BOUND};
    let amplified = zeros(14 << 20);
    let npm = format!(
        r#"{{"name":"@example/agent","dist-tags":{{"latest":"1.0.0"}},"versions":{{"1.0.0":{{"dist":{amplified}}}}},"time":{{"1.0.0":{amplified}}}}}"#
    );
    let pypi = format!(
        r#"{{"info":{{"version":"1.0.0","description":{amplified}}},"releases":{{"1.0.0":[{{"yanked":false,"digests":{amplified}}}]}}}}"#
    );
    let keys: Vec<String> = (0..1_500_000)
        .map(|i| format!("\"0.{i}.0\":{{}}"))
        .collect();
    let many = format!("{{\"versions\":{{{}}}}}", keys.join(","));
    drop(keys);
    let server = Server::start(routes(vec![
        (&format!("GET {NPM_DOC_PATH}"), vec![Reply::body(200, npm)]),
        (
            "GET /pypi-api/pypi/py-agent/json",
            vec![Reply::body(200, pypi)],
        ),
        ("GET /npm/many-agent", vec![Reply::body(200, many)]),
    ]));
    let root = registry(
        &server.url(""),
        &[
            manifest(
                "npm-agent",
                json!({"npx": {"package": "@example/agent@1.0.0"}}),
            ),
            manifest("py-agent", json!({"uvx": {"package": "py-agent==1.0.0"}})),
            manifest(
                "many-agent",
                json!({"npx": {"package": "many-agent@1.0.0"}}),
            ),
        ],
    );
    let mut command = validate_command(root.path(), &["--online", "--no-cache"], true);
    let (output, peak) = acp_test_kit::rss::run_measured(&mut command);
    let run = parsed(&output);
    assert!(
        peak < AMPLIFIED_BOUND,
        "validate --online peaked at {} MB, over the {} MB bound",
        peak >> 20,
        AMPLIFIED_BOUND >> 20
    );
    assert_eq!(codes(&run), ["package-unreachable"], "{:#?}", run.findings);
    assert!(
        run.findings[0].2.starts_with("many-agent/agent.json")
            && run.findings[0].3.contains("more than 50000 versions"),
        "{:#?}",
        run.findings
    );
}

/// The findings of `code` in `run`, as (`<entry>/agent.json`, message).
fn of_code<'a>(run: &'a Validated, code: &str) -> Vec<(&'a str, &'a str)> {
    run.findings
        .iter()
        .filter(|f| f.1 == code)
        .map(|f| (f.2.split(':').next().unwrap(), f.3.as_str()))
        .collect()
}

/// A registry whose configuration also sets `extra` (merged into [`config`]'s).
fn registry_with(server: &str, extra: &Value, manifests: &[Value]) -> tempfile::TempDir {
    let dir = registry(server, manifests);
    let mut config: Value = serde_json::from_str(&config(server)).unwrap();
    for (key, value) in extra.as_object().unwrap() {
        config[key] = value.clone();
    }
    std::fs::write(dir.path().join("acp-registry.jsonc"), config.to_string()).unwrap();
    dir
}

#[test]
fn a_release_archive_of_another_repository_is_a_warning_unless_declared() {
    // The configured GitHub API's host serves release assets, as GitHub Enterprise does.
    let releases = "/acme/agent-releases/releases/download/v1.0.0/agent.tar.gz";
    let own = "/example/example-agent/releases/download/v1.0.0/agent.tar.gz";
    let server = Server::start(|_: &net_server::Request, _| Reply::status(200));
    let mut foreign = manifest(
        "foreign-agent",
        binary(&server.url(releases), Some(&"a".repeat(64))),
    );
    foreign["repository"] = json!(server
        .url("/example/example-agent")
        .replacen("http:", "https:", 1));
    let mut own_case = manifest("own-agent", binary(&server.url(own), Some(&"a".repeat(64))));
    own_case["repository"] = json!(server
        .url("/Example/Example-Agent.git")
        .replacen("http:", "https:", 1));
    let online = json!({"online": {"github_api": server.url("").replacen("http:", "https:", 1),
        "npm_registry": server.url("/npm"), "pypi": server.url("/pypi-api")}});
    let root = registry_with(
        &server.url(""),
        &online,
        &[foreign.clone(), own_case.clone()],
    );
    let run = validate(root.path(), &["--online", "--no-cache"]);
    let found = of_code(&run, "archive-repository-mismatch");
    assert_eq!(found.len(), 1, "{:?}", run.findings);
    assert_eq!(found[0].0, "foreign-agent/agent.json");
    assert!(
        found[0]
            .1
            .contains("/acme/agent-releases`, not of the manifest's repository"),
        "{}",
        found[0].1
    );
    assert_eq!(run.code, 0, "a warning: {:?}", run.findings);
    assert_eq!(
        run.findings
            .iter()
            .find(|f| f.1 == "archive-repository-mismatch")
            .unwrap()
            .0,
        "warning"
    );

    let mut declared = online.clone();
    declared["provenance"] = json!({"release_repositories": {"foreign-agent": [
        server.url("/ACME/agent-releases/").replacen("http:", "https:", 1)]}});
    let root = registry_with(&server.url(""), &declared, &[foreign, own_case]);
    let run = validate(root.path(), &["--online", "--no-cache"]);
    assert_eq!(
        of_code(&run, "archive-repository-mismatch"),
        [],
        "{:?}",
        run.findings
    );
}

/// One npm entry per `repository` value: its name, its manifest and its two routes.
fn npm_form_entries(forms: &[Value]) -> (Vec<Value>, Vec<(String, Vec<Reply>)>) {
    let mut manifests = Vec::new();
    let mut table = Vec::new();
    for (i, form) in forms.iter().enumerate() {
        let name = format!("form{i}");
        manifests.push(manifest(
            &format!("form-{i}"),
            json!({"npx": {"package": format!("{name}@1.0.0")}}),
        ));
        let packument =
            json!({"name": name, "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {}}});
        table.push((format!("GET /npm/{name}"), vec![Reply::json(&packument)]));
        let mut version = json!({"name": name, "version": "1.0.0"});
        if !form.is_null() {
            version["repository"] = form.clone();
        }
        table.push((
            format!("GET /npm/{name}/1.0.0"),
            vec![Reply::json(&version)],
        ));
    }
    (manifests, table)
}

#[test]
fn npm_repository_forms_are_compared_with_the_manifests_repository() {
    let forms = [
        json!("git+https://github.com/example/example-agent.git"),
        json!({"type": "git", "url": "https://github.com/Example/example-agent", "directory": "packages/agent"}),
        json!("github:example/example-agent"),
        json!("example/example-agent"),
        json!("git@github.com:example/example-agent.git"),
        json!("git+https://github.com/someone/else.git"),
        json!({"type": "git", "url": "github:example/example-agent-fork"}),
        Value::Null,
    ];
    let (manifests, table) = npm_form_entries(&forms);
    let server = scripted(table);
    let root = registry(&server.url(""), &manifests);
    let run = validate(root.path(), &["--online", "--no-cache"]);
    assert_eq!(run.code, 0, "{:?} {}", run.findings, run.stderr);
    let mismatched = of_code(&run, "package-repository-mismatch");
    assert_eq!(
        mismatched.iter().map(|f| f.0).collect::<Vec<_>>(),
        ["form-5/agent.json", "form-6/agent.json"],
        "{:?}",
        run.findings
    );
    assert!(
        mismatched[0]
            .1
            .contains("`git+https://github.com/someone/else.git`"),
        "{}",
        mismatched[0].1
    );
    assert!(mismatched[0]
        .1
        .contains("not from the manifest's repository `https://github.com/example/example-agent`"));
    let missing = of_code(&run, "package-repository-missing");
    assert_eq!(
        missing.iter().map(|f| f.0).collect::<Vec<_>>(),
        ["form-7/agent.json"]
    );
    assert!(
        missing[0].1.contains("declares no `repository`"),
        "{}",
        missing[0].1
    );
    let severities: std::collections::BTreeSet<(&str, &str)> = run
        .findings
        .iter()
        .filter(|f| f.1.starts_with("package-repository"))
        .map(|f| (f.1.as_str(), f.0.as_str()))
        .collect();
    assert_eq!(
        severities,
        [
            ("package-repository-mismatch", "warning"),
            ("package-repository-missing", "note")
        ]
        .into()
    );
}

/// A `PyPI` entry `uv-<i>` pinned to `tool<i>==1.0.0`, its project and release documents.
fn pypi_entry(i: usize, info: &Value, files: &[&str]) -> (Value, Vec<(String, Vec<Reply>)>) {
    let name = format!("tool{i}");
    let m = manifest(
        &format!("uv-{i}"),
        json!({"uvx": {"package": format!("{name}==1.0.0")}}),
    );
    let file_list: Vec<Value> = files
        .iter()
        .map(|f| json!({"filename": f, "yanked": false}))
        .collect();
    let project = json!({"info": {"version": "1.0.0"}, "releases": {"1.0.0": file_list}});
    let release = json!({"info": info, "urls": file_list});
    let routes = vec![
        (
            format!("GET /pypi-api/pypi/{name}/json"),
            vec![Reply::json(&project)],
        ),
        (
            format!("GET /pypi-api/pypi/{name}/1.0.0/json"),
            vec![Reply::json(&release)],
        ),
    ];
    (m, routes)
}

/// A server answering `table`'s routes (the last reply repeats), 404 otherwise.
fn scripted(table: Vec<(String, Vec<Reply>)>) -> Server {
    Server::start(move |request: &net_server::Request, nth| {
        let key = format!("{} {}", request.method, request.path);
        table.iter().find(|(k, _)| *k == key).map_or_else(
            || Reply::status(404),
            |(_, r)| r[nth.min(r.len() - 1)].clone(),
        )
    })
}

#[test]
fn pypi_project_urls_are_compared_with_the_manifests_repository() {
    let infos = [
        json!({"project_urls": {"Source": "https://github.com/example/example-agent"}}),
        json!({"project_urls": {"Homepage": "https://github.com/Example/Example-Agent/"}, "home_page": null}),
        json!({"project_urls": null, "home_page": "https://github.com/example/example-agent"}),
        json!({"project_urls": {"Issues": "https://github.com/example/example-agent/issues", "Source Code": "https://github.com/other/thing"}}),
        json!({"project_urls": {"Source-Code": "https://github.com/other/thing", "Documentation": "https://docs.example.com/guide/agent"}}),
        json!({"project_urls": {"Documentation": "https://docs.example.com/guide/agent"}, "home_page": ""}),
    ];
    let mut manifests = Vec::new();
    let mut table = Vec::new();
    for (i, info) in infos.iter().enumerate() {
        let (m, routes) = pypi_entry(i, info, &[&format!("tool{i}-1.0.0.tar.gz")]);
        manifests.push(m);
        table.extend(routes);
    }
    let server = scripted(table);
    let root = registry(&server.url(""), &manifests);
    let run = validate(root.path(), &["--online", "--no-cache"]);
    assert_eq!(run.code, 0, "{:?} {}", run.findings, run.stderr);
    let entries = |code| of_code(&run, code).iter().map(|f| f.0).collect::<Vec<_>>();
    assert_eq!(
        entries("package-repository-mismatch"),
        ["uv-4/agent.json"],
        "{:?}",
        run.findings
    );
    assert_eq!(entries("package-repository-missing"), ["uv-5/agent.json"]);
    let mismatch = of_code(&run, "package-repository-mismatch")[0].1;
    assert!(
        mismatch
            .starts_with("PyPI `tool4==1.0.0` says it comes from `https://github.com/other/thing`"),
        "{mismatch}"
    );
    assert_eq!(entries("package-provenance-missing").len(), infos.len());
}

#[test]
fn npm_provenance_names_the_repository_it_attests_and_only_the_configured_registry_is_asked() {
    let server = Server::start(routes(vec![
        (
            &format!("GET {NPM_DOC_PATH}"),
            vec![Reply::json(&npm_doc())],
        ),
        (
            "GET /npm/@example/agent/1.0.0",
            vec![Reply::json(&npm_version_doc(
                json!("github:example/example-agent"),
                true,
            ))],
        ),
        (
            "GET /npm/-/npm/v1/attestations/@example%2fagent@1.0.0",
            vec![Reply::json(&slsa_attestations(
                "https://github.com/someone/fork",
            ))],
        ),
    ]));
    let root = registry(
        &server.url(""),
        &[manifest(
            "npm-agent",
            json!({"npx": {"package": "@example/agent@1.0.0"}}),
        )],
    );
    let run = validate(root.path(), &["--online", "--no-cache"]);
    assert_eq!(run.code, 0, "a note: {:?}", run.findings);
    let notes = of_code(&run, "package-provenance");
    assert_eq!(notes.len(), 1, "{:?}", run.findings);
    assert_eq!(
        notes[0].1,
        "npm `@example/agent@1.0.0` has SLSA provenance v1, built from `https://github.com/someone/fork` by `.github/workflows/release.yml`, not the manifest's repository `https://github.com/example/example-agent`"
    );
    assert!(
        server
            .requests()
            .contains(&"GET /npm/-/npm/v1/attestations/@example%2fagent@1.0.0".to_string()),
        "the advertised URL on another host is not followed: {:?}",
        server.requests()
    );

    let unattested = Server::start(routes(vec![
        (
            &format!("GET {NPM_DOC_PATH}"),
            vec![Reply::json(&npm_doc())],
        ),
        (
            "GET /npm/@example/agent/1.0.0",
            vec![Reply::json(&npm_version_doc(
                json!("github:example/example-agent"),
                false,
            ))],
        ),
    ]));
    let root = registry(
        &unattested.url(""),
        &[manifest(
            "npm-agent",
            json!({"npx": {"package": "@example/agent@1.0.0"}}),
        )],
    );
    let run = validate(root.path(), &["--online", "--no-cache"]);
    assert_eq!(
        codes(&run),
        ["package-provenance-missing"],
        "{:?}",
        run.findings
    );
    assert_eq!(
        unattested.requests(),
        [
            format!("GET {NPM_DOC_PATH}"),
            "GET /npm/@example/agent/1.0.0".to_string()
        ],
        "no attestations are asked for when none are advertised"
    );
}

#[test]
fn pypi_provenance_names_its_trusted_publisher() {
    let info = json!({"project_urls": {"Source": "https://github.com/example/example-agent"}});
    let files = ["tool0-1.0.0-py3-none-any.whl", "tool0-1.0.0.tar.gz"];
    let (m, mut table) = pypi_entry(0, &info, &files);
    let provenance = json!({"version": 1, "attestation_bundles": [{
        "publisher": {"kind": "GitHub", "repository": "Example/example-agent",
            "workflow": "release.yml", "environment": "pypi", "claims": null},
        "attestations": [{"version": 1, "envelope": {"statement": "e30=", "signature": "MEUC"},
            "verification_material": {"certificate": "MIIB", "transparency_entries": []}}]}]});
    table.push((
        "GET /pypi-api/integrity/tool0/1.0.0/tool0-1.0.0.tar.gz/provenance".into(),
        vec![Reply::json(&provenance)],
    ));
    let server = scripted(table);
    let root = registry(&server.url(""), &[m]);
    let run = validate(root.path(), &["--online", "--no-cache"]);
    assert_eq!(run.code, 0, "{:?}", run.findings);
    let notes = of_code(&run, "package-provenance");
    assert_eq!(
        notes,
        [(
            "uv-0/agent.json",
            "PyPI `tool0==1.0.0` has GitHub Trusted Publisher for 1 of 2 files, built from `https://github.com/Example/example-agent` by `release.yml`: the manifest's repository"
        )],
        "{:?}",
        run.findings
    );
    assert_eq!(of_code(&run, "package-provenance-missing"), []);
}

/// sha256 of `released bytes\n` and of `re-uploaded bytes\n`.
const RELEASED: &str = "released bytes\n";
const RE_UPLOADED: &str = "re-uploaded bytes\n";

/// A git registry whose committed entry `retag-agent` pins the digest of [`RELEASED`], and a
/// server that now serves `served` at the same URL.
fn pinned_and_committed(served: &'static str) -> (Server, tempfile::TempDir) {
    let server = Server::start(move |_: &net_server::Request, _| Reply::body(200, served));
    let pin = sha256_hex(RELEASED.as_bytes());
    let root = registry(
        &server.url(""),
        &[manifest(
            "retag-agent",
            binary(&server.url(ARCHIVE), Some(&pin)),
        )],
    );
    acp_test_kit::git::init_base(root.path()).unwrap();
    (server, root)
}

fn finding<'r>(run: &'r Validated, code: &str) -> Vec<&'r (String, String, String, String)> {
    run.findings.iter().filter(|f| f.1 == code).collect()
}

#[test]
fn a_committed_pin_whose_archive_changed_is_a_retag_not_a_mismatch() {
    let (_server, root) = pinned_and_committed(RE_UPLOADED);
    let run = validate(root.path(), &["--verify-archives", "--no-cache"]);
    assert_eq!(run.code, 1);
    assert!(
        finding(&run, "sha256-mismatch").is_empty(),
        "{:?}",
        run.findings
    );
    let retag = finding(&run, "archive-retagged");
    assert_eq!(retag.len(), 1, "{:?}", run.findings);
    let (severity, _, place, message) = retag[0];
    assert_eq!(severity, "error");
    assert!(place.starts_with("retag-agent/agent.json:"), "{place}");
    assert!(
        message.contains("archive of 1.0.0 changed after it was pinned")
            && message.contains(&sha256_hex(RE_UPLOADED.as_bytes()))
            && message.contains("unchanged since HEAD"),
        "{message}"
    );
    // Without --quarantine-retagged nothing is written.
    assert!(!root.path().join("quarantine.json").exists());
    // The same bytes as pinned: nothing to say.
    let (_server, clean) = pinned_and_committed(RELEASED);
    let run = validate(clean.path(), &["--verify-archives", "--no-cache"]);
    assert_eq!((run.code, codes(&run)), (0, vec![]), "{:?}", run.findings);
}

#[test]
fn a_pin_edited_since_the_base_stays_a_plain_mismatch() {
    let (_server, root) = pinned_and_committed(RE_UPLOADED);
    let path = root.path().join("retag-agent/agent.json");
    let wrong = "b".repeat(64);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace(&sha256_hex(RELEASED.as_bytes()), &wrong),
    )
    .unwrap();
    // Not committed: against HEAD, and against --changed-since, the pin was just edited (which
    // the change rules also point out: a new pin under the same version).
    for (args, expected) in [
        (
            vec!["--verify-archives", "--no-cache"],
            &["sha256-mismatch"][..],
        ),
        (
            vec!["--verify-archives", "--no-cache", "--changed-since", "HEAD"],
            &["version-unchanged", "sha256-mismatch"],
        ),
    ] {
        let run = validate(root.path(), &args);
        assert_eq!(codes(&run), expected, "{args:?}: {:?}", run.findings);
    }
    // Another archive URL with the old pin is an edit too.
    std::fs::write(&path, text.replace(".tar.gz", "-musl.tar.gz")).unwrap();
    let run = validate(root.path(), &["--verify-archives", "--no-cache"]);
    assert!(
        finding(&run, "archive-retagged").is_empty(),
        "{:?}",
        run.findings
    );
    assert_eq!(
        finding(&run, "sha256-mismatch").len(),
        1,
        "{:?}",
        run.findings
    );
}

#[test]
fn with_changed_since_an_entry_changed_elsewhere_keeps_its_pin_and_is_retagged() {
    let (_server, root) = pinned_and_committed(RE_UPLOADED);
    // A later commit changes the entry's README only: the pin is the base's.
    std::fs::write(root.path().join("retag-agent/README.md"), "# Retag agent\n").unwrap();
    git(root.path(), &["add", "-A"]);
    git(root.path(), &["commit", "-qm", "readme"]);
    let run = validate(
        root.path(),
        &[
            "--verify-archives",
            "--no-cache",
            "--changed-since",
            "HEAD~1",
        ],
    );
    assert_eq!(codes(&run), ["archive-retagged"], "{:?}", run.findings);
    assert!(
        run.findings[0].3.contains("unchanged since HEAD~1"),
        "{:?}",
        run.findings
    );
}

#[test]
fn quarantine_retagged_adds_the_entry_keeping_the_file_comments() {
    let (_server, root) = pinned_and_committed(RE_UPLOADED);
    let quarantine = "// Entries withheld by the maintainers.\n{\n  // since June\n  \"zz-old-agent\": \"Broken launcher\"\n}\n";
    std::fs::write(root.path().join("quarantine.json"), quarantine).unwrap();
    let args = ["--verify-archives", "--no-cache", "--quarantine-retagged"];
    let run = validate(root.path(), &args);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("quarantined `retag-agent` in quarantine.json: retagged: the 1.0.0 archives"),
        "{}",
        run.stderr
    );
    let written = std::fs::read_to_string(root.path().join("quarantine.json")).unwrap();
    let reason = "retagged: the 1.0.0 archives no longer match their sha256 pins (possible compromise; see `acp-registry explain archive-retagged`)";
    assert_eq!(
        written,
        format!("// Entries withheld by the maintainers.\n{{\n  \"retag-agent\": \"{reason}\",\n  // since June\n  \"zz-old-agent\": \"Broken launcher\"\n}}\n")
    );
    // The file is one the registry reads: no quarantine-format finding, and a second run
    // leaves it as it is.
    let again = validate(root.path(), &args);
    assert!(
        finding(&again, "quarantine-format").is_empty(),
        "{:?}",
        again.findings
    );
    assert!(
        again
            .stderr
            .contains("`retag-agent` is already quarantined"),
        "{}",
        again.stderr
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("quarantine.json")).unwrap(),
        written
    );
}

#[test]
fn quarantine_retagged_creates_the_file_when_the_registry_has_none() {
    let (_server, root) = pinned_and_committed(RE_UPLOADED);
    validate(
        root.path(),
        &["--verify-archives", "--no-cache", "--quarantine-retagged"],
    );
    let written = std::fs::read_to_string(root.path().join("quarantine.json")).unwrap();
    let value: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        value.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["retag-agent"]
    );
    assert!(value["retag-agent"]
        .as_str()
        .unwrap()
        .starts_with("retagged: the 1.0.0 archives"));
}
