//! Real ACP agents pinned in `tests/fixtures/real-agents/`: from npm, and one from the
//! Python package registry run with uvx (`minion-code`, its unpinned dependencies resolved
//! as of a fixed date through `UV_EXCLUDE_NEWER` in its manifest's `env`). `verify` must pass
//! them (only `initialize`: they need sign-in for anything more) and must fail a package
//! that is not an agent with a coded finding. Needs the network and a minute, so it runs
//! when `ACP_REGISTRY_REAL_AGENTS=1` (`.ci/run` sets it); each registry that does not answer
//! takes its agents out of the run, saying so (all of them: the test skips). Without `uvx`
//! the uvx agent fails the test in CI (`CI` set: `.ci/run` installs uv) and is skipped,
//! saying so, elsewhere. `ACP_REGISTRY_RECORD=1` rewrites the recorded answers of the npm
//! agents in `tests/fixtures/acp/`, which `tests/registry/verify_fixtures.rs` uses offline.

use acp_test_kit::Findings;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = crate::REGISTRY;

fn npm_reachable() -> bool {
    Command::new("npm")
        .args(["view", "semver@7.6.3", "version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether the Python package registry answers (pip's own index, as uv's default is).
fn pypi_reachable() -> bool {
    Command::new("python3")
        .args(["-m", "pip", "index", "versions", "minion-code"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The distribution kinds this machine can check, each announced when it cannot.
fn kinds_to_run() -> Vec<&'static str> {
    let mut kinds = Vec::new();
    if npm_reachable() {
        kinds.push("npx");
    } else {
        eprintln!("skipped the npm agents: the npm registry is unreachable (npm view semver@7.6.3 failed)");
    }
    if !acp_test_kit::uvx_or_skip("the uvx agent") {
        // Announced (or failed, in CI) by uvx_or_skip.
    } else if !pypi_reachable() {
        eprintln!("skipped the uvx agent: the Python package registry is unreachable (pip index versions failed)");
    } else {
        kinds.push("uvx");
    }
    kinds
}

#[test]
fn pinned_real_agents_pass_verify_and_a_non_agent_fails() {
    if std::env::var_os("ACP_REGISTRY_REAL_AGENTS").is_none_or(|v| v != "1") {
        eprintln!("skipped: real agents run with ACP_REGISTRY_REAL_AGENTS=1 (.ci/run sets it)");
        return;
    }
    let kinds = kinds_to_run();
    if kinds.is_empty() {
        eprintln!("skipped: no package registry of the real agents answers");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let types = kinds.join(",");
    let output = Command::new(BIN)
        .args([
            "verify",
            "--registry",
            "real-agents",
            "--type",
            &types,
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
    if kinds.contains(&"uvx") {
        let minion = status("minion-code");
        assert_eq!(
            minion.as_ref().unwrap().0,
            "passed",
            "minion-code: {minion:?}"
        );
    }
    if !kinds.contains(&"npx") {
        return;
    }
    for id in ["claude-code-acp", "gemini", "opencode"] {
        assert_eq!(status(id).unwrap().0, "passed", "{id}: {:?}", status(id));
    }
    assert_eq!(status("not-an-agent").unwrap().0, "failed");
    let findings = Findings::parse(&String::from_utf8_lossy(&output.stdout));
    let codes: Vec<&str> = findings
        .findings
        .iter()
        .filter(|f| f.file.contains("not-an-agent"))
        .map(|f| f.code.as_str())
        .collect();
    assert!(
        codes.contains(&"agent-protocol") && codes.contains(&"agent-launch"),
        "{codes:?}"
    );
    if std::env::var_os("ACP_REGISTRY_RECORD").is_some_and(|v| v == "1") {
        // The offline replays (tests/registry/verify_fixtures.rs) are of the npm agents.
        let recorded = |a: &&Value| a["status"] == "passed" && a["distribution"] == "npx";
        for agent in agents.iter().filter(recorded) {
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
