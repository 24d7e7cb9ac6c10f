//! Speaking ACP to a launched agent, as an editor does: newline-delimited JSON-RPC on stdio,
//! responses matched by id, notifications skipped, the agent's own requests answered with a
//! JSON-RPC error (so it never waits on us), every non-JSON stdout line recorded as a
//! protocol violation, stdin kept open until the end, and the tail of stderr kept for the
//! report.
//!
//! In bounded memory whatever the agent prints, and never blocked by an agent that does not
//! read: a reader task turns stdout into lines of at most [`LINE_CAP`] bytes, parses only
//! lines of at most [`MAX_JSON_VALUES`] values, counts notifications and violations (the
//! first [`KEPT`] kept word for word), queues replies to the agent's requests for a writer
//! task (at most [`WRITE_BUDGET`] bytes pending; replies beyond are dropped and counted), and
//! hands responses to the session through a queue of [`RESPONSE_QUEUE`]: when the session is
//! not waiting, the reader stops reading and the agent blocks on its stdout. Every wait of
//! the session, writing a request included, ends at the request's deadline.
//!
//! So memory per agent has a fixed bound (docs/format.md#verify-and-matrix: 32 MiB, about 1 MiB in
//! practice): every queue between the agent and the checks is bounded, in entries or bytes, and
//! what a queue would drop is counted instead. Responses wait with back-pressure rather than being
//! dropped, so a noisy agent that answers still passes; writes go through a task of their own, so
//! a full stdin pipe blocks only that task, never `--timeout` or the clean-up.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use acp_registry_core::acp::{Frame, Id, LineBuffer, Message, RpcError};

use super::sandbox;

/// Longest stdout line read; a longer one is a violation and skipped. An answer to what
/// `verify` and `matrix` ask takes a few KiB (recorded ones: 1-2 KiB).
pub(crate) const LINE_CAP: usize = 1024 * 1024;
/// Most JSON values a line may hold to be parsed (recorded `initialize` answers: 60-80).
/// With [`LINE_CAP`] this bounds the parsed tree: one value costs at most 320 bytes beyond
/// the line's own (a `serde_json::Value` and the smallest array or map around it; measured
/// worst 250 bytes, nested one-element arrays), so a tree takes at most 1 + 2.5 MiB, where
/// an unchecked 1 MiB line of tiny values takes up to 130 MiB.
pub(crate) const MAX_JSON_VALUES: usize = 8192;
/// Protocol violations, and methods of the agent's requests, kept word for word; the rest
/// are counted.
pub(crate) const KEPT: usize = 20;
/// Parsed responses waiting for the session before the reader stops reading.
pub(crate) const RESPONSE_QUEUE: usize = 1;
/// Bytes of lines waiting to be written to the agent's stdin (one longer line may wait
/// alone); an error reply beyond is dropped, a request of ours waits until its deadline.
pub(crate) const WRITE_BUDGET: usize = 64 * 1024;
/// Bytes read from a pipe at once.
const READ_CHUNK: usize = 16 * 1024;
/// Bytes of stderr kept for the report.
const STDERR_TAIL: usize = 4096;
/// Longest excerpt of a bad stdout line, id or method name in a finding, in characters.
const EXCERPT: usize = 120;

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

/// What the agent did besides answering: counts, and the first [`KEPT`] of each list.
#[derive(Debug, Clone, Default)]
pub(crate) struct Record {
    /// The first protocol violations, in order.
    pub(crate) violations: Vec<String>,
    pub(crate) violations_total: usize,
    pub(crate) notifications: usize,
    /// Methods of the first requests the agent sent us (each answered with an error).
    pub(crate) agent_requests: Vec<String>,
    pub(crate) agent_requests_total: usize,
    /// Error replies dropped because the agent did not read its stdin.
    pub(crate) replies_dropped: usize,
    /// The slash commands of the latest `available_commands_update` (the first
    /// [`KEPT_COMMANDS`] names), so an editor's command menu can be checked.
    pub(crate) commands: Option<Vec<String>>,
}

/// How many slash command names a [`Record`] keeps.
pub(crate) const KEPT_COMMANDS: usize = 64;

/// The command names of a `session/update` announcing the agent's slash commands.
fn announced_commands(method: &str, params: Option<Value>) -> Option<Vec<String>> {
    use agent_client_protocol_schema::v1::{
        SessionNotification, SessionUpdate, CLIENT_METHOD_NAMES,
    };
    if method != CLIENT_METHOD_NAMES.session_update {
        return None;
    }
    match serde_json::from_value::<SessionNotification>(params?)
        .ok()?
        .update
    {
        SessionUpdate::AvailableCommandsUpdate(update) => Some(
            update
                .available_commands
                .iter()
                .take(KEPT_COMMANDS)
                .map(|c| excerpt(&c.name))
                .collect(),
        ),
        _ => None,
    }
}

impl Record {
    fn violation(&mut self, why: impl FnOnce() -> String) {
        if self.violations.len() < KEPT {
            self.violations.push(why());
        }
        self.violations_total += 1;
    }

