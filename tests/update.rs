//! `acp-registry update` end to end: the binary against local servers answering like npm,
//! PyPI and the GitHub API (their real response shapes), inside the registry with
//! `--registry .`.

mod common;
mod net_server;

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use net_server::{routes, Reply, Request, Server};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\"><circle cx=\"8\" cy=\"8\" r=\"6\" fill=\"currentColor\"/></svg>\n";
const RELEASES: &str = "GET /api/repos/example/agent/releases?per_page=100&page=1";

/// A loopback listener and its base URL `https://127.0.0.1:PORT` (the test-only loopback
/// switch fetches it over http), so answers can name the server before it starts.
fn listener() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("https://{}", listener.local_addr().unwrap());
    (listener, base)
}

fn https(base: &str, path: &str) -> String {
    format!("{base}{path}")
}

fn registry(server: &str, entries: &[(&str, String)]) -> tempfile::TempDir {
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

fn manifest(id: &str, version: &str, distribution: Value) -> String {
    let value = json!({
        "id": id, "name": "Example Agent", "version": version,
        "description": "A coding agent that reads, edits and runs code in a project.",
        "repository": "https://github.com/example/agent", "authors": ["Example Inc."],
        "license": "MIT", "license_url": "https://github.com/example/agent/blob/main/LICENSE",
        "distribution": distribution
    });
    serde_json::to_string_pretty(&value).unwrap() + "\n"
}

fn npx(spec: &str) -> Value {
    json!({"npx": {"package": spec}})
}

fn asset_path(tag: &str, file: &str) -> String {
    format!("/example/agent/releases/download/{tag}/{file}")
}

fn binary(server: &str, tag: &str, file: &str, sha256: Option<&str>) -> Value {
    let mut target = json!({"archive": https(server, &asset_path(tag, file)), "cmd": "./agent"});
    if let Some(sha) = sha256 {
        target["sha256"] = json!(sha);
    }
    json!({"binary": {"linux-x86_64": target}})
}

fn npm_doc(versions: Value) -> Reply {
    Reply::json(&json!({"name": "x", "dist-tags": {"latest": "0.0.0"}, "versions": versions}))
}

fn release(server: &str, tag: &str, assets: &[(&str, Option<&str>)]) -> Value {
    let assets: Vec<Value> = assets
        .iter()
        .map(|(name, digest)| {
            json!({
                "name": name, "browser_download_url": https(server, &asset_path(tag, name)),
                "size": 4, "content_type": "application/gzip",
                "digest": digest.map(|d| format!("sha256:{d}")),
            })
        })
        .collect();
    json!({"tag_name": tag, "name": tag, "draft": false, "prerelease": false,
           "published_at": "2026-01-01T00:00:00Z", "assets": assets})
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn update(root: &Path, args: &[&str]) -> Run {
    update_env(root, args, &[])
}

fn update_env(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_acp-registry"));
    command
        .current_dir(root)
        .args(["update", "--registry", "."])
        .args(args)
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .env_remove("GITHUB_TOKEN");
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn json_run(root: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let run = update(root, &all);
    let value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    (run.code, value)
}

fn read(root: &Path, id: &str) -> String {
    std::fs::read_to_string(root.join(id).join("agent.json")).unwrap()
}

fn updates(doc: &Value) -> Vec<(String, String, String)> {
    doc["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            let s = |k: &str| u[k].as_str().unwrap().to_string();
            (s("id"), s("from"), s("to"))
        })
        .collect()
}

fn messages(doc: &Value, list: &str) -> Vec<String> {
    doc[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| format!("{}: {}", n["id"].as_str().unwrap(), n["message"].as_str().unwrap()))
        .collect()
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn each_distribution_type_is_offered_its_newest_release_without_prereleases_deprecated_or_yanked() {
    let server = Server::start(|request: &Request, _| {
        match request.path.as_str() {
            "/npm/npm-agent" => npm_doc(json!({
                "1.0.0": {}, "1.1.0": {}, "1.2.0-beta.1": {}, "1.3.0": {"deprecated": "broken"}
            })),
            "/pypi-api/pypi/py-agent/json" => Reply::json(&json!({"info": {"version": "1.1.0"}, "releases": {
                "1.0.0": [{"yanked": false}], "1.0.5": [{"yanked": true}, {"yanked": false}],
                "1.1.0": [{"yanked": true, "yanked_reason": "bad"}], "1.2.0": []
            }})),
            _ => Reply::status(404),
        }
    });
    let root = registry(
        &server.url("").replacen("http://", "https://", 1),
        &[
            ("npm-agent", manifest("npm-agent", "1.0.0", npx("npm-agent@1.0.0"))),
            ("py-agent", manifest("py-agent", "1.0.0", json!({"uvx": {"package": "py-agent[cli]==1.0.0"}}))),
        ],
    );
    let before = (read(root.path(), "npm-agent"), read(root.path(), "py-agent"));
    let (code, doc) = json_run(root.path(), &[]);
    assert_eq!(code, 2, "{doc}");
    assert_eq!(
        updates(&doc),
        [
            ("npm-agent".into(), "1.0.0".into(), "1.1.0".into()),
            ("py-agent".into(), "1.0.0".into(), "1.0.5".into())
        ]
    );
    assert_eq!(doc["updates"][0]["file"], "npm-agent/agent.json");
    // Without --apply nothing is written.
    assert_eq!((read(root.path(), "npm-agent"), read(root.path(), "py-agent")), before);
    let (code, _) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0);
    assert!(read(root.path(), "npm-agent").contains("\"npm-agent@1.1.0\""));
    assert!(read(root.path(), "py-agent").contains("\"py-agent[cli]==1.0.5\""));
    let (code, doc) = json_run(root.path(), &[]);
    assert_eq!((code, doc["up_to_date"].clone()), (0, json!(["npm-agent", "py-agent"])));
}

/// A JSONC manifest with comments and two binary targets pinned by sha256.
fn commented(server: &str, tag: &str, version: &str) -> String {
    let url = |file: &str| https(server, &asset_path(tag, &format!("agent-{version}-{file}")));
    format!(
        r#"{{
  // Kept by hand: the updater must not touch this comment.
  "id": "bin-agent",
  "name": "Example Agent",
  "version": "{version}", // the stable release
  "description": "A coding agent that reads, edits and runs code in a project.",
  "repository": "https://github.com/example/agent",
  "authors": ["Example Inc."],
  "license": "MIT",
  "license_url": "https://github.com/example/agent/blob/main/LICENSE",
  "distribution": {{
    "binary": {{
      /* Linux first */
      "linux-x86_64":   {{ "archive": "{linux}", "cmd": "./agent", "sha256": "{zero}" }},
      "darwin-aarch64": {{
        "archive": "{darwin}",
        "cmd": "./agent",
        "sha256": "{zero}",
      }},
    }},
  }},
}}
"#,
        linux = url("linux.tar.gz"),
        darwin = url("darwin.tar.gz"),
        zero = "0".repeat(64),
    )
}

