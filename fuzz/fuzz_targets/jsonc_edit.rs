//! The JSONC editor on arbitrary documents: setting a value gives exactly that value at the
//! pointer, keeps every byte before and after the old value (so every comment outside it), and
//! inserting a member changes nothing else. `cargo fuzz run jsonc_edit`
//!
//! Input: the document, a NUL, then one byte choosing the pointer and the rest as a string.
#![no_main]

use acp_registry::{Editor, Position};
use acp_registry::{escape_pointer, parse, Node, NodeValue};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

/// Pointers of every value reachable without passing a duplicate key (last-wins makes the
/// earlier duplicates unreachable by pointer).
fn pointers(node: &Node, at: String, out: &mut Vec<(String, usize, usize)>) {
    out.push((at.clone(), node.span.start, node.span.end));
    match &node.value {
        NodeValue::Object(_) => {
            for member in node.unique_members() {
                pointers(&member.value, format!("{at}/{}", escape_pointer(&member.key)), out);
            }
        }
        NodeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|b| *b == 0).unwrap_or(data.len());
    let Ok(text) = std::str::from_utf8(&data[..split]) else { return };
    let rest = data.get(split + 1..).unwrap_or_default();
    let Some((&choice, word)) = rest.split_first() else { return };
    let word = String::from_utf8_lossy(word).into_owned();
    let Ok(root) = parse(text) else { return };
    let mut all = Vec::new();
    pointers(&root, String::new(), &mut all);
    let (pointer, start, end) = all[usize::from(choice) % all.len()].clone();
    let value = match choice % 4 {
        0 => Value::String(word.clone()),
        1 => json!({ "k": word.clone(), "n": [1, 2.5, null] }),
        2 => json!(choice),
        _ => Value::Bool(choice % 8 > 3),
    };
    let mut editor = Editor::parse(text).expect("the editor accepts what parse accepts");
    if editor.set_value(&pointer, &value).is_ok() {
        let after = editor.text();
        let node = parse(after).expect("an edit re-parses");
        assert_eq!(node.pointer(&pointer).map(|(n, _)| n.to_json()), Some(value.clone()));
        assert!(after.starts_with(&text[..start]), "bytes before the value changed");
        assert!(after.ends_with(&text[end..]), "bytes after the value changed");
    }
    if let NodeValue::Object(_) = root.pointer(&pointer).map(|(n, _)| &n.value).unwrap() {
        let mut editor = Editor::parse(text).unwrap();
        if editor.insert(&pointer, &word, &value, Position::Canonical).is_ok() {
            let node = parse(editor.text()).expect("an insert re-parses");
            let mut got = node.to_json();
            let object = got.pointer_mut(&pointer).and_then(Value::as_object_mut).unwrap();
            assert_eq!(object.shift_remove(&word), Some(value));
            assert_eq!(got, root.to_json(), "an insert changed another value");
        }
    }
});
