//! Issue 32: what `build` tells clients beyond `registry.json`: `deprecations.json` retires
//! entries (deprecated ones published with a notice and their successor on the site, disabled
//! ones left out of every registry file and kept in `lifecycle.json`), and `lifecycle.json`
//! follows its published schema and is byte-identical under `--as-of`.

use crate::common;

use std::path::Path;

use common::{agent, build_registry, copy_dir, ids, json, repo_root, Run};
use serde_json::Value;

const BASE: &str = "https://cdn.example.com/registry/v1/latest";

/// The bundled registry with `deprecations` as its `deprecations.json`.
fn registry_with(deprecations: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_root().join("registry"), dir.path());
    std::fs::write(dir.path().join("deprecations.json"), deprecations).unwrap();
    dir
}

fn build(registry: &Path, out: &Path, extra: &[&str]) -> Run {
    let args = [&["--base-url", BASE], extra].concat();
    build_registry(registry, out, &args, &[])
}

const RETIRED: &str = r#"{
  // goose moves on; auggie is gone.
  "goose": {"status": "deprecated", "reason": "superseded by cline", "since": "2026-11-01", "replacement": "cline"},
  "auggie": {"status": "disabled", "reason": "abandoned upstream", "since": "2026-10-01", "replacement": "gemini"}
}"#;

