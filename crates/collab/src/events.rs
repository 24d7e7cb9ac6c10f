//! `events.jsonl` I/O: tolerant reading, the compact line format, the advisory append lock and
//! durable appends (`docs/collab-protocol.md#eventsjsonl`, `docs/collab-protocol.md#concurrency`).
//!
//! Reading is tolerant and shared: every reader (the other commands here, `validate` through
//! `validate::log`) goes through `scan`, which numbers physical lines, ignores an incomplete
//! last line with a warning, and refuses undecoded a line over the ACP mode's 8 MiB line cap.
//!
//! Writers take an exclusive `File::lock()` on `.acp-collab.lock` (`AppendLock`); an event is
//! one `write` followed by an fsync. Readers take no lock: `validate` only tries a shared one
//! without waiting (`writer_active`, `try_lock_shared`), to tell the temporary `protocol.json`
//! of a writer at work from a killed writer's leftover (a warning; the next `append` removes
//! it under the lock).

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use serde::ser::SerializeMap;
use serde_json::{Map, Value};

use crate::error::CollabError;
use crate::paths::{self, ReadError};
use crate::pyfmt;
use crate::record::{Fields, Key, Record};
use crate::spec::{EVENTS_FILE, LOCK_FILE};
use acp_registry_core::fs::ValueBudget;

/// One event kept in memory (always a JSON object): its members in file order, decoded
/// through [`Record`]. A repeated key keeps its first place and its last value, as a JSON
/// object map does.
///
/// A small vector instead of a hash map: an event has about seven members, and a look-up
/// that compares a few short keys beats hashing each key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Event {
    members: Vec<(Cow<'static, str>, Value)>,
}

fn key_of(key: &str) -> Cow<'static, str> {
    match Key::of(key) {
        Some(known) => Cow::Borrowed(known.name()),
        None => Cow::Owned(key.to_owned()),
    }
}

impl Event {
    /// The member `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether the member `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key`, in place when present, else at the end.
    pub fn insert(&mut self, key: &str, value: Value) {
        self.insert_key(key_of(key), value);
    }

    fn insert_key(&mut self, key: Cow<'static, str>, value: Value) {
        match self.members.iter_mut().find(|(k, _)| *k == key) {
            Some((_, slot)) => *slot = value,
            None => self.members.push((key, value)),
        }
    }

    /// How many members the event has.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the event has no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The event as a JSON object, members in order.
    pub fn to_value(&self) -> Value {
        let members = self.members.iter().map(|(k, v)| (k.to_string(), v.clone()));
        Value::Object(members.collect())
    }
}

/// `event["key"]`, `Null` when absent, as for a JSON value.
impl std::ops::Index<&str> for Event {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        static NULL: Value = Value::Null;
        self.get(key).unwrap_or(&NULL)
    }
}

impl From<Map<String, Value>> for Event {
    fn from(map: Map<String, Value>) -> Self {
        Event {
            members: map.into_iter().map(|(k, v)| (key_of(&k), v)).collect(),
        }
    }
}

