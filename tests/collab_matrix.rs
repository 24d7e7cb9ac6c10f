//! `acp-registry matrix` on the `acp-collab` agent (moved from the acp-collab package's
//! `collab_acp` tests: it needs this package's binary and the collab package's).

use serde_json::{json, Value};

#[path = "../crates/collab/tests/collab_support/mod.rs"]
mod collab_support;
mod common;
mod net_server;

fn manifest() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/registry/agent-collaboration-protocol/agent.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `acp-registry matrix` on the real entry, its binary served from loopback: the row names
/// the agent and the slash commands an editor would offer.
#[cfg(unix)]
#[test]
fn matrix_on_the_entry_records_its_agent_info_and_slash_commands() {
    use net_server::{Reply, Server};
    let binary = std::fs::read(collab_support::exe()).unwrap();
    let server = Server::start(move |request, _| match request.path.as_str() {
        "/acp-collab" => Reply::body(200, binary.clone()),
        _ => Reply::status(404),
    });
    let mut entry = manifest();
    let target =
        json!({"archive": server.url("/acp-collab"), "cmd": "acp-collab", "args": ["acp"]});
    entry["distribution"] = common::verify::binary_everywhere(&target);
    let reg = common::verify::registry(&[entry]);
    let out = reg.root.parent().unwrap().join("matrix.json");
    let run = common::verify::run(
        &reg.root,
        &["matrix", "--timeout", "60", "--out", out.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let matrix: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let row = &matrix["agents"][0];
    assert_eq!(row["agent_info"]["name"], "acp-collab");
    assert_eq!(row["methods"]["session/new"], "success");
    assert_eq!(
        row["commands"],
        json!(["status", "next", "validate", "init", "append", "log", "help"])
    );
    let md = std::fs::read_to_string(out.with_extension("md")).unwrap();
    assert!(
        md.contains(
            "Slash commands: `/status`, `/next`, `/validate`, `/init`, `/append`, `/log`, `/help`."
        ),
        "{md}"
    );
}
