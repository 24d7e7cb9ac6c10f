//! Client compatibility pinned: the verdict of every client on every bundled `registry/` entry
//! (under the bundled configuration's outputs) and on a few made-up entries covering each
//! reason, with the sha256 of `clients.jsonc` they were computed from, in
//! `tests/registry/golden/compatibility.json`.
//!
//! A verdict that changes while the data did not is a change of the judgement code, which must
//! be deliberate; a changed data file must be followed by a regenerated pin, whose diff shows
//! which entries it moved: `UPDATE_GOLDEN=1 cargo test --lib compat_golden`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use crate::manifest::agent::AgentView;
use crate::manifest::parse;
use crate::published::listings;
use crate::registry::config::Config;
use crate::rules::{compatibility, CLIENTS_FILE};
use acp_registry_core::fs::digest::sha256_hex;

const GOLDEN: &str = "tests/registry/golden/compatibility.json";

/// Made-up entries, one per reason (listed in every output unless named below).
fn made_up() -> Vec<(&'static str, Value)> {
    let target = |archive: &str| json!({"archive": archive, "cmd": "./a"});
    vec![
        (
            "x-uvx-only",
            json!({"distribution": {"uvx": {"package": "a==1.0.0"}}}),
        ),
        (
            "x-tar-bz2",
            json!({"distribution": {"binary": {
            "linux-x86_64": target("https://x/a.tar.bz2"),
            "darwin-aarch64": target("https://x/a.zip")}}}),
        ),
        (
            "x-tar-xz-only",
            json!({"distribution": {"binary": {
            "linux-x86_64": target("https://x/a.tar.xz")}}}),
        ),
        (
            "x-npx-env",
            json!({"distribution": {"npx": {"package": "a@1.0.0", "env": {"A": "1"}}}}),
        ),
        (
            "x-binary-env",
            json!({"distribution": {"binary": {"linux-x86_64":
            {"archive": "https://x/a.zip", "cmd": "./a", "env": {"A": "1"}}}}}),
        ),
        (
            "x-terminal-auth",
            json!({"auth": [{"id": "t", "type": "terminal"}],
            "distribution": {"npx": {"package": "a@1.0.0"}}}),
        ),
    ]
}

fn verdicts(view: &AgentView, listed: &BTreeMap<String, bool>) -> Value {
    let mut out = serde_json::Map::new();
    for c in compatibility(view, listed) {
        out.insert(
            c.client,
            json!({"installs": c.installs.as_str(), "why": c.why}),
        );
    }
    Value::Object(out)
}

fn computed(root: &Path) -> Value {
    let registry = root.join("registry");
    let (config, _) = Config::load(&registry);
    let mut agents = BTreeMap::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&registry)
        .unwrap()
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.join("agent.json").is_file())
        .collect();
    dirs.sort();
    for dir in dirs {
        let text = std::fs::read_to_string(dir.join("agent.json")).unwrap();
        let node = parse(&text).unwrap();
        let id = node.get_str("id").unwrap().to_string();
        let listed = listings(&config.outputs, &id);
        agents.insert(id, verdicts(&AgentView::from_node(&node), &listed));
    }
    // The JetBrains files leave out `github-copilot-cli` in the bundled configuration; a
    // made-up entry left out of every file shows that reason on its own.
    let all_out: BTreeMap<String, bool> = config
        .outputs
        .iter()
        .map(|o| (o.file.clone(), false))
        .collect();
    for (id, agent) in made_up() {
        let view = AgentView::from_json(agent.as_object().unwrap());
        agents.insert(id.into(), verdicts(&view, &listings(&config.outputs, id)));
    }
    let npx = json!({"distribution": {"npx": {"package": "a@1.0.0"}}});
    let view = AgentView::from_json(npx.as_object().unwrap());
    agents.insert("x-left-out".into(), verdicts(&view, &all_out));
    json!({"data_sha256": sha256_hex(CLIENTS_FILE.as_bytes()), "agents": agents})
}

#[test]
fn compatibility_changes_only_with_the_data() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = computed(root);
    let path = root.join(GOLDEN);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let text = serde_json::to_string_pretty(&found).unwrap() + "\n";
        std::fs::write(&path, text).unwrap();
        return;
    }
    let pinned: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        pinned["data_sha256"], found["data_sha256"],
        "src/rules/compat/clients.jsonc changed: regenerate {GOLDEN} with \
         `UPDATE_GOLDEN=1 cargo test --lib compat_golden` and read its diff"
    );
    assert!(
        pinned["agents"] == found["agents"],
        "compatibility changed without the data changing:\npinned: {:#}\nnow: {:#}",
        pinned["agents"],
        found["agents"]
    );
}
