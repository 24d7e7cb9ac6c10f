//! `append` (docs/collab-protocol.md#append): the guarded, serialised append of one event.
//!
//! Appends are serialised (`docs/collab-protocol.md#concurrency`): `append` holds the
//! exclusive lock on `.acp-collab.lock` (`events::AppendLock`) from reading `protocol.json`
//! to rewriting it, writes the event as one `write` followed by an fsync, and replaces
//! `protocol.json` atomically (`protocol::write_atomic`), removing a killed writer's leftover
//! temporary file under the lock first.
//!
//! The stored state is never trusted: the whole log is replayed (`state`) with the new event
//! last, and the `currentPhase`, `proposalOwner` and `waitingFor` of `protocol.json` are
//! rewritten from the result, as a mirror for readers.
//!
//! Past acceptances are not re-checked: only the acceptance being appended is checked against
//! the current `readiness.md`
//! (`docs/collab-protocol.md#past-acceptances-are-not-re-checked`).

use std::path::Path;

use serde_json::{json, Value};

use crate::error::{CollabError, FlagProblem};
use crate::events::{append_line, format_event_line, read_events, AppendLock, Event, EventLog};
use crate::guide::{self, Invocation};
use crate::markdown::{conclusion_errors, snapshot, unchecked_gates, with_snapshot, Readiness};
use crate::paths;
use crate::protocol;
use crate::pyfmt::{self, as_int};
use crate::spec::{is_sha256, CONCLUSION_FILE, EVENTS, READINESS_FILE};
use crate::state::{replay, State};
use acp_registry_core::time::utc_now;

/// The `append` flags: the library's options and the binary's arguments at once (the doc
/// comments are the `--help` texts).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AppendOptions {
    /// The collaboration folder
    #[arg(long)]
    pub folder: String,
    /// The sender
    #[arg(long)]
    pub participant: String,
    /// The event to record
    #[arg(long, value_parser = EVENTS)]
    pub event: String,
    /// One line saying what this event is about
    #[arg(long)]
    pub summary: String,
    /// The document the event concerns (a collaboration file or a deliverable path)
    #[arg(long)]
    pub doc: Option<String>,
    /// The seq of an earlier event this one answers
    #[arg(long)]
    pub reply_to: Option<i64>,
    /// Which deliverable a deliverable event is about
    #[arg(long, value_parser = ["primary", "supporting"])]
    pub role: Option<String>,
    /// SHA-256 of the deliverable being frozen (required by `deliverable_frozen`).
    // An attribute, not the doc comment: the help text names the event without backticks.
    #[arg(
        long,
        help = "SHA-256 of the deliverable being frozen (required by deliverable_frozen)"
    )]
    pub sha256: Option<String>,
}

/// A successful append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The seq the event got.
    pub seq: i64,
    /// The event appended.
    pub event: String,
    /// The command the sender runs next (its `next`, `wait` or `validate`), in the form the
    /// append was run in.
    pub then: String,
}

impl Appended {
    /// The published stdout line (last step of docs/collab-protocol.md#append).
    pub fn message(&self) -> String {
        format!("appended seq {}: {}", self.seq, self.event)
    }

    /// What `append` prints: the published line, then `run: «the command to run next»`.
    pub fn report(&self) -> String {
        format!("{}\nrun: {}\n", self.message(), self.then)
    }
}

/// Reads a protocol text file for a gate check; absence reads as empty.
fn read_folder_text(folder: &Path, name: &str) -> Result<String, CollabError> {
    Ok(paths::read_text(folder, name)?.unwrap_or_default())
}

fn problem(flag: &'static str, message: &str, hint: String) -> FlagProblem {
    FlagProblem {
        flag,
        message: message.to_owned(),
        hint,
    }
}

