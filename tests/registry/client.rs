//! The client commands end to end (`install`, `run`, `list`, `which`, `uninstall`,
//! `cache gc`): the `acp-registry` binary against a local server (loopback switch on) serving
//! a published-style `registry.json` of the scriptable test agent `tests/agents/acp_agent.py`
//! inside a `.tar.gz`, pinned by its sha256, with a throw-away cache per test.
//!
//! Cases: a clean install then `run` answering `initialize` (the registry's `env` and the
//! caller's arguments reaching the agent); a second `run` asking nothing; a tampered archive,
//! HTML error pages (404, 500), a truncated download, a traversal archive and a bomb refused
//! with nothing left in the cache; two concurrent installs with one download; a version bump
//! installed and the old version collected by `cache gc`; `--offline` on a stale registry;
//! `which`, `list --format json`, `uninstall`, an unknown id, `--require-sha256`.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_test_kit::server::{Reply, Server};
use acp_test_kit::wheel::{agent_script, binary_everywhere};
use serde_json::{json, Value};

use crate::common::archives::{tar_gz, Entry};
use crate::common::{sha256_hex, Run};

/// The test agent's id in every registry here.
const ID: &str = "test-agent";

/// The agent packed as `bin/acp-agent` (mode 0644: the install makes `cmd` executable).
fn good_archive() -> Vec<u8> {
    tar_gz(&[Entry::Mode("bin/acp-agent", &agent_script(), 0o644)])
}

/// A local server whose answers a test can change while it runs: `"/path"` to a reply.
struct Fixture {
    server: Server,
    routes: Arc<Mutex<BTreeMap<String, Reply>>>,
    cache: tempfile::TempDir,
}

impl Fixture {
    /// A server with `archive` at `/agent.tar.gz` and a registry of version 1.0.0 pinning
    /// `pin` (the archive's own sha256 when `None`).
    fn new(archive: Vec<u8>) -> Fixture {
        let pin = sha256_hex(&archive);
        Fixture::serving(Reply::body(200, archive), Some(&pin))
    }

    /// A server answering `/agent.tar.gz` with `reply`, its registry pinning `pin`.
    fn serving(reply: Reply, pin: Option<&str>) -> Fixture {
        let routes: Arc<Mutex<BTreeMap<String, Reply>>> = Arc::default();
        let table = Arc::clone(&routes);
        let server = Server::start(move |request, _| {
            let table = table.lock().unwrap();
            table
                .get(&request.path)
                .cloned()
                .unwrap_or_else(|| Reply::status(404))
        });
        let fixture = Fixture {
            server,
            routes,
            cache: tempfile::tempdir().unwrap(),
        };
        fixture.route("/agent.tar.gz", reply);
        fixture.publish("1.0.0", "/agent.tar.gz", pin);
        fixture
    }

    fn route(&self, path: &str, reply: Reply) {
        self.routes.lock().unwrap().insert(path.into(), reply);
    }

    /// Serves a registry.json listing the agent at `version`, its archive at `path`.
    fn publish(&self, version: &str, path: &str, pin: Option<&str>) {
        let document = self.document(version, path, pin);
        self.route("/registry.json", Reply::json(&document));
    }

    /// A registry.json listing the agent at `version`, its archive at `path`.
    fn document(&self, version: &str, path: &str, pin: Option<&str>) -> Value {
        let mut target = json!({
            "archive": self.server.url(path),
            "cmd": "./bin/acp-agent",
            "args": ["--tag", "from-registry"],
            "env": {"ACP_CLIENT_TEST": "from-registry"},
        });
        if let Some(pin) = pin {
            target["sha256"] = json!(pin);
        }
        let document = json!({"version": "1.0.0", "agents": [{
            "id": ID, "name": "Test Agent", "version": version,
            "description": "The scriptable test agent.",
            "distribution": binary_everywhere(&target),
        }]});
        document
    }

    /// `acp-registry ARGS` with this registry and cache, loopback allowed.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(crate::REGISTRY);
        command
            .args(args)
            .env("ACP_REGISTRY_URL", self.server.url("/registry.json"))
            .env("ACP_REGISTRY_CACHE_DIR", self.cache.path())
            .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Run {
        Run::of(&mut self.command(args))
    }

