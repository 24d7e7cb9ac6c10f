//! One `events.jsonl` line decoded straight into its known members, borrowing the strings
//! from the log's text (`docs/collab-protocol.md#eventsjsonl`). `validate` checks these as it
//! reads (one pass, nothing kept per event); the other commands turn them into [`Event`]s.
//!
//! The nine known keys (`seq`, `from`, `event`, `at`, `summary`, `doc`, `reply_to`, `role`,
//! `sha256`) each have a typed slot, found by the key's length and first byte rather than by
//! hashing; any other member keeps its name. Strings are borrowed from the one text buffer of
//! the log, so decoding a line allocates little.
//!
//! [`Event`]: crate::events::Event

use std::borrow::Cow;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::pyfmt;

/// The members events normally have, in the documented line order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// `seq`.
    Seq,
    /// `from`.
    From,
    /// `event`.
    Event,
    /// `at`.
    At,
    /// `summary`.
    Summary,
    /// `doc`.
    Doc,
    /// `reply_to`.
    ReplyTo,
    /// `role`.
    Role,
    /// `sha256`.
    Sha256,
}

impl Key {
    /// Every known key, in the documented line order.
    pub const ALL: [Key; 9] = [
        Key::Seq,
        Key::From,
        Key::Event,
        Key::At,
        Key::Summary,
        Key::Doc,
        Key::ReplyTo,
        Key::Role,
        Key::Sha256,
    ];

    /// The member's name in a line.
    pub fn name(self) -> &'static str {
        match self {
            Key::Seq => "seq",
            Key::From => "from",
            Key::Event => "event",
            Key::At => "at",
            Key::Summary => "summary",
            Key::Doc => "doc",
            Key::ReplyTo => "reply_to",
            Key::Role => "role",
            Key::Sha256 => "sha256",
        }
    }

    /// The known key of that name: picked by length and first byte, then compared once
    /// (no hashing).
    pub fn of(name: &str) -> Option<Key> {
        let key = match (name.len(), name.as_bytes().first()?) {
            (3, b's') => Key::Seq,
            (4, b'f') => Key::From,
            (5, b'e') => Key::Event,
            (2, b'a') => Key::At,
            (7, b's') => Key::Summary,
            (3, b'd') => Key::Doc,
            (8, b'r') => Key::ReplyTo,
            (4, b'r') => Key::Role,
            (6, b's') => Key::Sha256,
            _ => return None,
        };
        (key.name() == name).then_some(key)
    }
}

/// A member's value: a string (borrowed from the line when it holds no escape), an
/// integer, or any other JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Field<'a> {
    /// A JSON string.
    Str(Cow<'a, str>),
    /// A JSON integer that fits `i64`.
    Int(i64),
    /// Anything else: null, booleans, floats, larger integers, arrays, objects.
    Other(Box<Value>),
}

impl Field<'_> {
    /// The string, for a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Python's `isinstance(x, int)`: an integer, not a float such as `2.0`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Field::Int(n) => Some(*n),
            Field::Other(v) => v.as_i64(),
            Field::Str(_) => None,
        }
    }

    /// An integer or an integral float, as [`pyfmt::as_int`] reads a seq.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Field::Int(n) => Some(*n),
            Field::Other(v) => pyfmt::as_int(Some(v)),
            Field::Str(_) => None,
        }
    }

    /// JSON `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Field::Other(v) if v.is_null())
    }

    /// The value as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            Field::Str(s) => Value::String(s.to_string()),
            Field::Int(n) => Value::from(*n),
            Field::Other(v) => (**v).clone(),
        }
    }

    /// The value as a JSON value that owns its strings.
    pub fn into_value(self) -> Value {
        match self {
            Field::Str(s) => Value::String(s.into_owned()),
            Field::Int(n) => Value::from(n),
            Field::Other(v) => *v,
        }
    }
}

/// What the state machine and the checks read of an event, decoded ([`Record`]) or kept
/// ([`Event`](crate::events::Event)).
pub trait Fields {
    /// The member `key` when it is a string.
    fn text(&self, key: Key) -> Option<&str>;
    /// The member `key` as an integer ([`pyfmt::as_int`]).
    fn int(&self, key: Key) -> Option<i64>;
    /// Python `str()` of the member `key` (`None` when absent).
    fn shown(&self, key: Key) -> String;
}

impl Fields for Record<'_> {
    fn text(&self, key: Key) -> Option<&str> {
        self.get(key).and_then(Field::as_str)
    }
    fn int(&self, key: Key) -> Option<i64> {
        self.get(key).and_then(Field::as_int)
    }
    fn shown(&self, key: Key) -> String {
        shown(self.get(key))
    }
}

