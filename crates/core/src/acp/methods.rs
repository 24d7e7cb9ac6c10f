//! What the protocol defines, taken from the `agent-client-protocol-schema` crate: method
//! names, the `initialize` request a v1 client sends, and the reading of its answer.
//!
//! The catalogue of `capability-unknown` and `capability-unstable`, the advertisements `verify`
//! compares and the probes of `matrix` all come from the crate's method-name tables (built with
//! the `unstable` umbrella and `unstable_protocol_v2`). The crate marks nothing unstable at run
//! time, so the v1 names its features gate are listed by hand (`UNSTABLE_V1`) beside a test that
//! pins the stable set: a crate update that changes it fails that test. v2-only names are
//! unstable by construction.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use agent_client_protocol_schema::v1::{
    AgentCapabilities, AuthCapabilities, ClientCapabilities, FileSystemCapabilities,
    Implementation, InitializeRequest, InitializeResponse, AGENT_METHOD_NAMES, CLIENT_METHOD_NAMES,
    PROTOCOL_LEVEL_METHOD_NAMES, PROXY_METHOD_NAMES,
};
use agent_client_protocol_schema::{v2, ProtocolVersion};
use serde_json::{json, Value};

/// The protocol version we speak and ask for.
pub const PROTOCOL_VERSION: u16 = 1;

/// How settled a method of the protocol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stability {
    /// Part of protocol v1 as the schema crate builds it without any `unstable_*` feature.
    Stable,
    /// Behind one of the crate's `unstable_*` features, or only in the v2 preview: it may
    /// still change or go away.
    Unstable,
}

/// One method (or notification) of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    /// The JSON-RPC method name, e.g. `session/load`.
    pub name: String,
    /// Whether the protocol has settled it.
    pub stability: Stability,
}

/// The v1 names `agent-client-protocol-schema` 1.20 compiles only with one of its
/// `unstable_*` features (each named), read from the crate's source: the crate has no
/// runtime marker, so this list is kept by hand, and the test
/// `the_stable_set_is_the_crates_ungated_set` fails when a crate update changes the set.
const UNSTABLE_V1: [(&str, &str); 14] = [
    ("auth/status", "unstable_auth_status"),
    ("auth/status_update", "unstable_auth_status"),
    ("mcp/message", "unstable_mcp_over_acp"),
    ("providers/disable", "unstable_llm_providers"),
    ("providers/list", "unstable_llm_providers"),
    ("providers/set", "unstable_llm_providers"),
    ("proxy/initialize", "unstable_proxy_chains"),
    ("proxy/successor", "unstable_proxy_chains"),
    ("session/archive", "unstable_session_archive"),
    ("session/fork", "unstable_session_fork"),
    ("session/options", "unstable_session_options"),
    ("session/set_title", "unstable_session_set_title"),
    ("session/status", "unstable_session_status"),
    ("session/unarchive", "unstable_session_archive"),
];

/// Session methods every agent has (`matrix` does not probe them).
const CORE_SESSION_METHODS: [&str; 3] = ["session/new", "session/prompt", "session/cancel"];