    /// How many times the server was asked for `path`.
    fn asked(&self, path: &str) -> usize {
        let line = format!("GET {path}");
        self.server
            .requests()
            .iter()
            .filter(|r| **r == line)
            .count()
    }

    fn cache(&self) -> &Path {
        self.cache.path()
    }
}

/// The regular files under `dir` (none when it does not exist).
fn files(dir: &Path) -> Vec<String> {
    if !dir.exists() {
        return Vec::new();
    }
    acp_test_kit::tree(dir).into_keys().collect()
}

/// Nothing of an install is in the cache: no file under `agents/` and `tmp/` empty.
fn assert_nothing_installed(cache: &Path, run: &Run) {
    assert_eq!(
        files(&cache.join("agents")),
        Vec::<String>::new(),
        "{}",
        run.explain()
    );
    assert_eq!(
        files(&cache.join("tmp")),
        Vec::<String>::new(),
        "{}",
        run.explain()
    );
}

/// Starts `run` with `args`, sends `initialize`, and returns the answer's `result`; then
/// closes stdin and expects the agent (the process itself, after `exec`) to exit 0.
fn initialize(fixture: &Fixture, args: &[&str]) -> Value {
    let mut child = fixture
        .command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}});
    writeln!(stdin, "{request}").unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let answer: Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}\n{stderr}"));
    assert_eq!(answer["id"], 0, "{answer}");
    answer["result"].clone()
}

#[test]
fn a_clean_install_then_run_answers_initialize_with_the_registry_env_and_the_callers_args() {
    let fixture = Fixture::new(good_archive());
    let install = fixture.run(&["install", ID]);
    install.assert_code(0);
    assert!(
        install
            .stdout
            .starts_with("installed test-agent 1.0.0 (binary, "),
        "{}",
        install.explain()
    );
    let result = initialize(&fixture, &["run", ID, "--", "--mode", "env"]);
    assert_eq!(result["agentInfo"]["name"], "test-agent", "{result}");
    assert_eq!(
        result["_meta"]["env"]["ACP_CLIENT_TEST"], "from-registry",
        "{result}"
    );
    assert_eq!(fixture.asked("/agent.tar.gz"), 1);
    let again = fixture.run(&["install", ID]);
    again.assert_code(0);
    assert!(
        again
            .stdout
            .starts_with("already installed: test-agent 1.0.0"),
        "{}",
        again.explain()
    );
}

#[test]
fn a_second_run_of_an_installed_agent_asks_the_network_nothing() {
    let fixture = Fixture::new(good_archive());
    // The first run installs (a registry and an archive request), the second asks nothing.
    initialize(&fixture, &["run", ID]);
    let before = fixture.server.requests();
    assert_eq!(fixture.asked("/agent.tar.gz"), 1, "{before:?}");
    let result = initialize(&fixture, &["run", ID]);
    assert_eq!(result["agentInfo"]["name"], "test-agent");
    assert_eq!(fixture.server.requests(), before);
}

#[test]
fn a_tampered_archive_is_refused_and_nothing_is_kept() {
    let pin = sha256_hex(&good_archive());
    let mut tampered = good_archive();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    let fixture = Fixture::serving(Reply::body(200, tampered), Some(&pin));
    let run = fixture.run(&["install", ID]);
    run.assert_code(2);
    assert!(run.stderr.contains("sha256"), "{}", run.explain());
    assert!(run.stderr.contains("agent.tar.gz"), "{}", run.explain());
    assert_nothing_installed(fixture.cache(), &run);
    // Nor does `run` start anything.
    let run = fixture.run(&["run", ID]);
    run.assert_code(2);
    assert_nothing_installed(fixture.cache(), &run);
}

#[test]
fn an_html_error_page_is_refused_by_its_status_and_nothing_is_kept() {
    let pin = sha256_hex(&good_archive());
    for status in [404, 500] {
        let page = format!("<html><body>{status} Error</body></html>");
        let fixture = Fixture::serving(Reply::body(status, page), Some(&pin));
        let run = fixture.run(&["install", ID]);
        run.assert_code(2);
        assert!(
            run.stderr.contains(&status.to_string()),
            "{}",
            run.explain()
        );
        assert_nothing_installed(fixture.cache(), &run);
    }
}

