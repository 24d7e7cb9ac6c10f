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
mod error;
pub(crate) mod fetch;
mod job;
pub(crate) mod matrix;
mod options;
mod outcome;
mod output;
mod plan;
mod probe;
mod result;
pub(crate) mod sandbox;
pub(crate) mod session;
pub(crate) mod shard;

pub use error::VerifyError;
pub(crate) use options::prepare;
pub use options::Options;
pub use outcome::Outcome;
pub(crate) use output::{list_shards, write};
#[cfg(test)]
pub(crate) use plan::{has_build_for, launch_model};
pub(crate) use result::{AgentResult, Status};
pub use shard::Shard;

use std::collections::BTreeSet;
use std::path::Path;

use crate::diagnostics::{Diagnostic, Severity};
use crate::registry::Checked;
use crate::rules::{Code, Policy, Sink};
use plan::Job;

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
        // What the launch recorded decides too, as it does for a `matrix.json` row read back.
        if result.status == Status::Passed {
            if let Some(why) = result::cannot_pass(result.protocol_version) {
                result.status = Status::Failed;
                result.reason = Some(why);
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
