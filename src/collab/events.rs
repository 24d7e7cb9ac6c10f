//! `events.jsonl` I/O: tolerant reading, the compact line format, the advisory append lock and
//! durable appends (`docs/collab-protocol.md#eventsjsonl`, `docs/collab-protocol.md#concurrency`).

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde_json::{Map, Value};

use super::model::{EVENTS_FILE, LOCK_FILE};
use super::paths::{self, ReadError};
use super::CollabError;

/// One decoded event line (always a JSON object): its members in file order. A repeated key
/// keeps its first place and its last value, as a JSON object map does.
///
/// A small vector instead of a hash map: an event has about seven members, and the log is
/// read whole on every command, so a look-up that compares a few short keys beats hashing
/// each key (`validate` makes dozens of look-ups per event; see BENCHMARKS.md).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Event {
    members: Vec<(Cow<'static, str>, Value)>,
}

/// The keys events normally have, shared instead of allocated per event.
const KNOWN_KEYS: [&str; 9] = [
    "seq", "from", "event", "at", "summary", "doc", "reply_to", "role", "sha256",
];

fn key_of(key: &str) -> Cow<'static, str> {
    match KNOWN_KEYS.iter().find(|k| **k == key) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(key.to_owned()),
    }
}

/// Reads an object key without allocating for the known ones.
struct KeySeed;

impl<'de> serde::de::DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'static, str>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Cow<'static, str>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Self::Value, E> {
                Ok(key_of(key))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl Event {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

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

    pub fn len(&self) -> usize {
        self.members.len()
    }

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

impl<'de> serde::Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EventVisitor;
        impl<'de> Visitor<'de> for EventVisitor {
            type Value = Event;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Event, A::Error> {
                let mut event = Event {
                    members: Vec::with_capacity(access.size_hint().unwrap_or(9)),
                };
                while let Some(key) = access.next_key_seed(KeySeed)? {
                    let value = access.next_value::<Value>()?;
                    event.insert_key(key, value);
                }
                // The whole log stays in memory: give back the unused slots.
                event.members.shrink_to_fit();
                Ok(event)
            }
        }
        deserializer.deserialize_map(EventVisitor)
    }
}

/// One line decoded: an event, a JSON value that is not an object, or not JSON.
enum Line {
    Event(Event),
    NotObject,
    Invalid(serde_json::Error),
}

fn decode(line: &str) -> Line {
    match serde_json::from_str::<Event>(line) {
        Ok(event) => Line::Event(event),
        // A type error: decide between "not an object" and "not JSON" as a whole value would.
        Err(e) if e.is_data() => match serde_json::from_str::<Value>(line) {
            Ok(_) => Line::NotObject,
            Err(e) => Line::Invalid(e),
        },
        Err(e) => Line::Invalid(e),
    }
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
        match decode(line) {
            Line::Event(event) => {
                log.missing_final_newline = is_unterminated;
                log.events.push(event);
            }
            Line::NotObject => {
                log.missing_final_newline = is_unterminated;
                log.errors.push(format!(
                    "events.jsonl line {number}: event must be an object"
                ));
            }
            Line::Invalid(_) if is_unterminated => {
                log.warnings.push(format!(
                    "events.jsonl line {number} is an incomplete last line (no newline, not valid JSON) and was ignored; remove it or restore the rest of the line"
                ));
                log.incomplete_tail = Some((*line).to_owned());
            }
            Line::Invalid(e) => log
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
