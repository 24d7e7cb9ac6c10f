//! `append` (docs/collab-protocol.md#append): the guarded, serialised append of one event.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::events::{append_line, format_event_line, read_events, AppendLock};
use super::markdown::{conclusion_errors, unchecked_gates, Readiness};
use super::model::{is_sha256, CONCLUSION_FILE, EVENTS, READINESS_FILE};
use super::paths::{self, ReadError};
use super::protocol;
use super::pyfmt::as_int;
use super::state::replay;
use super::time::utc_now;
use super::CollabError;

/// The `append` flags.
#[derive(Debug, Clone, Default)]
pub struct AppendOptions {
    pub folder: String,
    pub participant: String,
    pub event: String,
    pub summary: String,
    pub doc: Option<String>,
    pub reply_to: Option<i64>,
    pub role: Option<String>,
    pub sha256: Option<String>,
}

/// A successful append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    pub seq: i64,
    pub event: String,
}

impl Appended {
    /// The stdout line (last step of docs/collab-protocol.md#append).
    pub fn message(&self) -> String {
        format!("appended seq {}: {}", self.seq, self.event)
    }
}

fn refuse(msg: impl Into<String>) -> CollabError {
    CollabError::Protocol(msg.into())
}

/// Reads a protocol text file for a gate check; absence reads as empty.
fn read_folder_text(folder: &Path, name: &str) -> Result<String, CollabError> {
    Ok(paths::read_text(folder, name)?.unwrap_or_default())
}

/// Appends one event, holding the folder's lock from the first read to the
/// `protocol.json` rewrite (docs/collab-protocol.md#concurrency).
pub fn append(opts: &AppendOptions) -> Result<Appended, CollabError> {
    let folder = paths::resolve_folder(&opts.folder);
    // The lock needs the folder; a missing folder is reported as a missing protocol.json.
    if !folder.is_dir() {
        return Err(refuse(format!(
            "missing protocol.json in {}",
            folder.display()
        )));
    }
    let _lock = AppendLock::acquire(&folder)?;
    protocol::remove_leftover_temps(&folder);

    let mut protocol = protocol::load_or_fail(&folder)?;
    let name = opts.event.as_str();
    if !EVENTS.contains(&name) {
        return Err(refuse(format!("unknown event '{name}'")));
    }
    let participants = protocol.participants();
    if !participants.contains(&opts.participant) {
        return Err(refuse(format!(
            "participant '{}' is not listed in protocol.json",
            opts.participant
        )));
    }
    let log = read_events(&folder)?;
    if !log.errors.is_empty() {
        return Err(refuse(log.errors.join("; ")));
    }
    if let Some(tail) = &log.incomplete_tail {
        let head: Vec<u8> = tail.bytes().take(40).collect();
        return Err(refuse(format!(
            "events.jsonl ends with an incomplete line ({}); remove it or restore the rest of the line",
            String::from_utf8_lossy(&head)
        )));
    }
    let events = log.events;
    if let Some(reply_to) = opts.reply_to {
        if !events
            .iter()
            .any(|e| as_int(e.get("seq")) == Some(reply_to))
        {
            return Err(refuse("reply_to must point to an existing event"));
        }
    } else if !events.is_empty() {
        return Err(refuse("reply_to is required after initialized"));
    }

    let doc = opts.doc.as_deref().filter(|d| !d.is_empty());
    let role = opts.role.as_deref().filter(|r| !r.is_empty());
    let sha = opts.sha256.as_deref().filter(|s| !s.is_empty());
    if name.starts_with("deliverable_") {
        let role = role.ok_or_else(|| refuse("deliverable events require role"))?;
        let doc = doc.ok_or_else(|| refuse("deliverable events require doc"))?;
        let target = protocol.resolve_doc(role, doc).map_err(refuse)?;
        if name == "deliverable_frozen" {
            let sha = sha
                .filter(|s| is_sha256(s))
                .ok_or_else(|| refuse("deliverable_frozen requires sha256"))?;
            match paths::sha256_file(&target.base, &target.rel) {
                Ok(None) => return Err(refuse("deliverable_frozen doc does not exist")),
                Ok(Some(actual)) if actual != sha => {
                    return Err(refuse(
                        "deliverable_frozen sha256 does not match current file",
                    ))
                }
                Ok(Some(_)) => {}
                Err(e @ ReadError::Symlink(_)) | Err(e @ ReadError::Io(_)) => return Err(e.into()),
            }
        }
    }

    let seq = events
        .iter()
        .filter_map(|e| e.get("seq").and_then(Value::as_i64))
        .max()
        .unwrap_or(0)
        + 1;
    let mut payload = Map::new();
    payload.insert("seq".into(), json!(seq));
    payload.insert("from".into(), json!(opts.participant));
    payload.insert("event".into(), json!(name));
    payload.insert("at".into(), json!(utc_now()));
    payload.insert("summary".into(), json!(opts.summary));
    if let Some(d) = doc {
        payload.insert("doc".into(), json!(d));
    }
    if let Some(r) = opts.reply_to {
        payload.insert("reply_to".into(), json!(r));
    }
    if let Some(r) = role {
        payload.insert("role".into(), json!(r));
    }
    if let Some(s) = sha {
        payload.insert("sha256".into(), json!(s));
    }

    let needs_readiness = matches!(name, "decision_accepted" | "readiness_passed" | "completed");
    let readiness_text = if needs_readiness {
        read_folder_text(&folder, READINESS_FILE)?
    } else {
        String::new()
    };
    let readiness = Readiness::scan(&readiness_text);
    let mut all = events;
    all.push(payload);
    let (state, errors) = replay(&participants, &all, Some(&readiness));
    if !errors.is_empty() {
        return Err(refuse(errors.join("; ")));
    }

    // Step 10: readiness gates for the event being appended.
    let mut gate_errors = Vec::new();
    if needs_readiness && readiness.blocking {
        gate_errors.push("blocking readiness items must be cleared first");
    }
    if needs_readiness && readiness.unresolved {
        gate_errors.push("unresolved readiness questions must be classified first");
    }
    if needs_readiness && readiness.deferred_missing_reason {
        gate_errors.push("deferred_nonblocking readiness items require a reason");
    }
    if matches!(name, "readiness_passed" | "completed") && !readiness.ready {
        gate_errors.push("readiness.md must check 'Ready to implement' first");
    }
    if !gate_errors.is_empty() {
        return Err(refuse(gate_errors.join("; ")));
    }

    // Step 11: completion gates and the conclusion.
    if name == "completed" {
        if doc != Some(CONCLUSION_FILE) {
            return Err(refuse("completed must reference conclusion.md"));
        }
        let unchecked = unchecked_gates(&readiness_text, &protocol.completion_gate_texts());
        if !unchecked.is_empty() {
            return Err(refuse(format!(
                "completion gates must be checked first: {}",
                unchecked.join(", ")
            )));
        }
        let conclusion = read_folder_text(&folder, CONCLUSION_FILE)?;
        let primary_ref = protocol.primary_ref().unwrap_or_default();
        let errors = conclusion_errors(&conclusion, &primary_ref);
        if !errors.is_empty() {
            return Err(refuse(errors.join("; ")));
        }
    }

    let payload = all.last().expect("payload was pushed");
    append_line(
        &folder,
        &format_event_line(payload),
        log.missing_final_newline,
    )?;

    if let Some(phase) = state.phase {
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
    })
}