#[test]
fn apply_reads_every_page_refreshes_digests_and_changes_only_the_values_that_must_change() {
    let linux_sha = "ab".repeat(32);
    let darwin_bytes = b"darwin archive bytes".to_vec();
    let (addr, base) = listener();
    let mut page1 = json!([
        release(&base, "v3.0.0", &[]),
        release(&base, "v2.0.0", &[]),
        release(&base, "v1.0.0", &[]),
    ]);
    page1[0]["draft"] = json!(true);
    page1[1]["prerelease"] = json!(true);
    let page2 = json!([release(
        &base,
        "v1.2",
        &[("agent-1.2.0-linux.tar.gz", Some(&linux_sha)), ("agent-1.2.0-darwin.tar.gz", None)]
    )]);
    let next = format!("<{base}/api/repos/example/agent/releases?per_page=100&page=2>; rel=\"next\"");
    let server = Server::start_with(
        addr,
        routes(vec![
            (RELEASES, vec![Reply::json(&page1).header("link", &next)]),
            ("GET /api/repos/example/agent/releases?per_page=100&page=2", vec![Reply::json(&page2)]),
            (
                "GET /example/agent/releases/download/v1.2/agent-1.2.0-darwin.tar.gz",
                vec![Reply::body(200, darwin_bytes.clone())],
            ),
        ]),
    );
    let original = commented(&base, "v1.0.0", "1.0.0");
    let root = registry(&base, &[("bin-agent", original.clone())]);
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(updates(&doc), [("bin-agent".into(), "1.0.0".into(), "1.2.0".into())]);
    let zero = "0".repeat(64);
    let expected = original
        .replace("\"version\": \"1.0.0\"", "\"version\": \"1.2.0\"")
        .replace("/v1.0.0/agent-1.0.0-", "/v1.2/agent-1.2.0-")
        .replacen(&zero, &linux_sha, 1)
        .replacen(&zero, &sha(&darwin_bytes), 1);
    assert_eq!(read(root.path(), "bin-agent"), expected);
    assert!(server
        .requests()
        .contains(&"GET /api/repos/example/agent/releases?per_page=100&page=2".to_string()));
}
