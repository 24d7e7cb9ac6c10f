//! `events.jsonl` I/O: tolerant reading, the compact line format, the advisory append lock and
//! durable appends (`docs/collab-protocol.md#eventsjsonl`, `docs/collab-protocol.md#concurrency`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value};

use super::model::{EVENTS_FILE, LOCK_FILE};
use super::paths::{self, ReadError};
use super::CollabError;

/// One decoded event line (always a JSON object).
pub type Event = Map<String, Value>;

/// The result of reading `events.jsonl`.
#[derive(Debug, Default)]
pub struct EventLog {
    /// Events that decoded as objects, in file order.
    pub events: Vec<Event>,
    /// Read errors, including `missing events.jsonl` and symlink refusals.
    pub errors: Vec<String>,
    /// Warnings: an ignored incomplete last line (docs/collab-protocol.md#partial-last-line).
    pub warnings: Vec<String>,
    /// The ignored incomplete last line, if any.
    pub incomplete_tail: Option<String>,
    /// The file ends in a complete line that lacks its `\n`.
    pub missing_final_newline: bool,
}

/// Reads `events.jsonl`. Only an I/O failure (e.g. non-UTF-8 content) is an `Err`.
pub fn read_events(folder: &Path) -> Result<EventLog, CollabError> {
    let text = match paths::read_text(folder, EVENTS_FILE) {
        Ok(Some(text)) => text,
        Ok(None) => {
            return Ok(EventLog {
                errors: vec!["missing events.jsonl".to_owned()],
                ..EventLog::default()
            })
        }
        Err(ReadError::Symlink(m)) => {
            return Ok(EventLog {
                errors: vec![m],
                ..EventLog::default()
            })
        }
        Err(ReadError::Io(m)) => return Err(CollabError::Protocol(m)),
    };
    Ok(parse_events(&text))
}

/// Parses the text of an event log (`docs/collab-protocol.md#eventsjsonl`).
pub fn parse_events(text: &str) -> EventLog {
    let mut log = EventLog::default();
    let ends_with_newline = text.is_empty() || text.ends_with('\n');
    let lines: Vec<&str> = text.split('\n').collect();
    let last_index = lines.len() - 1;
    for (index, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = index + 1;
        let is_unterminated = index == last_index && !ends_with_newline;
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(event)) => {
                log.missing_final_newline = is_unterminated;
                log.events.push(event);
            }
            Ok(_) => {
                log.missing_final_newline = is_unterminated;
                log.errors.push(format!(
                    "events.jsonl line {number}: event must be an object"
                ));
            }
            Err(_) if is_unterminated => {
                log.warnings.push(format!(
                    "events.jsonl line {number} is an incomplete last line (no newline, not valid JSON) and was ignored; remove it or restore the rest of the line"
                ));
                log.incomplete_tail = Some((*line).to_owned());
            }
            Err(e) => log
                .errors
                .push(format!("events.jsonl line {number}: invalid JSON: {e}")),
        }
    }
    log
}

/// Serialises an event as one compact line in the documented field order, with `\n`.
pub fn format_event_line(event: &Event) -> String {
    const ORDER: [&str; 9] = [
        "seq", "from", "event", "at", "summary", "doc", "reply_to", "role", "sha256",
    ];
    let mut parts: Vec<String> = Vec::with_capacity(event.len());
    for key in ORDER {
        if let Some(value) = event.get(key) {
            parts.push(format!("{}:{}", Value::String(key.to_owned()), value));
        }
    }
    format!("{{{}}}\n", parts.join(","))
}

/// An exclusive advisory lock on `.acp-collab.lock`, released on drop.
pub struct AppendLock {
    file: File,
}

impl AppendLock {
    /// Blocks until this process holds the folder's append lock.
    pub fn acquire(folder: &Path) -> Result<Self, CollabError> {
        paths::check_no_symlink(folder, LOCK_FILE)?;
        let path = folder.join(LOCK_FILE);
        let fail = |e: &dyn std::fmt::Display| {
            CollabError::Protocol(format!("cannot open {}: {e}", path.display()))
        };
        let file = crate::fs::no_follow(OpenOptions::new().read(true).write(true).create(true))
            .truncate(false)
            .open(&path)
            .map_err(|e| fail(&e))?;
        let file = crate::fs::regular(file).map_err(|e| fail(&e))?;
        file.lock()
            .map_err(|e| CollabError::Protocol(format!("cannot lock {}: {e}", path.display())))?;
        Ok(Self { file })
    }
}

/// Whether an `append` holds the folder's lock now (a shared lock cannot be had). Readers use
/// it to tell a writer's temporary file from a killed writer's leftover; it never blocks and
/// never creates the lock file.
pub fn writer_active(folder: &Path) -> bool {
    if paths::check_no_symlink(folder, LOCK_FILE).is_err() {
        return false;
    }
    let Ok(file) = crate::fs::no_follow(OpenOptions::new().read(true)).open(folder.join(LOCK_FILE))
    else {
        return false;
    };
    let Ok(file) = crate::fs::regular(file) else {
        return false;
    };
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(_) => true,
    }
}

impl Drop for AppendLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Appends one serialised line with a single write, then fsyncs. `prefix_newline`
/// terminates a complete last line that lacked its newline (the partial-last-line rule of the docs).
pub fn append_line(folder: &Path, line: &str, prefix_newline: bool) -> Result<(), CollabError> {
    paths::check_no_symlink(folder, EVENTS_FILE)?;
    let path = folder.join(EVENTS_FILE);
    let fail = |e: std::io::Error| {
        CollabError::Protocol(format!("cannot append to {}: {e}", path.display()))
    };
    let file = crate::fs::no_follow(OpenOptions::new().append(true).create(true))
        .open(&path)
        .map_err(fail)?;
    let mut file = crate::fs::regular(file).map_err(|e| fail(std::io::Error::other(e)))?;
    let mut buf = String::with_capacity(line.len() + 1);
    if prefix_newline {
        buf.push('\n');
    }
    buf.push_str(line);
    file.write_all(buf.as_bytes()).map_err(fail)?;
    file.sync_data().map_err(fail)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn line_uses_spec_field_order_and_compact_separators() {
        let v = json!({"sha256": "x", "summary": "é", "seq": 2, "from": "a", "event": "e", "at": "t", "reply_to": 1});
        assert_eq!(
            format_event_line(v.as_object().unwrap()),
            "{\"seq\":2,\"from\":\"a\",\"event\":\"e\",\"at\":\"t\",\"summary\":\"é\",\"reply_to\":1,\"sha256\":\"x\"}\n"
        );
    }

    #[test]
    fn incomplete_last_line_is_a_warning_and_complete_one_counts() {
        let log = parse_events("{\"seq\":1}\n{\"seq\":2,\"fr");
        assert_eq!(log.events.len(), 1);
        assert!(log.errors.is_empty());
        assert_eq!(log.warnings.len(), 1);
        assert_eq!(log.incomplete_tail.as_deref(), Some("{\"seq\":2,\"fr"));
        let log = parse_events("{\"seq\":1}\n{\"seq\":2}");
        assert_eq!(log.events.len(), 2);
        assert!(log.missing_final_newline);
    }

    #[test]
    fn physical_line_numbers_count_blank_lines() {
        let log = parse_events("{\"seq\":1}\n\n  \nnot json\n[1,2]\n");
        assert_eq!(
            log.errors,
            vec![
                "events.jsonl line 4: invalid JSON: expected ident at line 1 column 2".to_owned(),
                "events.jsonl line 5: event must be an object".to_owned(),
            ]
        );
    }
}
