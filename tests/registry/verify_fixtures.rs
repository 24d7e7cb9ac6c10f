//! The recorded `initialize` answers of real agents (`tests/fixtures/acp/*.json`, recorded
//! by `tests/registry/verify_real_agents.rs`), offline: read with the schema crate's types they pass
//! the default checks, and replayed by the test agent they pass `verify` end to end, so a
//! change to our checks that would fail today's real agents fails here first.
#![cfg(unix)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use acp_registry::acp::methods::read_initialize;
use serde_json::{json, Value};

use crate::common;
use acp_test_kit::server as net_server;
use acp_test_kit::wheel::{agent_script, binary_everywhere};
use common::verify::run;
use net_server::{Reply, Server};

fn fixtures() -> Vec<(String, PathBuf, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp");
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                p,
                doc["result"].clone(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn recorded_answers_speak_version_1_and_offer_a_sign_in_the_default_policy_accepts() {
    let found = fixtures();
    let ids: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(ids, ["claude-code-acp", "gemini", "opencode"]);
    let policy: BTreeSet<String> = ["agent", "terminal"]
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    for (id, _, result) in &found {
        let answer = read_initialize(result).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(answer.protocol_version, Some(1), "{id}");
        assert!(
            answer
                .auth
                .iter()
                .any(|a| !a.counts_as().is_disjoint(&policy)),
            "{id}: {:?}",
            answer.auth
        );
        assert!(answer.advertised.contains("session/load"), "{id}");
    }
}

#[test]
fn replayed_answers_pass_verify_and_contradicting_claims_are_caught() {
    let script = agent_script();
    let server = Server::start(move |_, _| Reply::body(200, script.clone()));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("registry");
    for (id, path, _) in fixtures() {
        // In the environment, not as a path: the agent may not read the checkout.
        let answer = std::fs::read_to_string(&path).unwrap();
        let target = json!({"archive": server.url("/agent"), "cmd": "agent", "args": ["--mode", "replay"], "env": {"ANSWER": answer}});
        // gemini advertises no session/list: claiming it must be caught.
        let capabilities = if id == "gemini" {
            json!(["session/load", "session/list"])
        } else {
            json!(["session/load"])
        };
        let manifest = json!({"id": id, "name": id, "version": "1.0.0", "description": "d", "capabilities": capabilities, "protocol_version": 1, "distribution": binary_everywhere(&target)});
        std::fs::create_dir_all(root.join(&id)).unwrap();
        std::fs::write(root.join(&id).join("agent.json"), manifest.to_string()).unwrap();
    }
    let output = run(
        &root,
        &["verify", "--format", "json", "-j", "3", "--timeout", "30"],
    );
    let report = output.json();
    let findings: Vec<(String, String)> = output
        .findings()
        .findings
        .into_iter()
        .map(|f| (f.code, f.pointer.unwrap_or_default()))
        .collect();
    assert_eq!(
        findings,
        [(
            "agent-manifest-mismatch".to_string(),
            "/capabilities/1".to_string()
        )],
        "{report:#}"
    );
    let statuses: Vec<&str> = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["passed", "failed", "passed"]);
}
