//! `verify` and `matrix`: launch each distribution as an editor would and speak ACP to it.
//!
//! Planning, then one job per agent and distribution kind. [`Options`] are the flags, which
//! [`prepare`] resolves against the checked registry; [`plan`] lists the jobs in registry
//! order and takes a `--shard`'s part. Each [`job`] fetches a binary target for this
//! machine's platform ([`fetch`]) or installs an npx or uvx package into the run's package
//! cache, runs the agent in a [`sandbox`] and sends it `initialize` ([`session`]); the answer
//! is judged ([`checks`]) and, for `matrix`, the session methods are probed ([`matrix`]).
//! Jobs run `jobs` at a time; results come back in plan order, so the report is the same
//! whatever finished first. Findings are ordinary [`Diagnostic`]s at the distribution's
//! place in `agent.json`, through the registry's policy; [`output`] prints them with one line
//! per agent.

pub(crate) mod checks;
pub(crate) mod fetch;
mod job;
pub(crate) mod matrix;
mod options;
mod output;
mod plan;
pub(crate) mod sandbox;
pub(crate) mod session;
pub(crate) mod shard;

pub(crate) use options::prepare;
pub use options::Options;
pub(crate) use output::{list_shards, write};
#[cfg(test)]
pub(crate) use plan::{has_build_for, launch_model};
pub use shard::Shard;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::diagnostics::{Diagnostic, Report, Severity};
use crate::manifest::distribution::Kind;
use crate::registry::Checked;
use crate::rules::{Code, Policy, Sink};
use acp_registry_core::acp::methods::OfferedAuth;
use plan::Job;

/// Grace between SIGTERM and SIGKILL at the end of each agent.
const GRACE: Duration = Duration::from_secs(2);

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
    /// The first [`session::KEPT`] methods, and how many requests there were.
    pub(crate) agent_requests: Vec<String>,
    pub(crate) agent_requests_total: usize,
    /// The first [`session::KEPT`] protocol violations, and how many there were.
    pub(crate) protocol_violations: Vec<String>,
    pub(crate) protocol_violations_total: usize,
    /// `matrix`: `session/new` and each probe.
    pub(crate) probes: Vec<matrix::Probe>,
    /// `matrix`: the slash commands the agent announced (`available_commands_update`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) commands: Vec<String>,
    /// What isolation the launched agent got (none when it was not launched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) isolation: Option<sandbox::Isolation>,
    #[serde(skip)]
    pub(crate) fingerprint: String,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Outcome {
    pub(crate) results: Vec<AgentResult>,
    /// With `--shard`: which part of the selection this run was.
    pub(crate) part: Option<matrix::Part>,
    /// Every finding of the run, as `validate` reports them.
    pub report: Report,
}

/// Why a run could not take place.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The async runtime could not start.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(#[from] crate::net::NetError),
    /// The private folder of the run could not be created.
    #[error("cannot create the run folder {path}: {source}")]
    RunDir {
        /// The folder asked for.
        path: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The registry could not be checked.
    #[error(transparent)]
    Registry(#[from] crate::registry::RegistryError),
    /// `--changed-since` could not be read from git.
    #[error(transparent)]
    Git(#[from] crate::registry::git::GitError),
    /// A flag names something that does not exist or cannot be used (exit 2 as a usage
    /// error).
    #[error("{0}")]
    Usage(String),
    /// The report could not be written.
    #[error(transparent)]
    Write(#[from] std::io::Error),
}

/// Verify the checked registry's entries.
pub fn run(checked: &Checked, options: &Options) -> Result<Outcome, VerifyError> {
    let containment = sandbox::Containment::begin(options.sole_parent);
    let (jobs, part) = plan::take_shard(plan::plan(checked, options), options.shard);
    let run_dir = std::env::temp_dir().join(format!(
        "acp-registry-verify-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ));
    sandbox::private_dir(&run_dir).map_err(|source| VerifyError::RunDir {
        path: run_dir.display().to_string(),
        source,
    })?;
    let result = job::run_jobs(jobs, options, &run_dir);
    // Everything that escaped its keeper ends before its folders go.
    drop(containment);
    remove_tree(&run_dir);
    let results = result?;
    let mut outcome = report(checked, results, options);
    outcome.part = part;
    Ok(outcome)
}

/// Apply the policy, decide each status, and gather the findings into one report.
fn report(
    checked: &Checked,
    results: Vec<(Job, AgentResult, Vec<Diagnostic>)>,
    options: &Options,
) -> Outcome {
    let policy: &Policy = &checked.config.policy;
    let mut outcome = Outcome::default();
    let mut ids = BTreeSet::new();
    for (job, mut result, findings) in results {
        let mut sink = Sink::new(policy, Some(job.id.clone()));
        for mut finding in findings {
            if options.require_tested && finding.code == Code::AgentNotTested {
                finding.severity = Severity::Error;
            }
            sink.push(finding);
        }
        let first_error = sink
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error);
        if let Some(error) = first_error {
            if result.status == Status::Passed {
                result.status = Status::Failed;
                result.reason = Some(format!("{}: {}", error.code, error.message));
            }
        }
        if !sink.diagnostics.is_empty() {
            outcome
                .report
                .sources
                .insert(job.doc.source.path.clone(), job.doc.source.clone());
        }
        ids.insert(job.id.clone());
        outcome.report.diagnostics.extend(sink.diagnostics);
        outcome.results.push(result);
    }
    outcome.report.entries = ids.len();
    outcome.report.finish();
    outcome
}

/// Remove the run folder we created, making read-only folders (npm and Go caches write
/// some) writable first when a plain removal fails. Links are removed, never followed.
fn remove_tree(dir: &Path) {
    if std::fs::remove_dir_all(dir).is_ok() {
        return;
    }
    make_writable(dir);
    let _ = std::fs::remove_dir_all(dir);
}

/// Give `dir` and every folder below it (links not followed) owner rwx.
fn make_writable(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    if let Ok(read) = std::fs::read_dir(dir) {
        for entry in read.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                make_writable(&entry.path());
            }
        }
    }
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
