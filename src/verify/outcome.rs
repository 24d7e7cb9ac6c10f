//! What a whole run found: every job's result and the report of its findings.

use super::matrix::Part;
use super::result::AgentResult;
use crate::diagnostics::Report;

/// What a run found.
#[derive(Debug, Default)]
pub struct Outcome {
    pub(crate) results: Vec<AgentResult>,
    /// With `--shard`: which part of the selection this run was.
    pub(crate) part: Option<Part>,
    /// Every finding of the run, as `validate` reports them.
    pub report: Report,
}