fn names(value: Value) -> BTreeSet<String> {
    match value {
        Value::Object(map) => map
            .into_iter()
            .filter_map(|(_, v)| v.as_str().map(str::to_string))
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// Every name of a `*MethodNames` constant of the crate.
fn names_of(constant: &impl serde::Serialize) -> BTreeSet<String> {
    names(serde_json::to_value(constant).unwrap_or_default())
}

/// The v1 names: methods and notifications of both sides, the protocol-level ones and the
/// proxy chain's.
fn v1_names() -> BTreeSet<String> {
    let mut all = names_of(&AGENT_METHOD_NAMES);
    all.extend(names_of(&CLIENT_METHOD_NAMES));
    all.extend(names_of(&PROTOCOL_LEVEL_METHOD_NAMES));
    all.extend(names_of(&PROXY_METHOD_NAMES));
    all
}

/// The names of the v2 preview (some are v1's too).
fn v2_names() -> BTreeSet<String> {
    let mut all = names_of(&v2::AGENT_METHOD_NAMES);
    all.extend(names_of(&v2::CLIENT_METHOD_NAMES));
    all.extend(names_of(&v2::PROTOCOL_LEVEL_METHOD_NAMES));
    all.extend(names_of(&v2::PROXY_METHOD_NAMES));
    all
}

/// The catalogue of the protocol's method names, sorted: the crate's v1 names, stable unless
/// feature-gated ([`UNSTABLE_V1`]), and the names only the v2 preview has, unstable. What
/// `capabilities` may list, what `matrix` probes and what the site shows all come from here.
pub fn catalogue() -> &'static [Method] {
    static CATALOGUE: OnceLock<Vec<Method>> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        let v1 = v1_names();
        let mut all = v1.clone();
        all.extend(v2_names());
        all.into_iter()
            .map(|name| {
                let gated = UNSTABLE_V1.iter().any(|(n, _)| *n == name);
                let stability = if gated || !v1.contains(&name) {
                    Stability::Unstable
                } else {
                    Stability::Stable
                };
                Method { name, stability }
            })
            .collect()
    })
}

/// How settled `name` is, or `None` when the protocol has no such method.
pub fn stability(name: &str) -> Option<Stability> {
    let catalogue = catalogue();
    catalogue
        .binary_search_by(|m| m.name.as_str().cmp(name))
        .ok()
        .map(|i| catalogue[i].stability)
}

/// Every method name of the protocol, sorted: the catalogue of `capabilities`.
pub fn all_methods() -> Vec<String> {
    catalogue().iter().map(|m| m.name.clone()).collect()
}

/// The optional session methods `matrix` probes: the stable ones an agent handles, beyond
/// the ones every agent has, the ones that end the session last (so the other probes stay
/// meaningful). Unstable methods are never sent, only listed when advertised.
pub fn probed_session_methods() -> Vec<String> {
    let agent = names_of(&AGENT_METHOD_NAMES);
    let (ending, mut out): (Vec<String>, Vec<String>) = agent
        .into_iter()
        .filter(|m| m.starts_with("session/"))
        .filter(|m| !CORE_SESSION_METHODS.contains(&m.as_str()))
        .filter(|m| stability(m) == Some(Stability::Stable))
        .partition(|m| ends_session(m));
    out.extend(ending);
    out
}

fn ends_session(method: &str) -> bool {
    matches!(method, "session/close" | "session/delete")
}

/// A method whose support the `initialize` answer advertises: where, and how to read it from
/// the crate's [`AgentCapabilities`] (an object counts as present even when it is `{}`).
struct Advertisement {
    /// The methods this one field advertises.
    methods: &'static [&'static str],
    field: &'static str,
    present: fn(&AgentCapabilities) -> bool,
}