    fn agent_request(&mut self, method: &str) {
        if self.agent_requests.len() < KEPT {
            self.agent_requests.push(excerpt(method));
        }
        self.agent_requests_total += 1;
    }
}

type Shared = Arc<Mutex<Record>>;

fn lock(record: &Shared) -> std::sync::MutexGuard<'_, Record> {
    // A panic elsewhere cannot leave a count half-written: use it as it is.
    record
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The queue to the writer task, bounded in bytes.
#[derive(Clone)]
struct Writer {
    lines: mpsc::UnboundedSender<(String, OwnedSemaphorePermit)>,
    budget: Arc<Semaphore>,
}

impl Writer {
    fn permits(line: &str) -> u32 {
        u32::try_from(line.len().clamp(1, WRITE_BUDGET)).unwrap_or(u32::MAX)
    }

    /// Queue `line` if the budget allows now; `false` when it was dropped.
    fn try_send(&self, line: String) -> bool {
        match self
            .budget
            .clone()
            .try_acquire_many_owned(Self::permits(&line))
        {
            Ok(permit) => self.lines.send((line, permit)).is_ok(),
            Err(_) => false,
        }
    }

    /// Queue `line` once the budget allows; `false` when the writer is gone.
    async fn send(&self, line: String) -> bool {
        match self
            .budget
            .clone()
            .acquire_many_owned(Self::permits(&line))
            .await
        {
            Ok(permit) => self.lines.send((line, permit)).is_ok(),
            Err(_) => false,
        }
    }
}

pub(crate) struct Agent {
    child: Child,
    writer: Writer,
    responses: mpsc::Receiver<(Id, Result<Value, RpcError>)>,
    tasks: [JoinHandle<()>; 3],
    next_id: i64,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    record: Shared,
    closed: bool,
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
        let (lines, queued) = mpsc::unbounded_channel();
        let writer = Writer {
            lines,
            budget: Arc::new(Semaphore::new(WRITE_BUDGET)),
        };
        let (answers, responses) = mpsc::channel(RESPONSE_QUEUE);
        let record = Shared::default();
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let tasks = [
            tokio::spawn(write_stdin(stdin, queued)),
            tokio::spawn(read_stdout(stdout, answers, record.clone(), writer.clone())),
            tokio::spawn(read_stderr(stderr_pipe, stderr.clone())),
        ];
        Ok(Agent {
            child,
            writer,
            responses,
            tasks,
            next_id: 0,
            stderr,
            record,
            closed: false,
            isolation,
            _registration: registration,
        })
    }

    /// Send `method` and wait up to `timeout` for the response with its id; writing the
    /// request counts against the same deadline.
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
        let deadline = tokio::time::Instant::now() + timeout;
        match tokio::time::timeout_at(deadline, self.writer.send(line)).await {
            Err(_) => return Answer::NoResponse,
            Ok(false) => return Answer::Exited(self.exit_code().await),
            Ok(true) => {}
        }
        loop {
            if self.closed {
                return Answer::Exited(self.exit_code().await);
            }
            match tokio::time::timeout_at(deadline, self.responses.recv()).await {
                Err(_) => return Answer::NoResponse,
                Ok(None) => self.closed = true,
                Ok(Some((got, outcome))) if got == Id::Number(id) => {
                    return match outcome {
                        Ok(result) => Answer::Result(result),
                        Err(error) => Answer::Error(error),
                    };
                }
                Ok(Some((got, _))) => lock(&self.record).violation(|| {
                    let got = excerpt(&format!("{got:?}"));
                    format!("a response to id {got}, which no request of ours has")
                }),
            }
        }
    }

    /// The exit code once the process is gone (waits briefly: stdout closes just before).
    async fn exit_code(&mut self) -> Option<i32> {
        match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(Ok(status)) => status.code(),
            _ => None,
        }
    }

    /// What the agent did so far besides answering.
    pub(crate) fn record(&self) -> Record {
        lock(&self.record).clone()
    }

    /// The last bytes the agent wrote to stderr, as text.
    pub(crate) fn stderr_tail(&self) -> String {
        let tail = self
            .stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let bytes: Vec<u8> = tail.iter().copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Close stdin (even with a write blocked on a full pipe), then end the agent and
    /// everything it started.
    pub(crate) async fn shutdown(self, token: &str, grace: Duration) {
        let Agent {
            mut child,
            tasks,
            _registration: registration,
            ..
        } = self;
        tasks[0].abort();
        let pid = child.id();
        sandbox::terminate(pid, token, grace).await;
        let _ = child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
        for task in &tasks[1..] {
            task.abort();
        }
        drop(registration);
    }
}

