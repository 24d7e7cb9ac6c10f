//! Helpers of the registry group that need the library's types or the registry's fixtures;
//! what does not lives in `acp_test_kit`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) mod archives;
pub(crate) mod pack;
pub(crate) mod update;
#[cfg(unix)]
pub(crate) mod verify;

pub(crate) use acp_test_kit::{copy_dir, repo_root, sha256_hex, tree, Run};

/// The public-registry sample (origin and licence: `tests/fixtures/public-registry-sample.NOTICE.md`).
/// Read-only by convention: copy it with [`copy_dir`] before changing anything.
pub(crate) fn public_sample() -> PathBuf {
    repo_root().join("tests/fixtures/public-registry-sample")
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

/// Fast retries and a short `timeout`, loopback allowed (the test-only switch).
pub(crate) fn fast_net(timeout: std::time::Duration) -> acp_registry::NetConfig {
    acp_registry::NetConfig {
        allow_loopback: true,
        timeout,
        backoff_base: std::time::Duration::from_millis(10),
        ..acp_registry::NetConfig::default()
    }
}

pub(crate) fn acp_registry(args: &[&str], cwd: &Path) -> Run {
    acp_registry_with_env(args, cwd, &[])
}

/// [`acp_registry`] with more environment variables (locale, time zone, `SOURCE_DATE_EPOCH`).
pub(crate) fn acp_registry_with_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(crate::REGISTRY);
    command
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap().into()
}

/// `build --registry <registry> --out <out>` then `extra`, from the repository root.
pub(crate) fn build_registry(
    registry: &Path,
    out: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let mut args = vec![
        "build",
        "--registry",
        registry.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    acp_registry_with_env(&args, &repo_root(), env)
}

/// A usage error (exit 2) saying every one of `said` on stderr.
pub(crate) fn assert_usage_error(run: &Run, said: &[impl AsRef<str>]) {
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    for text in said {
        assert!(run.stderr.contains(text.as_ref()), "{}", run.stderr);
    }
}

/// `validate --format json` findings as (severity, code, `file:line:col`), paths relative to
/// the registry root.
pub(crate) fn findings(registry: &Path) -> (i32, Vec<(String, String, String)>) {
    // Run inside the registry so paths are relative to its root whatever it is.
    let run = acp_registry(
        &["validate", "--registry", ".", "--format", "json"],
        registry,
    );
    (run.code, run.findings().triples())
}

/// A JSON file, parsed.
pub(crate) fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The ids of a registry file's (or `lifecycle.json`'s) `agents`, in order.
pub(crate) fn ids(doc: &Value) -> Vec<String> {
    doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect()
}

/// The agent `id` of a document's `agents`.
pub(crate) fn agent<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("{id} is not listed"))
}