#[test]
fn a_disabled_entry_is_left_out_of_every_registry_file_and_kept_in_lifecycle_json() {
    let registry = registry_with(RETIRED);
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let run = build(registry.path(), &dist, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for file in [
        "registry.json",
        "registry-for-jetbrains.json",
        "registry-for-jetbrains-preview.json",
    ] {
        let doc = json(&dist.join(file));
        assert!(!ids(&doc).contains(&"auggie".into()), "{file} lists auggie");
        assert!(ids(&doc).contains(&"goose".into()), "{file} lost goose");
    }
    assert!(!dist.join("site/agents/auggie").exists());
    assert!(!dist.join("auggie.svg").exists());
    assert!(
        run.stderr
            .contains("disabled: auggie (not published): abandoned upstream"),
        "{}",
        run.stderr
    );
    let lifecycle = json(&dist.join("lifecycle.json"));
    let auggie = agent(&lifecycle, "auggie");
    assert_eq!(
        (
            &auggie["status"],
            &auggie["reason"],
            &auggie["since"],
            &auggie["replacement"],
            &auggie["in_registry"]
        ),
        (
            &Value::from("disabled"),
            &Value::from("abandoned upstream"),
            &Value::from("2026-10-01"),
            &Value::from("gemini"),
            &Value::from(false)
        )
    );
    let goose = agent(&lifecycle, "goose");
    assert_eq!(goose["status"], "deprecated");
    assert_eq!(goose["replacement"], "cline");
    assert_eq!(goose["in_registry"], true);
    assert_eq!(agent(&lifecycle, "cline")["status"], "active");
    assert!(agent(&lifecycle, "cline").get("reason").is_none());
}

#[test]
fn a_deprecated_entry_shows_its_reason_and_links_its_successor_on_the_site() {
    let registry = registry_with(RETIRED);
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let run = build(registry.path(), &dist, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = std::fs::read_to_string(dist.join("site/agents/goose/index.html")).unwrap();
    assert!(
        page.contains("<strong>Deprecated since 2026-11-01:</strong> superseded by cline"),
        "{page}"
    );
    assert!(page.contains(r#"Use <a href="../../agents/cline/index.html">cline</a> instead."#));
    let index = std::fs::read_to_string(dist.join("site/index.html")).unwrap();
    assert_eq!(
        index
            .matches(r#"<p class="badge badge-warn">Deprecated</p>"#)
            .count(),
        1
    );
    assert!(index.contains(&format!(r#"href="{BASE}/lifecycle.json""#)));
    let cline = std::fs::read_to_string(dist.join("site/agents/cline/index.html")).unwrap();
    assert!(!cline.contains("Deprecated since"));
}

#[test]
fn a_successor_without_a_page_is_named_not_linked() {
    // gemini replaces goose, and is quarantined and unpublished: no page to link.
    let registry = registry_with(
        r#"{"goose": {"status": "deprecated", "reason": "merged", "since": "2026-11-01", "replacement": "gemini"},
            "gemini": {"status": "deprecated", "reason": "<b>moved</b>", "since": "2026-11-02"}}"#,
    );
    std::fs::write(
        registry.path().join("quarantine.json"),
        r#"{"gemini": "crashes"}"#,
    )
    .unwrap();
    let config = registry.path().join("acp-registry.jsonc");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replace(
        r#""publish_quarantined": true"#,
        r#""publish_quarantined": false"#,
    );
    std::fs::write(&config, text).unwrap();
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let run = build(registry.path(), &dist, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = std::fs::read_to_string(dist.join("site/agents/goose/index.html")).unwrap();
    assert!(page.contains("Use <code>gemini</code> instead."), "{page}");
    assert!(!dist.join("site/agents/gemini").exists());
    let lifecycle = json(&dist.join("lifecycle.json"));
    assert_eq!(agent(&lifecycle, "gemini")["in_registry"], false);
    assert_eq!(agent(&lifecycle, "gemini")["reason"], "<b>moved</b>");
}

#[test]
fn as_of_gives_the_same_bytes_every_time_and_leaves_out_later_retirements() {
    let registry = registry_with(RETIRED);
    let out = tempfile::tempdir().unwrap();
    let mut documents = Vec::new();
    for (i, env) in [[("TZ", "UTC")], [("TZ", "Asia/Tokyo")]].iter().enumerate() {
        let dist = out.path().join(format!("dist-{i}"));
        let args = ["--base-url", BASE, "--as-of", "2026-10-15"];
        let run = build_registry(registry.path(), &dist, &args, env);
        assert_eq!(run.code, 0, "{}", run.stderr);
        documents.push(std::fs::read(dist.join("lifecycle.json")).unwrap());
    }
    assert_eq!(documents[0], documents[1]);
    let doc: Value = serde_json::from_slice(&documents[0]).unwrap();
    assert_eq!(doc["as_of"], "2026-10-15T00:00:00Z");
    // goose's deprecation (2026-11-01) was decided after the time asked for.
    assert_eq!(agent(&doc, "goose")["status"], "active");
    assert_eq!(agent(&doc, "auggie")["status"], "disabled");
    // Without a time, none is written.
    let dist = out.path().join("dist-now");
    let run = build(registry.path(), &dist, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = json(&dist.join("lifecycle.json"));
    assert!(doc.get("as_of").is_none());
    assert_eq!(agent(&doc, "goose")["status"], "deprecated");
}

#[test]
fn lifecycle_json_follows_the_schema_published_beside_it() {
    let registry = registry_with(RETIRED);
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let run = build(registry.path(), &dist, &["--as-of", "2026-12-01T00:00:00Z"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let schema = json(&dist.join("lifecycle.schema.json"));
    // The source schema, its `$id` under the base URL the build published it at.
    let source = std::fs::read_to_string(repo_root().join("schemas/lifecycle.schema.json"))
        .unwrap()
        .replace(
            "https://cdn.agentclientprotocol.com/registry/v1/latest/",
            &format!("{BASE}/"),
        );
    assert_eq!(
        std::fs::read_to_string(dist.join("lifecycle.schema.json")).unwrap(),
        source
    );
    let validator = jsonschema::validator_for(&schema).unwrap();
    let doc = json(&dist.join("lifecycle.json"));
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let mut broken = doc.clone();
    broken["agents"][0]["status"] = Value::from("deleted");
    assert!(!validator.is_valid(&broken));
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    assert!(sums.contains("  lifecycle.json\n") && sums.contains("  lifecycle.schema.json\n"));
}

#[test]
fn the_works_in_filter_offers_each_client_and_leaves_out_agents_it_cannot_install() {
    let registry = registry_with("{}");
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let run = build(registry.path(), &dist, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let index = std::fs::read_to_string(dist.join("site/index.html")).unwrap();
    assert!(index.contains(r#"<fieldset data-facet="works">"#));
    assert!(index.contains(r#"name="works" value="zed"><label for="f-works-3">Zed</label>"#));
    let script = std::fs::read_to_string(dist.join("site/assets/search-index.js")).unwrap();
    let start = script.find("window.acpSiteIndex = ").unwrap() + "window.acpSiteIndex = ".len();
    let text = script[start..].trim_end().trim_end_matches(';');
    let index: Value = serde_json::from_str(text).unwrap();
    let works = |id: &str| -> Vec<String> {
        let card = index["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id);
        serde_json::from_value(card.unwrap()["works_in"].clone()).unwrap()
    };
    // fast-agent offers only uvx, which Zed does not install; lifecycle.json says the same.
    assert_eq!(works("fast-agent"), ["acpr", "jetbrains"]);
    assert_eq!(works("claude-acp"), ["acpr", "jetbrains", "zed"]);
    let lifecycle = json(&dist.join("lifecycle.json"));
    let zed = &agent(&lifecycle, "fast-agent")["compatibility"]["zed"];
    assert_eq!(zed["installs"], "no");
    let page = std::fs::read_to_string(dist.join("site/agents/fast-agent/index.html")).unwrap();
    assert!(page.contains("<strong>Zed</strong>: cannot install it (Zed does not install uvx"));
}
