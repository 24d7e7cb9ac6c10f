//! The one comment-keeping JSONC editor: every tool that writes a manifest (`fmt`,
//! `validate --fix`, `update`, `pack`) changes it through [`Editor`], by JSON pointer.
//!
//! Edits go through jsonc-parser's concrete syntax tree, so everything outside the value
//! changed (comments, blank lines, indentation, trailing commas) is written back as it was;
//! nothing is ever re-serialised. Removal is done on the text with the spans of
//! [`super::parse`], because the tree drops the comments on a removed member's line.
//!
//! The result of every edit is parsed again before it is kept, so an edit can never leave a
//! manifest that does not parse.

use jsonc_parser::cst::{
    CstContainerNode, CstInputValue, CstLeafNode, CstNode, CstObject, CstObjectProp, CstRootNode,
    ObjectPropName,
};
use jsonc_parser::ParseOptions;
use serde_json::Value;

use super::jsonc::{self, Node, NodeValue, SyntaxError};
use super::order::key_order;
use acp_registry_core::source::Span;

mod format;

/// Why an edit was refused. The text is unchanged after any error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("not valid JSONC: {0}")]
    /// The text is not valid JSONC.
    Parse(SyntaxError),
    #[error("`{0}` is not a JSON pointer: it must be empty or start with `/`")]
    /// The pointer is not a JSON pointer.
    BadPointer(String),
    #[error("nothing at `{0}`")]
    /// Nothing exists at the pointer.
    Missing(String),
    #[error("`{pointer}` is {found}, not {expected}")]
    /// The value at the pointer has another type.
    WrongType {
        /// Where the value is.
        pointer: String,
        /// The type the edit needs.
        expected: &'static str,
        /// The type found.
        found: &'static str,
    },
    /// The object already has a member of that name.
    #[error("`{pointer}` already has a member `{key}`")]
    KeyExists {
        /// The object.
        pointer: String,
        /// The member name.
        key: String,
    },
    /// The formatter would have changed a value; a bug, reported rather than written.
    #[error("the canonical layout would change a value; the file is left as it is")]
    Unformattable,
}

/// Where [`Editor::insert`] puts a new member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Position {
    /// Before the first member that sorts after it in the canonical order of that object
    /// (`manifest::order`); at the end when none does.
    #[default]
    Canonical,
    /// After the last member.
    End,
    /// Before the first member whose name sorts after it (byte order): for objects keyed by
    /// id, such as `quarantine.json`.
    Sorted,
}

/// A JSONC document being edited. Duplicate keys resolve last-wins, as in [`Node::member`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Editor {
    text: String,
}

impl Editor {
    /// Accepts exactly what [`super::parse`] accepts.
    pub fn parse(text: &str) -> Result<Self, EditError> {
        jsonc::parse(text).map_err(EditError::Parse)?;
        Ok(Self {
            text: text.to_string(),
        })
    }

    /// The current text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The edited text.
    pub fn into_text(self) -> String {
        self.text
    }

    /// Replace the string at `pointer` with `value`, keeping everything around it.
    pub fn set_string(&mut self, pointer: &str, value: &str) -> Result<(), EditError> {
        self.set_value(pointer, &Value::String(value.to_string()))
    }

    /// Replace the existing value at `pointer` (the empty pointer is the whole document);
    /// comments inside the old value go with it, every other byte stays.
    pub fn set_value(&mut self, pointer: &str, value: &Value) -> Result<(), EditError> {
        let steps = tokens(pointer)?;
        self.edit(|root| {
            let input = input_value(value);
            let Some((last, parent)) = steps.split_last() else {
                root.set_value(input);
                return Ok(());
            };
            let parent_pointer = join(parent);
            match resolve(root, parent, &parent_pointer)? {
                CstNode::Container(CstContainerNode::Object(object)) => {
                    let prop = last_member(&object, last)
                        .ok_or_else(|| EditError::Missing(pointer.to_string()))?;
                    prop.set_value(input);
                    Ok(())
                }
                CstNode::Container(CstContainerNode::Array(array)) => {
                    let element = element(&array.elements(), last, pointer)?;
                    replace(element, input);
                    Ok(())
                }
                other => Err(not_container(&parent_pointer, &other)),
            }
        })
    }

