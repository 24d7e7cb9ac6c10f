//! Speaking ACP to a launched agent, as an editor does: newline-delimited JSON-RPC on stdio,
//! responses matched by id, notifications skipped, the agent's own requests answered with a
//! JSON-RPC error (so it never waits on us), every non-JSON stdout line recorded as a
//! protocol violation, stdin kept open until the end, and the tail of stderr kept for the
//! report.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use crate::acp::framing::DEFAULT_LINE_CAP;
use crate::acp::{Frame, Id, LineBuffer, Message, RpcError};

use super::sandbox;

/// Bytes of stderr kept for the report.
const STDERR_TAIL: usize = 4096;
/// Longest excerpt of a bad stdout line in a finding.
const EXCERPT: usize = 120;

#[derive(Debug)]
enum Event {
    Message(Message),
    /// A stdout line that is not a JSON-RPC message, with why.
    Bad(String),
    Eof,
}

/// How the agent answered one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    Result(Value),
    Error(RpcError),
    /// Nothing within the deadline.
    NoResponse,
    /// The process closed stdout (exited) first; its exit code when known.
    Exited(Option<i32>),
}

pub(crate) struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    events: mpsc::UnboundedReceiver<Event>,
    next_id: i64,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    closed: bool,
    /// Protocol violations seen so far, in order.
    pub(crate) violations: Vec<String>,
    pub(crate) notifications: usize,
    /// Methods of requests the agent sent us (each answered with an error).
    pub(crate) agent_requests: Vec<String>,
    /// What isolation the agent got.
    pub(crate) isolation: sandbox::Isolation,
    /// Dropped with the agent, after `shutdown` waited for it.
    _registration: sandbox::Registration,
}

impl Agent {
    /// Start `program` with exactly `env`, in `cwd`, confined by [`sandbox::spawn`].
    pub(crate) fn spawn(
        program: &Path,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: &Path,
        confinement: &sandbox::Confinement,
    ) -> std::io::Result<Agent> {
        let mut command = Command::new(program);
        command
            .args(args)
            .env_clear()
            .envs(env)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let sandbox::Spawned {
            mut child,
            isolation,
            registration,
        } = sandbox::spawn(command, confinement)?;
        let (tx, events) = mpsc::unbounded_channel();
        let stdout = child.stdout.take().expect("piped stdout");
        tokio::spawn(read_stdout(stdout, tx));
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        tokio::spawn(read_stderr(stderr_pipe, stderr.clone()));
        Ok(Agent {
            stdin: child.stdin.take(),
            child,
            events,
            next_id: 0,
            stderr,
            closed: false,
            violations: Vec::new(),
            notifications: 0,
            agent_requests: Vec::new(),
            isolation,
            _registration: registration,
        })
    }

    /// Send `method` and wait up to `timeout` for the response with its id.
    pub(crate) async fn request(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Answer {
        let id = self.next_id;
        self.next_id += 1;
        let line = Message::Request {
            id: Id::Number(id),
            method: method.to_string(),
            params: Some(params),
        }
        .to_line();
        if !self.send(&line).await {
            return Answer::Exited(self.exit_code().await);
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.closed {
                return Answer::Exited(self.exit_code().await);
            }
            let event = match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Err(_) => return Answer::NoResponse,
                Ok(None) => Event::Eof,
                Ok(Some(event)) => event,
            };
            match event {
                Event::Eof => self.closed = true,
                Event::Bad(why) => self.violations.push(why),
                Event::Message(Message::Notification { .. }) => self.notifications += 1,
                Event::Message(Message::Request { id, method, .. }) => {
                    self.agent_requests.push(method.clone());
                    let _ = self
                        .send(&Message::method_not_found(id, &method).to_line())
                        .await;
                }
                Event::Message(Message::Response { id: got, outcome }) => {
                    if got == Id::Number(id) {
                        return match outcome {
                            Ok(result) => Answer::Result(result),
                            Err(error) => Answer::Error(error),
                        };
                    }
                    self.violations.push(format!(
                        "a response to id {got:?}, which no request of ours has"
                    ));
                }
            }
        }
    }

    async fn send(&mut self, line: &str) -> bool {
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        stdin.write_all(line.as_bytes()).await.is_ok() && stdin.flush().await.is_ok()
    }

    /// The exit code once the process is gone (waits briefly: stdout closes just before).
    async fn exit_code(&mut self) -> Option<i32> {
        match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(Ok(status)) => status.code(),
            _ => None,
        }
    }

    /// The last bytes the agent wrote to stderr, as text.
    pub(crate) fn stderr_tail(&self) -> String {
        let tail = self.stderr.lock().expect("stderr tail");
        let bytes: Vec<u8> = tail.iter().copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Close stdin, then end the agent and everything it started.
    pub(crate) async fn shutdown(mut self, token: &str, grace: Duration) {
        self.stdin = None;
        let pid = self.child.id();
        sandbox::terminate(pid, token, grace).await;
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
    }
}

async fn read_stdout(mut stdout: tokio::process::ChildStdout, tx: mpsc::UnboundedSender<Event>) {
    let mut lines = LineBuffer::new(DEFAULT_LINE_CAP);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let frames = match stdout.read(&mut buf).await {
            Ok(0) | Err(_) => {
                if let Some(frame) = lines.finish() {
                    let _ = tx.send(classify(frame));
                }
                let _ = tx.send(Event::Eof);
                return;
            }
            Ok(n) => lines.push(&buf[..n]),
        };
        for frame in frames {
            let blank = matches!(&frame, Frame::Line(l) if l.iter().all(u8::is_ascii_whitespace));
            if !blank && tx.send(classify(frame)).is_err() {
                return;
            }
        }
    }
}

fn classify(frame: Frame) -> Event {
    match frame {
        Frame::TooLong { seen } => Event::Bad(format!("a stdout line longer than {seen} bytes")),
        Frame::Line(line) => match Message::parse(&line) {
            Ok(message) => Event::Message(message),
            Err(why) => {
                let text = String::from_utf8_lossy(&line);
                let excerpt: String = text.chars().take(EXCERPT).collect();
                let more = if text.chars().count() > EXCERPT {
                    "…"
                } else {
                    ""
                };
                Event::Bad(format!("stdout line `{excerpt}{more}` is {why}"))
            }
        },
    }
}

async fn read_stderr(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<u8>>>) {
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            return;
        }
        let mut tail = tail.lock().expect("stderr tail");
        tail.extend(&buf[..n]);
        let excess = tail.len().saturating_sub(STDERR_TAIL);
        tail.drain(..excess);
    }
}
