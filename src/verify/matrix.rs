//! `matrix`: after `initialize`, `session/new` in a scratch workspace, then one probe of
//! each stable optional session method of the catalogue ([`methods::probed_session_methods`],
//! the ones that end the session last), each answer classified; the unstable methods the
//! agent advertised are listed, never sent. The rows are written as `matrix.json` (read back
//! by `build --matrix` and `--changed-only`) and `matrix.md`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub(crate) use super::probe::{Class, Probe};
use super::result::{AgentResult, Status};
use super::session::{Agent, Answer};
use super::shard::spec::Shard;
use crate::manifest::distribution::Kind;
use crate::publish::evidence::Launch;
use acp_registry_core::acp::methods::{self, OfferedAuth};

pub(crate) mod read;

/// `matrix.json` format version.
pub(crate) const FORMAT_VERSION: u64 = 1;

/// What `session/new` gave that later probes need.
#[derive(Default)]
struct SessionFacts {
    id: Option<String>,
    mode: Option<String>,
    config: Option<(String, Value)>,
}

fn facts(result: &Value) -> SessionFacts {
    let text = |v: &Value| v.as_str().map(str::to_string);
    let mode = result
        .pointer("/modes/currentModeId")
        .and_then(text)
        .or_else(|| result.pointer("/modes/availableModes/0/id").and_then(text));
    let config = result
        .get("configOptions")
        .and_then(Value::as_array)
        .and_then(|options| options.first())
        .and_then(|o| {
            Some((
                text(o.get("id")?)?,
                o.get("currentValue").cloned().unwrap_or(Value::Null),
            ))
        });
    SessionFacts {
        id: result.get("sessionId").and_then(text),
        mode,
        config,
    }
}

/// Params of one probe: the session from `session/new` (or a placeholder, so the answer
/// still tells "method not found" from the rest), the workspace as `cwd`.
fn params(method: &str, facts: &SessionFacts, cwd: &str) -> Value {
    let session = facts
        .id
        .clone()
        .unwrap_or_else(|| "acp-registry-probe".into());
    match method {
        "session/list" => json!({}),
        "session/load" | "session/resume" => {
            json!({"sessionId": session, "cwd": cwd, "mcpServers": []})
        }
        "session/set_mode" => {
            json!({"sessionId": session, "modeId": facts.mode.clone().unwrap_or_else(|| "default".into())})
        }
        "session/set_config_option" => {
            let (id, value) = facts
                .config
                .clone()
                .unwrap_or(("model".into(), Value::Null));
            json!({"sessionId": session, "configId": id, "value": value})
        }
        _ => json!({"sessionId": session}),
    }
}

/// `session/new`, then every probe (`session/load` only when the agent advertised
/// `loadSession`), each under `timeout`; once the process is gone the rest are classified
/// as exited without being sent.
pub(crate) async fn probe(
    agent: &mut Agent,
    workspace: &Path,
    timeout: Duration,
    loads: bool,
) -> Vec<Probe> {
    let cwd = workspace.display().to_string();
    let new = agent
        .request(
            "session/new",
            json!({"cwd": cwd, "mcpServers": []}),
            timeout,
        )
        .await;
    let facts = match &new {
        Answer::Result(result) => facts(result),
        _ => SessionFacts::default(),
    };
    let mut exited = matches!(new, Answer::Exited(_));
    let mut out = vec![Probe {
        method: "session/new".into(),
        class: Class::of(&new),
    }];
    for method in methods::probed_session_methods() {
        if method == "session/load" && !loads {
            continue;
        }
        let class = if exited {
            Class::ProcessExited
        } else {
            let answer = agent
                .request(&method, params(&method, &facts, &cwd), timeout)
                .await;
            exited = matches!(answer, Answer::Exited(_));
            Class::of(&answer)
        };
        out.push(Probe { method, class });
    }
    out
}