/// Every missing or invalid `--reply-to`, `--role`, `--doc` and `--sha256`, in the order the
/// published script checks them (steps 4 and 5 of docs/collab-protocol.md#append), so the
/// first message is the one it prints.
fn flag_problems(
    opts: &AppendOptions,
    protocol: &protocol::Protocol,
    events: &[Event],
) -> Result<Vec<FlagProblem>, CollabError> {
    let mut problems = Vec::new();
    let last = events.last().map(|e| {
        let field = |k| pyfmt::py_str(e.get(k));
        format!(
            "seq {} ({} from {})",
            field("seq"),
            field("event"),
            field("from")
        )
    });
    let answer = |last: &str| {
        format!("pass --reply-to N, the seq of the event this one answers; the last is {last}")
    };
    match (opts.reply_to, &last) {
        (Some(n), Some(last)) if !events.iter().any(|e| as_int(e.get("seq")) == Some(n)) => {
            problems.push(problem(
                "reply-to",
                "reply_to must point to an existing event",
                answer(last),
            ));
        }
        (Some(_), None) => problems.push(problem(
            "reply-to",
            "reply_to must point to an existing event",
            "the log is empty: leave --reply-to out".into(),
        )),
        (None, Some(last)) => problems.push(problem(
            "reply-to",
            "reply_to is required after initialized",
            answer(last),
        )),
        _ => {}
    }
    if opts.event.starts_with("deliverable_") {
        deliverable_problems(opts, protocol, &mut problems)?;
    }
    Ok(problems)
}

fn deliverable_problems(
    opts: &AppendOptions,
    protocol: &protocol::Protocol,
    problems: &mut Vec<FlagProblem>,
) -> Result<(), CollabError> {
    let doc = opts.doc.as_deref().filter(|d| !d.is_empty());
    let role = opts.role.as_deref().filter(|r| !r.is_empty());
    let primary = protocol.primary_ref().unwrap_or_default();
    let declared = |role: Option<&str>| match role {
        Some("supporting") => match protocol.supporting_refs() {
            refs if refs.is_empty() => {
                "no supporting deliverable is declared in protocol.json".to_owned()
            }
            refs => format!("pass --doc with one of: {}", refs.join(", ")),
        },
        _ => format!("the primary deliverable is --doc {primary}"),
    };
    if role.is_none() {
        let hint =
            "pass --role primary (or --role supporting for a declared supporting deliverable)";
        problems.push(problem(
            "role",
            "deliverable events require role",
            hint.into(),
        ));
    }
    let Some(doc) = doc else {
        problems.push(problem(
            "doc",
            "deliverable events require doc",
            declared(role),
        ));
        return Ok(());
    };
    let Some(role) = role else { return Ok(()) };
    let target = match protocol.resolve_doc(role, doc) {
        Ok(target) => target,
        Err(message) => {
            problems.push(problem("doc", &message, declared(Some(role))));
            return Ok(());
        }
    };
    if opts.event != "deliverable_frozen" {
        return Ok(());
    }
    let how = format!(
        "64 lowercase hex characters: `sha256sum {0}` or `shasum -a 256 {0}`",
        target.rel
    );
    let Some(sha) = opts.sha256.as_deref().filter(|s| is_sha256(s)) else {
        let hint = format!("pass --sha256 with the file's SHA-256, {how}");
        problems.push(problem(
            "sha256",
            "deliverable_frozen requires sha256",
            hint,
        ));
        return Ok(());
    };
    match paths::sha256_file(&target.base, &target.rel).map_err(CollabError::from)? {
        None => problems.push(problem(
            "doc",
            "deliverable_frozen doc does not exist",
            format!("write {doc} before freezing it"),
        )),
        Some(actual) if actual != sha => problems.push(problem(
            "sha256",
            "deliverable_frozen sha256 does not match current file",
            format!("{doc} now hashes to {actual}; freeze the content you mean to freeze"),
        )),
        Some(_) => {}
    }
    Ok(())
}

/// Appends one event, holding the folder's lock from the first read to the
/// `protocol.json` rewrite (docs/collab-protocol.md#concurrency); refusals name commands in
/// `acp-collab` form.
pub fn append(opts: &AppendOptions) -> Result<Appended, CollabError> {
    append_with(opts, &Invocation::Binary)
}

