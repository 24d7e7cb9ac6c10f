//! A registry for `update` whose `online` endpoints point at one local server, and the
//! binary run inside it (shared by `tests/registry/update.rs`, the kill tests of `tests/registry/faults.rs` and
//! `tests/registry/net_faults.rs`).

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::Run;

pub(crate) const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\"><circle cx=\"8\" cy=\"8\" r=\"6\" fill=\"currentColor\"/></svg>\n";

/// A loopback listener and its base URL `https://127.0.0.1:PORT` (the test-only loopback
/// switch fetches it over http), so answers can name the server before it starts.
pub(crate) fn listener() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("https://{}", listener.local_addr().unwrap());
    (listener, base)
}

pub(crate) fn https(base: &str, path: &str) -> String {
    format!("{base}{path}")
}

/// A registry of `(id, agent.json text)` entries, each with an icon; the npm, `PyPI` and
/// GitHub API endpoints are `<server>/npm`, `/pypi-api` and `/api`.
pub(crate) fn registry(server: &str, entries: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "severity": {"platform-coverage": "off"},
        "online": {
            "npm_registry": https(server, "/npm"),
            "pypi": https(server, "/pypi-api"),
            "github_api": https(server, "/api"),
        }
    });
    std::fs::write(dir.path().join("acp-registry.jsonc"), config.to_string()).unwrap();
    for (id, text) in entries {
        let entry = dir.path().join(id);
        std::fs::create_dir_all(&entry).unwrap();
        std::fs::write(entry.join("agent.json"), text).unwrap();
        std::fs::write(entry.join("icon.svg"), ICON).unwrap();
    }
    dir
}

pub(crate) fn manifest(id: &str, version: &str, distribution: &Value) -> String {
    let value = json!({
        "id": id, "name": "Example Agent", "version": version,
        "description": "A coding agent that reads, edits and runs code in a project.",
        "repository": "https://github.com/example/agent", "authors": ["Example Inc."],
        "license": "MIT", "license_url": "https://github.com/example/agent/blob/main/LICENSE",
        "distribution": distribution
    });
    serde_json::to_string_pretty(&value).unwrap() + "\n"
}

pub(crate) fn npx(spec: &str) -> Value {
    json!({"npx": {"package": spec}})
}

/// `update --registry . ARGS` inside `root`, loopback allowed, no GitHub token.
pub(crate) fn command(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(crate::REGISTRY);
    command
        .current_dir(root)
        .args(["update", "--registry", "."])
        .args(args)
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_API_URL");
    command
}

pub(crate) fn update_env(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = command(root, args);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap().into()
}

pub(crate) fn update(root: &Path, args: &[&str]) -> Run {
    update_env(root, args, &[])
}

/// `update --format json ARGS`: the exit code and the document.
pub(crate) fn json_run(root: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let run = update(root, &all);
    let value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    (run.code, value)
}

pub(crate) fn read(root: &Path, id: &str) -> String {
    std::fs::read_to_string(root.join(id).join("agent.json")).unwrap()
}

/// The peak memory `update` and `validate --online` are held to against an amplified answer
/// (a 30 MiB document of tiny JSON values): the body itself, its typed view and the rest of
/// the run fit well under it; a `serde_json::Value` of that body alone is about 2 GB.
pub(crate) const AMPLIFIED_BOUND: u64 = 200 << 20;

/// About `bytes` of a JSON list of zeros, `[0,0,…,0]`: the smallest values JSON has, each
/// two bytes of text and a whole `Value` in memory.
pub(crate) fn zeros(bytes: usize) -> String {
    let mut list = String::with_capacity(bytes + 2);
    list.push('[');
    list.push_str(&"0,".repeat(bytes / 2));
    list.push_str("0]");
    list
}

/// `update ARGS` inside `root` (as [`command`]) with its peak memory in bytes.
pub(crate) fn update_measured(root: &Path, args: &[&str]) -> (Run, u64) {
    let (output, peak) = acp_test_kit::rss::run_measured(&mut command(root, args));
    (output.into(), peak)
}
