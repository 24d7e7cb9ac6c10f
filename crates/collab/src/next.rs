//! `next` (`docs/collab-protocol.md#next`, with its corrected guidance): what a participant
//! should do now, from the stored `protocol.json` state.

use std::path::Path;

use serde_json::Value;

use crate::error::CollabError;
use crate::events::{read_events, Event};
use crate::guide::{self, Context, Invocation};
use crate::markdown::{conclusion_errors, Readiness};
use crate::paths;
use crate::protocol::{self, Protocol};
use crate::pyfmt::{join_or_none, py_str};
use crate::spec::{CONCLUSION_FILE, READINESS_FILE};

/// The printed report and the exit code (1 only for an invalid phase).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextAction {
    /// The report's lines.
    pub lines: Vec<String>,
    /// The exit code.
    pub exit_code: i32,
}

impl NextAction {
    /// The report as printed, one line each.
    pub fn render(&self) -> String {
        let mut out = self.lines.join("\n");
        out.push('\n');
        out
    }
}

/// The action lines `next` prints: the protocol's own words, kept in [`crate::spec`].
pub use crate::spec::{
    ACCEPT, CHECKLIST, CLASSIFY, CLEAR_READINESS, COMPLETE, DRAFT, FREEZE, INVALID_PHASE,
    OWNER_WAIT_REVIEW, PASS_READINESS, RESOLVE_BLOCKER, REVIEW, REVISE, STOP, WAIT_ACCEPT,
    WAIT_CLASSIFY, WAIT_OWNER_READINESS, WAIT_PROPOSAL, WAIT_REVIEW, WAIT_REVISE, WRITE_CONCLUSION,
};

/// Loads the folder and reports the next action for `participant`, with the follow-up
/// commands in `acp-collab` form.
pub fn next_action(folder: &str, participant: &str) -> Result<NextAction, CollabError> {
    next_action_with(folder, participant, &Invocation::Binary)
}

/// [`next_action`] with the follow-up commands in the given form.
pub fn next_action_with(
    folder: &str,
    participant: &str,
    invocation: &Invocation,
) -> Result<NextAction, CollabError> {
    let folder = paths::resolve_folder(folder);
    next_action_in(&folder, participant, invocation)
}

/// [`next_action_with`] for an already resolved folder.
pub(crate) fn next_action_in(
    folder: &Path,
    participant: &str,
    invocation: &Invocation,
) -> Result<NextAction, CollabError> {
    let protocol = protocol::load_or_fail(folder)?;
    check_participant(&protocol, participant)?;
    let log = read_events(folder)?;
    if !log.errors.is_empty() {
        return Err(CollabError::Log(log.errors));
    }
    let mut next = advise(&protocol, &log.events, participant)?;
    let cx = Context {
        protocol: &protocol,
        events: &log.events,
        participant,
        invocation,
    };
    if let Some(advice) = next
        .lines
        .last()
        .and_then(|l| l.strip_prefix("next action: "))
    {
        let advice = advice.to_owned();
        next.lines.extend(guide::follow_up(
            &cx,
            &advice,
            has_primary(&log.events, DRAFTED),
        ));
    }
    Ok(next)
}

const DRAFTED: &[&str] = &["deliverable_drafted", "deliverable_revised"];

/// Whether the log has a primary deliverable event named one of `names`.
fn has_primary(events: &[Event], names: &[&str]) -> bool {
    events.iter().any(|e| {
        name_of(e).is_some_and(|n| names.contains(&n))
            && e.get("role").and_then(Value::as_str) == Some("primary")
    })
}

/// The `participant '…' is not listed` refusal shared by next and wait.
pub(crate) fn check_participant(protocol: &Protocol, participant: &str) -> Result<(), CollabError> {
    if protocol.participants().iter().any(|p| p == participant) {
        Ok(())
    } else {
        Err(CollabError::UnknownParticipant(participant.to_owned()))
    }
}

/// The stored `waitingFor` as strings (a non-list counts as empty).
pub(crate) fn stored_waiting(protocol: &Protocol) -> Vec<String> {
    protocol
        .map
        .get("waitingFor")
        .and_then(Value::as_array)
        .map(|items| items.iter().map(|v| py_str(Some(v))).collect())
        .unwrap_or_default()
}

fn name_of(e: &Event) -> Option<&str> {
    e.get("event").and_then(Value::as_str)
}

fn from_of(e: &Event) -> Option<&str> {
    e.get("from").and_then(Value::as_str)
}

/// Position of the latest event with one of `names`.
fn latest(events: &[Event], names: &[&str]) -> Option<usize> {
    events
        .iter()
        .rposition(|e| name_of(e).is_some_and(|n| names.contains(&n)))
}

