//! What `validate` accepts, `build` builds: the open top level of the manifest format, uvx
//! extras, and the check of each agent as an output publishes it, which `validate` shares with
//! `build`. (`tests/registry/properties.rs` checks the same promise on generated registries.)

use crate::common;

use std::path::Path;

use acp_test_kit::Finding;
use common::{acp_registry, repo_root, Run};
use serde_json::Value;

const ICON: &str = "tests/rules/default-icon.svg";

/// A registry with one entry, `example-agent`, whose manifest is `manifest`.
fn registry(manifest: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let entry = dir.path().join("registry/example-agent");
    std::fs::create_dir_all(&entry).unwrap();
    std::fs::write(entry.join("agent.json"), manifest.to_string()).unwrap();
    std::fs::copy(repo_root().join(ICON), entry.join("icon.svg")).unwrap();
    dir
}

fn manifest(extra: Value) -> Value {
    let mut m = serde_json::json!({
        "id": "example-agent",
        "name": "Example Agent",
        "version": "1.0.0",
        "description": "A coding agent.",
        "license_url": "https://example.com/LICENSE",
        "distribution": {"npx": {"package": "example-agent@1.0.0"}},
    });
    let Value::Object(extra) = extra else {
        panic!("the extra fields are not an object: {extra}");
    };
    for (k, v) in extra {
        m[k] = v;
    }
    m
}

fn validate(root: &Path) -> (Run, Vec<Finding>) {
    let run = acp_registry(
        &["validate", "--registry", "registry", "--format", "json"],
        root,
    );
    // uvx-only entries draw the note that Zed installs no uvx packages: not a parity matter.
    let mut findings = run.findings().findings;
    findings.retain(|f| f.code != "client-incompatible");
    (run, findings)
}

fn build(root: &Path) -> Run {
    acp_registry(
        &[
            "build",
            "--registry",
            "registry",
            "--out",
            "dist",
            "--no-site",
        ],
        root,
    )
}

fn published(root: &Path, file: &str) -> Value {
    let text = std::fs::read_to_string(root.join("dist").join(file)).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["agents"][0].clone()
}

#[test]
fn unknown_top_level_fields_warn_and_are_published_after_the_known_fields_sorted() {
    let dir = registry(&manifest(
        serde_json::json!({"zeta": {"b": 1, "a": 2}, "alpha": true}),
    ));
    let (run, findings) = validate(dir.path());
    assert_eq!(run.code, 0, "{}", run.stdout);
    let mut unknown: Vec<&str> = findings
        .iter()
        .filter(|f| f.code == "unknown-field" && f.severity == "warning")
        .map(|f| f.pointer.as_deref().unwrap())
        .collect();
    unknown.sort();
    assert_eq!(unknown, ["/alpha", "/zeta"], "{findings:?}");

    let run = build(dir.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let agent = published(dir.path(), "registry.json");
    let keys: Vec<&String> = agent.as_object().unwrap().keys().collect();
    let expected = [
        "id",
        "name",
        "version",
        "description",
        "license_url",
        "icon",
        "distribution",
        "alpha",
        "zeta",
    ];
    assert_eq!(keys, expected);
    assert_eq!(
        serde_json::to_string(&agent["zeta"]).unwrap(),
        r#"{"a":2,"b":1}"#
    );
}

#[test]
fn uvx_extras_validate_and_are_published_as_written() {
    let spec = "example-agent[acp]==1.0.0";
    let dir = registry(&manifest(
        serde_json::json!({"distribution": {"uvx": {"package": spec}}}),
    ));
    let (run, findings) = validate(dir.path());
    assert_eq!(run.code, 0, "{findings:?}");
    assert!(findings.is_empty(), "{findings:?}");
    let run = build(dir.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let agent = published(dir.path(), "registry.json");
    assert_eq!(agent["distribution"]["uvx"]["package"], spec);
}

#[test]
fn a_patch_that_breaks_the_published_agent_fails_validate_in_the_manifest_naming_the_output() {
    let dir = registry(&manifest(serde_json::json!({})));
    std::fs::write(
        dir.path().join("registry/acp-registry.jsonc"),
        r#"{"outputs": [
            {"file": "registry.json"},
            {"file": "registry-for-jetbrains.json",
             "patches": [{"id": "example-agent", "set": {"bundled": "yes"}}]}
        ]}"#,
    )
    .unwrap();
    let (run, findings) = validate(dir.path());
    assert_eq!(run.code, 1, "{}", run.stdout);
    let schema: Vec<&Finding> = findings.iter().filter(|f| f.code == "schema").collect();
    assert_eq!(schema.len(), 1, "{findings:?}");
    let finding = schema[0];
    assert_eq!(finding.severity, "error");
    let file = &finding.file;
    assert!(file.ends_with("example-agent/agent.json"), "{file}");
    assert_eq!((finding.line, finding.column), (Some(1), Some(1)));
    assert_eq!(finding.pointer.as_deref(), Some("/bundled"));
    let message = &finding.message;
    assert!(
        message.contains("as published in registry-for-jetbrains.json"),
        "{message}"
    );
    assert!(!message.contains("registry.json,"), "{message}");
    assert!(
        finding.help.as_deref().unwrap().contains("patch"),
        "{finding:?}"
    );
    // build refuses the same registry, as it always did: nothing is written.
    assert_eq!(build(dir.path()).code, 1);
    assert!(!dir.path().join("dist").exists());
}
