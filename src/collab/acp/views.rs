//! Read-only views for `/status` and `/log`, with the names and signatures of the
//! `collab::status` module of the `acp-collab status`/`log` work (not on this branch yet):
//! when both meet, this file goes and `super` imports `crate::collab::status` instead.

use std::path::PathBuf;

use serde_json::Value;

use crate::collab::events::{read_events, Event};
use crate::collab::next::stored_waiting;
use crate::collab::pyfmt::py_str;
use crate::collab::{paths, protocol, CollabError};

/// Where a collaboration stands, from `protocol.json`'s state mirror and the log.
#[derive(Debug, Clone)]
pub struct Status {
    pub folder: PathBuf,
    pub phase: Option<String>,
    pub owner: Option<String>,
    pub waiting_for: Vec<String>,
    pub participants: Vec<String>,
    pub event_count: usize,
}

/// Reads the folder's status; a missing or unreadable `protocol.json` or log is an error.
pub fn status(folder: &str) -> Result<Status, CollabError> {
    let folder = paths::resolve_folder(folder);
    let protocol = protocol::load_or_fail(&folder)?;
    let events = events_or_fail(&folder)?;
    let text = |key: &str| {
        protocol
            .map
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    Ok(Status {
        phase: text("currentPhase"),
        owner: text("proposalOwner"),
        waiting_for: stored_waiting(&protocol),
        participants: protocol.participants(),
        event_count: events.len(),
        folder,
    })
}

impl Status {
    pub fn render_text(&self) -> String {
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "None".into());
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".into()
            } else {
                v.join(", ")
            }
        };
        format!(
            "folder: {}\nphase: {}\nproposal owner: {}\nwaiting for: {}\nparticipants: {}\nevents: {}\n",
            self.folder.display(),
            opt(&self.phase),
            opt(&self.owner),
            list(&self.waiting_for),
            list(&self.participants),
            self.event_count
        )
    }
}

fn events_or_fail(folder: &std::path::Path) -> Result<Vec<Event>, CollabError> {
    let log = read_events(folder)?;
    if !log.errors.is_empty() {
        return Err(CollabError::Protocol(log.errors.join("; ")));
    }
    Ok(log.events)
}

/// The events with a seq above `since` (all with `None`), in log order.
pub fn log(folder: &str, since: Option<i64>) -> Result<Vec<Event>, CollabError> {
    let folder = paths::resolve_folder(folder);
    protocol::load_or_fail(&folder)?;
    let events = events_or_fail(&folder)?;
    let seq = |e: &Event| e.get("seq").and_then(Value::as_i64);
    Ok(events
        .into_iter()
        .filter(|e| since.is_none_or(|n| seq(e).is_none_or(|s| s > n)))
        .collect())
}

/// One line per event: `seq N  at  from  event: summary`.
pub fn render_log_text(events: &[Event]) -> String {
    let field = |e: &Event, k: &str| py_str(e.get(k));
    events
        .iter()
        .map(|e| {
            format!(
                "seq {}  {}  {}  {}: {}\n",
                field(e, "seq"),
                field(e, "at"),
                field(e, "from"),
                field(e, "event"),
                field(e, "summary")
            )
        })
        .collect()
}
