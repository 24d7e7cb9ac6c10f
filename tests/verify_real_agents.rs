//! Real ACP agents from npm, pinned in `tests/fixtures/real-agents/`: `verify` must pass
//! them (only `initialize`: they need sign-in for anything more) and must fail a package
//! that is not an agent with a coded finding. Needs the network and a minute, so it runs
//! when `ACP_REGISTRY_REAL_AGENTS=1` (`.ci/run` sets it) and registry.npmjs.org answers;
//! otherwise it says why it skipped. `ACP_REGISTRY_RECORD=1` rewrites the recorded answers
//! in `tests/fixtures/acp/`, which `tests/verify_fixtures.rs` uses offline.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_acp-registry");

fn npm_reachable() -> bool {
    Command::new("npm")
        .args(["view", "semver@7.6.3", "version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn pinned_real_agents_pass_verify_and_a_non_agent_fails() {
    if std::env::var_os("ACP_REGISTRY_REAL_AGENTS").is_none_or(|v| v != "1") {
        eprintln!("skipped: real npm agents run with ACP_REGISTRY_REAL_AGENTS=1 (.ci/run sets it)");
        return;
    }
    if !npm_reachable() {
        eprintln!("skipped: registry.npmjs.org is unreachable (npm view semver@7.6.3 failed)");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let output = Command::new(BIN)
        .args([
            "verify",
            "--registry",
            "real-agents",
            "-j",
            "4",
            "--timeout",
            "120",
            "--format",
            "json",
        ])
        .current_dir(&root)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    let agents = report["agents"].as_array().unwrap();
    let status = |id: &str| {
        agents
            .iter()
            .find(|a| a["id"] == id)
            .map(|a| (a["status"].clone(), a["reason"].clone()))
    };
    for id in ["claude-code-acp", "gemini", "opencode"] {
        assert_eq!(status(id).unwrap().0, "passed", "{id}: {:?}", status(id));
    }
    assert_eq!(status("not-an-agent").unwrap().0, "failed");
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"].as_str().unwrap().contains("not-an-agent"))
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"agent-protocol") && codes.contains(&"agent-launch"),
        "{codes:?}"
    );
    if std::env::var_os("ACP_REGISTRY_RECORD").is_some_and(|v| v == "1") {
        for agent in agents.iter().filter(|a| a["status"] == "passed") {
            let id = agent["id"].as_str().unwrap();
            let doc = serde_json::json!({
                "_comment": format!("initialize answer of the pinned {id} in tests/fixtures/real-agents to acp-registry verify, recorded with ACP_REGISTRY_RECORD=1"),
                "result": agent["initialize"],
            });
            let path = root.join(format!("acp/{id}.json"));
            std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
        }
    }
}
