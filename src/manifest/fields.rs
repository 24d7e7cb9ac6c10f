//! Typed, span-aware reading of a JSONC tree: a reader asks for an object, a list, a string
//! or a boolean and gets it, or one finding at the offending key or value saying what to
//! write instead; [`Keys`] reports the members of an object nobody asked for.
//! `registry::config` reads `acp-registry.jsonc` with them; the rules read the typed views of
//! a manifest (argument lists, member maps) with the same look-ups.
//!
//! `quarantine.json` is read through them too: no hand-written loop over a JSON object.

use super::jsonc::{Member, Node, NodeValue};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use acp_registry_core::source::{SourceFile, Span};

/// Reads values of one JSONC document, collecting each problem as a finding of one code.
pub(crate) struct Fields<'s> {
    source: &'s SourceFile,
    code: Code,
    /// The findings so far, in reading order.
    pub findings: Vec<Diagnostic>,
}

impl<'s> Fields<'s> {
    /// A reader of `source` whose problems are findings of `code`.
    pub(crate) fn new(source: &'s SourceFile, code: Code) -> Self {
        Self {
            source,
            code,
            findings: Vec::new(),
        }
    }

    /// A finding of `code` at `span` of this document (for problems of another code).
    pub(crate) fn at(&self, code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, message).at(self.source, span)
    }

    /// Report a problem at `span`.
    pub(crate) fn problem(
        &mut self,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        let finding = self.at(self.code, span, message).help(help);
        self.findings.push(finding);
    }

    /// The members of `node`, or a problem when it is not an object.
    pub(crate) fn object<'n>(
        &mut self,
        node: &'n Node,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Option<&'n [Member]> {
        self.expect(node, node.as_object(), message, help)
    }

    /// The items of `node`, or a problem when it is not a list.
    pub(crate) fn array<'n>(
        &mut self,
        node: &'n Node,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Option<&'n [Node]> {
        self.expect(node, node.as_array(), message, help)
    }

    /// The text of `node`, or a problem when it is not a string.
    pub(crate) fn string<'n>(
        &mut self,
        node: &'n Node,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Option<&'n str> {
        self.expect(node, node.as_str(), message, help)
    }

    /// The value of `node`, or a problem when it is not `true` or `false`.
    pub(crate) fn bool(
        &mut self,
        node: &Node,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Option<bool> {
        let value = match node.value {
            NodeValue::Bool(b) => Some(b),
            _ => None,
        };
        self.expect(node, value, message, help)
    }

    /// The string items of a list with their spans; each other item is a problem.
    pub(crate) fn strings<'n>(
        &mut self,
        items: &'n [Node],
        message: &str,
        help: &str,
    ) -> Vec<(&'n str, Span)> {
        items
            .iter()
            .filter_map(|item| Some((self.string(item, message, help)?, item.span)))
            .collect()
    }

    /// The value of the required member `key` of `object`, or a problem at the object.
    pub(crate) fn required<'n>(
        &mut self,
        object: &'n Node,
        key: &str,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Option<&'n Node> {
        let value = object.get(key);
        self.expect(object, value, message, help)
    }

    /// Report `member` as unknown, suggesting the nearest of the `known` keys.
    fn unknown_key(&mut self, member: &Member, known: &[&str]) {
        let help = did_you_mean(&member.key, known.iter().copied())
            .unwrap_or_else(|| format!("known keys: {}", known.join(", ")));
        let message = format!("unknown key `{}`", member.key);
        self.problem(member.key_span, message, help);
    }

    fn expect<T>(
        &mut self,
        node: &Node,
        value: Option<T>,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Option<T> {
        if value.is_none() {
            self.problem(node.span, message, help);
        }
        value
    }
}

/// The members of one object, read by asking for each key (as cargo-deny's `toml-span`
/// `TableHelper` does): the keys asked for are the known keys, so each is written once, and
/// [`Keys::finish`] reports every member nobody asked for.
pub(crate) struct Keys<'n> {
    members: &'n [Member],
    asked: Vec<&'static str>,
}