/// Methods whose support `initialize` answers (a declared one absent is a contradiction; the
/// others, such as `session/set_mode`, are not advertised in `initialize`).
const ADVERTISEMENTS: [Advertisement; 15] = [
    Advertisement {
        methods: &["auth/status"],
        field: "agentCapabilities.auth.status",
        present: |c| c.auth.status.is_some(),
    },
    Advertisement {
        methods: &["logout"],
        field: "agentCapabilities.auth.logout",
        present: |c| c.auth.logout.is_some(),
    },
    Advertisement {
        methods: &["mcp/message"],
        field: "agentCapabilities.mcpCapabilities.acp",
        present: |c| c.mcp_capabilities.acp,
    },
    Advertisement {
        methods: &["providers/disable", "providers/list", "providers/set"],
        field: "agentCapabilities.providers",
        present: |c| c.providers.is_some(),
    },
    Advertisement {
        methods: &["session/archive"],
        field: "agentCapabilities.sessionCapabilities.archive",
        present: |c| c.session_capabilities.archive.is_some(),
    },
    Advertisement {
        methods: &["session/close"],
        field: "agentCapabilities.sessionCapabilities.close",
        present: |c| c.session_capabilities.close.is_some(),
    },
    Advertisement {
        methods: &["session/delete"],
        field: "agentCapabilities.sessionCapabilities.delete",
        present: |c| c.session_capabilities.delete.is_some(),
    },
    Advertisement {
        methods: &["session/fork"],
        field: "agentCapabilities.sessionCapabilities.fork",
        present: |c| c.session_capabilities.fork.is_some(),
    },
    Advertisement {
        methods: &["session/list"],
        field: "agentCapabilities.sessionCapabilities.list",
        present: |c| c.session_capabilities.list.is_some(),
    },
    Advertisement {
        methods: &["session/load"],
        field: "agentCapabilities.loadSession",
        present: |c| c.load_session,
    },
    Advertisement {
        methods: &["session/options"],
        field: "agentCapabilities.sessionCapabilities.options",
        present: |c| c.session_capabilities.options.is_some(),
    },
    Advertisement {
        methods: &["session/resume"],
        field: "agentCapabilities.sessionCapabilities.resume",
        present: |c| c.session_capabilities.resume.is_some(),
    },
    Advertisement {
        methods: &["session/set_title"],
        field: "agentCapabilities.sessionCapabilities.title",
        present: |c| c.session_capabilities.title.is_some(),
    },
    Advertisement {
        methods: &["session/status"],
        field: "agentCapabilities.sessionCapabilities.status",
        present: |c| c.session_capabilities.status.is_some(),
    },
    Advertisement {
        methods: &["session/unarchive"],
        field: "agentCapabilities.sessionCapabilities.archive",
        present: |c| c.session_capabilities.archive.is_some(),
    },
];

/// Where the `initialize` answer advertises `method`, when it does.
pub fn advertisement(method: &str) -> Option<&'static str> {
    ADVERTISEMENTS
        .iter()
        .find(|a| a.methods.contains(&method))
        .map(|a| a.field)
}

/// The unstable methods among `advertised`, sorted.
pub fn unstable_among<'a>(advertised: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = advertised
        .into_iter()
        .filter(|m| stability(m) == Some(Stability::Unstable))
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `initialize` params as ACP v1 clients send them: file system and terminal capabilities,
/// terminal login (`auth.terminal` and the `terminal-auth` meta agents look for before they
/// advertise terminal login), and who we are.
pub fn initialize_params(client_name: &str, client_version: &str) -> Value {
    let mut meta = serde_json::Map::new();
    meta.insert("terminal-auth".into(), json!(true));
    let capabilities = ClientCapabilities::new()
        .fs(FileSystemCapabilities::new()
            .read_text_file(true)
            .write_text_file(true))
        .terminal(true)
        .auth(AuthCapabilities::new().terminal(true))
        .meta(meta);
    let request = InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(capabilities)
        .client_info(Implementation::new(client_name, client_version));
    serde_json::to_value(request).unwrap_or_default()
}

/// An auth method as the agent offered it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OfferedAuth {
    /// The method's `id`, as `authenticate` takes it.
    pub id: String,
    /// The name shown to users.
    pub name: String,
    /// `agent` (also when absent), `terminal`, or what the agent wrote.
    #[serde(rename = "type")]
    pub kind: String,
    /// `_meta` keys `terminal-auth` / `agent-auth` that mark a method of that kind.
    pub meta_kinds: Vec<String>,
}

impl OfferedAuth {
    /// The kinds this method counts as for the auth policy.
    pub fn counts_as(&self) -> BTreeSet<String> {
        let mut kinds: BTreeSet<String> = self.meta_kinds.iter().cloned().collect();
        kinds.insert(self.kind.clone());
        kinds
    }
}