/// One row of `matrix.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Row {
    pub(crate) id: String,
    pub(crate) version: String,
    pub(crate) distribution: Kind,
    /// Identifies the distribution as written, for `--changed-only`.
    pub(crate) fingerprint: String,
    /// UTC time of the run that produced the row.
    pub(crate) verified: String,
    pub(crate) status: String,
    pub(crate) protocol_version: Option<u64>,
    pub(crate) agent_info: Option<Value>,
    pub(crate) auth_methods: Vec<OfferedAuth>,
    pub(crate) methods: BTreeMap<String, Class>,
    /// The slash commands announced after `session/new` (absent in older files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) commands: Vec<String>,
    /// Unstable methods the `initialize` answer advertised (not probed), sorted; absent in
    /// files written before it was added.
    #[serde(default)]
    pub(crate) unstable_methods: Vec<String>,
}

/// The most bytes of a row's `agent_info` (its JSON text); a larger one is not kept.
pub(crate) const MAX_AGENT_INFO: usize = 16 * 1024;
/// The most JSON values of a row's `agent_info` (`name`, `title`, `version` and a little
/// `_meta` are a handful); one with more is not kept.
pub(crate) const MAX_AGENT_INFO_VALUES: usize = 64;

/// Whether a row keeps `info` as its `agent_info`: within both caps.
pub(crate) fn keeps_agent_info(info: &Value) -> bool {
    let text = info.to_string();
    text.len() <= MAX_AGENT_INFO
        && super::session::json_values(text.as_bytes()) <= MAX_AGENT_INFO_VALUES
}
/// The most auth methods a row keeps.
pub(crate) const MAX_AUTH_METHODS: usize = 64;
/// The longest text an agent gives that a row keeps (an auth method's fields, a command
/// name): the session cuts them to 120 characters.
pub(crate) const MAX_TEXT: usize = 1024;

impl Row {
    /// The row of a launch; what the agent said is kept within the caps `read` enforces, so
    /// that one hostile agent cannot make its shard's part unreadable.
    pub(crate) fn from_result(result: &AgentResult, verified: &str) -> Row {
        let short = |text: &str| super::session::excerpt(text);
        Row {
            id: result.id.clone(),
            version: result.version.clone(),
            distribution: result.distribution,
            fingerprint: result.fingerprint.clone(),
            verified: verified.to_string(),
            status: result.status.as_str().to_string(),
            protocol_version: result.protocol_version,
            agent_info: result
                .initialize
                .as_ref()
                .and_then(|i| i.get("agentInfo"))
                .filter(|info| keeps_agent_info(info))
                .cloned(),
            auth_methods: result
                .auth_methods
                .iter()
                .take(MAX_AUTH_METHODS)
                .map(|a| OfferedAuth {
                    id: short(&a.id),
                    name: short(&a.name),
                    kind: short(&a.kind),
                    meta_kinds: a.meta_kinds.clone(),
                })
                .collect(),
            methods: result
                .probes
                .iter()
                .map(|p| (p.method.clone(), p.class))
                .collect(),
            commands: result.commands.iter().map(|c| short(c)).collect(),
            unstable_methods: methods::unstable_among(&result.advertised),
        }
    }

    /// Fill a reused result from this row.
    pub(crate) fn restore(&self, result: &mut AgentResult) {
        result.protocol_version = self.protocol_version;
        result.auth_methods = self.auth_methods.clone();
        result.commands = self.commands.clone();
        result.probes = self
            .methods
            .iter()
            .map(|(m, c)| Probe {
                method: m.clone(),
                class: *c,
            })
            .collect();
    }

