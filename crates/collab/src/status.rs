//! `status` and `log` (docs/collab-protocol.md#status-and-log): read-only views of a folder
//! for people and agents: where the collaboration stands, and the event log.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::error::CollabError;
use crate::events::{read_events, Event};
use crate::markdown::Readiness;
use crate::next::stored_waiting;
use crate::paths;
use crate::protocol;
use crate::pyfmt::{as_int, join_or_none, py_str};
use crate::spec::READINESS_FILE;
use acp_registry_core::escape;

/// How many of the latest events `status` shows.
pub(crate) const LAST_EVENTS: usize = 5;

/// Where a collaboration stands, from the stored state mirror and the files.
#[derive(Debug, Clone)]
pub struct Status {
    /// The collaboration folder, resolved.
    pub folder: PathBuf,
    /// `objective`.
    pub objective: String,
    /// `currentPhase`.
    pub phase: Option<String>,
    /// `proposalOwner`.
    pub owner: Option<String>,
    /// `waitingFor`.
    pub waiting_for: Vec<String>,
    /// The participant ids.
    pub participants: Vec<String>,
    /// The primary deliverable's ref.
    pub primary: Option<String>,
    /// How many events the log holds.
    pub event_count: usize,
    /// The latest events, oldest first.
    pub last_events: Vec<Event>,
    /// Readiness items that keep it open ([`Readiness::open_items`]).
    pub open_questions: Vec<String>,
}

fn load_log(folder: &std::path::Path) -> Result<Vec<Event>, CollabError> {
    let log = read_events(folder)?;
    if !log.errors.is_empty() {
        return Err(CollabError::Log(log.errors));
    }
    Ok(log.events)
}

/// Reads the folder's status. Failures are those of `next` (`error: …`, exit 2).
pub fn status(folder: &str) -> Result<Status, CollabError> {
    let folder = paths::resolve_folder(folder);
    let protocol = protocol::load_or_fail(&folder)?;
    let events = load_log(&folder)?;
    let readiness = paths::read_text(&folder, READINESS_FILE)?.unwrap_or_default();
    let text = |key: &str| {
        protocol
            .map
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let start = events.len().saturating_sub(LAST_EVENTS);
    Ok(Status {
        objective: text("objective").unwrap_or_default(),
        phase: text("currentPhase"),
        owner: text("proposalOwner"),
        waiting_for: stored_waiting(&protocol),
        participants: protocol.participants(),
        primary: protocol.primary_ref(),
        event_count: events.len(),
        last_events: events[start..].to_vec(),
        open_questions: Readiness::open_items(&readiness),
        folder,
    })
}

/// One event as a log line: `seq N  at  from  event (details): summary`.
fn event_line(e: &Event) -> String {
    let field = |k: &str| py_str(e.get(k));
    let mut details = Vec::new();
    if let Some(r) = e.get("reply_to").filter(|v| !v.is_null()) {
        details.push(format!("reply to {}", py_str(Some(r))));
    }
    for key in ["role", "doc", "sha256"] {
        if let Some(v) = e.get(key) {
            details.push(format!("{key} {}", py_str(Some(v))));
        }
    }
    let details = if details.is_empty() {
        String::new()
    } else {
        format!(" ({})", details.join(", "))
    };
    format!(
        "seq {}  {}  {}  {}{details}: {}",
        field("seq"),
        field("at"),
        field("from"),
        field("event"),
        field("summary")
    )
}

impl Status {
    /// The report for people, one `label: value` line each, escaped for the terminal.
    pub fn render_text(&self) -> String {
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "None".to_owned());
        let mut lines = vec![
            format!("folder: {}", self.folder.display()),
            format!("objective: {}", self.objective),
            format!("phase: {}", opt(&self.phase)),
            format!("proposal owner: {}", opt(&self.owner)),
            format!("waiting for: {}", join_or_none(&self.waiting_for)),
            format!("participants: {}", join_or_none(&self.participants)),
            format!("primary deliverable: {}", opt(&self.primary)),
            format!("events: {}", self.event_count),
            "last events:".to_owned(),
        ];
        lines.extend(
            self.last_events
                .iter()
                .map(|e| format!("  {}", event_line(e))),
        );
        lines.push(format!("open questions: {}", self.open_questions.len()));
        lines.extend(self.open_questions.iter().map(|q| format!("  {q}")));
        let mut text = lines
            .iter()
            .map(|l| escape::terminal(l).into_owned())
            .collect::<Vec<_>>()
            .join("\n");
        text.push('\n');
        text
    }

    /// The report as one JSON object (version 1).
    pub fn render_json(&self) -> String {
        let doc = json!({
            "version": 1,
            "folder": self.folder.display().to_string(),
            "objective": self.objective,
            "phase": self.phase,
            "proposal_owner": self.owner,
            "waiting_for": self.waiting_for,
            "participants": self.participants,
            "primary_deliverable": self.primary,
            "event_count": self.event_count,
            "last_events": self.last_events,
            "open_questions": self.open_questions,
        });
        format!("{doc}\n")
    }
}

/// The events with a seq above `since` (all with `None`), in log order.
pub fn log(folder: &str, since: Option<i64>) -> Result<Vec<Event>, CollabError> {
    let folder = paths::resolve_folder(folder);
    protocol::load_or_fail(&folder)?;
    let events = load_log(&folder)?;
    Ok(events
        .into_iter()
        .filter(|e| since.is_none_or(|n| as_int(e.get("seq")).is_none_or(|s| s > n)))
        .collect())
}

/// `log`'s text form: one line per event.
pub(crate) fn render_log_text(events: &[Event]) -> String {
    lines_of(events, event_line)
}

/// `log --format json`: JSON Lines, one object per event with every field it holds.
pub(crate) fn render_log_json(events: &[Event]) -> String {
    lines_of(events, |e| e.to_value().to_string())
}

/// One line per event, each ending in `\n`.
fn lines_of(events: &[Event], line: impl Fn(&Event) -> String) -> String {
    events.iter().fold(String::new(), |mut out, e| {
        out.push_str(&line(e));
        out.push('\n');
        out
    })
}