    /// Set the value at `pointer`, inserting the member at its canonical place when the parent
    /// object lacks it.
    pub fn set_or_insert(&mut self, pointer: &str, value: &Value) -> Result<(), EditError> {
        match self.set_value(pointer, value) {
            Err(EditError::Missing(missing)) if missing == pointer => {
                let steps = tokens(pointer)?;
                let (key, parent) = steps.split_last().expect("a missing value has a parent");
                self.insert(&join(parent), key, value, Position::Canonical)
            }
            other => other,
        }
    }

    /// Add the member `key` to the object at `object_pointer`.
    pub fn insert(
        &mut self,
        object_pointer: &str,
        key: &str,
        value: &Value,
        position: Position,
    ) -> Result<(), EditError> {
        let steps = tokens(object_pointer)?;
        self.edit(|root| {
            let object = object_at(root, &steps, object_pointer)?;
            if last_member(&object, key).is_some() {
                return Err(EditError::KeyExists {
                    pointer: object_pointer.to_string(),
                    key: key.to_string(),
                });
            }
            let names: Vec<String> = object.properties().iter().map(name_of).collect();
            let index = match position {
                Position::End => names.len(),
                Position::Sorted => names
                    .iter()
                    .position(|name| name.as_str() > key)
                    .unwrap_or(names.len()),
                Position::Canonical => {
                    let path: Vec<&str> = steps.iter().map(String::as_str).collect();
                    let order = key_order(&path);
                    names
                        .iter()
                        .position(|name| order.compare(name, key).is_gt())
                        .unwrap_or(names.len())
                }
            };
            object.insert(index, key, input_value(value));
            Ok(())
        })
    }

    /// Rename the member at `pointer` to `new_key`, keeping its value and everything around it.
    pub fn rename_key(&mut self, pointer: &str, new_key: &str) -> Result<(), EditError> {
        let steps = tokens(pointer)?;
        let Some((last, parent)) = steps.split_last() else {
            return Err(EditError::Missing(pointer.to_string()));
        };
        let parent_pointer = join(parent);
        self.edit(|root| {
            let object = object_at(root, parent, &parent_pointer)?;
            let prop = last_member(&object, last)
                .ok_or_else(|| EditError::Missing(pointer.to_string()))?;
            if new_key != last && last_member(&object, new_key).is_some() {
                return Err(EditError::KeyExists {
                    pointer: parent_pointer.clone(),
                    key: new_key.to_string(),
                });
            }
            let quoted = serde_json::to_string(new_key).expect("a string serialises");
            match prop.name() {
                Some(ObjectPropName::String(name)) => name.set_raw_value(quoted),
                Some(ObjectPropName::Word(name)) => name.set_raw_value(quoted),
                None => return Err(EditError::Missing(pointer.to_string())),
            }
            Ok(())
        })
    }

    /// Remove the member (every duplicate of it) or array element at `pointer`. Comments
    /// outside the removed member stay, including one on its line.
    pub fn remove(&mut self, pointer: &str) -> Result<(), EditError> {
        let steps = tokens(pointer)?;
        let Some((last, parent)) = steps.split_last() else {
            return Err(EditError::Missing(pointer.to_string()));
        };
        let parent_pointer = join(parent);
        let mut removed = false;
        loop {
            let root = jsonc::parse(&self.text).map_err(EditError::Parse)?;
            let (container, _) = root
                .pointer(&parent_pointer)
                .ok_or_else(|| EditError::Missing(parent_pointer.clone()))?;
            let (spans, index) = match &container.value {
                NodeValue::Object(members) => {
                    let spans: Vec<Span> = members
                        .iter()
                        .map(|m| Span::new(m.key_span.start, m.value.span.end))
                        .collect();
                    match members.iter().rposition(|m| m.key == *last) {
                        Some(index) => (spans, index),
                        None if removed => return Ok(()),
                        None => return Err(EditError::Missing(pointer.to_string())),
                    }
                }
                NodeValue::Array(items) => {
                    let spans: Vec<Span> = items.iter().map(|i| i.span).collect();
                    (spans.clone(), array_index(last, spans.len(), pointer)?)
                }
                _ => return Err(not_container_node(&parent_pointer, container)),
            };
            self.text = remove_element(&self.text, &spans, index);
            removed = true;
            if matches!(container.value, NodeValue::Array(_)) {
                return Ok(());
            }
        }
    }

    /// Rewrite the document in the canonical layout (`fmt`): keys in `manifest::order`,
    /// 2-space indentation, one member per line; every comment kept with the member it
    /// precedes or trails. Refused (text unchanged) if the result would not hold the same value.
    pub fn format(&mut self) -> Result<(), EditError> {
        let before = jsonc::parse(&self.text)
            .map_err(EditError::Parse)?
            .to_json();
        let text = format::canonical(&self.cst()?);
        let after = jsonc::parse(&text).map_err(EditError::Parse)?.to_json();
        if after != before {
            return Err(EditError::Unformattable);
        }
        self.text = text;
        Ok(())
    }

