//! Properties of the JSONC editing layer (`manifest::edit`): after any edit the document
//! re-parses (with the crate's own parser) to the intended value, everything else is
//! unchanged, and every comment outside the changed value is still there.

use acp_registry::escape_pointer;
use acp_registry::{Editor, Position};
use proptest::prelude::*;
use serde_json::{Map, Value};

const KEYS: [&str; 8] = ["a", "b", "id", "name", "version", "x~y", "s/t", "é"];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        "[a-z \"\\\\é]{0,6}".prop_map(Value::String),
    ]
}

fn document() -> impl Strategy<Value = Value> {
    let tree = scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((0..KEYS.len(), inner), 0..5).prop_map(|members| {
                let mut map = Map::new();
                for (key, value) in members {
                    map.insert(KEYS[key].to_string(), value);
                }
                Value::Object(map)
            }),
        ]
    });
    prop::collection::vec((0..KEYS.len(), tree), 1..6).prop_map(|members| {
        Value::Object(
            members
                .into_iter()
                .map(|(k, v)| (KEYS[k].to_string(), v))
                .collect(),
        )
    })
}

/// Writes `value` as JSONC with a uniquely numbered comment in every kind of place: above a
/// member, after its comma, between colon and value, before a closing bracket, around the root.
struct Printer {
    rng: fastrand::Rng,
    out: String,
    comments: Vec<String>,
}

impl Printer {
    fn comment(&mut self, line: bool) {
        let tag = format!("c{}", self.comments.len());
        self.out.push_str(&if line {
            format!("// {tag}\n")
        } else {
            format!("/* {tag} */")
        });
        self.comments.push(tag);
    }

    fn maybe_comment(&mut self, line: bool, indent: &str) {
        if self.rng.u8(..4) == 0 {
            if line {
                self.out.push_str(indent);
            }
            self.comment(line);
            if !line {
                self.out.push(' ');
            }
        }
    }

    fn value(&mut self, value: &Value, depth: usize) {
        let indent = "  ".repeat(depth + 1);
        let (open, close, items): (char, char, Vec<(Option<&String>, &Value)>) = match value {
            Value::Object(map) => ('{', '}', map.iter().map(|(k, v)| (Some(k), v)).collect()),
            Value::Array(items) => ('[', ']', items.iter().map(|v| (None, v)).collect()),
            scalar => return self.out.push_str(&scalar.to_string()),
        };
        self.out.push(open);
        self.out.push('\n');
        let trailing = self.rng.bool();
        for (i, (key, item)) in items.iter().enumerate() {
            self.maybe_comment(true, &indent);
            self.out.push_str(&indent);
            if let Some(key) = key {
                self.out.push_str(&serde_json::to_string(key).unwrap());
                self.out.push_str(": ");
                self.maybe_comment(false, "");
            }
            self.value(item, depth + 1);
            if i + 1 < items.len() || trailing {
                self.out.push(',');
            }
            if self.rng.u8(..4) == 0 {
                self.out.push(' ');
                self.comment(true);
            } else {
                self.out.push('\n');
            }
        }
        self.maybe_comment(true, &indent);
        self.out.push_str(&"  ".repeat(depth));
        self.out.push(close);
    }
}

fn print(value: &Value, seed: u64) -> (String, Vec<String>) {
    let mut printer = Printer {
        rng: fastrand::Rng::with_seed(seed),
        out: String::new(),
        comments: Vec::new(),
    };
    printer.maybe_comment(true, "");
    printer.value(value, 0);
    printer.out.push('\n');
    printer.maybe_comment(true, "");
    (printer.out, printer.comments)
}

/// Every value's pointer, with whether its parent is an object.
/// The pointer `pick` chooses among every pointer of `value`, and whether it names an
/// object member.
fn pick_pointer(value: &Value, pick: &prop::sample::Index) -> (String, bool) {
    let mut all = Vec::new();
    pointers(value, "", &mut all, false);
    pick.get(&all).clone()
}

fn pointers(value: &Value, at: &str, out: &mut Vec<(String, bool)>, in_object: bool) {
    out.push((at.to_string(), in_object));
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                pointers(v, &format!("{at}/{}", escape_pointer(k)), out, true);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                pointers(v, &format!("{at}/{i}"), out, false);
            }
        }
        _ => {}
    }
}

fn parent_and_last(pointer: &str) -> (&str, String) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    (parent, last.replace("~1", "/").replace("~0", "~"))
}

#[derive(Debug, Clone)]
enum Op {
    Set(Value),
    Remove,
    Rename(usize),
    Insert(usize, Value, bool),
}

fn op() -> impl Strategy<Value = Op> {
    let small = prop_oneof![
        scalar(),
        prop::collection::vec(scalar(), 0..3).prop_map(Value::Array),
        (0..KEYS.len(), scalar()).prop_map(|(k, v)| {
            let mut map = Map::new();
            map.insert(KEYS[k].to_string(), v);
            Value::Object(map)
        }),
    ];
    prop_oneof![
        small.clone().prop_map(Op::Set),
        Just(Op::Remove),
        (0..KEYS.len()).prop_map(Op::Rename),
        (0..KEYS.len(), small, any::<bool>()).prop_map(|(k, v, c)| Op::Insert(k, v, c)),
    ]
}

