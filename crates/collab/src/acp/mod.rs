//! `acp-collab acp`: the collaboration engine as an ACP (Agent Client Protocol) agent on
//! stdio, so an editor can add it like any other agent.
//!
//! `initialize` answers protocol version 1, `agentInfo`, default capabilities and no
//! `authMethods` (the registry entry declares no `auth`: nothing to sign in to).
//! `session/new` takes the session's `cwd` as the workspace and, optionally,
//! `_meta.collaborationFolder` (relative to `cwd`) as the collaboration folder (else `cwd`
//! itself), then announces the slash commands with `available_commands_update`.
//! `session/prompt` runs one slash command ([`command`]) through the collab library and
//! streams its output as `agent_message_chunk` updates; plain text gets the help.
//! `session/cancel` is honoured before the command runs and between chunks (a command that
//! already wrote its event stays written). Framing and message classification are
//! `acp_registry_core::acp`'s, the message types the schema crate's
//! (`agent_client_protocol_schema`); stdout carries only protocol messages. Frames are read on
//! a thread of their own, so a `session/cancel` is seen while a prompt's output streams.
//! `command` parses the slash commands into the library's `InitOptions` and `AppendOptions`.

pub(crate) mod command;

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};

use agent_client_protocol_schema::v1::{
    AgentCapabilities, AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate,
    CancelNotification, ContentBlock, ContentChunk, Implementation, InitializeResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, SessionNotification,
    SessionUpdate, StopReason, UnstructuredCommandInput, AGENT_METHOD_NAMES, CLIENT_METHOD_NAMES,
};
use agent_client_protocol_schema::ProtocolVersion;
use serde_json::Value;

use self::command::SlashCommand;
use crate::error::CollabError;
use acp_registry_core::acp::{error_codes, Frame, Id, LineBuffer, Message, ParseError, RpcError};
use acp_registry_core::escape;

/// The `_meta` key of `session/new` naming the collaboration folder.
pub(crate) const FOLDER_META_KEY: &str = "collaborationFolder";

/// Lines of output per `agent_message_chunk`: long logs stream, and cancel is checked
/// between chunks.
const CHUNK_LINES: usize = 40;

/// Serves one client until `input` ends. Only a failure to write `output` is an error.
pub(crate) fn serve<R: Read + Send + 'static, W: Write>(input: R, output: W) -> io::Result<()> {
    let (tx, rx) = mpsc::channel();
    // A reader thread lets a prompt notice `session/cancel` while it streams.
    std::thread::spawn(move || read_frames(input, &tx));
    Server::new(rx, output).run()
}

fn read_frames<R: Read>(mut input: R, tx: &Sender<Frame>) {
    let mut lines = LineBuffer::new(acp_registry_core::acp::framing::DEFAULT_LINE_CAP);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        for frame in lines.push(&chunk[..n]) {
            if tx.send(frame).is_err() {
                return;
            }
        }
    }
    if let Some(frame) = lines.finish() {
        let _ = tx.send(frame);
    }
}

struct Session {
    folder: PathBuf,
}

/// The agent's state: open sessions and the frames read ahead while a prompt streamed.
pub(crate) struct Server<W: Write> {
    rx: Receiver<Frame>,
    backlog: VecDeque<Frame>,
    out: W,
    sessions: BTreeMap<String, Session>,
    opened: u64,
}

fn rpc_error(code: i64, message: impl Into<String>) -> RpcError {
    RpcError {
        code,
        message: message.into(),
        data: None,
    }
}

fn params_as<T: serde::de::DeserializeOwned>(params: Option<Value>) -> Result<T, RpcError> {
    serde_json::from_value(params.unwrap_or(Value::Null))
        .map_err(|e| rpc_error(error_codes::INVALID_PARAMS, format!("invalid params: {e}")))
}

