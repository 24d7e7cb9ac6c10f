//! Python-shaped rendering of JSON values for messages (`docs/collab-protocol.md`): several
//! published messages embed `str()` or `repr()` output, and agents match on them.

use serde_json::Value;

/// Python `str()` of the decoded value: strings print raw, null as `None`.
pub(crate) fn py_str(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "None".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => py_repr(Some(other)),
    }
}

/// Names joined with `, `, or `none` for an empty list (the reports' `waiting for:` form).
pub(crate) fn join_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

/// Python `repr()` of the decoded value.
pub(crate) fn py_repr(value: Option<&Value>) -> String {
    let mut out = String::new();
    write_repr(&mut out, value.unwrap_or(&Value::Null));
    out
}

/// Python `repr()` of a string.
pub(crate) fn repr_str(s: &str) -> String {
    let mut out = String::new();
    write_str_repr(&mut out, s);
    out
}

/// Python `repr()` of a list of strings, e.g. `['a', 'b']`.
pub(crate) fn repr_list<S: AsRef<str>>(items: &[S]) -> String {
    let parts: Vec<String> = items.iter().map(|s| repr_str(s.as_ref())).collect();
    format!("[{}]", parts.join(", "))
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_str_repr(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str_repr(out, k);
                out.push_str(": ");
                write_repr(out, v);
            }
            out.push('}');
        }
    }
}

fn write_str_repr(out: &mut String, s: &str) {
    // Python prefers single quotes and switches to double quotes only when the
    // text contains a single quote and no double quote.
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// The integer value of a JSON number the way Python compares it (`1.0 == 1`);
/// booleans and non-integral numbers are not integers here.
pub(crate) fn as_int(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        _ => None,
    }
}

/// Python truthiness of a decoded JSON value (missing counts as falsy).
pub(crate) fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repr_matches_python_shapes() {
        assert_eq!(py_repr(Some(&json!(["a", "b"]))), "['a', 'b']");
        assert_eq!(py_repr(None), "None");
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(py_str(Some(&json!("2"))), "2");
        assert_eq!(as_int(Some(&json!(2.0))), Some(2));
        assert_eq!(as_int(Some(&json!(true))), None);
    }
}
