//! The canonical layout `fmt` writes: keys in `manifest::order`, 2-space indentation, one
//! member or element per line, no trailing commas, `\n` line ends, one newline at the end.
//! Scalars and keys are written exactly as the author wrote them (escapes included).
//!
//! Every comment is kept with what it belongs to, so it moves when its member moves:
//! comments on the lines above a member (and a blank line above them) are its heading, a
//! comment on its last line after it trails it, one written inside a member between key
//! and value goes above the member, one on the line of an opening bracket stays there, and
//! one before a closing bracket stays last.

use jsonc_parser::cst::{CstContainerNode, CstLeafNode, CstNode, CstRootNode};

use crate::manifest::order::key_order;

/// A comment and whether a blank line separated it from what came before.
struct Comment {
    text: String,
    blank_before: bool,
}

/// One member or element with what travels with it.
struct Entry {
    leading: Vec<Comment>,
    blank_before: bool,
    /// The key as written, for members.
    key: Option<(String, String)>,
    value: Option<CstNode>,
    trailing: Vec<String>,
}

/// What a container (or the document) holds, comments assigned.
#[derive(Default)]
struct Block {
    on_open_line: Vec<String>,
    entries: Vec<Entry>,
    dangling: Vec<Comment>,
}

#[derive(PartialEq)]
enum Line {
    /// On the line of the opening bracket.
    Open,
    /// On the line where the last entry ended.
    Entry,
    /// Anywhere else.
    Free,
}

fn comment_text(node: &CstNode) -> Option<String> {
    match node {
        CstNode::Leaf(CstLeafNode::Comment(c)) => Some(c.raw_value().trim_end().to_string()),
        _ => None,
    }
}

/// Assign the trivia among `children` (without the brackets) to the entries. A comment after
/// an entry (or the opening bracket) on its line trails it, unless it comes after the comma
/// and another entry follows on that line: then it is that entry's.
fn gather(children: &[CstNode], start: Line) -> Block {
    let mut block = Block::default();
    let mut line = start;
    let mut newlines = 0;
    let mut pending: Vec<Comment> = Vec::new();
    let mut same_line: Vec<String> = Vec::new();
    let settle = |block: &mut Block, line: &Line, same_line: &mut Vec<String>| {
        let comments = std::mem::take(same_line);
        match line {
            Line::Open => block.on_open_line.extend(comments),
            Line::Entry => {
                let last = block.entries.last_mut().expect("an entry");
                last.trailing.extend(comments);
            }
            Line::Free => {}
        }
    };
    for child in children {
        if child.is_newline() {
            settle(&mut block, &line, &mut same_line);
            newlines += 1;
            line = Line::Free;
        } else if let Some(text) = comment_text(child) {
            match line {
                Line::Open | Line::Entry => same_line.push(text),
                Line::Free => pending.push(Comment {
                    text,
                    blank_before: newlines > 1,
                }),
            }
            newlines = 0;
        } else if child.is_comma() {
            // What sits between an entry and its comma is the entry's.
            if line == Line::Entry {
                settle(&mut block, &line, &mut same_line);
            }
        } else if !child.is_whitespace() {
            pending.extend(same_line.drain(..).map(|text| Comment {
                text,
                blank_before: false,
            }));
            let mut entry = entry(child);
            entry.blank_before = newlines > 1;
            pending.append(&mut entry.leading);
            entry.leading = std::mem::take(&mut pending);
            block.entries.push(entry);
            line = Line::Entry;
            newlines = 0;
        }
    }
    settle(&mut block, &line, &mut same_line);
    block.dangling = pending;
    block
}

