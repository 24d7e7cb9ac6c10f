//! The typed view of one agent manifest: its stable distribution (the launch model), its
//! auth methods with their default type, its declared capabilities and protocol version,
//! each with the JSON pointer a finding names.
//!
//! Built once per entry from the span-carrying [`Node`] tree, or from published JSON through
//! the same code, and read by the rules, the online checks, `verify`, `update`, `pack`, the
//! published variants and the site, so none of them walks the raw JSON on its own. It
//! records what is there; the rules judge it.

use super::distribution::{node_of, Distribution};
use super::jsonc::{Member, Node, NodeValue};
use acp_registry_core::source::Span;

/// The top-level keys the view reads.
const VIEWED_KEYS: [&str; 4] = ["distribution", "auth", "capabilities", "protocol_version"];

/// The auth type of a method that does not say (`type` missing or not a string).
pub(crate) const DEFAULT_AUTH_TYPE: &str = "agent";

/// JSON pointer of `protocol_version`.
pub(crate) const PROTOCOL_VERSION_POINTER: &str = "/protocol_version";

/// One item of `auth`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AuthMethod {
    /// JSON pointer of the method (`/auth/<i>`).
    pub pointer: String,
    /// `id`, when a string.
    pub id: Option<String>,
    /// `type` as written, when a string.
    pub declared_type: Option<String>,
    /// `vars`, when a list (items as text).
    pub vars: Option<Vec<String>>,
}

impl AuthMethod {
    /// The method's type: the one written, else [`DEFAULT_AUTH_TYPE`].
    pub(crate) fn kind(&self) -> &str {
        self.declared_type.as_deref().unwrap_or(DEFAULT_AUTH_TYPE)
    }

    /// JSON pointer of the method's `type`.
    pub(crate) fn type_pointer(&self) -> String {
        format!("{}/type", self.pointer)
    }
}

/// One string item of `capabilities` (other items are the schema's to report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Capability {
    /// JSON pointer of the item (`/capabilities/<i>`).
    pub pointer: String,
    /// The ACP method named.
    pub name: String,
}

/// The typed view of one manifest (or published agent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AgentView {
    /// The stable `distribution` (empty when there is none).
    pub distribution: Distribution,
    /// The items of `auth`, in order (empty when it is not a list).
    pub auth: Vec<AuthMethod>,
    /// The string items of `capabilities`, in order.
    pub capabilities: Vec<Capability>,
    /// `protocol_version` as written, when it is a number (the schema reports other types).
    pub protocol_version: Option<String>,
}

impl AgentView {
    /// The view of a manifest's root object.
    pub(crate) fn from_node(root: &Node) -> AgentView {
        AgentView {
            distribution: root
                .get("distribution")
                .map(|d| Distribution::from_node(d, "/distribution"))
                .unwrap_or_default(),
            auth: auth_methods(root),
            capabilities: capabilities(root),
            protocol_version: root.get("protocol_version").and_then(|n| match &n.value {
                NodeValue::Number(raw) => Some(raw.clone()),
                _ => None,
            }),
        }
    }

    /// The same view of a published agent (or of its preview block). Only the keys the view
    /// reads are converted to the tree, so the rest of the agent is never copied.
    pub(crate) fn from_json(agent: &serde_json::Map<String, serde_json::Value>) -> AgentView {
        let members = VIEWED_KEYS
            .iter()
            .filter_map(|key| {
                Some(Member {
                    key: (*key).to_string(),
                    key_span: Span::default(),
                    value: node_of(agent.get(*key)?),
                })
            })
            .collect();
        AgentView::from_node(&Node {
            span: Span::default(),
            value: NodeValue::Object(members),
        })
    }

    /// `protocol_version` as an integer major version, when it is one.
    pub(crate) fn protocol_major(&self) -> Option<u64> {
        self.protocol_version.as_deref()?.parse().ok()
    }

    /// The distinct auth types, in manifest order.
    pub(crate) fn auth_types(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for kind in self.auth.iter().map(AuthMethod::kind) {
            if !out.contains(&kind) {
                out.push(kind);
            }
        }
        out
    }
}

fn auth_methods(root: &Node) -> Vec<AuthMethod> {
    let items = root
        .get("auth")
        .and_then(Node::as_array)
        .unwrap_or_default();
    items
        .iter()
        .enumerate()
        .map(|(i, method)| AuthMethod {
            pointer: format!("/auth/{i}"),
            id: method.get_str("id").map(str::to_string),
            declared_type: method.get_str("type").map(str::to_string),
            vars: method
                .get("vars")
                .and_then(Node::as_array)
                .map(|vars| vars.iter().map(|v| v.to_json().to_string()).collect()),
        })
        .collect()
}

fn capabilities(root: &Node) -> Vec<Capability> {
    let items = root
        .get("capabilities")
        .and_then(Node::as_array)
        .unwrap_or_default();
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            Some(Capability {
                pointer: format!("/capabilities/{i}"),
                name: item.as_str()?.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view_of(agent: &serde_json::Value) -> AgentView {
        AgentView::from_json(agent.as_object().expect("an agent object"))
    }

    #[test]
    fn a_missing_or_non_string_auth_type_means_agent() {
        let view = view_of(&json!({"auth": [
            {"id": "a"},
            {"id": "b", "type": "terminal"},
            {"id": "c", "type": 3},
            {"id": "d", "type": "env_var", "vars": ["K"]},
        ]}));
        let kinds: Vec<&str> = view.auth.iter().map(AuthMethod::kind).collect();
        assert_eq!(kinds, ["agent", "terminal", "agent", "env_var"]);
        assert_eq!(view.auth_types(), ["agent", "terminal", "env_var"]);
        assert_eq!(view.auth[3].type_pointer(), "/auth/3/type");
    }

    #[test]
    fn capabilities_and_protocol_version_keep_their_pointers() {
        let view = view_of(&json!({
            "capabilities": ["session/load", 7, "x"],
            "protocol_version": 1
        }));
        let at: Vec<(&str, &str)> = view
            .capabilities
            .iter()
            .map(|c| (c.pointer.as_str(), c.name.as_str()))
            .collect();
        assert_eq!(
            at,
            [
                ("/capabilities/0", "session/load"),
                ("/capabilities/2", "x")
            ]
        );
        assert_eq!(view.protocol_major(), Some(1));
        let text = view_of(&json!({"protocol_version": "1"}));
        assert_eq!(text.protocol_version, None);
    }
}
