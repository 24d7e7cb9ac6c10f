//! Reading servers' JSON answers in bounded memory: typed views that keep only the facts a
//! caller uses, with every kept string and collection capped, and everything else skipped
//! without allocating (`IgnoredAny`).
//!
//! A `serde_json::Value` of a whole answer costs up to about 70 times its bytes (`[0,0,…]` is
//! 2 bytes per element in the text and an 80-byte `Value` with spare capacity in memory), so
//! a 32 MiB answer could cost gigabytes. The pieces here never build one. They are also
//! lenient the way indexing a `Value` is: a member of the wrong JSON type reads as absent
//! (`Default`), so a document in an unexpected shape gives the same verdicts as before.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{
    DeserializeOwned, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::Deserialize;

/// The longest version key or tag name kept (semver's own limit is 256 characters).
pub const MAX_VERSION_LEN: usize = 256;
/// The most versions (npm) or releases (`PyPI`) one document may list.
pub const MAX_VERSIONS: usize = 50_000;
/// The longest message kept (npm `deprecated`, `PyPI` `yanked_reason`); longer ones are cut.
pub const MAX_MESSAGE_LEN: usize = 512;

/// A value of which one JSON type is wanted; any other type reads as `Default` and its
/// content is skipped without allocating.
pub trait Lenient: Sized + Default {
    /// A JSON string.
    fn string(_: &str) -> Self {
        Self::default()
    }
    /// A JSON boolean.
    fn boolean(_: bool) -> Self {
        Self::default()
    }
    /// A JSON object.
    fn map<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        IgnoredAny.visit_map(map)?;
        Ok(Self::default())
    }
    /// A JSON array.
    fn seq<'de, A: SeqAccess<'de>>(seq: A) -> Result<Self, A::Error> {
        IgnoredAny.visit_seq(seq)?;
        Ok(Self::default())
    }
}

/// Deserialises a [`Lenient`] value from any JSON value.
pub fn lenient<'de, D: Deserializer<'de>, T: Lenient>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(LenientVisitor(PhantomData))
}

struct LenientVisitor<T>(PhantomData<T>);

impl<'de, T: Lenient> Visitor<'de> for LenientVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E>(self, s: &str) -> Result<T, E> {
        Ok(T::string(s))
    }
    fn visit_bool<E>(self, b: bool) -> Result<T, E> {
        Ok(T::boolean(b))
    }
    fn visit_i64<E>(self, _: i64) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::map(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::seq(seq)
    }
}

/// Implements `Deserialize` through [`lenient`].
#[doc(hidden)]
#[macro_export]
macro_rules! deserialize_leniently {
    ($($ty:ty),* $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::net::json::lenient(d)
            }
        }
    )*};
}
pub use crate::deserialize_leniently;

/// A string of at most `N` bytes; a longer one, or a value that is not a string, is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text<const N: usize>(pub Option<String>);

impl<const N: usize> Lenient for Text<N> {
    fn string(s: &str) -> Self {
        Text((s.len() <= N).then(|| s.to_owned()))
    }
}

impl<'de, const N: usize> Deserialize<'de> for Text<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient(d)
    }
}

/// A message: a string cut to [`MAX_MESSAGE_LEN`] bytes (at a character, marked `…`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message(pub Option<String>);

impl Lenient for Message {
    fn string(s: &str) -> Self {
        if s.len() <= MAX_MESSAGE_LEN {
            return Message(Some(s.to_owned()));
        }
        let mut end = MAX_MESSAGE_LEN;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        Message(Some(format!("{}…", &s[..end])))
    }
}

/// A boolean; anything else is `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flag(pub Option<bool>);

impl Lenient for Flag {
    fn boolean(b: bool) -> Self {
        Flag(Some(b))
    }
}

deserialize_leniently!(Message, Flag);

/// An object read as `T` (a derived struct: unknown members skipped); anything else is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<T: DeserializeOwned> Lenient for Obj<T> {
    fn map<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient(d)
    }
}

/// An object keyed by version (npm's `versions`, `PyPI`'s `releases`): `None` when it is not
/// an object; keys longer than [`MAX_VERSION_LEN`] are skipped; more than [`MAX_VERSIONS`]
/// keys make the whole document an error. A repeated key keeps its last value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versions<V>(pub Option<BTreeMap<String, V>>);

impl<V> Default for Versions<V> {
    fn default() -> Self {
        Versions(None)
    }
}

impl<V: DeserializeOwned> Lenient for Versions<V> {
    fn map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut kept = BTreeMap::new();
        while let Some(Text(key)) = map.next_key::<Text<MAX_VERSION_LEN>>()? {
            let Some(key) = key else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let value = map.next_value::<V>()?;
            kept.insert(key, value);
            if kept.len() > MAX_VERSIONS {
                return Err(A::Error::custom(format!(
                    "more than {MAX_VERSIONS} versions"
                )));
            }
        }
        Ok(Versions(Some(kept)))
    }
}

impl<'de, V: DeserializeOwned> Deserialize<'de> for Versions<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient(d)
    }
}

