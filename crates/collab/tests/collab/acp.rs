//! `acp-collab acp` driven as an editor drives an agent: the built binary on pipes,
//! newline-delimited JSON-RPC, a timeout on every read.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use acp_test_kit::server as net_server;
use acp_test_kit::Run;

const READ_TIMEOUT: Duration = Duration::from_secs(20);

struct Agent {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Agent {
    fn start(dir: &Path) -> Agent {
        let mut child = Command::new(crate::COLLAB)
            .arg("acp")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start acp-collab acp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Agent {
            child,
            stdin,
            lines,
        }
    }

    fn send_line(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next stdout line, which must be a JSON-RPC 2.0 message.
    fn read(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(READ_TIMEOUT)
            .expect("no message from the agent in time");
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        assert_eq!(value["jsonrpc"], "2.0", "{line}");
        value
    }

    /// Sends a request; returns the notifications before its response, and the response.
    fn request(&mut self, id: i64, method: &str, params: &Value) -> (Vec<Value>, Value) {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&message.to_string());
        let mut notes = Vec::new();
        loop {
            let message = self.read();
            if message.get("id") == Some(&json!(id)) {
                return (notes, message);
            }
            assert!(message.get("id").is_none(), "unexpected response {message}");
            notes.push(message);
        }
    }