impl serde::Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.members.len()))?;
        for (k, v) in &self.members {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl From<Record<'_>> for Event {
    fn from(record: Record<'_>) -> Self {
        Event {
            members: record.into_members(),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Record::deserialize(deserializer).map(Event::from)
    }
}

impl Fields for Event {
    fn text(&self, key: Key) -> Option<&str> {
        self.get(key.name()).and_then(Value::as_str)
    }
    fn int(&self, key: Key) -> Option<i64> {
        pyfmt::as_int(self.get(key.name()))
    }
    fn shown(&self, key: Key) -> String {
        pyfmt::py_str(self.get(key.name()))
    }
}

/// One line decoded: an event (in the record) or a JSON value that is not an object (not
/// JSON is `Err`).
enum Line {
    Event,
    NotObject,
}

fn decode<'a>(line: &'a str, record: &mut Record<'a>) -> Result<Line, serde_json::Error> {
    match record.decode_from(line) {
        Ok(()) => Ok(Line::Event),
        // A type error: decide between "not an object" and "not JSON" as a whole value would,
        // without building it.
        Err(e) if e.is_data() => match serde_json::from_str::<serde::de::IgnoredAny>(line) {
            Ok(_) => Ok(Line::NotObject),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// What reading a log found besides its events.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    /// Read errors, including `missing events.jsonl` and symlink refusals.
    pub errors: Vec<String>,
    /// Warnings: an ignored incomplete last line (docs/collab-protocol.md#partial-last-line).
    pub warnings: Vec<String>,
    /// The ignored incomplete last line, if any.
    pub incomplete_tail: Option<String>,
    /// The file ends in a complete line that lacks its `\n`.
    pub missing_final_newline: bool,
}

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

/// Reads the text of `events.jsonl`: `Ok(Err(message))` when it is missing or a link (a
/// read error to report), `Err` for an I/O failure (e.g. non-UTF-8 content).
pub(crate) fn read_log_text(folder: &Path) -> Result<Result<String, String>, CollabError> {
    match paths::read_text(folder, EVENTS_FILE) {
        Ok(Some(text)) => Ok(Ok(text)),
        Ok(None) => Ok(Err("missing events.jsonl".to_owned())),
        Err(ReadError::Symlink(m)) => Ok(Err(m)),
        Err(e @ ReadError::Io(_)) => Err(e.into()),
    }
}

/// Reads `events.jsonl`. Only an I/O failure (e.g. non-UTF-8 content) is an `Err`.
pub fn read_events(folder: &Path) -> Result<EventLog, CollabError> {
    Ok(match read_log_text(folder)? {
        Ok(text) => parse_events(&text),
        Err(message) => EventLog {
            errors: vec![message],
            ..EventLog::default()
        },
    })
}

/// Parses the text of an event log (`docs/collab-protocol.md#eventsjsonl`).
pub(crate) fn parse_events(text: &str) -> EventLog {
    let mut events = Vec::new();
    let reading = scan(text, |record| {
        events.push(Event::from(std::mem::take(record)));
        Ok::<(), std::convert::Infallible>(())
    });
    let Ok(reading) = reading;
    EventLog {
        events,
        errors: reading.errors,
        warnings: reading.warnings,
        incomplete_tail: reading.incomplete_tail,
        missing_final_newline: reading.missing_final_newline,
    }
}

/// The longest line of `events.jsonl` any reader decodes: the line cap of the ACP mode
/// (`acp::framing`), so a line no client could send is not read from the file either. A
/// longer line is a read error naming it, never parsed (tiny JSON values cost dozens of
/// times their bytes once decoded).
pub(crate) const MAX_LINE_BYTES: usize = acp_registry_core::acp::framing::DEFAULT_LINE_CAP;

/// The most JSON values the whole log may hold (10,000 events hold about 150,000): every
/// reader keeps what it decodes, so the bound is on the file, not the line.
pub(crate) const MAX_LOG_VALUES: u64 = 1_000_000;

/// Decodes each line of a log's text in order into one reused record, handing every event
/// to `on_event` as it is decoded (nothing is kept), and collects the read errors and
/// warnings. Lines are cut from the one buffer (a `memchr` search per line); numbers are
/// physical line numbers; a line over [`MAX_LINE_BYTES`] is an error and is not decoded.
pub(crate) fn scan<'a, E>(
    text: &'a str,
    mut on_event: impl FnMut(&mut Record<'a>) -> Result<(), E>,
) -> Result<Reading, E> {
    let mut reading = Reading::default();
    let mut record = Record::default();
    let mut budget = ValueBudget::new(MAX_LOG_VALUES);
    let ends_with_newline = text.is_empty() || text.ends_with('\n');
    let mut offset = 0;
    for (index, line) in text.split('\n').enumerate() {
        offset += line.len() + 1;
        if line.trim().is_empty() {
            continue;
        }
        let number = index + 1;
        let is_unterminated = offset > text.len() && !ends_with_newline;
        if line.len() > MAX_LINE_BYTES {
            reading.errors.push(format!(
                "events.jsonl line {number} is {} bytes, over the {} MiB line limit, and was not read; remove it or split what it holds into events of normal size",
                line.len(),
                MAX_LINE_BYTES / (1024 * 1024)
            ));
            continue;
        }
        // Counted before decoding (a syntax error is `decode`'s to report): what readers
        // keep of the log stays bounded however its lines are shaped.
        if let Err(e) = budget.spend(line) {
            if e.classify() == serde_json::error::Category::Data {
                reading.errors.push(format!(
                    "events.jsonl line {number} and the lines after it were not read: the log holds more than {MAX_LOG_VALUES} JSON values in all (the limit keeps memory bounded); remove the oversized events"
                ));
                break;
            }
        }
        match decode(line, &mut record) {
            Ok(Line::Event) => {
                reading.missing_final_newline = is_unterminated;
                on_event(&mut record)?;
            }
            Ok(Line::NotObject) => {
                reading.missing_final_newline = is_unterminated;
                reading.errors.push(format!(
                    "events.jsonl line {number}: event must be an object"
                ));
            }
            Err(_) if is_unterminated => {
                reading.warnings.push(format!(
                    "events.jsonl line {number} is an incomplete last line (no newline, not valid JSON) and was ignored; remove it or restore the rest of the line"
                ));
                reading.incomplete_tail = Some(line.to_owned());
            }
            Err(e) => reading
                .errors
                .push(format!("events.jsonl line {number}: invalid JSON: {e}")),
        }
    }
    Ok(reading)
}

/// Serialises an event as one compact line in the documented field order, with `\n`.
pub fn format_event_line(event: &Event) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(event.len());
    for key in Key::ALL.map(Key::name) {
        if let Some(value) = event.get(key) {
            parts.push(format!("{}:{}", Value::String(key.to_owned()), value));
        }
    }
    format!("{{{}}}\n", parts.join(","))
}

/// An exclusive advisory lock on `.acp-collab.lock`, released on drop.
pub(crate) struct AppendLock {
    file: File,
}

impl AppendLock {
    /// Blocks until this process holds the folder's append lock.
    pub(crate) fn acquire(folder: &Path) -> Result<Self, CollabError> {
        paths::check_no_symlink(folder, LOCK_FILE)?;
        let path = folder.join(LOCK_FILE);
        let fail = |e: &dyn std::fmt::Display| CollabError::OpenLock {
            path: path.clone(),
            message: e.to_string(),
        };
        let file = acp_registry_core::fs::no_follow(
            OpenOptions::new().read(true).write(true).create(true),
        )
        .truncate(false)
        .open(&path)
        .map_err(|e| fail(&e))?;
        let file = acp_registry_core::fs::regular(file).map_err(|e| fail(&e))?;
        file.lock()
            .map_err(|source| CollabError::Lock { path, source })?;
        Ok(Self { file })
    }
}

/// Whether an `append` holds the folder's lock now (a shared lock cannot be had). Readers use
/// it to tell a writer's temporary file from a killed writer's leftover; it never blocks and
/// never creates the lock file.
pub(crate) fn writer_active(folder: &Path) -> bool {
    if paths::check_no_symlink(folder, LOCK_FILE).is_err() {
        return false;
    }
    let Ok(file) = acp_registry_core::fs::no_follow(OpenOptions::new().read(true))
        .open(folder.join(LOCK_FILE))
    else {
        return false;
    };
    let Ok(file) = acp_registry_core::fs::regular(file) else {
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
pub(crate) fn append_line(
    folder: &Path,
    line: &str,
    prefix_newline: bool,
) -> Result<(), CollabError> {
    paths::check_no_symlink(folder, EVENTS_FILE)?;
    let path = folder.join(EVENTS_FILE);
    let fail = |source| CollabError::Append {
        path: path.clone(),
        source,
    };
    let file = acp_registry_core::fs::no_follow(OpenOptions::new().append(true).create(true))
        .open(&path)
        .map_err(fail)?;
    let mut file =
        acp_registry_core::fs::regular(file).map_err(|e| fail(std::io::Error::other(e)))?;
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
            format_event_line(&Event::from(v.as_object().unwrap().clone())),
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
    fn a_repeated_key_keeps_its_place_and_the_last_value_and_a_cut_array_is_not_json() {
        let log = parse_events("{\"seq\":1,\"from\":\"a\",\"seq\":2}\n[1,\n\"x\"\n");
        let e = &log.events[0];
        assert_eq!(e.to_value().to_string(), "{\"seq\":2,\"from\":\"a\"}");
        assert_eq!(e["seq"], 2);
        assert_eq!(e["missing"], Value::Null);
        assert!(
            log.errors[0].starts_with("events.jsonl line 2: invalid JSON: "),
            "{:?}",
            log.errors
        );
        assert_eq!(
            log.errors[1],
            "events.jsonl line 3: event must be an object"
        );
    }

    #[test]
    fn a_line_over_the_acp_line_cap_is_an_error_and_is_not_decoded() {
        let long = format!("{{\"seq\":2,\"x\":[{}0]}}", "0,".repeat(MAX_LINE_BYTES / 2));
        let log = parse_events(&format!("{{\"seq\":1}}\n{long}\n{{\"seq\":3}}\n"));
        assert_eq!(log.events.len(), 2);
        assert_eq!(
            log.errors,
            [format!(
                "events.jsonl line 2 is {} bytes, over the 8 MiB line limit, and was not read; remove it or split what it holds into events of normal size",
                long.len()
            )]
        );
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
