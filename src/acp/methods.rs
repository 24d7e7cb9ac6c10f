//! What the protocol defines, taken from the `agent-client-protocol-schema` crate: method
//! names, the `initialize` request a v1 client sends, and the reading of its answer.

use std::collections::BTreeSet;

use agent_client_protocol_schema::v1::{
    AuthCapabilities, ClientCapabilities, FileSystemCapabilities, Implementation,
    InitializeRequest, InitializeResponse, AGENT_METHOD_NAMES, CLIENT_METHOD_NAMES,
};
use agent_client_protocol_schema::ProtocolVersion;
use serde_json::{json, Value};

/// The protocol version we speak and ask for.
pub(crate) const PROTOCOL_VERSION: u16 = 1;

/// Session methods we probe that the crate only has behind an `unstable_*` feature.
pub(crate) const UNSTABLE_SESSION_METHODS: [&str; 1] = ["session/fork"];

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

/// Methods (and notifications) an agent handles.
pub(crate) fn agent_methods() -> BTreeSet<String> {
    names(serde_json::to_value(&AGENT_METHOD_NAMES).unwrap_or_default())
}

/// Methods (and notifications) a client handles.
pub(crate) fn client_methods() -> BTreeSet<String> {
    names(serde_json::to_value(&CLIENT_METHOD_NAMES).unwrap_or_default())
}

/// Every method name of the protocol, sorted: the catalogue of `capabilities`.
pub(crate) fn all_methods() -> Vec<String> {
    let mut all = agent_methods();
    all.extend(client_methods());
    all.into_iter().collect()
}

/// The optional session methods `matrix` probes, stable first (in the crate's order of
/// safety: read-only probes before the ones that end the session), then the unstable ones.
pub(crate) fn probed_session_methods() -> Vec<String> {
    let agent = agent_methods();
    let (ending, mut out): (Vec<String>, Vec<String>) = agent
        .iter()
        .filter(|m| m.starts_with("session/"))
        .filter(|m| !CORE_SESSION_METHODS.contains(&m.as_str()))
        .filter(|m| !UNSTABLE_SESSION_METHODS.contains(&m.as_str()))
        .cloned()
        .partition(|m| ends_session(m));
    out.extend(
        UNSTABLE_SESSION_METHODS
            .iter()
            .filter(|m| agent.contains(**m))
            .map(ToString::to_string),
    );
    // Ending the session last keeps the other probes meaningful.
    out.extend(ending);
    out
}

fn ends_session(method: &str) -> bool {
    matches!(method, "session/close" | "session/delete")
}

/// `initialize` params as ACP v1 clients send them: file system and terminal capabilities,
/// terminal login (`auth.terminal` and the `terminal-auth` meta agents look for before they
/// advertise terminal login), and who we are.
pub(crate) fn initialize_params(client_name: &str, client_version: &str) -> Value {
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
    /// Optional session methods the agent advertises (`session/load`, `session/list`, ...).
    pub session_methods: BTreeSet<String>,
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
    let session_methods = advertised(&response);
    Ok(InitializeAnswer {
        protocol_version,
        auth: offered_auth(result),
        session_methods,
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
    let session = &caps.session_capabilities;
    let flags = [
        ("session/load", caps.load_session),
        ("session/list", session.list.is_some()),
        ("session/resume", session.resume.is_some()),
        ("session/close", session.close.is_some()),
        ("session/delete", session.delete.is_some()),
        ("session/fork", session.fork.is_some()),
    ];
    flags
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(m, _)| m.to_string())
        .collect()
}

/// Session methods whose support `initialize` answers (a declared one absent is a
/// contradiction; the others are not advertised in `initialize`).
pub(crate) const ADVERTISED_SESSION_METHODS: [&str; 6] = [
    "session/load",
    "session/list",
    "session/resume",
    "session/close",
    "session/delete",
    "session/fork",
];

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

    #[test]
    fn probes_cover_the_optional_session_methods_and_end_the_session_last() {
        let probes = probed_session_methods();
        assert!(probes.contains(&"session/list".to_string()));
        assert!(probes.contains(&"session/fork".to_string()));
        assert!(!probes.contains(&"session/new".to_string()));
        let last: Vec<_> = probes[probes.len() - 2..].to_vec();
        assert_eq!(last, ["session/close", "session/delete"]);
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
            answer.session_methods.iter().collect::<Vec<_>>(),
            ["session/list", "session/load"]
        );
        let kinds: Vec<_> = answer.auth.iter().map(|a| a.kind.as_str()).collect();
        assert_eq!(kinds, ["agent", "terminal", "env_var"]);
        assert!(answer.auth[2].counts_as().contains("agent"));
        assert!(read_initialize(&json!({"agentCapabilities": {}})).is_err());
    }
}