fn to_value(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

impl<W: Write> Server<W> {
    /// A server reading frames from `rx` (the reader thread's, or a test's).
    pub(crate) fn new(rx: Receiver<Frame>, out: W) -> Self {
        Self {
            rx,
            backlog: VecDeque::new(),
            out,
            sessions: BTreeMap::new(),
            opened: 0,
        }
    }

    /// Serves requests until the client closes its input.
    pub(crate) fn run(mut self) -> io::Result<()> {
        while let Some(frame) = self.backlog.pop_front().or_else(|| self.rx.recv().ok()) {
            self.handle(frame)?;
        }
        Ok(())
    }

    fn send(&mut self, message: &Message) -> io::Result<()> {
        self.out.write_all(message.to_line().as_bytes())?;
        self.out.flush()
    }

    fn respond(&mut self, id: Id, outcome: Result<Value, RpcError>) -> io::Result<()> {
        self.send(&Message::Response { id, outcome })
    }

    fn handle(&mut self, frame: Frame) -> io::Result<()> {
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong { seen } => {
                let message = format!("message line too long ({seen} bytes read), dropped");
                return self.respond(Id::Null, Err(rpc_error(error_codes::PARSE_ERROR, message)));
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        match Message::parse(&line) {
            Err(e @ ParseError::NotJson(_)) => self.respond(
                Id::Null,
                Err(rpc_error(error_codes::PARSE_ERROR, e.to_string())),
            ),
            Err(e @ ParseError::NotJsonRpc(_)) => self.respond(
                Id::Null,
                Err(rpc_error(error_codes::INVALID_REQUEST, e.to_string())),
            ),
            Ok(Message::Request { id, method, params }) => self.request(id, &method, params),
            // A cancel with no prompt running has nothing to stop; other notifications and
            // responses (we send no requests) need no answer.
            Ok(_) => Ok(()),
        }
    }

    fn request(&mut self, id: Id, method: &str, params: Option<Value>) -> io::Result<()> {
        if method == AGENT_METHOD_NAMES.initialize {
            self.respond(id, Ok(initialize_result()))
        } else if method == AGENT_METHOD_NAMES.session_new {
            match self.new_session(params) {
                Ok(session_id) => {
                    self.respond(
                        id,
                        Ok(to_value(NewSessionResponse::new(session_id.clone()))),
                    )?;
                    self.update(
                        &session_id,
                        SessionUpdate::AvailableCommandsUpdate(commands()),
                    )
                }
                Err(e) => self.respond(id, Err(e)),
            }
        } else if method == AGENT_METHOD_NAMES.session_prompt {
            let outcome = self.prompt(params)?;
            self.respond(id, outcome)
        } else {
            self.send(&Message::method_not_found(id, method))
        }
    }

    fn new_session(&mut self, params: Option<Value>) -> Result<String, RpcError> {
        let request: NewSessionRequest = params_as(params)?;
        let invalid = |m: &str| rpc_error(error_codes::INVALID_PARAMS, m);
        if !request.cwd.is_absolute() {
            return Err(invalid("`cwd` must be an absolute path"));
        }
        let folder = match request.meta.as_ref().and_then(|m| m.get(FOLDER_META_KEY)) {
            None | Some(Value::Null) => request.cwd.clone(),
            Some(Value::String(f)) => request.cwd.join(f),
            Some(_) => return Err(invalid("`_meta.collaborationFolder` must be a string")),
        };
        self.opened += 1;
        let session_id = format!("collab-{}", self.opened);
        self.sessions.insert(session_id.clone(), Session { folder });
        Ok(session_id)
    }

    fn update(&mut self, session_id: &str, update: SessionUpdate) -> io::Result<()> {
        let notification = SessionNotification::new(session_id.to_string(), update);
        self.send(&Message::Notification {
            method: CLIENT_METHOD_NAMES.session_update.to_string(),
            params: Some(to_value(notification)),
        })
    }

    fn prompt(&mut self, params: Option<Value>) -> io::Result<Result<Value, RpcError>> {
        let request: PromptRequest = match params_as(params) {
            Ok(request) => request,
            Err(e) => return Ok(Err(e)),
        };
        let session_id = request.session_id.0.to_string();
        let Some(session) = self.sessions.get(&session_id) else {
            let message = format!("unknown session {session_id:?}; call session/new first");
            return Ok(Err(rpc_error(error_codes::RESOURCE_NOT_FOUND, message)));
        };
        let folder = session.folder.clone();
        let text: String = request
            .prompt
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let stop = self.run_prompt(&session_id, &folder, &text)?;
        Ok(Ok(to_value(PromptResponse::new(stop))))
    }

    fn run_prompt(
        &mut self,
        session_id: &str,
        folder: &Path,
        text: &str,
    ) -> io::Result<StopReason> {
        if self.cancel_requested(session_id) {
            return Ok(StopReason::Cancelled);
        }
        let output = answer(text, folder);
        let lines: Vec<&str> = output.split_inclusive('\n').collect();
        for (i, chunk) in lines.chunks(CHUNK_LINES).enumerate() {
            if i > 0 && self.cancel_requested(session_id) {
                return Ok(StopReason::Cancelled);
            }
            // Folder text is untrusted: no raw controls or bidi overrides reach the editor.
            let text = escape::visible(&chunk.concat()).into_owned();
            let chunk = ContentChunk::new(ContentBlock::from(text));
            self.update(session_id, SessionUpdate::AgentMessageChunk(chunk))?;
        }
        Ok(StopReason::EndTurn)
    }

    /// Reads what has arrived without blocking: true when it holds a `session/cancel` for
    /// this session; everything else is kept, in order, for the main loop.
    fn cancel_requested(&mut self, session_id: &str) -> bool {
        let mut cancelled = false;
        while let Ok(frame) = self.rx.try_recv() {
            if let Frame::Line(line) = &frame {
                if let Ok(Message::Notification { method, params }) = Message::parse(line) {
                    if method == AGENT_METHOD_NAMES.session_cancel
                        && params_as::<CancelNotification>(params)
                            .is_ok_and(|c| &*c.session_id.0 == session_id)
                    {
                        cancelled = true;
                        continue;
                    }
                }
            }
            self.backlog.push_back(frame);
        }
        cancelled
    }
}

fn initialize_result() -> Value {
    let info = Implementation::new("acp-collab", env!("CARGO_PKG_VERSION"))
        .title("Agent Collaboration Protocol".to_string());
    to_value(
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(AgentCapabilities::default())
            .auth_methods(Vec::new())
            .agent_info(info),
    )
}

fn commands() -> AvailableCommandsUpdate {
    let commands = command::COMMANDS
        .iter()
        .map(|(name, description, hint)| {
            let command = AvailableCommand::new(*name, *description);
            match hint {
                Some(hint) => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(*hint),
                )),
                None => command,
            }
        })
        .collect();
    AvailableCommandsUpdate::new(commands)
}

