//! Reading one index or manifest: fetched within its cap, its values counted
//! ([`ValueBudget`]: strict JSON, as clients parse it, at most 128 levels deep) before the
//! span-carrying tree (`manifest::jsonc`) is built, so every finding has a line and column.

use acp_registry_core::fs::ValueBudget;
use acp_registry_core::source::{offset_of, SourceFile, Span};

use super::context::Ctx;
use super::limits::{MAX_INDEX_BYTES, MAX_INDEX_VALUES};
use super::origin::{Fetched, Place};
use crate::diagnostics::{Code, Diagnostic, Severity};
use crate::manifest::fields::{Fields, Keys};
use crate::manifest::{jsonc, Node};

/// A document read and parsed.
pub(crate) struct Doc {
    /// Its text, named as findings name it.
    pub(crate) source: SourceFile,
    /// Its tree.
    pub(crate) root: Node,
}

impl Doc {
    /// A finding of `code` at `span`.
    pub(crate) fn at(&self, code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, message).at(&self.source, span)
    }
}

/// Read the document at `place`; a finding of `code` (the index's or the marketplace's
/// format code) when it is missing, unreadable, too large, not strict JSON or too big a tree.
pub(crate) fn read(ctx: &mut Ctx, place: &Place, code: Code) -> Option<Doc> {
    let shown = place.shown();
    let bytes = match ctx.document(place) {
        Fetched::Bytes(bytes) => bytes,
        Fetched::Absent(why) | Fetched::Failed(why) => {
            ctx.push(
                Diagnostic::new(code, format!("cannot read {shown}: {why}"))
                    .in_file(&shown)
                    .help(format!(
                        "serve a regular file of at most {MAX_INDEX_BYTES} bytes there"
                    )),
            );
            return None;
        }
    };
    let Ok(text) = String::from_utf8(bytes) else {
        ctx.push(
            Diagnostic::new(code, "the file is not UTF-8 text")
                .in_file(&shown)
                .help("save it as UTF-8 JSON"),
        );
        return None;
    };
    let source = SourceFile::new(shown, text);
    if let Err(e) = ValueBudget::new(MAX_INDEX_VALUES).spend(&source.text) {
        let at = offset_of(&source.text, e.line(), e.column());
        let finding = Diagnostic::new(code, format!("not strict JSON as clients read it: {e}"))
            .at(&source, Span::new(at, at))
            .help(format!(
                "write plain JSON (no comments or trailing commas), at most {MAX_INDEX_VALUES} values and 128 levels deep"
            ));
        ctx.push(finding);
        ctx.keep(source);
        return None;
    }
    // Strict JSON within the budget is JSONC the tree reader accepts.
    let root = jsonc::parse(&source.text).ok()?;
    ctx.keep(source.clone());
    Some(Doc { source, root })
}

/// The members of `node` read through [`Keys`]: each of `known` asked for, every other key a
/// warning of `code` (clients ignore it; a typo of a known key loses its value).
pub(crate) fn unknown_keys(
    doc: &Doc,
    node: &Node,
    known: &[&'static str],
    code: Code,
) -> Vec<Diagnostic> {
    let Some(members) = node.as_object() else {
        return Vec::new();
    };
    let mut fields = Fields::new(&doc.source, code);
    let mut keys = Keys::new(members);
    for key in known {
        keys.skip(key);
    }
    keys.finish(&mut fields);
    fields
        .findings
        .into_iter()
        .map(|mut d| {
            d.severity = Severity::Warning;
            d
        })
        .collect()
}

/// The string at `key` of `object` with its span: `Err` with the span to point at when it
/// is missing (the object) or not a string (the value).
pub(crate) fn string<'n>(object: &'n Node, key: &str) -> Result<(&'n str, Span), Span> {
    match object.get(key) {
        None => Err(object.span),
        Some(node) => node.as_str().map(|s| (s, node.span)).ok_or(node.span),
    }
}