    fn cst(&self) -> Result<CstRootNode, EditError> {
        CstRootNode::parse(&self.text, &ParseOptions::default()).map_err(|error| {
            let range = error.range();
            EditError::Parse(SyntaxError {
                span: Span::new(range.start, range.end.max(range.start)),
                message: error.kind().to_string(),
            })
        })
    }

    /// Run `change` on a fresh tree; keep the text only when it succeeds.
    fn edit(
        &mut self,
        change: impl FnOnce(&CstRootNode) -> Result<(), EditError>,
    ) -> Result<(), EditError> {
        let root = self.cst()?;
        change(&root)?;
        self.text = root.to_string();
        Ok(())
    }
}

/// The reference tokens of an RFC 6901 pointer, unescaped.
fn tokens(pointer: &str) -> Result<Vec<String>, EditError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let rest = pointer
        .strip_prefix('/')
        .ok_or_else(|| EditError::BadPointer(pointer.to_string()))?;
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn join(steps: &[String]) -> String {
    steps.iter().fold(String::new(), |mut out, s| {
        out.push('/');
        out.push_str(&jsonc::escape_pointer(s));
        out
    })
}

fn resolve(root: &CstRootNode, steps: &[String], pointer: &str) -> Result<CstNode, EditError> {
    let missing = || EditError::Missing(pointer.to_string());
    let mut node = root.value().ok_or_else(missing)?;
    for (depth, step) in steps.iter().enumerate() {
        node = match &node {
            CstNode::Container(CstContainerNode::Object(object)) => last_member(object, step)
                .and_then(|p| p.value())
                .ok_or_else(missing)?,
            CstNode::Container(CstContainerNode::Array(array)) => {
                element(&array.elements(), step, pointer)?
            }
            other => return Err(not_container(&join(&steps[..depth]), other)),
        };
    }
    Ok(node)
}

fn object_at(root: &CstRootNode, steps: &[String], pointer: &str) -> Result<CstObject, EditError> {
    match resolve(root, steps, pointer)? {
        CstNode::Container(CstContainerNode::Object(object)) => Ok(object),
        other => Err(EditError::WrongType {
            pointer: pointer.to_string(),
            expected: "an object",
            found: kind(&other),
        }),
    }
}

/// The member `key` of `object`; with duplicates the last, as clients read it.
fn last_member(object: &CstObject, key: &str) -> Option<CstObjectProp> {
    object
        .properties()
        .into_iter()
        .rev()
        .find(|p| p.decoded_name().as_deref() == Some(key))
}

fn name_of(prop: &CstObjectProp) -> String {
    prop.decoded_name().unwrap_or_default()
}

fn array_index(token: &str, len: usize, pointer: &str) -> Result<usize, EditError> {
    // RFC 6901: digits without a leading zero.
    let canonical = !(token.starts_with('+') || token.len() > 1 && token.starts_with('0'));
    let index = canonical.then(|| token.parse::<usize>().ok()).flatten();
    index
        .filter(|i| *i < len)
        .ok_or_else(|| EditError::Missing(pointer.to_string()))
}

fn element(elements: &[CstNode], token: &str, pointer: &str) -> Result<CstNode, EditError> {
    Ok(elements[array_index(token, elements.len(), pointer)?].clone())
}

fn replace(node: CstNode, input: CstInputValue) {
    match node {
        CstNode::Container(CstContainerNode::Object(n)) => drop(n.replace_with(input)),
        CstNode::Container(CstContainerNode::Array(n)) => drop(n.replace_with(input)),
        CstNode::Leaf(CstLeafNode::StringLit(n)) => drop(n.replace_with(input)),
        CstNode::Leaf(CstLeafNode::NumberLit(n)) => drop(n.replace_with(input)),
        CstNode::Leaf(CstLeafNode::BooleanLit(n)) => drop(n.replace_with(input)),
        CstNode::Leaf(CstLeafNode::NullKeyword(n)) => drop(n.replace_with(input)),
        CstNode::Leaf(CstLeafNode::WordLit(n)) => drop(n.replace_with(input)),
        _ => {}
    }
}