/// The parts of an `initialize` answer the checks use.
#[derive(Debug, Clone)]
pub struct InitializeAnswer {
    /// `protocolVersion` as sent (an integer we can compare, or None when it is not one).
    pub protocol_version: Option<u64>,
    /// The answer as the schema crate reads it (unknown fields ignored).
    pub response: InitializeResponse,
    /// The auth methods, read from the raw answer so unknown types still count.
    pub auth: Vec<OfferedAuth>,
    /// Optional methods the agent advertises (`session/load`, `session/list`, `logout`,
    /// the unstable `session/fork`, ...).
    pub advertised: BTreeSet<String>,
    /// The result exactly as received.
    pub raw: Value,
}

/// Read an `initialize` result; `Err` says what makes it unusable.
pub fn read_initialize(result: &Value) -> Result<InitializeAnswer, String> {
    let protocol_version = match result.get("protocolVersion") {
        None => return Err("the answer has no `protocolVersion`".into()),
        Some(v) => v.as_u64(),
    };
    let response: InitializeResponse = serde_json::from_value(result.clone())
        .map_err(|e| format!("the answer is not an InitializeResponse: {e}"))?;
    Ok(InitializeAnswer {
        protocol_version,
        auth: offered_auth(result),
        advertised: advertised(&response),
        response,
        raw: result.clone(),
    })
}

/// Auth methods from the raw answer, so types this crate does not know (`env_var`) count.
fn offered_auth(result: &Value) -> Vec<OfferedAuth> {
    let Some(items) = result.get("authMethods").and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
            let meta = item.get("_meta");
            let meta_kinds = [("terminal-auth", "terminal"), ("agent-auth", "agent")]
                .iter()
                .filter(|(key, _)| {
                    meta.and_then(|m| m.get(*key))
                        .is_some_and(|v| !v.is_null() && v != &json!(false))
                })
                .map(|(_, kind)| kind.to_string())
                .collect();
            Some(OfferedAuth {
                id: text("id")?,
                name: text("name").unwrap_or_default(),
                kind: text("type").unwrap_or_else(|| "agent".into()),
                meta_kinds,
            })
        })
        .collect()
}