    /// Session methods that answered with success (`session/new` left out).
    pub(crate) fn supported(&self) -> Vec<String> {
        self.methods
            .iter()
            .filter(|(m, c)| **c == Class::Success && m.as_str() != "session/new")
            .map(|(m, _)| m.clone())
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Matrix {
    pub(crate) version: u64,
    pub(crate) agents: Vec<Row>,
}

/// Rows of the results that ran (or were reused), sorted by id and distribution; a reused
/// row keeps its date.
pub(crate) fn matrix(results: &[AgentResult], previous: &[Row], now: &str) -> Matrix {
    let mut agents: Vec<Row> = results
        .iter()
        .filter_map(|r| match r.status {
            Status::Reused => previous
                .iter()
                .find(|p| p.id == r.id && p.distribution == r.distribution)
                .cloned(),
            Status::Passed | Status::Failed => Some(Row::from_result(r, now)),
            Status::NotTested | Status::Skipped => None,
        })
        .collect();
    agents.sort_by(|a, b| (&a.id, a.distribution).cmp(&(&b.id, b.distribution)));
    Matrix {
        version: FORMAT_VERSION,
        agents,
    }
}

/// `part.version` of a shard's `matrix.json`: 2 added `jobs`.
pub(crate) const PART_VERSION: u64 = 2;

/// What a run with `--shard` adds to its document (`"part"`, between `version` and
/// `agents`): which shard, of which selection, holding which entries. An unsharded run
/// writes no `part`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Part {
    pub(crate) version: u64,
    /// `K/N`.
    pub(crate) shard: String,
    /// [`super::shard::selection_digest`] of the whole selection, every shard's entries.
    pub(crate) selection: String,
    /// How many entries the whole selection holds.
    pub(crate) selected: usize,
    /// The ids of this shard, in registry order (those without a row were not tested).
    pub(crate) entries: Vec<String>,
    /// Every job of the whole selection, in plan order: what `selection` digests, and what
    /// `matrix merge` recomputes each entry's shard and checks each row against (absent
    /// in version 1, which is refused).
    #[serde(default)]
    pub(crate) jobs: Vec<SelectedJob>,
}

/// One job of a selection, as a part lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SelectedJob {
    pub(crate) id: String,
    pub(crate) distribution: Kind,
    pub(crate) version: String,
    /// The SHA-256 (hex) of the manifest.
    pub(crate) manifest: String,
    /// The distribution's fingerprint, as a row of it carries.
    pub(crate) fingerprint: String,
    /// Quarantined: skipped, so never a row.
    pub(crate) skipped: bool,
}

impl SelectedJob {
    /// Its line in [`super::shard::selection_digest`].
    pub(crate) fn line(&self) -> String {
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            self.id, self.distribution, self.version, self.manifest, self.fingerprint, self.skipped
        )
    }
}

/// A shard's `matrix.json`: the matrix with its [`Part`].
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct PartDocument {
    pub(crate) version: u64,
    pub(crate) part: Part,
    pub(crate) agents: Vec<Row>,
}

/// A part as `matrix merge` read it.
#[derive(Debug)]
pub(crate) struct PartFile {
    /// As named on the command line.
    pub(crate) path: String,
    pub(crate) shard: Shard,
    pub(crate) part: Part,
    pub(crate) agents: Vec<Row>,
}

impl Matrix {
    /// The rows as the build reads them (`read` checked every `verified`).
    pub(crate) fn launches(&self) -> Vec<Launch> {
        self.agents
            .iter()
            .map(|row| Launch {
                id: row.id.clone(),
                distribution: row.distribution,
                version: row.version.clone(),
                fingerprint: row.fingerprint.clone(),
                verified: acp_registry_core::time::parse_iso_utc_seconds(&row.verified)
                    .unwrap_or_default(),
                passed: row.status == "passed",
                protocol_version: row.protocol_version,
                auth_methods: row.auth_methods.clone(),
                session_methods: row.supported(),
                unstable_methods: row.unstable_methods.clone(),
            })
            .collect()
    }
}

/// The first line of every `matrix.md` (how `matrix` recognises its own file).
pub(crate) const MARKDOWN_HEADING: &str = "# ACP session support";

