//! Counting a JSON document's values before it is built into a tree: a
//! `serde_json::Value` costs up to 70 times the text of tiny values (`[0,0,…]` is 2 bytes per
//! element in the text and an 80-byte `Value` with spare capacity in memory), so a reader that
//! needs a tree of an untrusted document first spends its values from a [`ValueBudget`]. The
//! registry tool's previous `registry.json` (`build --last-good`) and the collaboration
//! engine's `protocol.json` and `events.jsonl` share it.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A budget of JSON values to check a document against before it is built into a `Value`
/// (which costs up to 70 times the text of tiny values): every scalar, array, object and
/// member value counts one; nothing is kept while counting. Depth is `serde_json`'s own bound
/// (128 levels).
#[derive(Debug, Clone, Copy)]
pub struct ValueBudget {
    left: u64,
    max: u64,
}

impl ValueBudget {
    /// A budget of `max` values in all, over every text spent from it.
    pub fn new(max: u64) -> Self {
        ValueBudget { left: max, max }
    }

    /// Count the values of `text` against what is left; an error (“more than N JSON
    /// values”) once the budget is spent, or when `text` is not JSON.
    pub fn spend(&mut self, text: &str) -> Result<(), serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        DeserializeSeed::deserialize(Counter(self), &mut de)?;
        de.end()
    }
}

/// Counts one value and the values inside it.
struct Counter<'b>(&'b mut ValueBudget);

impl Counter<'_> {
    fn take<E: serde::de::Error>(&mut self) -> Result<(), E> {
        if self.0.left == 0 {
            return Err(E::custom(format!("more than {} JSON values", self.0.max)));
        }
        self.0.left -= 1;
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Counter<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Counter<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(mut self, _: bool) -> Result<(), E> {
        self.take()
    }
    fn visit_i64<E: serde::de::Error>(mut self, _: i64) -> Result<(), E> {
        self.take()
    }
    fn visit_u64<E: serde::de::Error>(mut self, _: u64) -> Result<(), E> {
        self.take()
    }
    fn visit_f64<E: serde::de::Error>(mut self, _: f64) -> Result<(), E> {
        self.take()
    }
    fn visit_str<E: serde::de::Error>(mut self, _: &str) -> Result<(), E> {
        self.take()
    }
    fn visit_unit<E: serde::de::Error>(mut self) -> Result<(), E> {
        self.take()
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.take()?;
        while seq.next_element_seed(Counter(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.take()?;
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(Counter(&mut *self.0))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_budget_counts_every_value_across_texts_and_stops_at_its_limit() {
        let mut budget = ValueBudget::new(7);
        budget.spend(r#"{"a": [0, 1], "b": {"c": null}}"#).unwrap(); // 6 values
        budget.spend("true").unwrap();
        let error = budget.spend("0").unwrap_err().to_string();
        assert!(error.starts_with("more than 7 JSON values"), "{error}");
        let error = ValueBudget::new(100).spend("[0,").unwrap_err();
        assert!(error.is_eof(), "{error}");
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let error = ValueBudget::new(1000).spend(&deep).unwrap_err().to_string();
        assert!(error.contains("recursion limit"), "{error}");
    }
}