#[test]
fn a_truncated_download_is_refused_and_nothing_is_kept() {
    let archive = good_archive();
    let pin = sha256_hex(&archive);
    let reply = Reply {
        content_length: Some(archive.len() as u64),
        ..Reply::body(200, archive[..archive.len() / 2].to_vec())
    };
    let fixture = Fixture::serving(reply, Some(&pin));
    let run = fixture.run(&["install", ID]);
    run.assert_code(2);
    assert!(run.stderr.contains("cannot download"), "{}", run.explain());
    assert!(run.stderr.contains("cut"), "{}", run.explain());
    assert_nothing_installed(fixture.cache(), &run);
}

#[test]
fn a_traversal_archive_is_refused_and_nothing_is_written_anywhere() {
    let script = agent_script();
    let archive = tar_gz(&[
        Entry::File("bin/acp-agent", &script),
        Entry::File("../../escaped", b"x"),
    ]);
    let fixture = Fixture::new(archive);
    let run = fixture.run(&["install", ID]);
    run.assert_code(2);
    assert!(run.stderr.contains("../../escaped"), "{}", run.explain());
    assert_nothing_installed(fixture.cache(), &run);
    assert_eq!(
        files(fixture.cache())
            .iter()
            .filter(|f| f.contains("escaped"))
            .count(),
        0
    );
}