/// Python `str()` of an optional member, as messages print it.
pub(crate) fn shown(field: Option<&Field>) -> String {
    match field {
        Some(Field::Str(s)) => s.to_string(),
        Some(Field::Int(n)) => n.to_string(),
        Some(Field::Other(v)) => pyfmt::py_str(Some(v)),
        None => pyfmt::py_str(None),
    }
}

/// Python `repr()` of an optional member.
pub(crate) fn repr(field: Option<&Field>) -> String {
    match field {
        Some(Field::Str(s)) => pyfmt::repr_str(s),
        Some(Field::Int(n)) => n.to_string(),
        Some(Field::Other(v)) => pyfmt::py_repr(Some(v)),
        None => pyfmt::py_repr(None),
    }
}

/// One decoded event line. A repeated key keeps its first place and its last value, as a
/// JSON object map does; `place` numbers the members so the line can be rebuilt in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record<'a> {
    known: [Option<Field<'a>>; 9],
    place: [u32; 9],
    /// Members with other keys: place, key, value.
    others: Vec<(u32, String, Value)>,
    members: u32,
}

impl<'a> Record<'a> {
    /// The member `key`, if present.
    pub fn get(&self, key: Key) -> Option<&Field<'a>> {
        self.known[key as usize].as_ref()
    }

    fn set_known(&mut self, key: Key, field: Field<'a>) {
        let slot = &mut self.known[key as usize];
        if slot.is_none() {
            self.place[key as usize] = self.members;
            self.members += 1;
        }
        *slot = Some(field);
    }

    fn set_other(&mut self, name: &str, value: Value) {
        if let Some((_, _, slot)) = self.others.iter_mut().find(|(_, k, _)| k == name) {
            *slot = value;
        } else {
            self.others.push((self.members, name.to_owned(), value));
            self.members += 1;
        }
    }

    /// The members in line order, each key with its value.
    pub fn into_members(self) -> Vec<(Cow<'static, str>, Value)> {
        let mut members: Vec<(u32, Cow<'static, str>, Value)> =
            Vec::with_capacity(self.members as usize);
        for (key, field) in Key::ALL.into_iter().zip(self.known) {
            if let Some(field) = field {
                members.push((
                    self.place[key as usize],
                    Cow::Borrowed(key.name()),
                    field.into_value(),
                ));
            }
        }
        members.extend(
            self.others
                .into_iter()
                .map(|(p, k, v)| (p, Cow::Owned(k), v)),
        );
        members.sort_unstable_by_key(|(place, _, _)| *place);
        members.into_iter().map(|(_, k, v)| (k, v)).collect()
    }
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Field::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Field::Str(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Field::Str(Cow::Owned(s)))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Field::Int(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(i64::try_from(n).map_or_else(|_| other(Value::from(n)), Field::Int))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
        Ok(other(Value::from(n)))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok(other(Value::Bool(b)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(other(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let d = serde::de::value::SeqAccessDeserializer::new(seq);
        Value::deserialize(d).map(other)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let d = serde::de::value::MapAccessDeserializer::new(map);
        Value::deserialize(d).map(other)
    }
}

fn other<'a>(value: Value) -> Field<'a> {
    Field::Other(Box::new(value))
}

/// An object key: a known one without allocating, or its text.
enum KeyName<'de> {
    Known(Key),
    Other(Cow<'de, str>),
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = KeyName<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = KeyName<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string key")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Key::of(s).map_or(KeyName::Other(Cow::Borrowed(s)), KeyName::Known))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Key::of(s).map_or_else(|| KeyName::Other(Cow::Owned(s.to_owned())), KeyName::Known))
    }
}

impl<'de> Deserialize<'de> for Record<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut record = Record::default();
        RecordSeed(&mut record).deserialize(d)?;
        Ok(record)
    }
}

impl<'a> Record<'a> {
    /// Decodes one line into this record, reusing it (a record is a few hundred bytes: a
    /// log read line by line then never moves one).
    pub fn decode_from(&mut self, line: &'a str) -> Result<(), serde_json::Error> {
        *self = Record::default();
        let mut de = serde_json::Deserializer::from_str(line);
        RecordSeed(self).deserialize(&mut de)?;
        // As `serde_json::from_str`: only whitespace may follow the object.
        de.end()
    }
}

/// Decodes an object into the record it holds.
struct RecordSeed<'r, 'de>(&'r mut Record<'de>);

impl<'de> DeserializeSeed<'de> for RecordSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RecordSeed<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        let record = self.0;
        while let Some(key) = access.next_key_seed(KeySeed)? {
            match key {
                KeyName::Known(k) => record.set_known(k, access.next_value()?),
                KeyName::Other(name) => record.set_other(&name, access.next_value()?),
            }
        }
        Ok(())
    }
}
