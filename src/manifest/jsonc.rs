//! JSONC (JSON with comments and trailing commas) parsed into a tree that keeps the source
//! span of every key and value, so any finding can point at the exact token.
//!
//! Parsing is done by `jsonc-parser`; this module converts its AST into an owned tree that
//! keeps duplicate keys (so they can be reported) and answers JSON-pointer look-ups.

use std::fmt;

use jsonc_parser::ast;
use jsonc_parser::{CollectOptions, CommentCollectionStrategy, ParseOptions};

use acp_registry_core::source::Span;

/// A JSON value with its span.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Bytes of the value in the source.
    pub span: Span,
    /// The value.
    pub value: NodeValue,
}

#[derive(Debug, Clone, PartialEq)]
/// A JSON value; numbers are kept as written.
pub enum NodeValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// The number as written; JSONC numbers are plain JSON numbers here.
    Number(String),
    /// A string, unescaped.
    String(String),
    /// Items in source order.
    Array(Vec<Node>),
    /// Members in source order, duplicates kept.
    Object(Vec<Member>),
}

#[derive(Debug, Clone, PartialEq)]
/// One object member: its key and value, each with its span.
pub struct Member {
    /// The key, unescaped.
    pub key: String,
    /// Bytes of the key as written.
    pub key_span: Span,
    /// The value.
    pub value: Node,
}

/// A syntax error with the span of the first offending token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// The first offending token.
    pub span: Span,
    /// What the parser expected, lowercased.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Parse JSONC: `//` and `/* */` comments and trailing commas are allowed; everything else
/// is strict JSON (no single quotes, unquoted keys, hex numbers, missing commas or raw control
/// characters in strings), because every client reads the published output with a strict JSON
/// parser.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let options = ParseOptions {
        allow_comments: true,
        allow_loose_object_property_names: false,
        allow_trailing_commas: true,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let collect = CollectOptions {
        comments: CommentCollectionStrategy::Off,
        tokens: false,
    };
    match jsonc_parser::parse_to_ast(text, &collect, &options) {
        Ok(result) => match result.value {
            Some(value) => {
                let node = convert(value);
                match raw_control_character(&node, text) {
                    Some(error) => Err(error),
                    None => Ok(node),
                }
            }
            None => Err(SyntaxError {
                span: Span::new(text.len(), text.len()),
                message: "the file holds no JSON value".into(),
            }),
        },
        Err(error) => {
            let range = error.range();
            Err(SyntaxError {
                span: Span::new(range.start, range.end.max(range.start)),
                message: lowercase_first(&error.kind().to_string()),
            })
        }
    }
}

/// The first raw U+0000–U+001F inside a string literal (key or value): JSON requires them
/// escaped, and jsonc-parser lets them through.
fn raw_control_character(root: &Node, text: &str) -> Option<SyntaxError> {
    let mut literals = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match &node.value {
            NodeValue::String(_) => literals.push(node.span),
            NodeValue::Array(items) => stack.extend(items),
            NodeValue::Object(members) => {
                for member in members {
                    literals.push(member.key_span);
                    stack.push(&member.value);
                }
            }
            _ => {}
        }
    }
    let offset = literals
        .into_iter()
        .filter_map(|span| {
            let raw = text.get(span.start..span.end)?;
            raw.bytes().position(|b| b < 0x20).map(|i| span.start + i)
        })
        .min()?;
    let byte = text.as_bytes()[offset];
    let escape = match byte {
        b'\t' => "\\t".to_string(),
        b'\n' => "\\n".to_string(),
        b'\r' => "\\r".to_string(),
        other => format!("\\u{other:04x}"),
    };
    Some(SyntaxError {
        span: Span::new(offset, offset + 1),
        message: format!(
            "raw control character U+{byte:04X} inside a string; JSON requires it escaped as `{escape}`"
        ),
    })
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn span_of(range: jsonc_parser::common::Range) -> Span {
    Span::new(range.start, range.end)
}