impl<'n> Keys<'n> {
    /// A table of `members` with no key asked for yet.
    pub(crate) fn new(members: &'n [Member]) -> Self {
        Self {
            members,
            asked: Vec::new(),
        }
    }

    /// Every member named `key`, in document order, and `key` known from now on. A duplicated
    /// key is reported on its own; each copy is still read so that none of its problems hides.
    pub(crate) fn get(&mut self, key: &'static str) -> impl Iterator<Item = &'n Member> + use<'n> {
        if !self.asked.contains(&key) {
            self.asked.push(key);
        }
        self.members.iter().filter(move |m| m.key == key)
    }

    /// `key` is allowed and means nothing to this reader (e.g. `$schema`).
    pub(crate) fn skip(&mut self, key: &'static str) {
        self.get(key).for_each(drop);
    }

    /// The keys asked for, in asking order (the order unknown-key findings list them in).
    pub(crate) fn known(&self) -> &[&'static str] {
        &self.asked
    }

    /// Report each member whose key was never asked for, in document order, suggesting the
    /// nearest known key.
    pub(crate) fn finish(self, fields: &mut Fields) {
        for member in self.members {
            if !self.asked.contains(&member.key.as_str()) {
                fields.unknown_key(member, &self.asked);
            }
        }
    }
}

impl Node {
    /// The string items of the list at member `key` (other items skipped; empty when absent
    /// or not a list): the typed view rules read argument lists through.
    pub fn get_strs(&self, key: &str) -> Vec<&str> {
        self.get(key)
            .and_then(Node::as_array)
            .map(|items| items.iter().filter_map(Node::as_str).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (SourceFile, Node) {
        let source = SourceFile::new("c.jsonc", text);
        let root = super::super::jsonc::parse(text).unwrap();
        (source, root)
    }

    #[test]
    fn each_wrong_shape_is_one_finding_at_the_value() {
        let (source, root) = read(r#"{"a": 1, "b": ["x", 2], "c": "no"}"#);
        let mut fields = Fields::new(&source, Code::ConfigInvalid);
        assert!(fields
            .object(root.get("a").unwrap(), "a must be an object", "h")
            .is_none());
        let items = fields.array(root.get("b").unwrap(), "b", "h").unwrap();
        assert_eq!(
            fields.strings(items, "an item must be a string", "h").len(),
            1
        );
        assert!(fields
            .bool(root.get("c").unwrap(), "c must be true or false", "h")
            .is_none());
        assert!(fields.required(&root, "d", "no `d`", "add it").is_none());
        let found: Vec<(usize, &str)> = fields
            .findings
            .iter()
            .map(|d| (d.column(), d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (7, "a must be an object"),
                (21, "an item must be a string"),
                (30, "c must be true or false"),
                (1, "no `d`"),
            ]
        );
        assert!(fields
            .findings
            .iter()
            .all(|d| d.code == Code::ConfigInvalid));
    }

    #[test]
    fn a_key_never_asked_for_is_reported_once_with_the_nearest_known_key() {
        let (source, root) = read(r#"{"severty": {}, "outputs": [], "zzz": 1, "outputs": 2}"#);
        let mut fields = Fields::new(&source, Code::ConfigInvalid);
        let mut keys = Keys::new(root.as_object().unwrap());
        // Asking twice is fine: the key is known once, and both copies are returned each time.
        assert_eq!(keys.get("outputs").count(), 2);
        assert_eq!(keys.get("outputs").count(), 2);
        keys.skip("$schema");
        assert_eq!(keys.get("severity").count(), 0);
        assert_eq!(keys.known(), ["outputs", "$schema", "severity"]);
        keys.finish(&mut fields);
        let found: Vec<(&str, usize, Option<&str>)> = fields
            .findings
            .iter()
            .map(|d| (d.message.as_str(), d.column(), d.help.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                ("unknown key `severty`", 2, Some("did you mean `severity`?")),
                (
                    "unknown key `zzz`",
                    32,
                    Some("known keys: outputs, $schema, severity")
                ),
            ]
        );
    }
}