/// A list of which the first `MAX` elements are kept (each read as `T`) and the rest skipped
/// without allocating; `total` counts them all. Anything but a list is empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List<T, const MAX: usize> {
    pub items: Vec<T>,
    pub total: usize,
}

impl<T, const MAX: usize> Default for List<T, MAX> {
    fn default() -> Self {
        List {
            items: Vec::new(),
            total: 0,
        }
    }
}

impl<T: DeserializeOwned, const MAX: usize> Lenient for List<T, MAX> {
    fn seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut list = List::default();
        loop {
            if list.items.len() < MAX {
                let Some(item) = seq.next_element::<T>()? else {
                    break;
                };
                list.items.push(item);
            } else if seq.next_element::<IgnoredAny>()?.is_none() {
                break;
            }
            list.total += 1;
        }
        Ok(list)
    }
}

impl<'de, T: DeserializeOwned, const MAX: usize> Deserialize<'de> for List<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient(d)
    }
}

/// An object of which the first `MAX` members with keys of at most [`MAX_VERSION_LEN`]
/// bytes are kept, in document order, and the rest skipped. Anything but an object is empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entries<V, const MAX: usize>(pub Vec<(String, V)>);

impl<V, const MAX: usize> Default for Entries<V, MAX> {
    fn default() -> Self {
        Entries(Vec::new())
    }
}

impl<V: DeserializeOwned, const MAX: usize> Lenient for Entries<V, MAX> {
    fn map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut kept = Vec::new();
        while let Some(Text(key)) = map.next_key::<Text<MAX_VERSION_LEN>>()? {
            match key.filter(|_| kept.len() < MAX) {
                Some(key) => kept.push((key, map.next_value::<V>()?)),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Entries(kept))
    }
}

impl<'de, V: DeserializeOwned, const MAX: usize> Deserialize<'de> for Entries<V, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::from_slice as parse;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(default)]
    struct Doc {
        name: Text<8>,
        flag: Flag,
        versions: Versions<Obj<Entry>>,
    }

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(default)]
    struct Entry {
        note: Message,
    }

    #[test]
    fn members_of_the_wrong_type_read_as_absent_and_the_rest_is_skipped() {
        let doc: Doc = parse(
            br#"{"name": 3, "flag": "yes", "versions": {"1.0.0": [0, 0], "2.0.0": {"note": 1, "x": [[]]}}, "big": [0, 0, 0]}"#,
        )
        .unwrap();
        assert_eq!(doc.name.0, None);
        assert_eq!(doc.flag.0, None);
        let versions = doc.versions.0.unwrap();
        assert_eq!(versions["1.0.0"], Obj(None));
        assert_eq!(versions["2.0.0"], Obj(Some(Entry::default())));
        let doc: Doc = parse(br#"{"versions": [1], "name": "too long a name"}"#).unwrap();
        assert_eq!((doc.versions.0, doc.name.0), (None, None));
    }

    #[test]
    fn strings_are_capped_and_messages_cut_at_a_character() {
        let long = "é".repeat(MAX_MESSAGE_LEN);
        let text = format!(
            r#"{{"versions": {{"1.0.0": {{"note": "{long}"}}, "{}": {{}}}}}}"#,
            "9".repeat(300)
        );
        let doc: Doc = parse(text.as_bytes()).unwrap();
        let versions = doc.versions.0.unwrap();
        assert_eq!(versions.len(), 1, "the over-long key is skipped");
        let note = versions["1.0.0"]
            .0
            .as_ref()
            .unwrap()
            .note
            .0
            .clone()
            .unwrap();
        assert!(note.ends_with('…') && note.len() <= MAX_MESSAGE_LEN + '…'.len_utf8());
    }

    #[test]
    fn lists_and_entries_keep_their_first_members_and_count_the_rest() {
        let list: List<Text<8>, 2> = parse(br#"["a", 1, "c", [0, 0], {"x": 1}]"#).unwrap();
        assert_eq!(list.items, [Text(Some("a".into())), Text(None)]);
        assert_eq!(list.total, 5);
        let not_a_list: List<Text<8>, 2> = parse(br#"{"a": 1}"#).unwrap();
        assert_eq!(not_a_list, List::default());
        let entries: Entries<Text<8>, 2> = parse(
            format!(
                r#"{{"{}": "x", "b": "y", "c": 3, "d": "z"}}"#,
                "k".repeat(300)
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(
            entries.0,
            [
                ("b".to_string(), Text(Some("y".into()))),
                ("c".to_string(), Text(None))
            ]
        );
    }

    #[test]
    fn more_versions_than_the_cap_is_an_error() {
        let keys: Vec<String> = (0..=MAX_VERSIONS).map(|i| format!("\"{i}\":0")).collect();
        let text = format!("{{\"versions\": {{{}}}}}", keys.join(","));
        let error = parse::<Doc>(text.as_bytes()).unwrap_err().to_string();
        assert!(error.starts_with("more than 50000 versions"), "{error}");
    }
}