fn advertised(response: &InitializeResponse) -> BTreeSet<String> {
    let caps = &response.agent_capabilities;
    ADVERTISEMENTS
        .iter()
        .filter(|a| (a.present)(caps))
        .flat_map(|a| a.methods.iter().map(|m| (*m).to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_follows_the_schema_crate() {
        let all = all_methods();
        for present in [
            "session/delete",
            "session/close",
            "session/resume",
            "fs/read_text_file",
            "terminal/create",
        ] {
            assert!(
                all.iter().any(|m| m == present),
                "{present} missing from {all:?}"
            );
        }
        assert!(!all.iter().any(|m| m == "session/set_model"));
    }

    /// A tripwire: the crate has no runtime marker of its feature-gated names, so this is
    /// the crate's stable v1 set as read from its source. A crate update that adds,
    /// stabilises or removes a method fails here: classify it in [`UNSTABLE_V1`] and update
    /// this list.
    #[test]
    fn the_stable_set_is_the_crates_ungated_set() {
        let stable: Vec<&str> = catalogue()
            .iter()
            .filter(|m| m.stability == Stability::Stable)
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(
            stable,
            [
                "$/cancel_request",
                "authenticate",
                "elicitation/complete",
                "elicitation/create",
                "fs/read_text_file",
                "fs/write_text_file",
                "initialize",
                "logout",
                "session/cancel",
                "session/close",
                "session/delete",
                "session/list",
                "session/load",
                "session/new",
                "session/prompt",
                "session/request_permission",
                "session/resume",
                "session/set_config_option",
                "session/set_mode",
                "session/update",
                "terminal/create",
                "terminal/kill",
                "terminal/output",
                "terminal/release",
                "terminal/wait_for_exit",
            ]
        );
    }

    #[test]
    fn unstable_names_are_the_gated_ones_and_the_v2_preview_only_ones() {
        let v1 = v1_names();
        for (name, feature) in UNSTABLE_V1 {
            assert!(
                v1.contains(name),
                "{name} ({feature}) is not a v1 name of the crate"
            );
            assert_eq!(stability(name), Some(Stability::Unstable), "{name}");
        }
        for v2_only in [
            "auth/login",
            "auth/logout",
            "tool_call/cancel",
            "terminal/cancel",
        ] {
            assert_eq!(stability(v2_only), Some(Stability::Unstable), "{v2_only}");
        }
        assert_eq!(stability("session/set_model"), None);
        assert_eq!(stability("session/loads"), None);
        let sorted: Vec<&str> = catalogue().iter().map(|m| m.name.as_str()).collect();
        let mut again = sorted.clone();
        again.sort_unstable();
        again.dedup();
        assert_eq!(sorted, again, "the catalogue is sorted and unique");
    }

    #[test]
    fn probes_are_the_stable_optional_session_methods_ending_the_session_last() {
        assert_eq!(
            probed_session_methods(),
            [
                "session/list",
                "session/load",
                "session/resume",
                "session/set_config_option",
                "session/set_mode",
                "session/close",
                "session/delete",
            ]
        );
    }

    #[test]
    fn every_advertisement_names_a_method_of_the_catalogue() {
        for method in ADVERTISEMENTS.iter().flat_map(|a| a.methods) {
            assert!(stability(method).is_some(), "{method}");
        }
        let answer = read_initialize(&json!({
            "protocolVersion": 1,
            "agentCapabilities": {
                "sessionCapabilities": {"fork": {}, "archive": {}, "title": {}},
                "auth": {"logout": {}, "status": {}},
                "providers": {},
                "mcpCapabilities": {"acp": true}
            }
        }))
        .unwrap();
        assert_eq!(
            answer.advertised.iter().collect::<Vec<_>>(),
            [
                "auth/status",
                "logout",
                "mcp/message",
                "providers/disable",
                "providers/list",
                "providers/set",
                "session/archive",
                "session/fork",
                "session/set_title",
                "session/unarchive",
            ]
        );
        assert_eq!(
            unstable_among(&answer.advertised),
            [
                "auth/status",
                "mcp/message",
                "providers/disable",
                "providers/list",
                "providers/set",
                "session/archive",
                "session/fork",
                "session/set_title",
                "session/unarchive",
            ]
        );
    }

    #[test]
    fn initialize_asks_for_version_1_with_terminal_auth() {
        let params = initialize_params("acp-registry", "0.1.0");
        assert_eq!(params["protocolVersion"], 1);
        let caps = &params["clientCapabilities"];
        assert_eq!(caps["fs"]["readTextFile"], true);
        assert_eq!(caps["fs"]["writeTextFile"], true);
        assert_eq!(caps["terminal"], true);
        assert_eq!(caps["auth"]["terminal"], true);
        assert_eq!(caps["_meta"]["terminal-auth"], true);
        assert_eq!(params["clientInfo"]["name"], "acp-registry");
    }

    #[test]
    fn answers_are_read_tolerantly() {
        let answer = read_initialize(&json!({
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": true, "sessionCapabilities": {"list": {}}, "future": 1},
            "authMethods": [
                {"id": "login", "name": "Log in"},
                {"id": "tty", "name": "Terminal", "type": "terminal", "args": ["login"]},
                {"id": "key", "name": "Key", "type": "env_var", "_meta": {"agent-auth": true}}
            ],
            "unknown": true
        }))
        .unwrap();
        assert_eq!(answer.protocol_version, Some(1));
        assert_eq!(
            answer.advertised.iter().collect::<Vec<_>>(),
            ["session/list", "session/load"]
        );
        let kinds: Vec<_> = answer.auth.iter().map(|a| a.kind.as_str()).collect();
        assert_eq!(kinds, ["agent", "terminal", "env_var"]);
        assert!(answer.auth[2].counts_as().contains("agent"));
        assert!(read_initialize(&json!({"agentCapabilities": {}})).is_err());
    }
}