/// [`append`], naming the commands of a refusal in the given form.
pub fn append_with(opts: &AppendOptions, invocation: &Invocation) -> Result<Appended, CollabError> {
    let folder = paths::resolve_folder(&opts.folder);
    // The lock needs the folder.
    if let Some(missing) = protocol::missing_folder(&folder) {
        return Err(missing);
    }
    if !folder.is_dir() {
        return Err(CollabError::NotACollaboration(folder));
    }
    let _lock = AppendLock::acquire(&folder)?;
    protocol::remove_leftover_temps(&folder);

    let mut protocol = protocol::load_or_fail(&folder)?;
    let name = opts.event.as_str();
    if !EVENTS.contains(&name) {
        return Err(CollabError::UnknownEvent(name.to_owned()));
    }
    let participants = protocol.participants();
    if !participants.contains(&opts.participant) {
        return Err(CollabError::UnknownParticipant(opts.participant.clone()));
    }
    let log = read_sound_log(&folder)?;
    let problems = flag_problems(opts, &protocol, &log.events)?;
    if !problems.is_empty() {
        return Err(CollabError::Flags(problems));
    }
    let missing_final_newline = log.missing_final_newline;
    let mut all = log.events;
    let seq = next_seq(&all);
    all.push(payload(opts, seq));
    let state = check_transition(&folder, &protocol, &participants, opts, &all)
        .map_err(|e| with_recovery(e, &folder, &participants, opts, &all, invocation))?;
    record_snapshot(&folder, opts, &all)?;
    let payload = all.last().expect("payload was pushed");
    append_line(&folder, &format_event_line(payload), missing_final_newline)?;
    if let Some(phase) = &state.phase {
        let map = &mut protocol.map;
        map.insert("currentPhase".into(), json!(phase));
        map.insert("proposalOwner".into(), json!(state.owner));
        map.insert("waitingFor".into(), json!(state.waiting_for));
        map.insert("updatedAt".into(), json!(utc_now()));
        protocol.save()?;
    }
    Ok(Appended {
        seq,
        event: name.to_owned(),
        then: guide::turn_command(
            invocation,
            &folder,
            &opts.participant,
            state.phase.as_deref(),
            &state.waiting_for,
        ),
    })
}

/// Fills the snapshot line of `readiness.md` (docs/collab-protocol.md#append, step 9), before
/// the event is written: a primary `deliverable_frozen` writes its sha256 there, and
/// `readiness_passed` and `completed` write the frozen sha256 where the line is empty (an
/// editor may have saved an older copy over it). A missing `readiness.md` is left to
/// `validate`.
fn record_snapshot(folder: &Path, opts: &AppendOptions, all: &[Event]) -> Result<(), CollabError> {
    let text_of = |e: &Event, key: &str| e.get(key).and_then(Value::as_str).map(str::to_owned);
    let freeze = opts.event == "deliverable_frozen";
    if !(freeze && opts.role.as_deref() == Some("primary")
        || matches!(opts.event.as_str(), "readiness_passed" | "completed"))
    {
        return Ok(());
    }
    // For a freeze, the event being appended (the last one); else the earlier freeze.
    let frozen = all.iter().rev().find(|e| {
        text_of(e, "event").as_deref() == Some("deliverable_frozen")
            && text_of(e, "role").as_deref() == Some("primary")
    });
    let Some(sha) = frozen
        .and_then(|e| text_of(e, "sha256"))
        .filter(|s| is_sha256(s))
    else {
        return Ok(());
    };
    let Some(text) = paths::read_text(folder, READINESS_FILE)? else {
        return Ok(());
    };
    let current = snapshot(&text);
    let keep = current.as_deref() == Some(sha.as_str())
        || (!freeze && current.is_some_and(|v| !v.is_empty()));
    if keep {
        return Ok(());
    }
    paths::check_no_symlink(folder, READINESS_FILE)?;
    let path = folder.join(READINESS_FILE);
    acp_registry_core::fs::atomic::write(&path, with_snapshot(&text, &sha).as_bytes())
        .map_err(|source| CollabError::Write { path, source })
}

/// The log, refused when it has read errors or ends in an incomplete line.
fn read_sound_log(folder: &Path) -> Result<EventLog, CollabError> {
    let log = read_events(folder)?;
    if !log.errors.is_empty() {
        return Err(CollabError::Log(log.errors));
    }
    if let Some(tail) = &log.incomplete_tail {
        let head: Vec<u8> = tail.bytes().take(40).collect();
        return Err(CollabError::IncompleteLine(
            String::from_utf8_lossy(&head).into_owned(),
        ));
    }
    Ok(log)
}