fn advise(
    protocol: &Protocol,
    events: &[Event],
    participant: &str,
) -> Result<NextAction, CollabError> {
    let map = &protocol.map;
    let phase = map.get("currentPhase");
    let owner = map.get("proposalOwner").and_then(Value::as_str);
    let waiting = stored_waiting(protocol);
    let listed = waiting.iter().any(|w| w == participant);
    let is_owner = owner == Some(participant);
    let mut lines = report_head(protocol, &waiting, events);
    let sent_by_other =
        |idx: Option<usize>| idx.is_some_and(|i| from_of(&events[i]) != Some(participant));
    let mut exit_code = 0;
    let text = match phase.and_then(Value::as_str) {
        Some("drafting") if listed => DRAFT,
        Some("drafting") => WAIT_PROPOSAL,
        Some("reviewing") => {
            let proposal =
                latest(events, &["proposal_submitted"]).or(latest(events, &["proposal_revised"]));
            if listed && sent_by_other(proposal) {
                REVIEW
            } else if is_owner {
                OWNER_WAIT_REVIEW
            } else {
                WAIT_REVIEW
            }
        }
        Some("revising") if listed && sent_by_other(latest(events, &["review_submitted"])) => {
            REVISE
        }
        Some("revising") => WAIT_REVISE,
        Some("decision_review") => decision_advice(events, participant, listed, is_owner),
        Some("readiness_check") if !is_owner => WAIT_OWNER_READINESS,
        Some("readiness_check") => readiness_advice(protocol, events)?,
        Some("completed") => STOP,
        Some("blocked") => RESOLVE_BLOCKER,
        _ => {
            exit_code = 1;
            INVALID_PHASE
        }
    };
    lines.push(format!("next action: {text}"));
    Ok(NextAction { lines, exit_code })
}

/// The report's first lines: phase, owner, who is awaited and the last event.
fn report_head(protocol: &Protocol, waiting: &[String], events: &[Event]) -> Vec<String> {
    let map = &protocol.map;
    let mut lines = vec![
        format!("phase: {}", py_str(map.get("currentPhase"))),
        format!("proposal owner: {}", py_str(map.get("proposalOwner"))),
        format!("waiting for: {}", join_or_none(waiting)),
    ];
    if let Some(last) = events.last() {
        lines.push(format!(
            "last event: seq {} {} from {}",
            py_str(last.get("seq")),
            py_str(last.get("event")),
            py_str(last.get("from"))
        ));
    }
    lines
}

/// In `decision_review`: classify (owner) or wait for it, then accept once each.
fn decision_advice(
    events: &[Event],
    participant: &str,
    listed: bool,
    is_owner: bool,
) -> &'static str {
    let input = latest(events, &["proposal_revised", "decision_proposed"]);
    let classified = latest(events, &["question_classified"]);
    let needs_classification = match (input, classified) {
        (Some(i), Some(c)) => c < i,
        (Some(_), None) => true,
        _ => false,
    };
    let accepted_since = events[classified.map_or(0, |c| c + 1)..]
        .iter()
        .any(|e| name_of(e) == Some("decision_accepted") && from_of(e) == Some(participant));
    if needs_classification && is_owner {
        CLASSIFY
    } else if needs_classification {
        WAIT_CLASSIFY
    } else if listed && !accepted_since {
        ACCEPT
    } else {
        WAIT_ACCEPT
    }
}

fn readiness_advice(protocol: &Protocol, events: &[Event]) -> Result<&'static str, CollabError> {
    let folder = &protocol.folder;
    let readiness = Readiness::scan(&paths::read_text(folder, READINESS_FILE)?.unwrap_or_default());
    let has_primary_freeze = has_primary(events, &["deliverable_frozen"]);
    let has_passed = events
        .iter()
        .any(|e| name_of(e) == Some("readiness_passed"));
    Ok(if readiness.has_open_items() {
        CLEAR_READINESS
    } else if !readiness.ready {
        CHECKLIST
    } else if !has_primary_freeze {
        FREEZE
    } else if !has_passed {
        PASS_READINESS
    } else {
        let conclusion = paths::read_text(folder, CONCLUSION_FILE)?.unwrap_or_default();
        if conclusion_errors(&conclusion, &protocol.primary_ref().unwrap_or_default()).is_empty() {
            COMPLETE
        } else {
            WRITE_CONCLUSION
        }
    })
}

/// The seq of the last event, for `waiting for … after seq N`.
pub(crate) fn last_seq(events: &[Event]) -> Option<String> {
    events.last().map(|e| py_str(e.get("seq")))
}