/// `matrix.md`: a table per agent, then how many agents gave each answer per method.
pub(crate) fn markdown(matrix: &Matrix) -> String {
    use crate::diagnostics::escape::markdown_cell;
    let methods: Vec<String> = std::iter::once("session/new".to_string())
        .chain(methods::probed_session_methods())
        .collect();
    let mut out = format!("{MARKDOWN_HEADING}\n\n");
    for row in &matrix.agents {
        out.push_str(&format!(
            "## {} {} ({})\n\nVerified {}, protocol version {}, sign-in: {}.\n\n",
            markdown_cell(&row.id),
            markdown_cell(&row.version),
            row.distribution,
            markdown_cell(&row.verified),
            row.protocol_version.map_or("?".into(), |v| v.to_string()),
            if row.auth_methods.is_empty() {
                "none".to_string()
            } else {
                row.auth_methods
                    .iter()
                    .map(|a| format!("{} ({})", markdown_cell(&a.name), markdown_cell(&a.kind)))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ));
        if !row.unstable_methods.is_empty() {
            let listed: Vec<String> = row
                .unstable_methods
                .iter()
                .map(|m| format!("`{}`", markdown_cell(m)))
                .collect();
            out.push_str(&format!(
                "Unstable methods advertised (not probed): {}.\n\n",
                listed.join(", ")
            ));
        }
        out.push_str("| method | answer |\n|---|---|\n");
        for method in &methods {
            let class = row.methods.get(method).map_or("not probed", |c| c.label());
            out.push_str(&format!("| `{method}` | {class} |\n"));
        }
        out.push('\n');
        if !row.commands.is_empty() {
            let commands: Vec<String> = row
                .commands
                .iter()
                .map(|c| format!("`/{}`", markdown_cell(c)))
                .collect();
            out.push_str(&format!("Slash commands: {}.\n\n", commands.join(", ")));
        }
    }
    out.push_str("## Summary\n\n| method |");
    for class in Class::ALL {
        out.push_str(&format!(" {} |", class.label()));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(Class::ALL.len()));
    out.push('\n');
    for method in &methods {
        out.push_str(&format!("| `{method}` |"));
        for class in Class::ALL {
            let n = matrix
                .agents
                .iter()
                .filter(|r| r.methods.get(method) == Some(&class))
                .count();
            out.push_str(&format!(" {n} |"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch of a hostile agent that passed, its words as long and many as it likes.
    fn hostile_result() -> AgentResult {
        let long = "x".repeat(10_000);
        AgentResult {
            id: "loud".into(),
            version: "1.0.0".into(),
            distribution: Kind::Npx,
            platform: None,
            status: Status::Passed,
            reason: None,
            fetch_seconds: None,
            start_seconds: None,
            total_seconds: 1.0,
            protocol_version: Some(1),
            auth_methods: vec![
                OfferedAuth {
                    id: long.clone(),
                    name: long.clone(),
                    kind: long.clone(),
                    meta_kinds: vec!["terminal".into()],
                };
                500
            ],
            advertised: Vec::new(),
            initialize: Some(json!({"agentInfo": {"name": "x".repeat(MAX_AGENT_INFO)}})),
            stderr_tail: None,
            notifications: 0,
            agent_requests: Vec::new(),
            agent_requests_total: 0,
            protocol_violations: Vec::new(),
            protocol_violations_total: 0,
            probes: vec![Probe {
                method: "session/new".into(),
                class: Class::Success,
            }],
            commands: vec![long; super::super::session::KEPT_COMMANDS],
            isolation: None,
            fingerprint: "0123456789abcdef".into(),
        }
    }

    #[test]
    fn a_row_keeps_what_a_hostile_agent_said_within_the_caps_the_reader_enforces() {
        let row = Row::from_result(&hostile_result(), "2026-03-01T12:00:00Z");
        assert_eq!(row.auth_methods.len(), MAX_AUTH_METHODS);
        assert_eq!(row.agent_info, None, "too long to keep");
        let now = acp_registry_core::time::parse_iso_utc_seconds("2026-03-01T12:00:00Z").unwrap();
        assert_eq!(read::check_row(&row, now), Ok(()));
    }

    #[test]
    fn probes_use_what_session_new_answered() {
        let facts = facts(
            &json!({"sessionId": "s1", "modes": {"currentModeId": "ask", "availableModes": [{"id": "code"}]}, "configOptions": [{"id": "model", "currentValue": "m"}]}),
        );
        assert_eq!(
            params("session/set_mode", &facts, "/w"),
            json!({"sessionId": "s1", "modeId": "ask"})
        );
        assert_eq!(
            params("session/set_config_option", &facts, "/w"),
            json!({"sessionId": "s1", "configId": "model", "value": "m"})
        );
        assert_eq!(
            params("session/close", &SessionFacts::default(), "/w"),
            json!({"sessionId": "acp-registry-probe"})
        );
    }
}
