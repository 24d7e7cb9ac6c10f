//! End to end: the collaboration entry as a user installs it. `acp-collab` is packed for this
//! machine's platform, the packages folder is served by a local server, and `acp-registry
//! verify --agent agent-collaboration-protocol` downloads the archive, checks its sha256,
//! unpacks it, launches `acp-collab acp` and checks its `initialize` answer against the
//! manifest.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use crate::common;
use acp_test_kit::server as net_server;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::pack::{pack_args, ID};
use common::{acp_registry, copy_dir, repo_root};
use net_server::{Reply, Server};
use serde_json::Value;

const TARGET: &str = "x86_64-unknown-linux-musl";

/// Every file below `dir`, by file name (archive names are unique in a packages folder).
fn find_by_name(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_by_name(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

/// A server answering every request with the file of that name below `packages`, and the
/// requests it saw, as `"METHOD /path"`.
fn packages_server(packages: PathBuf) -> (Server, Arc<Mutex<Vec<String>>>) {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&requests);
    let server = Server::start(move |request, _| {
        seen.lock()
            .unwrap()
            .push(format!("{} {}", request.method, request.path));
        let name = request.path.rsplit('/').next().unwrap_or_default();
        match find_by_name(&packages, name) {
            Some(file) => Reply::body(200, std::fs::read(file).unwrap()),
            None => Reply::status(404),
        }
    });
    (server, requests)
}

/// Packs `acp-collab` for this machine with archives under `base`, and checks the manifest
/// entry it wrote.
fn pack_engine(registry: &Path, base: &str) {
    let license = repo_root().join("LICENSE");
    let mut args = pack_args(TARGET, crate::collab(), license.to_str().unwrap());
    args.extend(["--base-url", base]);
    let pack = acp_registry(&args, registry);
    assert_eq!(pack.code, 0, "{}{}", pack.stdout, pack.stderr);
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(registry.join(ID).join("agent.json")).unwrap(),
    )
    .unwrap_or(Value::Null);
    let target = &manifest["distribution"]["binary"]["linux-x86_64"];
    assert!(
        target["archive"]
            .as_str()
            .unwrap_or_default()
            .starts_with(base),
        "{target}"
    );
    assert_eq!(
        target["sha256"].as_str().map(str::len),
        Some(64),
        "{target}"
    );
    assert_eq!(target["args"], serde_json::json!(["acp"]));
}

/// Runs `verify` on the entry over the loopback server and checks it passes without errors.
fn assert_verify_passes(registry: &Path) {
    let output = Command::new(crate::REGISTRY)
        .args([
            "verify",
            "--registry",
            ".",
            "--agent",
            ID,
            "--format",
            "json",
            "--timeout",
            "60",
            "--no-cache",
            "--require-tested",
        ])
        .current_dir(registry)
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    let report = acp_test_kit::Findings::parse(&stdout);
    let errors: Vec<&acp_test_kit::Finding> = report
        .findings
        .iter()
        .filter(|f| f.severity == "error")
        .collect();
    assert!(errors.is_empty(), "{stdout}");
}

#[test]
fn the_packed_collaboration_engine_passes_verify_from_a_local_server() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = tmp.path().join("registry");
    copy_dir(&repo_root().join("registry").join(ID), &registry.join(ID));
    // As in the bundled registry: the engine offers no sign-in, so the auth policy is waived.
    std::fs::write(
        registry.join("acp-registry.jsonc"),
        r#"{ "exemptions": { "agent-collaboration-protocol": ["agent-auth"] } }"#,
    )
    .unwrap();
    let (server, requests) = packages_server(registry.join("dist/packages"));
    // https, as the rules require; the test-only loopback switch fetches it over http.
    let base = server.url("/releases").replacen("http://", "https://", 1);
    pack_engine(&registry, &base);
    assert_verify_passes(&registry);
    // The archive really came from the server: downloaded, not found elsewhere.
    let archive_name = format!("acp-collab-{TARGET}.tar.gz");
    assert!(
        requests
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.starts_with("GET ") && r.ends_with(&archive_name)),
        "{:?}",
        requests.lock().unwrap()
    );
}
