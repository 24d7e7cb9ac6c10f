//! The canonical key order of a published agent (docs/format.md#build-outputs): the agent's
//! fields in `FIELD_ORDER` with the published extras beside `icon`, every nested object in
//! the order `manifest::order` gives its place, unknown keys after, sorted; and the agent's
//! text at the depth it has inside `agents`.

use serde_json::{Map, Value};

use crate::manifest::order::key_order;
use crate::manifest::FIELD_ORDER;

const AGENT_EXTRA_ORDER: [(&str, &str); 2] = [("icon_data_uri", "icon"), ("icons", "icon")];

/// Rebuild `map` with `order` first and every other key after, sorted; values are
/// canonicalised by `value_fn(key, value)`.
fn ordered(
    mut map: Map<String, Value>,
    order: &[&str],
    mut value_fn: impl FnMut(&str, Value) -> Value,
) -> Map<String, Value> {
    let mut out = Map::new();
    // What is left is sorted below, so the cheap removal that moves the last key is fine.
    for key in order {
        if map.is_empty() {
            break;
        }
        if let Some(value) = map.swap_remove(*key) {
            out.insert(key.to_string(), value_fn(key, value));
        }
    }
    let mut rest: Vec<(String, Value)> = map.into_iter().collect();
    rest.sort_by(|a, b| a.0.cmp(&b.0));
    for (key, value) in rest {
        let value = value_fn(&key, value);
        out.insert(key, value);
    }
    out
}

/// `value` with every object below `path` in the order `manifest::order` gives its place.
fn canonical_value(value: Value, path: &mut Vec<String>) -> Value {
    match value {
        Value::Object(map) => Value::Object(canonical_object(map, path, &[])),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| within(path, i.to_string(), |path| canonical_value(item, path)))
                .collect(),
        ),
        other => other,
    }
}

fn canonical_object(
    map: Map<String, Value>,
    path: &mut Vec<String>,
    order: &[&str],
) -> Map<String, Value> {
    let steps: Vec<&str> = path.iter().map(String::as_str).collect();
    let listed = if order.is_empty() {
        key_order(&steps).0
    } else {
        order
    };
    ordered(map, listed, |key, value| {
        within(path, key.to_string(), |path| canonical_value(value, path))
    })
}

fn within<T>(path: &mut Vec<String>, step: String, f: impl FnOnce(&mut Vec<String>) -> T) -> T {
    path.push(step);
    let out = f(path);
    path.pop();
    out
}

/// An agent pretty-printed at the depth it has inside `agents` (two levels, 4 spaces).
pub(crate) fn indented(agent: &Value) -> String {
    let text = serde_json::to_string_pretty(agent).expect("JSON values serialise");
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("    ");
        out.push_str(line);
    }
    out
}

/// The agent's keys in the canonical order (`docs/format.md#build-outputs`), unknown keys after, sorted.
pub(crate) fn canonical_agent(agent: Map<String, Value>) -> Map<String, Value> {
    let mut order: Vec<&str> = Vec::new();
    for field in FIELD_ORDER {
        order.push(field);
        for (extra, after) in AGENT_EXTRA_ORDER {
            if after == field {
                order.push(extra);
            }
        }
    }
    canonical_object(agent, &mut Vec::new(), &order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_order_ignores_source_order() {
        let a: Map<String, Value> = serde_json::from_str(
            r#"{"version": "1.0.0", "zeta": {"b": 1, "a": 2}, "id": "x", "distribution": {"npx": {"args": [], "package": "p@1.0.0"}}}"#,
        )
        .unwrap();
        let keys: Vec<String> = canonical_agent(a.clone()).keys().cloned().collect();
        assert_eq!(keys, ["id", "version", "distribution", "zeta"]);
        let text = serde_json::to_string(&canonical_agent(a)).unwrap();
        assert!(text.contains(r#""zeta":{"a":2,"b":1}"#), "{text}");
        assert!(
            text.contains(r#""npx":{"package":"p@1.0.0","args":[]}"#),
            "{text}"
        );
    }
}