fn kind(node: &CstNode) -> &'static str {
    match node {
        CstNode::Container(CstContainerNode::Object(_)) => "an object",
        CstNode::Container(CstContainerNode::Array(_)) => "an array",
        CstNode::Leaf(CstLeafNode::StringLit(_)) => "a string",
        CstNode::Leaf(CstLeafNode::NumberLit(_)) => "a number",
        CstNode::Leaf(CstLeafNode::BooleanLit(_)) => "a boolean",
        CstNode::Leaf(CstLeafNode::NullKeyword(_)) => "null",
        _ => "not a value",
    }
}

fn not_container(pointer: &str, node: &CstNode) -> EditError {
    EditError::WrongType {
        pointer: pointer.to_string(),
        expected: "an object or an array",
        found: kind(node),
    }
}

fn not_container_node(pointer: &str, node: &Node) -> EditError {
    EditError::WrongType {
        pointer: pointer.to_string(),
        expected: "an object or an array",
        found: match node.value {
            NodeValue::String(_) => "a string",
            NodeValue::Number(_) => "a number",
            NodeValue::Bool(_) => "a boolean",
            _ => "null",
        },
    }
}

fn input_value(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input_value).collect()),
        Value::Object(map) => CstInputValue::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), input_value(v)))
                .collect(),
        ),
    }
}

/// `text` without the element `spans[index]` of one container and the comma that separated it,
/// every comment kept; a line left holding only spaces goes too.
fn remove_element(text: &str, spans: &[Span], index: usize) -> String {
    let span = spans[index];
    let mut cuts = Vec::with_capacity(2);
    cuts.push(span.start..span.end);
    match comma_after(text, span.end) {
        Some(comma) => cuts.push(comma..comma + 1 + spaces_before_content(text, comma + 1)),
        None if index > 0 => {
            let comma = comma_after(text, spans[index - 1].end).expect("elements are separated");
            let between = &text[comma + 1..span.start];
            if between.bytes().all(|b| b == b' ' || b == b'\t') {
                cuts[0].start = comma;
            } else {
                cuts.push(comma..comma + 1);
            }
        }
        None => {}
    }
    cuts.sort_by_key(|c| c.start);
    let mut out = String::with_capacity(text.len());
    let mut marks = Vec::new();
    let mut at = 0;
    for cut in &cuts {
        out.push_str(&text[at..cut.start]);
        marks.push((out.len(), line_is_blank(text, cut.start)));
        at = cut.end;
    }
    out.push_str(&text[at..]);
    for (mark, was_blank) in marks.into_iter().rev() {
        if !was_blank {
            drop_blank_line(&mut out, mark);
        }
    }
    out
}

/// The offset of the `,` after `end`, past whitespace and comments, if that comes next.
fn comma_after(text: &str, end: usize) -> Option<usize> {
    let at = skip_trivia(text, end);
    (text.as_bytes().get(at) == Some(&b',')).then_some(at)
}

fn skip_trivia(text: &str, mut at: usize) -> usize {
    let bytes = text.as_bytes();
    loop {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let rest = &text[at..];
        if rest.starts_with("//") {
            at += rest.find('\n').unwrap_or(rest.len());
        } else if let Some(body) = rest.strip_prefix("/*") {
            at += body.find("*/").map_or(rest.len(), |i| i + 4);
        } else {
            return at;
        }
    }
}

/// Spaces after a removed comma that would be left in front of what follows on its line.
fn spaces_before_content(text: &str, from: usize) -> usize {
    let spaces = text[from..]
        .bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count();
    match text.as_bytes().get(from + spaces) {
        Some(b'\n' | b'\r') | None => 0,
        Some(_) => spaces,
    }
}

fn line_bounds(text: &str, at: usize) -> (usize, usize) {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    (start, end)
}

fn line_is_blank(text: &str, at: usize) -> bool {
    let (start, end) = line_bounds(text, at);
    text[start..end].trim().is_empty()
}

