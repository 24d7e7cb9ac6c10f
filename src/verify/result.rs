//! What one job found: its [`Status`] and its [`AgentResult`], as the report, `--format json`
//! and `matrix.json` give them.

use serde::Serialize;
use serde_json::Value;

use super::probe::Probe;
use super::sandbox::Isolation;
use crate::manifest::distribution::Kind;
use acp_registry_core::acp::methods::{OfferedAuth, PROTOCOL_VERSION};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Status {
    Passed,
    Failed,
    NotTested,
    Skipped,
    /// `matrix --changed-only`: the previous row was kept.
    Reused,
}

impl Status {
    /// The name `--format json` and `matrix.json` give it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::NotTested => "not-tested",
            Status::Skipped => "skipped",
            Status::Reused => "reused",
        }
    }
}

/// Why a launch that recorded `protocol_version` cannot have passed, whatever else was found:
/// it never answered `initialize` with a protocol version (not fetched or started, exited, timed
/// out, answered with an error or without `protocolVersion`), or answered another version than
/// the one asked for. The one rule for both: `verify` fails such a launch (whatever severity
/// the policy gives its finding), and a `matrix.json` row saying `passed` against it is refused.
pub(crate) fn cannot_pass(protocol_version: Option<u64>) -> Option<String> {
    match protocol_version {
        Some(v) if v == u64::from(PROTOCOL_VERSION) => None,
        Some(v) => Some(format!(
            "the agent answered protocol version {v}, not {PROTOCOL_VERSION}"
        )),
        None => Some("the agent never answered `initialize` with a protocol version".into()),
    }
}

/// One agent and distribution: what happened, how long it took, what the agent answered.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AgentResult {
    pub(crate) id: String,
    pub(crate) version: String,
    pub(crate) distribution: Kind,
    pub(crate) platform: Option<String>,
    pub(crate) status: Status,
    /// Why it was skipped or not tested, or the first error.
    pub(crate) reason: Option<String>,
    pub(crate) fetch_seconds: Option<f64>,
    pub(crate) start_seconds: Option<f64>,
    pub(crate) total_seconds: f64,
    pub(crate) protocol_version: Option<u64>,
    pub(crate) auth_methods: Vec<OfferedAuth>,
    /// Optional session methods the `initialize` answer advertises.
    pub(crate) advertised: Vec<String>,
    /// The raw `initialize` result.
    pub(crate) initialize: Option<Value>,
    pub(crate) stderr_tail: Option<String>,
    /// Notifications the agent sent, and the methods of requests it sent us (each answered
    /// with a JSON-RPC error).
    pub(crate) notifications: usize,
    /// The first [`super::session::KEPT`] methods, and how many requests there were.
    pub(crate) agent_requests: Vec<String>,
    pub(crate) agent_requests_total: usize,
    /// The first [`super::session::KEPT`] protocol violations, and how many there were.
    pub(crate) protocol_violations: Vec<String>,
    pub(crate) protocol_violations_total: usize,
    /// `matrix`: `session/new` and each probe.
    pub(crate) probes: Vec<Probe>,
    /// `matrix`: the slash commands the agent announced (`available_commands_update`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) commands: Vec<String>,
    /// What isolation the launched agent got (none when it was not launched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) isolation: Option<Isolation>,
    #[serde(skip)]
    pub(crate) fingerprint: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_are_the_serialized_ones() {
        for status in [
            Status::Passed,
            Status::Failed,
            Status::NotTested,
            Status::Skipped,
            Status::Reused,
        ] {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
    }
}