/// Write queued lines to the agent's stdin, in order, until the queue or the pipe closes.
async fn write_stdin(
    mut stdin: ChildStdin,
    mut queued: mpsc::UnboundedReceiver<(String, OwnedSemaphorePermit)>,
) {
    while let Some((line, _permit)) = queued.recv().await {
        if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

async fn read_stdout(
    mut stdout: tokio::process::ChildStdout,
    answers: mpsc::Sender<(Id, Result<Value, RpcError>)>,
    record: Shared,
    writer: Writer,
) {
    let mut lines = LineBuffer::new(LINE_CAP);
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let (frames, end) = match stdout.read(&mut buf).await {
            Ok(0) | Err(_) => (lines.finish().into_iter().collect(), true),
            Ok(n) => (lines.push(&buf[..n]), false),
        };
        for frame in frames {
            let response = match frame {
                Frame::TooLong { seen } => {
                    lock(&record).violation(|| format!("a stdout line longer than {seen} bytes"));
                    continue;
                }
                Frame::Line(line) => take(&line, &record, &writer),
            };
            // Waits while the session is not reading: back-pressure on the agent.
            if let Some(response) = response {
                if answers.send(response).await.is_err() {
                    return;
                }
            }
        }
        if end {
            return;
        }
    }
}

/// Deal with one stdout line; a response is returned for the session.
fn take(line: &[u8], record: &Shared, writer: &Writer) -> Option<(Id, Result<Value, RpcError>)> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let values = json_values(line);
    if values > MAX_JSON_VALUES {
        lock(record).violation(|| {
            format!("a stdout line of more than {MAX_JSON_VALUES} JSON values ({values})")
        });
        return None;
    }
    match Message::parse(line) {
        Ok(Message::Response { id, outcome }) => return Some((id, outcome)),
        Ok(Message::Notification { method, params }) => {
            let commands = announced_commands(&method, params);
            let mut record = lock(record);
            record.notifications += 1;
            if commands.is_some() {
                record.commands = commands;
            }
        }
        Ok(Message::Request { id, method, .. }) => {
            lock(record).agent_request(&method);
            let reply = Message::method_not_found(id, &excerpt(&method)).to_line();
            if !writer.try_send(reply) {
                lock(record).replies_dropped += 1;
            }
        }
        Err(why) => lock(record).violation(|| {
            let text = String::from_utf8_lossy(line);
            format!("stdout line `{}` is {why}", excerpt(&text))
        }),
    }
    None
}

/// How many JSON values `line` holds at most: one, and one more for each `[`, `{`, `,` and
/// `:` outside strings (every value but the first follows one). Counted before parsing, so
/// a line of tiny values is refused without building its tree.
///
/// Not `acp_registry_core::fs::ValueBudget` (an exact count by a parser): this bound takes
/// any bytes (an agent's line may be neither UTF-8 nor JSON, and is then reported with its
/// own message), never fails, allocates nothing and gives the total to report.
pub(crate) fn json_values(line: &[u8]) -> usize {
    let (mut values, mut in_string, mut escaped) = (1, false, false);
    for &byte in line {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b'[' | b'{' | b',' | b':' => values += 1,
                _ => {}
            }
        }
    }
    values
}

/// At most [`EXCERPT`] characters of `text`, with `…` when cut.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

async fn read_stderr(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<u8>>>) {
    let mut buf = vec![0u8; READ_CHUNK];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            return;
        }
        let mut tail = tail
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        tail.extend(&buf[..n]);
        let excess = tail.len().saturating_sub(STDERR_TAIL);
        tail.drain(..excess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_values_counts_every_value_and_nothing_inside_strings() {
        assert_eq!(json_values(b"0"), 1);
        assert_eq!(json_values(br#"{"a":[1,2,{}]}"#), 7);
        assert_eq!(json_values(br#"["[{,:", "\"[,"]"#), 3);
        let tiny = format!("[{}0]", "0,".repeat(MAX_JSON_VALUES));
        assert!(json_values(tiny.as_bytes()) > MAX_JSON_VALUES);
    }

    #[test]
    fn the_first_violations_are_kept_and_the_rest_counted() {
        let (lines, _queued) = mpsc::unbounded_channel();
        let writer = Writer {
            lines,
            budget: Arc::new(Semaphore::new(WRITE_BUDGET)),
        };
        let record = Shared::default();
        for n in 0..1000 {
            assert!(take(format!("log line {n}").as_bytes(), &record, &writer).is_none());
        }
        let tiny = format!("[{}0]", "0,".repeat(MAX_JSON_VALUES));
        assert!(take(tiny.as_bytes(), &record, &writer).is_none());
        let record = record.lock().unwrap();
        assert_eq!(record.violations.len(), KEPT);
        assert_eq!(record.violations_total, 1001);
        assert!(record.violations[0].starts_with("stdout line `log line 0` is not JSON"));
    }

    #[test]
    fn replies_beyond_the_write_budget_are_dropped_and_counted() {
        let (lines, _queued) = mpsc::unbounded_channel();
        let writer = Writer {
            lines,
            budget: Arc::new(Semaphore::new(WRITE_BUDGET)),
        };
        let record = Shared::default();
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file"}"#;
        for _ in 0..5000 {
            assert!(take(request, &record, &writer).is_none());
        }
        let record = record.lock().unwrap();
        assert_eq!(record.agent_requests_total, 5000);
        assert_eq!(record.agent_requests.len(), KEPT);
        let reply = Message::method_not_found(Id::Number(1), "fs/read_text_file").to_line();
        assert_eq!(
            record.replies_dropped,
            5000 - WRITE_BUDGET / reply.len(),
            "replies are queued until the budget is spent"
        );
    }
}