/// Remove the line holding `at` when only whitespace is left on it.
fn drop_blank_line(text: &mut String, at: usize) {
    let (start, end) = line_bounds(text, at);
    if text[start..end].trim().is_empty() && end < text.len() {
        text.replace_range(start..end + 1, "");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edited(text: &str, f: impl FnOnce(&mut Editor) -> Result<(), EditError>) -> String {
        let mut editor = Editor::parse(text).unwrap();
        f(&mut editor).unwrap();
        editor.into_text()
    }

    #[test]
    fn setting_a_string_changes_only_that_string() {
        let text = "{\n  // why\n  \"url\": \"http://x\", // trailing\n  \"n\": 1\n}\n";
        let out = edited(text, |e| e.set_string("/url", "https://x"));
        assert_eq!(out, text.replace("http://x", "https://x"));
    }

    #[test]
    fn removing_a_member_keeps_the_comments_on_its_line() {
        let text = "{\n  \"a\": 1,\n  /* above */\n  \"icon\": \"x\", // about icon\n  \"b\": 2\n}";
        let out = edited(text, |e| e.remove("/icon"));
        assert_eq!(
            out,
            "{\n  \"a\": 1,\n  /* above */\n  // about icon\n  \"b\": 2\n}"
        );
    }

    #[test]
    fn removing_the_last_member_takes_the_comma_before_it() {
        let out = edited("{\n  \"a\": 1,\n  \"b\": 2\n}", |e| e.remove("/b"));
        assert_eq!(out, "{\n  \"a\": 1\n}");
        let out = edited("{\"a\": 1, \"b\": 2}", |e| e.remove("/b"));
        assert_eq!(out, "{\"a\": 1}");
        let out = edited("{\"a\": 1, \"b\": 2}", |e| e.remove("/a"));
        assert_eq!(out, "{\"b\": 2}");
        let out = edited("[1, 2, 3]", |e| e.remove("/1"));
        assert_eq!(out, "[1, 3]");
        // A comment between a value and its comma stays; `/*/` does not end it.
        let out = edited("{\"a\": 1 /*/ c */, \"b\": 2}", |e| e.remove("/a"));
        assert_eq!(out, "{ /*/ c */\"b\": 2}");
    }

    #[test]
    fn removing_removes_every_duplicate() {
        let out = edited("{\"a\": 1, \"a\": 2, \"b\": 3}", |e| e.remove("/a"));
        assert_eq!(out, "{\"b\": 3}");
    }

    #[test]
    fn renaming_a_key_keeps_value_and_comments() {
        let text = "{\"binary\": {\n  // x\n  \"linux-x64\": /* v */ {\"cmd\": \"a\"}\n}}";
        let out = edited(text, |e| e.rename_key("/binary/linux-x64", "linux-x86_64"));
        assert_eq!(out, text.replace("linux-x64", "linux-x86_64"));
    }

    #[test]
    fn inserting_goes_to_the_canonical_place() {
        let text = "{\n  \"id\": \"a\",\n  \"version\": \"1.0.0\"\n}";
        let out = edited(text, |e| {
            e.insert("", "name", &json!("A"), Position::Canonical)
        });
        assert_eq!(
            out,
            "{\n  \"id\": \"a\",\n  \"name\": \"A\",\n  \"version\": \"1.0.0\"\n}"
        );
        let out = edited(text, |e| e.insert("", "name", &json!("A"), Position::End));
        assert!(out.ends_with("\"name\": \"A\"\n}"), "{out}");
    }

    #[test]
    fn set_or_insert_adds_a_missing_digest_after_cmd() {
        let text = r#"{
  "distribution": {
    "binary": {
      "linux-x86_64": {
        "archive": "u",
        "cmd": "c",
        "env": {}
      }
    }
  }
}"#;
        let pointer = "/distribution/binary/linux-x86_64/sha256";
        let out = edited(text, |e| e.set_or_insert(pointer, &json!("ab")));
        assert_eq!(
            out,
            text.replace(
                "\"env\": {}\n",
                "\"env\": {},\n        \"sha256\": \"ab\"\n"
            )
        );
    }

    #[test]
    fn errors_are_typed_and_leave_the_text_alone() {
        let mut editor = Editor::parse("{\"a\": [1], \"s\": \"x\"}").unwrap();
        let before = editor.clone();
        assert_eq!(
            editor.set_string("/b", "x"),
            Err(EditError::Missing("/b".into()))
        );
        assert_eq!(
            editor.remove("/a/5"),
            Err(EditError::Missing("/a/5".into()))
        );
        assert!(matches!(
            editor.insert("/s", "k", &json!(1), Position::End),
            Err(EditError::WrongType {
                found: "a string",
                ..
            })
        ));
        assert!(matches!(
            editor.rename_key("/s", "a"),
            Err(EditError::KeyExists { .. })
        ));
        assert_eq!(editor.remove("a"), Err(EditError::BadPointer("a".into())));
        assert_eq!(editor, before);
        assert!(matches!(Editor::parse("{a: 1}"), Err(EditError::Parse(_))));
    }
}