/// Apply `op` at `pointer` to the editor and to the plain value; `None` when the op does not
/// apply there. Returns the text span whose comments the edit may drop.
fn apply(
    editor: &mut Editor,
    expected: &mut Value,
    pointer: &str,
    in_object: bool,
    op: &Op,
    text: &str,
) -> Option<(usize, usize)> {
    let root = acp_registry::parse(text).unwrap();
    let (node, key_span) = root.pointer(pointer).unwrap();
    match op {
        Op::Set(value) => {
            editor.set_value(pointer, value).unwrap();
            *expected.pointer_mut(pointer).unwrap() = value.clone();
            Some((node.span.start, node.span.end))
        }
        Op::Remove if !pointer.is_empty() => {
            editor.remove(pointer).unwrap();
            let (parent, last) = parent_and_last(pointer);
            match expected.pointer_mut(parent).unwrap() {
                Value::Object(map) => drop(map.shift_remove(&last)),
                Value::Array(items) => drop(items.remove(last.parse::<usize>().unwrap())),
                _ => unreachable!(),
            }
            let start = key_span.map_or(node.span.start, |k| k.start);
            Some((start, node.span.end))
        }
        Op::Rename(key) if in_object && !pointer.is_empty() => {
            let (parent, last) = parent_and_last(pointer);
            let Value::Object(map) = expected.pointer_mut(parent).unwrap() else {
                unreachable!()
            };
            if map.contains_key(KEYS[*key]) {
                return None;
            }
            editor.rename_key(pointer, KEYS[*key]).unwrap();
            let value = map.shift_remove(&last).unwrap();
            map.insert(KEYS[*key].to_string(), value);
            Some((0, 0))
        }
        Op::Insert(key, value, canonical) => {
            let Value::Object(map) = expected.pointer_mut(pointer).unwrap() else {
                return None;
            };
            if map.contains_key(KEYS[*key]) {
                return None;
            }
            let position = if *canonical {
                Position::Canonical
            } else {
                Position::End
            };
            editor.insert(pointer, KEYS[*key], value, position).unwrap();
            map.insert(KEYS[*key].to_string(), value.clone());
            Some((0, 0))
        }
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn an_edit_changes_the_value_at_its_pointer_and_keeps_every_other_value_and_comment(
        value in document(),
        seed in any::<u64>(),
        pick in any::<prop::sample::Index>(),
        op in op(),
    ) {
        let (text, comments) = print(&value, seed);
        let (pointer, in_object) = pick_pointer(&value, &pick);
        let mut editor = Editor::parse(&text).unwrap();
        let mut expected = value.clone();
        let Some((start, end)) = apply(&mut editor, &mut expected, &pointer, in_object, &op, &text) else {
            return Ok(());
        };
        let out = editor.text();
        let reparsed = acp_registry::parse(out).unwrap_or_else(|e| panic!("{e}:\n{text}\n=>\n{out}"));
        prop_assert_eq!(reparsed.to_json(), expected, "{:?} at {}:\n{}\n=>\n{}", op, pointer, text, out);
        for tag in &comments {
            let at = text.find(&format!("{tag} ")).or_else(|| text.find(&format!("{tag}\n"))).unwrap();
            if at < start || at >= end {
                prop_assert!(out.contains(tag.as_str()), "{} lost by {:?} at {}:\n{}\n=>\n{}", tag, op, pointer, text, out);
            }
        }
    }

    #[test]
    fn setting_a_scalar_changes_only_the_bytes_of_that_value(
        value in document(),
        seed in any::<u64>(),
        pick in any::<prop::sample::Index>(),
        new in scalar(),
    ) {
        let (text, _) = print(&value, seed);
        let (pointer, _) = pick_pointer(&value, &pick);
        let root = acp_registry::parse(&text).unwrap();
        let span = root.pointer(&pointer).unwrap().0.span;
        let mut editor = Editor::parse(&text).unwrap();
        editor.set_value(&pointer, &new).unwrap();
        let out = editor.text();
        let tail = text.len() - span.end;
        prop_assert_eq!(&out[..span.start], &text[..span.start]);
        prop_assert_eq!(&out[out.len() - tail..], &text[span.end..]);
        let middle = &out[span.start..out.len() - tail];
        prop_assert_eq!(serde_json::from_str::<Value>(middle).unwrap(), new);
    }

    #[test]
    fn the_canonical_layout_is_idempotent_and_keeps_every_value_and_comment(
        value in document(),
        seed in any::<u64>(),
    ) {
        let (text, comments) = print(&value, seed);
        let mut editor = Editor::parse(&text).unwrap();
        editor.format().unwrap();
        let once = editor.text().to_string();
        prop_assert_eq!(acp_registry::parse(&once).unwrap().to_json(), value);
        for tag in &comments {
            prop_assert_eq!(once.matches(&format!("{tag} ")).count() + once.matches(&format!("{tag}\n")).count(), 1, "{}:\n{}\n=>\n{}", tag, text, once);
        }
        editor.format().unwrap();
        prop_assert_eq!(editor.text(), once.as_str());
    }
}
