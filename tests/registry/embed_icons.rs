//! The `embed_icons` output option: each icon as a data URI next to `icon`, so a client
//! lists every agent with one request.

use crate::common;

use std::path::Path;

use base64::Engine;
use common::{acp_registry, copy_dir, repo_root};

/// A copy of the bundled registry whose `registry.json` output embeds icons.
fn registry_embedding_icons(value: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_root().join("registry"), dir.path());
    let config = dir.path().join("acp-registry.jsonc");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replace(
        r#"{ "file": "registry.json", "exclude": ["github-copilot"] }"#,
        &format!(r#"{{ "file": "registry.json", "exclude": ["github-copilot"], "embed_icons": {value} }}"#),
    );
    std::fs::write(&config, text).unwrap();
    dir
}

fn built(registry: &Path) -> (tempfile::TempDir, serde_json::Value, String) {
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let run = acp_registry(
        &["build", "--registry", ".", "--out", dist.to_str().unwrap()],
        registry,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(dist.join("registry.json")).unwrap();
    let jetbrains = std::fs::read_to_string(dist.join("registry-for-jetbrains.json")).unwrap();
    (out, serde_json::from_str(&text).unwrap(), jetbrains)
}

#[test]
fn embed_icons_puts_each_icon_as_a_data_uri_right_after_icon() {
    let dir = registry_embedding_icons("true");
    let (_out, doc, jetbrains) = built(dir.path());
    let agents = doc["agents"].as_array().unwrap();
    assert!(!agents.is_empty());
    for agent in agents {
        let id = agent["id"].as_str().unwrap();
        let uri = agent["icon_data_uri"].as_str().expect(id);
        let encoded = uri.strip_prefix("data:image/svg+xml;base64,").expect(uri);
        let svg = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        let icon = std::fs::read(dir.path().join(id).join("icon.svg")).unwrap();
        assert_eq!(svg, icon, "{id}");
        let keys: Vec<&String> = agent.as_object().unwrap().keys().collect();
        let at = keys.iter().position(|k| *k == "icon").unwrap();
        assert_eq!(keys[at + 1], "icon_data_uri", "{id}: {keys:?}");
    }
    assert!(
        !jetbrains.contains("icon_data_uri"),
        "only the output that asks embeds icons"
    );
}

#[test]
fn embed_icons_must_be_a_boolean() {
    let dir = registry_embedding_icons("\"yes\"");
    let run = acp_registry(
        &["validate", "--registry", ".", "--format", "json"],
        dir.path(),
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("embed_icons must be true or false"),
        "{}",
        run.stdout
    );
}

#[test]
fn registry_schema_accepts_the_embedded_icon_and_nothing_else_there() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("schemas/registry.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::draft7::new(&schema).unwrap();
    let registry = |uri: &str| {
        serde_json::json!({"version": "1.0.0", "agents": [{
            "id": "a", "name": "A", "version": "1.0.0", "description": "d",
            "icon": "https://example.com/a.svg", "icon_data_uri": uri,
            "distribution": {"npx": {"package": "a@1.0.0"}}
        }]})
    };
    assert!(validator.is_valid(&registry("data:image/svg+xml;base64,PHN2Zy8+")));
    assert!(!validator.is_valid(&registry("https://example.com/a.svg")));
}