    /// A prompt's streamed text and its stop reason.
    fn prompt(&mut self, id: i64, session: &str, text: &str) -> (String, String) {
        let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        let (notes, response) = self.request(id, "session/prompt", &params);
        let mut streamed = String::new();
        for note in notes {
            assert_eq!(note["method"], "session/update");
            assert_eq!(note["params"]["sessionId"], session);
            let update = &note["params"]["update"];
            assert_eq!(update["sessionUpdate"], "agent_message_chunk", "{note}");
            streamed.push_str(update["content"]["text"].as_str().unwrap());
        }
        let stop = response["result"]["stopReason"]
            .as_str()
            .unwrap_or_default();
        (streamed, stop.to_string())
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn manifest() -> Value {
    let path = acp_test_kit::repo_root().join("registry/agent-collaboration-protocol/agent.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn initialize(agent: &mut Agent) -> Value {
    let params = json!({"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "test", "version": "1"}});
    let (notes, response) = agent.request(1, "initialize", &params);
    assert!(notes.is_empty());
    response["result"].clone()
}

/// Opens a session; returns its id and the `session/update` announced right after.
fn new_session(agent: &mut Agent, id: i64, params: &Value) -> (String, Value) {
    let (notes, response) = agent.request(id, "session/new", params);
    assert!(notes.is_empty());
    let session = response["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {response}"))
        .to_string();
    (session, agent.read())
}

#[test]
fn a_whole_session_initialises_appends_and_validates_the_named_folder() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap();
    let mut agent = Agent::start(&workspace);

    let init = initialize(&mut agent);
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentInfo"]["name"], "acp-collab");
    // The manifest declares no `auth`, so the agent offers no sign-in either.
    let declared: Vec<Value> = manifest()["auth"].as_array().cloned().unwrap_or_default();
    assert_eq!(init["authMethods"], json!(declared));

    let params =
        json!({"cwd": workspace, "mcpServers": [], "_meta": {"collaborationFolder": "collab"}});
    let (session, note) = new_session(&mut agent, 2, &params);
    assert_eq!(note["params"]["sessionId"], session.as_str());
    let update = &note["params"]["update"];
    assert_eq!(update["sessionUpdate"], "available_commands_update");
    let names: Vec<&str> = update["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for wanted in ["status", "next", "validate", "init", "append", "log"] {
        assert!(names.contains(&wanted), "{wanted} not announced: {names:?}");
    }

    let (text, stop) = agent.prompt(
        3,
        &session,
        r#"/init --participant alice --participant bob --objective "Agree on a spec" --completion "spec agreed" --primary-deliverable-type design-spec"#,
    );
    assert_eq!(stop, "end_turn");
    assert!(
        text.starts_with("Initialized ACP schema v2 collaboration folder"),
        "{text}"
    );

    let (text, _) = agent.prompt(4, &session, "/status");
    assert!(
        text.contains("phase: drafting\n") && text.contains("waiting for: alice\n"),
        "{text}"
    );

    let (text, _) = agent.prompt(
        5,
        &session,
        "/append --participant alice --event deliverable_drafted --summary \"first draft\" --reply-to 1 --role primary --doc deliverables/design-spec.md",
    );
    assert_eq!(text, "appended seq 2: deliverable_drafted\n");

    let (text, _) = agent.prompt(6, &session, "/log");
    assert!(
        text.contains("alice  deliverable_drafted (") && text.contains("): first draft"),
        "{text}"
    );
    let (text, _) = agent.prompt(7, &session, "/validate");
    assert_eq!(text, "ACP validation passed\n");

    let folder = workspace.join("collab");
    let events = std::fs::read_to_string(folder.join("events.jsonl")).unwrap();
    let last: Value = serde_json::from_str(events.lines().last().unwrap()).unwrap();
    assert_eq!(events.lines().count(), 2);
    assert_eq!(
        (last["from"].as_str(), last["event"].as_str()),
        (Some("alice"), Some("deliverable_drafted"))
    );
    let report = acp_collab::validate(folder.to_str().unwrap()).unwrap();
    assert_eq!(report.exit_code(), 0, "{report:?}");
    assert!(
        !workspace.join("protocol.json").exists(),
        "wrote outside the named folder"
    );
}

#[test]
fn bad_lines_unknown_methods_and_plain_text_get_answers_without_ending_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = Agent::start(dir.path());
    agent.send_line("this is not json");
    let error = agent.read();
    assert_eq!(
        (error["id"].clone(), error["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    agent.send_line(r#"{"id":1,"method":"initialize"}"#);
    assert_eq!(agent.read()["error"]["code"], -32600);

    let (_, response) = agent.request(2, "session/load", &json!({}));
    assert_eq!(response["error"]["code"], -32601);
    let (_, response) = agent.request(
        3,
        "session/new",
        &json!({"cwd": "relative", "mcpServers": []}),
    );
    assert_eq!(response["error"]["code"], -32602);
    let params = json!({"sessionId": "nope", "prompt": [{"type": "text", "text": "/status"}]});
    let (_, response) = agent.request(4, "session/prompt", &params);
    assert_eq!(response["error"]["code"], -32002);

    let cwd = dir.path().canonicalize().unwrap();
    let (session, _) = new_session(&mut agent, 5, &json!({"cwd": cwd, "mcpServers": []}));
    let (text, stop) = agent.prompt(6, &session, "what can you do?");
    assert_eq!(stop, "end_turn");
    assert!(
        text.contains("/status") && text.contains("/append"),
        "{text}"
    );
    let (text, _) = agent.prompt(7, &session, "/status");
    assert!(text.starts_with("error: missing protocol.json"), "{text}");
    // A cancel with nothing running needs no answer; the next request still gets one.
    agent.send_line(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
            .to_string(),
    );
    let (text, _) = agent.prompt(8, &session, "/next");
    assert_eq!(text, "usage: /next <participant>\n");
}

#[test]
fn initialize_names_the_agent_with_its_title_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = Agent::start(dir.path());
    let info = initialize(&mut agent)["agentInfo"].clone();
    assert_eq!(
        info,
        json!({"name": "acp-collab", "title": "Agent Collaboration Protocol", "version": env!("CARGO_PKG_VERSION")})
    );
}

/// `acp-registry matrix` on the real entry, its binary served from loopback: the row names
/// the agent and the slash commands an editor would offer.
#[cfg(unix)]
#[test]
fn matrix_on_the_entry_records_its_agent_info_and_slash_commands() {
    use net_server::{Reply, Server};
    let binary = std::fs::read(crate::COLLAB).unwrap();
    let server = Server::start(move |request, _| match request.path.as_str() {
        "/acp-collab" => Reply::body(200, binary.clone()),
        _ => Reply::status(404),
    });
    let mut entry = manifest();
    let target =
        json!({"archive": server.url("/acp-collab"), "cmd": "acp-collab", "args": ["acp"]});
    entry["distribution"] = acp_test_kit::wheel::binary_everywhere(&target);
    let reg = acp_test_kit::wheel::registry(&[entry]);
    let out = reg.root.parent().unwrap().join("matrix.json");
    let run = Run::of(
        Command::new(crate::registry())
            .args(["matrix", "--timeout", "60", "--out", out.to_str().unwrap()])
            .args(["--registry", ".", "--no-cache"])
            .current_dir(&reg.root)
            .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1"),
    );
    run.assert_ok();
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