/// One above the highest integer seq in the log.
fn next_seq(events: &[Event]) -> i64 {
    events
        .iter()
        .filter_map(|e| e.get("seq").and_then(Value::as_i64))
        .max()
        .unwrap_or(0)
        + 1
}

/// The new event, its members in the documented order; blank flags are left out.
fn payload(opts: &AppendOptions, seq: i64) -> Event {
    let doc = opts.doc.as_deref().filter(|d| !d.is_empty());
    let role = opts.role.as_deref().filter(|r| !r.is_empty());
    let sha = opts.sha256.as_deref().filter(|s| !s.is_empty());
    let mut payload = Event::default();
    payload.insert("seq", json!(seq));
    payload.insert("from", json!(opts.participant));
    payload.insert("event", json!(opts.event));
    payload.insert("at", json!(utc_now()));
    payload.insert("summary", json!(opts.summary));
    if let Some(d) = doc {
        payload.insert("doc", json!(d));
    }
    if let Some(r) = opts.reply_to {
        payload.insert("reply_to", json!(r));
    }
    if let Some(r) = role {
        payload.insert("role", json!(r));
    }
    if let Some(s) = sha {
        payload.insert("sha256", json!(s));
    }
    payload
}

/// Replays the log with the new event last, then its readiness gates (step 10) and, for
/// `completed`, the completion gates and the conclusion (step 11); returns the new state.
fn check_transition(
    folder: &Path,
    protocol: &protocol::Protocol,
    participants: &[String],
    opts: &AppendOptions,
    all: &[Event],
) -> Result<State, Refusal> {
    let name = opts.event.as_str();
    let needs_readiness = matches!(
        name,
        "question_classified" | "decision_accepted" | "readiness_passed" | "completed"
    );
    let readiness_text = if needs_readiness {
        read_folder_text(folder, READINESS_FILE)?
    } else {
        String::new()
    };
    let readiness = Readiness::scan(&readiness_text);
    let (state, errors) = replay(participants, all, Some(&readiness));
    if !errors.is_empty() {
        return Err(Refusal::Turn(errors.join("; ")));
    }
    if name == "question_classified" {
        let open = readiness.gate_problems(BEFORE_CLASSIFICATION);
        if !open.is_empty() {
            return Err(Refusal::Classification(open.join("; "), readiness_text));
        }
    }
    let mut gate_errors = Vec::new();
    if needs_readiness && name != "question_classified" {
        gate_errors.extend(readiness.gate_problems(READINESS_FIRST));
    }
    if matches!(name, "readiness_passed" | "completed") && !readiness.ready {
        gate_errors.push("readiness.md must check 'Ready to implement' first");
    }
    if !gate_errors.is_empty() {
        return Err(CollabError::Readiness(gate_errors).into());
    }
    if name == "completed" {
        check_completion(folder, protocol, opts, &readiness_text)?;
    }
    Ok(state)
}

/// The readiness gate messages of a classification: after `question_classified` every
/// participant is asked to accept, and `decision_accepted` refuses these same items, so a
/// classification that leaves one would strand them.
const BEFORE_CLASSIFICATION: [&str; 3] = [
    "blocking readiness items must be cleared before question_classified",
    "unresolved readiness questions must be classified before question_classified",
    "deferred_nonblocking readiness items require a reason before question_classified",
];

/// A refusal of [`check_transition`] that [`with_recovery`] completes with what to run.
enum Refusal {
    /// The replay refused the event: out of turn, or not the next step.
    Turn(String),
    /// `question_classified` with open readiness items (the messages, the readiness text).
    Classification(String, String),
    /// Any other refusal, complete as it is.
    Done(CollabError),
}

impl From<CollabError> for Refusal {
    fn from(e: CollabError) -> Self {
        Refusal::Done(e)
    }
}

