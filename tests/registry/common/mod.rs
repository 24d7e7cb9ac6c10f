//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

#[cfg(unix)]
pub(crate) mod agentskills;
pub(crate) mod archives;
#[cfg(unix)]
pub(crate) mod bounded;
pub(crate) mod pack;
#[cfg(unix)]
pub(crate) mod rss;
pub(crate) mod update;
#[cfg(unix)]
pub(crate) mod verify;

/// The uv version `.ci/run` installs, named by the tests that need `uvx`.
pub(crate) const UV_PIN: &str = "0.13.9";

/// Whether `program` is a file in a folder of PATH.
pub(crate) fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Whether `uvx` is installed. Without it a test of uvx launches cannot say anything: in CI
/// (`CI` set, as `.ci/run` and GitHub Actions run) that fails loudly, since `.ci/run`
/// installs uv; elsewhere `what` is announced as skipped.
pub(crate) fn uvx_or_skip(what: &str) -> bool {
    let found = on_path("uvx");
    if !found {
        let install = format!("python3 -m pip install uv=={UV_PIN}");
        assert!(
            std::env::var_os("CI").is_none(),
            "{what}: uvx is not installed; .ci/run installs it (`{install}`)"
        );
        eprintln!("skipped {what}: uvx is not installed (`{install}`; in CI this fails)");
    }
    found
}

pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The public-registry sample (origin and licence: `tests/fixtures/public-registry-sample.NOTICE.md`).
/// Read-only by convention: copy it with [`copy_dir`] before changing anything.
pub(crate) fn public_sample() -> PathBuf {
    repo_root().join("tests/fixtures/public-registry-sample")
}

/// Copy a folder recursively (data under test is never edited in place).
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for item in std::fs::read_dir(from).unwrap() {
        let item = item.unwrap();
        let target = to.join(item.file_name());
        if item.file_type().unwrap().is_dir() {
            copy_dir(&item.path(), &target);
        } else {
            std::fs::copy(item.path(), &target).unwrap();
            let mut perms = std::fs::metadata(&target).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&target, perms).unwrap();
        }
    }
}

/// Every file below `root` (links not followed), by `/`-separated relative path, with its bytes:
/// for comparing a folder before and after a command.
pub(crate) fn tree(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, prefix: &str, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for item in std::fs::read_dir(dir).unwrap() {
            let item = item.unwrap();
            let name = item.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            if item.file_type().unwrap().is_dir() {
                walk(&item.path(), &rel, out);
            } else {
                out.insert(rel, std::fs::read(item.path()).unwrap());
            }
        }
    }
    let mut files = std::collections::BTreeMap::new();
    walk(root, "", &mut files);
    files
}

/// A manifest that validates (an npx distribution) with id `id`; `extra` is inserted as
/// more members after `license_url` (end it with a comma).
pub(crate) fn valid_manifest(id: &str, extra: &str) -> String {
    format!(
        r#"{{
  "id": "{id}",
  "name": "Example Agent",
  "version": "1.0.0",
  "description": "A coding agent that reads, edits and runs code in a project.",
  "repository": "https://github.com/example/example-agent",
  "authors": ["Example Inc."],
  "license": "MIT",
  "license_url": "https://github.com/example/example-agent/blob/main/LICENSE",{extra}
  "distribution": {{ "npx": {{ "package": "example-agent@1.0.0" }} }}
}}
"#
    )
}

pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl From<std::process::Output> for Run {
    fn from(output: std::process::Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// Fast retries and a short `timeout`, loopback allowed (the test-only switch).
pub(crate) fn fast_net(timeout: std::time::Duration) -> acp_registry::net::NetConfig {
    acp_registry::net::NetConfig {
        allow_loopback: true,
        timeout,
        backoff_base: std::time::Duration::from_millis(10),
        ..acp_registry::net::NetConfig::default()
    }
}

/// Lowercase hex sha256, as manifests, `.sha256` lines and `SHA256SUMS` write it.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    use std::fmt::Write as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .fold(String::new(), |mut hex, b| {
            write!(hex, "{b:02x}").unwrap();
            hex
        })
}

pub(crate) fn acp_registry(args: &[&str], cwd: &Path) -> Run {
    Command::new(env!("CARGO_BIN_EXE_acp-registry"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap()
        .into()
}

/// `validate --format json` findings as (severity, code, `file:line:col`), paths relative to
/// the registry root.
pub(crate) fn findings(registry: &Path) -> (i32, Vec<(String, String, String)>) {
    // Run inside the registry so paths are relative to its root whatever it is.
    let run = acp_registry(
        &["validate", "--registry", ".", "--format", "json"],
        registry,
    );
    let doc: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("json output: {e}\n{}\n{}", run.stdout, run.stderr));
    let list = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let place = match (f["line"].as_u64(), f["column"].as_u64()) {
                (Some(l), Some(c)) => format!("{}:{l}:{c}", f["file"].as_str().unwrap()),
                _ => f["file"].as_str().unwrap().to_string(),
            };
            (
                f["severity"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap().to_string(),
                place,
            )
        })
        .collect();
    (run.code, list)
}