/// The text answering one prompt: a command's output or its error, or the help.
pub(crate) fn answer(text: &str, folder: &Path) -> String {
    let text = text.trim();
    if !text.starts_with('/') {
        return command::help_text();
    }
    let folder = folder.to_string_lossy();
    match command::parse(text, &folder) {
        Ok(cmd) => run_command(cmd, &folder).unwrap_or_else(|e| match e {
            CollabError::Refused { message, hint } => format!("error: {message}\n  {hint}\n"),
            // Every bad flag at once, as the CLI reports them.
            CollabError::Flags(ref problems) => {
                let mut text = format!("error: {e}\n");
                for p in problems {
                    text.push_str(&format!("  --{}: {}\n", p.flag, p.hint));
                }
                text
            }
            other => format!("error: {other}\n"),
        }),
        Err(message) => format!("{message}\n"),
    }
}

fn run_command(cmd: SlashCommand, folder: &str) -> Result<String, CollabError> {
    Ok(match cmd {
        SlashCommand::Status => crate::status::status(folder)?.render_text(),
        SlashCommand::Next(participant) => crate::next::next_action(folder, &participant)?.render(),
        SlashCommand::Validate => crate::validate::validate(folder)?.render_text(),
        SlashCommand::Init(opts) => format!("{}\n", crate::init::init(&opts)?.message()),
        SlashCommand::Append(opts) => format!("{}\n", crate::append::append(&opts)?.message()),
        SlashCommand::Log => crate::status::render_log_text(&crate::status::log(folder, None)?),
        SlashCommand::Help => command::help_text(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(value: &Value) -> Frame {
        Frame::Line(value.to_string().into_bytes())
    }

    /// Runs a server over frames queued in advance (as if all arrived at once).
    fn run(frames: Vec<Value>) -> Vec<Value> {
        let (tx, rx) = mpsc::channel();
        for f in frames {
            tx.send(frame(&f)).unwrap();
        }
        drop(tx);
        let mut out = Vec::new();
        Server::new(rx, &mut out).run().unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_cancel_arriving_with_the_prompt_stops_it_before_the_command_writes() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().to_path_buf();
        let init = "/init --participant a --objective o --completion c --primary-deliverable-type design-spec";
        let out = run(vec![
            json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "collab-1", "prompt": [{"type": "text", "text": init}]}}),
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "collab-1"}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "collab-1", "prompt": [{"type": "text", "text": "/help"}]}}),
        ]);
        let answer = |id: i64| out.iter().find(|m| m["id"] == json!(id)).unwrap();
        assert_eq!(answer(2)["result"]["stopReason"], "cancelled");
        assert!(!cwd.join("protocol.json").exists());
        // What was read while checking for the cancel is still served, in order.
        assert_eq!(answer(3)["result"]["stopReason"], "end_turn");
    }

    #[test]
    fn control_and_bidi_characters_reach_the_client_as_visible_escapes() {
        let (_tx, rx) = mpsc::channel();
        let mut out = Vec::new();
        let mut server = Server::new(rx, &mut out);
        let stop = server
            .run_prompt("s", Path::new("/nonexistent"), "/nope\u{1b}[2J\u{202e}")
            .unwrap();
        assert_eq!(stop, StopReason::EndTurn);
        drop(server);
        let note: Value = serde_json::from_slice(&out).unwrap();
        let text = note["params"]["update"]["content"]["text"]
            .as_str()
            .unwrap();
        assert_eq!(
            text,
            "unknown command /nope\\u{1b}[2J\\u{202e}; try /help\n"
        );
    }

    #[test]
    fn another_sessions_cancel_is_kept_for_the_main_loop_and_the_prompt_runs() {
        let (tx, rx) = mpsc::channel();
        let mut out = Vec::new();
        let mut server = Server::new(rx, &mut out);
        server.sessions.insert(
            "s".into(),
            Session {
                folder: PathBuf::from("/nonexistent"),
            },
        );
        tx.send(frame(
            &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "other"}}),
        ))
        .unwrap();
        let stop = server
            .run_prompt("s", Path::new("/nonexistent"), "/help")
            .unwrap();
        assert_eq!(stop, StopReason::EndTurn);
        // Another session's cancel is kept for the main loop, not taken as ours.
        assert_eq!(server.backlog.len(), 1);
        drop(server);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1, "one chunk: {text}");
    }
}