fn convert(value: ast::Value<'_>) -> Node {
    match value {
        ast::Value::StringLit(s) => Node {
            span: span_of(s.range),
            value: NodeValue::String(s.value.into_owned()),
        },
        ast::Value::NumberLit(n) => Node {
            span: span_of(n.range),
            value: NodeValue::Number(n.value.to_string()),
        },
        ast::Value::BooleanLit(b) => Node {
            span: span_of(b.range),
            value: NodeValue::Bool(b.value),
        },
        ast::Value::NullKeyword(n) => Node {
            span: span_of(n.range),
            value: NodeValue::Null,
        },
        ast::Value::Array(a) => Node {
            span: span_of(a.range),
            value: NodeValue::Array(a.elements.into_iter().map(convert).collect()),
        },
        ast::Value::Object(o) => Node {
            span: span_of(o.range),
            value: NodeValue::Object(
                o.properties
                    .into_iter()
                    .map(|p| {
                        let (key, key_span) = match p.name {
                            ast::ObjectPropName::String(s) => {
                                (s.value.into_owned(), span_of(s.range))
                            }
                            ast::ObjectPropName::Word(w) => (w.value.to_string(), span_of(w.range)),
                        };
                        Member {
                            key,
                            key_span,
                            value: convert(p.value),
                        }
                    })
                    .collect(),
            ),
        },
    }
}