/// Completes a refusal with the way forward: whose turn it is and the `wait` (or `next`)
/// command, or which readiness items to classify and the command to run again.
fn with_recovery(
    refusal: Refusal,
    folder: &Path,
    participants: &[String],
    opts: &AppendOptions,
    all: &[Event],
    invocation: &Invocation,
) -> CollabError {
    let (message, hint) = match refusal {
        Refusal::Done(e) => return e,
        Refusal::Turn(m) => {
            let history = &all[..all.len().saturating_sub(1)];
            let (state, _) = replay(participants, history, None);
            (m, turn_hint(&state, folder, opts, invocation))
        }
        Refusal::Classification(m, readiness_text) => {
            let items = Readiness::open_items(&readiness_text);
            let again = append_command(invocation, folder, opts);
            let hint = format!(
                "open in readiness.md: {}; mark each question `[resolved]` or \
                 `[deferred_nonblocking] … Reason: …` (clear a blocker, or append blocked to \
                 stop), then run again: {again}",
                items.join("; ")
            );
            (m, hint)
        }
    };
    CollabError::Refused { message, hint }
}

/// Whose turn it is, in which phase, and what the sender should run instead.
fn turn_hint(
    state: &State,
    folder: &Path,
    opts: &AppendOptions,
    invocation: &Invocation,
) -> String {
    let phase = state.phase.as_deref().unwrap_or("None");
    let me = opts.participant.as_str();
    let next = guide::next_command(invocation, folder, me);
    if matches!(phase, "completed" | "blocked") {
        return format!("the collaboration is {phase}; run: {next}");
    }
    if state.waiting_for.iter().any(|w| w == me) {
        return format!(
            "it is your turn in phase {phase}, but {} is not the next step; for the exact \
             command run: {next}",
            opts.event
        );
    }
    let whose = if state.waiting_for.is_empty() {
        "nobody's".to_owned()
    } else {
        format!("{}'s", state.waiting_for.join(", "))
    };
    format!(
        "it is {whose} turn in phase {phase}, not yours; to wait for yours run: {}",
        guide::wait_command(invocation, folder, me)
    )
}

/// The readiness gate messages of an append.
const READINESS_FIRST: [&str; 3] = [
    "blocking readiness items must be cleared first",
    "unresolved readiness questions must be classified first",
    "deferred_nonblocking readiness items require a reason",
];

/// `completed`: the doc, every completion gate checked, a complete conclusion.
fn check_completion(
    folder: &Path,
    protocol: &protocol::Protocol,
    opts: &AppendOptions,
    readiness_text: &str,
) -> Result<(), CollabError> {
    if opts.doc.as_deref().filter(|d| !d.is_empty()) != Some(CONCLUSION_FILE) {
        return Err(CollabError::CompletedWithoutConclusion);
    }
    let unchecked = unchecked_gates(readiness_text, &protocol.completion_gate_texts());
    if !unchecked.is_empty() {
        return Err(CollabError::UncheckedGates(unchecked));
    }
    let conclusion = read_folder_text(folder, CONCLUSION_FILE)?;
    let primary_ref = protocol.primary_ref().unwrap_or_default();
    let errors = conclusion_errors(&conclusion, &primary_ref);
    if !errors.is_empty() {
        return Err(CollabError::Conclusion(errors));
    }
    Ok(())
}

/// The `append` command `opts` describe, every flag given, in the invocation's form: the
/// command to run again once a refusal's cause is fixed.
pub(crate) fn append_command(
    invocation: &Invocation,
    folder: &Path,
    opts: &AppendOptions,
) -> String {
    let mut cmd = format!(
        "{} {} --event {}",
        invocation.program("append", "append_event"),
        guide::folder_args(folder, &opts.participant),
        guide::quote(&opts.event)
    );
    if let Some(n) = opts.reply_to {
        cmd.push_str(&format!(" --reply-to {n}"));
    }
    let flags = [
        ("role", &opts.role),
        ("doc", &opts.doc),
        ("sha256", &opts.sha256),
    ];
    for (flag, value) in flags {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            cmd.push_str(&format!(" --{flag} {}", guide::quote(v)));
        }
    }
    cmd.push_str(&format!(" --summary {}", guide::quote(&opts.summary)));
    cmd
}