/// A member (its comments between key and value go above it, after the value trail it) or
/// an element.
fn entry(node: &CstNode) -> Entry {
    let mut entry = Entry {
        leading: Vec::new(),
        blank_before: false,
        key: None,
        value: Some(node.clone()),
        trailing: Vec::new(),
    };
    let Some(prop) = node.as_object_prop() else {
        return entry;
    };
    let value = prop.value();
    entry.value = value.clone();
    let value_index = value.as_ref().map(jsonc_parser::cst::CstNode::child_index);
    for child in prop.children() {
        if let Some(text) = comment_text(&child) {
            if value_index.is_some_and(|v| child.child_index() > v) {
                entry.trailing.push(text);
            } else {
                entry.leading.push(Comment {
                    text,
                    blank_before: false,
                });
            }
        }
    }
    let raw = prop.name().map(|n| CstNode::from(n).to_string());
    entry.key = raw.map(|raw| (raw, prop.decoded_name().unwrap_or_default()));
    entry
}

struct Printer {
    out: String,
    path: Vec<String>,
}

/// The document in the canonical layout.
pub(super) fn canonical(root: &CstRootNode) -> String {
    let mut printer = Printer {
        out: String::new(),
        path: Vec::new(),
    };
    let block = gather(&root.children(), Line::Free);
    let mut first = true;
    for entry in &block.entries {
        printer.entry(entry, 0, &mut first, false);
    }
    printer.comments(&block.dangling, 0, &mut first);
    printer.out
}

impl Printer {
    fn indent(&mut self, depth: usize) {
        self.out.push_str(&"  ".repeat(depth));
    }

    /// Comments on lines of their own; no blank line at the top of a block.
    fn comments(&mut self, comments: &[Comment], depth: usize, first: &mut bool) {
        for comment in comments {
            if comment.blank_before && !*first {
                self.out.push('\n');
            }
            self.indent(depth);
            self.out.push_str(&comment.text);
            self.out.push('\n');
            *first = false;
        }
    }

    fn entry(&mut self, entry: &Entry, depth: usize, first: &mut bool, comma: bool) {
        self.comments(&entry.leading, depth, first);
        if entry.blank_before && !*first {
            self.out.push('\n');
        }
        self.indent(depth);
        if let Some((raw, _)) = &entry.key {
            self.out.push_str(raw);
            self.out.push_str(": ");
        }
        if let Some(value) = &entry.value {
            self.value(value, depth);
        }
        if comma {
            self.out.push(',');
        }
        for text in &entry.trailing {
            self.out.push(' ');
            self.out.push_str(text);
        }
        self.out.push('\n');
        *first = false;
    }

    fn value(&mut self, node: &CstNode, depth: usize) {
        let (open, close, object) = match node {
            CstNode::Container(CstContainerNode::Object(_)) => ('{', '}', true),
            CstNode::Container(CstContainerNode::Array(_)) => ('[', ']', false),
            leaf => return self.out.push_str(&leaf.to_string()),
        };
        let children = node.children();
        let inner = &children[1.min(children.len())..children.len().saturating_sub(1)];
        let mut block = gather(inner, Line::Open);
        self.out.push(open);
        if block.entries.is_empty() && block.on_open_line.is_empty() && block.dangling.is_empty() {
            self.out.push(close);
            return;
        }
        for text in &block.on_open_line {
            self.out.push(' ');
            self.out.push_str(text);
        }
        self.out.push('\n');
        let keys: Vec<String> = if object {
            let path: Vec<&str> = self.path.iter().map(String::as_str).collect();
            let order = key_order(&path);
            block
                .entries
                .sort_by(|a, b| order.compare(name(a), name(b)));
            block.entries.iter().map(|e| name(e).to_string()).collect()
        } else {
            (0..block.entries.len()).map(|i| i.to_string()).collect()
        };
        let mut first = true;
        let last = block.entries.len().saturating_sub(1);
        for (i, (entry, key)) in block.entries.iter().zip(keys).enumerate() {
            self.path.push(key);
            self.entry(entry, depth + 1, &mut first, i < last);
            self.path.pop();
        }
        self.comments(&block.dangling, depth + 1, &mut first);
        self.indent(depth);
        self.out.push(close);
    }
}

fn name(entry: &Entry) -> &str {
    entry.key.as_ref().map_or("", |(_, name)| name)
}