impl Node {
    /// The text, when a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            NodeValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The items, when a list.
    pub fn as_array(&self) -> Option<&[Node]> {
        match &self.value {
            NodeValue::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The members, when an object.
    pub fn as_object(&self) -> Option<&[Member]> {
        match &self.value {
            NodeValue::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The member `key` of an object; with duplicates, the last one wins, as in every JSON
    /// parser clients use.
    pub fn member(&self, key: &str) -> Option<&Member> {
        self.as_object()?.iter().rev().find(|m| m.key == key)
    }

    /// The value of the last member named `key` (last wins, as in clients).
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.member(key).map(|m| &m.value)
    }

    /// The text of member `key`, when it is a string.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Node::as_str)
    }

    /// Members with duplicates removed (last wins), in first-appearance order of the survivors.
    pub fn unique_members(&self) -> Vec<&Member> {
        let Some(members) = self.as_object() else {
            return Vec::new();
        };
        members
            .iter()
            .enumerate()
            .filter(|(i, m)| !members[i + 1..].iter().any(|later| later.key == m.key))
            .map(|(_, m)| m)
            .collect()
    }

    /// Resolve an RFC 6901 JSON pointer. Returns the node and, when the last step was an
    /// object key, that key's span.
    pub fn pointer(&self, pointer: &str) -> Option<(&Node, Option<Span>)> {
        if pointer.is_empty() {
            return Some((self, None));
        }
        let mut node = self;
        let mut key_span = None;
        for raw in pointer.strip_prefix('/')?.split('/') {
            let token = raw.replace("~1", "/").replace("~0", "~");
            match &node.value {
                NodeValue::Object(_) => {
                    let member = node.member(&token)?;
                    key_span = Some(member.key_span);
                    node = &member.value;
                }
                NodeValue::Array(items) => {
                    node = items.get(token.parse::<usize>().ok()?)?;
                    key_span = None;
                }
                _ => return None,
            }
        }
        Some((node, key_span))
    }

    /// Plain JSON value (duplicate keys resolved last-wins, like clients).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.value {
            NodeValue::Null => Value::Null,
            NodeValue::Bool(b) => Value::Bool(*b),
            NodeValue::Number(raw) => {
                serde_json::from_str::<serde_json::Number>(raw).map_or(Value::Null, Value::Number)
            }
            NodeValue::String(s) => Value::String(s.clone()),
            NodeValue::Array(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeValue::Object(_) => Value::Object(
                self.unique_members()
                    .into_iter()
                    .map(|m| (m.key.clone(), m.value.to_json()))
                    .collect(),
            ),
        }
    }

    /// Every object member at any depth whose key repeats an earlier key of the same object,
    /// with the JSON pointer of the object and the span of the first occurrence.
    pub fn duplicate_keys(&self) -> Vec<DuplicateKey> {
        let mut found = Vec::new();
        self.collect_duplicates("", &mut found);
        found
    }

    fn collect_duplicates(&self, path: &str, found: &mut Vec<DuplicateKey>) {
        match &self.value {
            NodeValue::Object(members) => {
                for (i, member) in members.iter().enumerate() {
                    let pointer = format!("{path}/{}", escape_pointer(&member.key));
                    if let Some(first) = members[..i].iter().find(|m| m.key == member.key) {
                        found.push(DuplicateKey {
                            pointer: pointer.clone(),
                            key: member.key.clone(),
                            span: member.key_span,
                            first: first.key_span,
                        });
                    }
                    member.value.collect_duplicates(&pointer, found);
                }
            }
            NodeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    item.collect_duplicates(&format!("{path}/{i}"), found);
                }
            }
            _ => {}
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
/// A key repeated in one object.
pub struct DuplicateKey {
    /// JSON pointer of the repeated member.
    pub pointer: String,
    /// The key.
    pub key: String,
    /// Span of the repeated key.
    pub span: Span,
    /// Span of its first occurrence.
    pub first: Span,
}

/// Escape one reference token of a JSON pointer (RFC 6901).
pub fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_accepted() {
        let node = parse("{\n // c\n \"a\": [1, 2,], /* x */ \"b\": \"é\",\n}").unwrap();
        assert_eq!(node.to_json(), serde_json::json!({"a": [1, 2], "b": "é"}));
    }

    #[test]
    fn spans_are_byte_offsets_of_keys_and_values() {
        let text = "{\"é\": \"x\", \"k\": 12}";
        let node = parse(text).unwrap();
        let (value, key) = node.pointer("/k").unwrap();
        assert_eq!(&text[value.span.start..value.span.end], "12");
        let key = key.unwrap();
        assert_eq!(&text[key.start..key.end], "\"k\"");
    }

    #[test]
    fn duplicate_keys_are_kept_and_reported_last_wins() {
        let node = parse("{\"a\": 1, \"b\": {\"c\": 1, \"c\": 2}, \"a\": 3}").unwrap();
        let dups = node.duplicate_keys();
        let pointers: Vec<_> = dups.iter().map(|d| d.pointer.as_str()).collect();
        assert_eq!(pointers, ["/b/c", "/a"]);
        assert_eq!(node.to_json(), serde_json::json!({"b": {"c": 2}, "a": 3}));
    }

    #[test]
    fn strict_json_outside_comments_and_trailing_commas() {
        for bad in [
            "{'a': 1}",
            "{a: 1}",
            "[0x10]",
            "{\"a\": 1 \"b\": 2}",
            "",
            "{} {}",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn raw_control_characters_in_strings_are_syntax_errors() {
        for (text, at, escape) in [
            ("{\"a\": \"x\ty\"}", 8, "`\\t`"),
            ("{\"a\": [\"ok\", \"x\ny\"]}", 15, "`\\n`"),
            ("{\"a\\u0001\u{1}\": 1}", 9, "`\\u0001`"),
        ] {
            let error = parse(text).expect_err(text);
            assert_eq!(error.span, Span::new(at, at + 1), "{text:?}");
            assert!(
                error.message.contains(escape),
                "{text:?}: {}",
                error.message
            );
        }
    }

    #[test]
    fn escaped_control_characters_and_raw_ones_in_comments_are_accepted() {
        let node = parse("{\n\t\"a\": \"x\\ty\\u0001\", // tab\there\n\"b\": \"\u{7f}\"}").unwrap();
        assert_eq!(
            node.to_json(),
            serde_json::json!({"a": "x\ty\u{1}", "b": "\u{7f}"})
        );
    }

    #[test]
    fn pointer_unescapes_tokens() {
        let node = parse("{\"a/b\": {\"~\": [true]}}").unwrap();
        let (v, _) = node.pointer("/a~1b/~0/0").unwrap();
        assert_eq!(v.value, NodeValue::Bool(true));
    }
}