#[test]
fn a_decompression_bomb_is_refused_and_nothing_is_kept() {
    let zeros = vec![0u8; 16 * 1024 * 1024];
    let archive = tar_gz(&[
        Entry::File("bin/acp-agent", &agent_script()),
        Entry::File("bin/padding", &zeros),
    ]);
    assert!(archive.len() < 1024 * 1024);
    let fixture = Fixture::new(archive);
    let run = fixture.run(&["install", ID, "--unpack-cap", "4"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("unpacks to more than 4194304 bytes"),
        "{}",
        run.explain()
    );
    assert_nothing_installed(fixture.cache(), &run);
}

#[test]
fn two_concurrent_installs_of_one_agent_both_succeed_with_one_download() {
    let archive = good_archive();
    let pin = sha256_hex(&archive);
    // A slow answer, so the second install finds the first holding the lock.
    let fixture = Fixture::serving(
        Reply::body(200, archive).after(Duration::from_millis(500)),
        Some(&pin),
    );
    // The registry is cached first, so both race on the archive only.
    fixture.run(&["list", "--available"]).assert_code(0);
    let children: Vec<_> = (0..2)
        .map(|_| {
            fixture
                .command(&["install", ID])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let run: Run = child.wait_with_output().unwrap().into();
        run.assert_code(0);
    }
    assert_eq!(fixture.asked("/agent.tar.gz"), 1);
    let list = fixture.run(&["list", "--installed", "--format", "json"]);
    assert_eq!(
        list.json()["agents"][0]["installed"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    initialize(&fixture, &["run", ID]);
}

/// The installed versions `list --installed --format json` shows.
fn installed_versions(fixture: &Fixture) -> Vec<String> {
    let list = fixture.run(&["list", "--installed", "--format", "json"]);
    list.assert_code(0);
    list.json()["agents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["installed"].as_array().unwrap().clone())
        .map(|i| i["version"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_version_bump_installs_the_new_version_and_cache_gc_removes_the_old() {
    let fixture = Fixture::new(good_archive());
    fixture.run(&["install", ID]).assert_code(0);
    let old = fixture.run(&["which", ID, "--format", "json"]).json()["dir"].clone();
    let old = PathBuf::from(old.as_str().unwrap());
    assert!(old.is_dir());
    let archive = tar_gz(&[
        Entry::File("bin/acp-agent", &agent_script()),
        Entry::File("NEWS", b"2"),
    ]);
    fixture.route("/agent-2.tar.gz", Reply::body(200, archive.clone()));
    fixture.publish("2.0.0", "/agent-2.tar.gz", Some(&sha256_hex(&archive)));
    let install = fixture.run(&["install", ID, "--refresh"]);
    install.assert_code(0);
    assert!(
        install.stdout.starts_with("installed test-agent 2.0.0"),
        "{}",
        install.explain()
    );
    assert_eq!(installed_versions(&fixture), ["1.0.0", "2.0.0"]);
    let dry = fixture.run(&["cache", "gc", "--dry-run"]);
    dry.assert_code(0);
    assert!(dry.stdout.contains("would remove"), "{}", dry.explain());
    assert!(old.is_dir());
    let gc = fixture.run(&["cache", "gc"]);
    gc.assert_code(0);
    assert!(gc.stdout.contains("1.0.0"), "{}", gc.explain());
    assert!(!old.exists());
    assert_eq!(installed_versions(&fixture), ["2.0.0"]);
    let result = initialize(&fixture, &["run", ID]);
    assert_eq!(result["agentInfo"]["name"], "test-agent");
}

#[test]
fn offline_a_stale_cached_registry_is_used_and_its_age_said() {
    let fixture = Fixture::new(good_archive());
    fixture.run(&["install", ID]).assert_code(0);
    let cache = fixture.cache.path().to_path_buf();
    let url = fixture.server.url("/registry.json");
    // The server is gone: only the cache can answer.
    drop(fixture.server);
    let offline = |args: &[&str]| {
        let mut command = Command::new(crate::REGISTRY);
        command
            .args(args)
            .args(["--offline", "--max-age", "0s", "--registry", &url])
            .env("ACP_REGISTRY_CACHE_DIR", &cache)
            .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1");
        Run::of(&mut command)
    };
    let which = offline(&["which", ID]);
    which.assert_code(0);
    assert!(
        which.stderr.contains("using the cached copy"),
        "{}",
        which.explain()
    );
    assert!(which.stderr.contains(" ago"), "{}", which.explain());
    assert!(
        which.stdout.contains("bin/acp-agent"),
        "{}",
        which.explain()
    );
    let list = offline(&["list", "--format", "json"]);
    list.assert_code(0);
    assert!(
        list.json()["registry"]["age_seconds"].is_u64(),
        "{}",
        list.explain()
    );
}

#[test]
fn which_shows_the_command_line_and_environment_installed_or_not() {
    let fixture = Fixture::new(good_archive());
    let before = fixture.run(&["which", ID, "--format", "json"]);
    before.assert_code(0);
    let json = before.json();
    assert_eq!(json["installed"], false, "{json}");
    assert_eq!(json["source"], fixture.server.url("/agent.tar.gz"));
    assert_eq!(json["env"]["ACP_CLIENT_TEST"], "from-registry");
    assert_eq!(fixture.asked("/agent.tar.gz"), 0);
    fixture.run(&["install", ID]).assert_code(0);
    let json = fixture.run(&["which", ID, "--format", "json"]).json();
    assert_eq!(json["installed"], true, "{json}");
    let command: Vec<&str> = json["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(command[0].ends_with("bin/acp-agent"), "{command:?}");
    assert!(
        command[0].starts_with(fixture.cache().to_str().unwrap()),
        "{command:?}"
    );
    assert_eq!(command[1..], ["--tag", "from-registry"]);
    assert_eq!(json["env"]["ACP_CLIENT_TEST"], "from-registry");
    let human = fixture.run(&["which", ID]);
    human.assert_code(0);
    assert!(
        human.stdout.contains("--tag from-registry"),
        "{}",
        human.explain()
    );
    assert!(
        human.stdout.contains("env: ACP_CLIENT_TEST=from-registry"),
        "{}",
        human.explain()
    );
}

#[test]
fn list_json_shows_available_and_installed_agents() {
    let fixture = Fixture::new(good_archive());
    let list = fixture.run(&["list", "--format", "json"]);
    list.assert_code(0);
    let json = list.json();
    assert_eq!(json["version"], 1);
    assert_eq!(json["registry"]["origin"], "network", "{json}");
    let agent = &json["agents"][0];
    assert_eq!(agent["id"], ID);
    assert_eq!(agent["version"], "1.0.0");
    assert_eq!(agent["kinds"], json!(["binary"]));
    assert_eq!(agent["installed"], json!([]));
    fixture.run(&["install", ID]).assert_code(0);
    let json = fixture.run(&["list", "--format", "json"]).json();
    assert_eq!(json["registry"]["origin"], "fresh-cache", "{json}");
    assert_eq!(json["agents"][0]["installed"][0]["version"], "1.0.0");
    let installed = fixture
        .run(&["list", "--installed", "--format", "json"])
        .json();
    assert_eq!(installed["registry"], Value::Null);
    assert_eq!(installed["agents"][0]["name"], Value::Null);
    let human = fixture.run(&["list"]);
    assert!(
        human
            .stdout
            .starts_with("test-agent 1.0.0 [installed: 1.0.0 (binary, "),
        "{}",
        human.explain()
    );
}

#[test]
fn uninstall_removes_the_install_and_says_when_there_is_nothing_to_remove() {
    let fixture = Fixture::new(good_archive());
    fixture.run(&["install", ID]).assert_code(0);
    let wrong = fixture.run(&["uninstall", ID, "--version", "9.9.9"]);
    wrong.assert_code(2);
    assert!(
        wrong.stderr.contains("installed versions: 1.0.0"),
        "{}",
        wrong.explain()
    );
    let removed = fixture.run(&["uninstall", ID]);
    removed.assert_code(0);
    assert!(
        removed.stdout.starts_with("removed "),
        "{}",
        removed.explain()
    );
    assert_eq!(installed_versions(&fixture), Vec::<String>::new());
    assert_nothing_installed(fixture.cache(), &removed);
    let again = fixture.run(&["uninstall", ID]);
    again.assert_code(2);
    assert!(
        again.stderr.contains("not installed"),
        "{}",
        again.explain()
    );
}

#[test]
fn an_unknown_id_is_refused_with_the_nearest_ids() {
    let fixture = Fixture::new(good_archive());
    for command in ["install", "run", "which"] {
        let run = fixture.run(&[command, "test-agnt"]);
        run.assert_code(2);
        assert!(
            run.stderr.contains("did you mean `test-agent`?"),
            "{}",
            run.explain()
        );
    }
    assert_eq!(fixture.asked("/agent.tar.gz"), 0);
}

#[test]
fn an_unpinned_binary_is_refused_with_require_sha256_and_installed_with_a_warning_without() {
    let fixture = Fixture::serving(Reply::body(200, good_archive()), None);
    let refused = fixture.run(&["install", ID, "--require-sha256"]);
    refused.assert_code(2);
    assert!(refused.stderr.contains("sha256"), "{}", refused.explain());
    assert_eq!(fixture.asked("/agent.tar.gz"), 0);
    assert_nothing_installed(fixture.cache(), &refused);
    let warned = fixture.run(&["install", ID]);
    warned.assert_code(0);
    assert!(warned.stderr.contains("warning: "), "{}", warned.explain());
    assert!(warned.stderr.contains("sha256"), "{}", warned.explain());
}

#[test]
fn a_version_neither_the_registry_nor_the_cache_has_is_refused_naming_those_that_exist() {
    let fixture = Fixture::new(good_archive());
    fixture.run(&["install", ID]).assert_code(0);
    let run = fixture.run(&["which", ID, "--version", "0.9.0"]);
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("no version 0.9.0: the registry offers 1.0.0; installed: 1.0.0"),
        "{}",
        run.explain()
    );
}

#[test]
fn a_registry_file_is_read_like_a_url() {
    let fixture = Fixture::new(good_archive());
    let document = fixture.document("1.0.0", "/agent.tar.gz", None);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("registry.json");
    std::fs::write(&file, document.to_string()).unwrap();
    let which = fixture.run(&["which", ID, "--registry", file.to_str().unwrap()]);
    which.assert_code(0);
    assert!(
        which.stdout.starts_with("test-agent 1.0.0 (binary, "),
        "{}",
        which.explain()
    );
    assert_eq!(fixture.asked("/registry.json"), 0);
}

#[test]
fn registry_text_reaching_the_terminal_is_escaped() {
    let fixture = Fixture::new(good_archive());
    let mut document = fixture.document("1.0.0", "/agent.tar.gz", None);
    document["agents"][0]["name"] = json!("Evil\u{1b}]0;owned\u{7}");
    document["agents"][0]["description"] = json!("::error::forged \u{1b}[2J");
    for target in document["agents"][0]["distribution"]["binary"]
        .as_object_mut()
        .unwrap()
        .values_mut()
    {
        target["env"]["X"] = json!("\u{202e}reversed");
    }
    fixture.route("/registry.json", Reply::json(&document));
    for args in [&["list"][..], &["which", ID]] {
        let run = fixture.run(args);
        run.assert_code(0);
        assert!(!run.stdout.contains('\u{1b}'), "{}", run.explain());
        assert!(!run.stdout.contains('\u{202e}'), "{}", run.explain());
        assert!(!run.stdout.contains("::error::"), "{}", run.explain());
    }
    let list = fixture.run(&["list"]);
    assert!(
        list.stdout.contains("Evil\\u{1b}]0;owned\\u{7}"),
        "{}",
        list.explain()
    );
    let which = fixture.run(&["which", ID]);
    assert!(
        which.stdout.contains("X=\\u{202e}reversed"),
        "{}",
        which.explain()
    );
}

/// A UTC time `days` days before now, as the lifecycle document writes it.
fn days_ago(days: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    acp_registry_core::time::format_utc(i64::try_from(now - days * 86_400).unwrap())
}

/// A lifecycle document listing `agents` (the build's shape; only what the client reads).
fn lifecycle(agents: &Value) -> Reply {
    Reply::json(
        &json!({"version": "1.0.0", "registry": "registry.json", "clients": [],
        "agents": agents}),
    )
}

#[test]
fn a_disabled_id_is_refused_with_its_reason_and_replacement() {
    let fixture = Fixture::new(good_archive());
    fixture.route(
        "/lifecycle.json",
        lifecycle(&json!([{"id": "old-agent", "status": "disabled",
            "reason": "renamed to test-agent\u{1b}[31m", "since": "2026-11-01",
            "replacement": ID, "in_registry": false, "distributions": {}}])),
    );
    for command in ["install", "run", "which"] {
        let refused = fixture.run(&[command, "old-agent"]);
        refused.assert_code(2);
        assert!(
            refused.stderr.contains(
                "old-agent is disabled since 2026-11-01: renamed to test-agent\\u{1b}[31m; use test-agent instead (`acp-registry install test-agent`)"
            ),
            "{}",
            refused.explain()
        );
        assert!(
            !refused.stderr.contains("did you mean"),
            "{}",
            refused.explain()
        );
    }
    assert_nothing_installed(fixture.cache(), &fixture.run(&["list"]));
}

#[test]
fn a_deprecated_entry_installs_and_runs_with_a_warning_naming_reason_date_and_replacement() {
    let fixture = Fixture::new(good_archive());
    fixture.route(
        "/lifecycle.json",
        lifecycle(
            &json!([{"id": ID, "status": "deprecated", "reason": "use the new one",
            "since": "2026-11-01", "replacement": "new-agent", "in_registry": true}]),
        ),
    );
    let install = fixture.run(&["install", ID]);
    install.assert_code(0);
    assert!(
        install.stderr.contains(
            "warning: test-agent is deprecated since 2026-11-01: use the new one; use new-agent instead (`acp-registry install new-agent`)"
        ),
        "{}",
        install.explain()
    );
    let result = initialize(&fixture, &["run", ID]);
    assert_eq!(result["agentInfo"]["name"], "test-agent", "{result}");
}

#[test]
fn without_a_lifecycle_document_nothing_changes_and_its_404_is_asked_once_while_fresh() {
    let fixture = Fixture::new(good_archive());
    let list = fixture.run(&["list"]);
    list.assert_code(0);
    assert_eq!(fixture.asked("/lifecycle.json"), 0, "list does not need it");
    let install = fixture.run(&["install", ID]);
    install.assert_code(0);
    assert!(
        !install.stderr.contains("lifecycle"),
        "{}",
        install.explain()
    );
    assert_eq!(fixture.asked("/lifecycle.json"), 1);
    fixture.run(&["install", ID]).assert_code(0);
    assert_eq!(
        fixture.asked("/lifecycle.json"),
        1,
        "the 404 is cached while fresh"
    );
    fixture.run(&["install", ID, "--refresh"]).assert_code(0);
    assert_eq!(fixture.asked("/lifecycle.json"), 2, "--refresh asks again");
}

#[test]
fn a_lifecycle_document_that_does_not_parse_is_a_warning_and_the_install_goes_on() {
    let fixture = Fixture::new(good_archive());
    fixture.route("/lifecycle.json", Reply::body(200, "<html>oops</html>"));
    let install = fixture.run(&["install", ID]);
    install.assert_code(0);
    assert!(
        install
            .stderr
            .contains("carrying on without the lifecycle document"),
        "{}",
        install.explain()
    );
}

/// Whether `program --version` runs here (npm is not on every machine that runs the tests).
fn available(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// An npm package tarball of `acp-test-agent` at `version`, whose program prints its version.
fn npm_tarball(version: &str) -> Vec<u8> {
    let manifest = json!({"name": "acp-test-agent", "version": version,
        "bin": {"acp-test-agent": "cli.js"}})
    .to_string();
    let cli = format!("#!/usr/bin/env node\nconsole.log('agent {version}')\n");
    tar_gz(&[
        Entry::Mode("package/package.json", manifest.as_bytes(), 0o644),
        Entry::Mode("package/cli.js", cli.as_bytes(), 0o755),
    ])
}

#[test]
fn a_cooldown_installs_and_runs_the_older_npm_release_the_lifecycle_history_allows() {
    if !available("npm") {
        eprintln!("npm is not installed: skipped");
        return;
    }
    let fixture = Fixture::new(good_archive());
    let mut versions = serde_json::Map::new();
    for version in ["1.0.0", "1.1.0"] {
        let tarball = format!("/npm/-/acp-test-agent-{version}.tgz");
        fixture.route(&tarball, Reply::body(200, npm_tarball(version)));
        versions.insert(
            version.into(),
            json!({"name": "acp-test-agent", "version": version,
                "bin": {"acp-test-agent": "cli.js"},
                "dist": {"tarball": fixture.server.url(&tarball)}}),
        );
    }
    fixture.route(
        "/npm/acp-test-agent",
        Reply::json(
            &json!({"name": "acp-test-agent", "dist-tags": {"latest": "1.1.0"},
            "versions": versions}),
        ),
    );
    fixture.route(
        "/registry.json",
        Reply::json(
            &json!({"version": "1.0.0", "agents": [{"id": ID, "name": "Test Agent",
            "version": "1.1.0", "description": "An npm agent.",
            "distribution": {"npx": {"package": "acp-test-agent@1.1.0"}}}]}),
        ),
    );
    fixture.route(
        "/lifecycle.json",
        lifecycle(
            &json!([{"id": ID, "version": "1.1.0", "status": "active", "in_registry": true,
            "distributions": {"npx": {"source": "npm", "package": "acp-test-agent",
                "version": "1.1.0", "published": days_ago(1),
                "history": [
                    {"version": "1.1.0", "published": days_ago(1)},
                    {"version": "1.0.1", "published": days_ago(20), "deprecated": "broken"},
                    {"version": "1.0.0", "published": days_ago(30)}
                ]}}}]),
        ),
    );
    let npm_registry = fixture.server.url("/npm/");
    let with_npm = |args: &[&str]| {
        let mut command = fixture.command(args);
        command.env("npm_config_registry", &npm_registry);
        command
    };
    let install = Run::of(&mut with_npm(&["install", ID, "--min-age", "7"]));
    install.assert_code(0);
    assert!(
        install
            .stdout
            .starts_with("installed test-agent 1.0.0 (npx, "),
        "{}",
        install.explain()
    );
    assert!(
        install.stderr.contains("using 1.0.0 (published ")
            && install.stderr.contains("less than --min-age 7 days ago"),
        "{}",
        install.explain()
    );
    assert_eq!(fixture.asked("/npm/-/acp-test-agent-1.1.0.tgz"), 0);
    let run = Run::of(&mut with_npm(&["run", ID, "--min-age", "7"]));
    run.assert_code(0);
    assert_eq!(run.stdout, "agent 1.0.0\n", "{}", run.explain());
    // Without the cooldown the pin itself is installed.
    let run = Run::of(&mut with_npm(&["run", ID]));
    assert_eq!(run.stdout, "agent 1.1.0\n", "{}", run.explain());
}
