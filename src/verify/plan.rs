//! Planning a run's jobs: one per selected entry and distribution kind, in registry order,
//! each with what it will do (run, reuse a matrix row, skip, or report as not tested here),
//! and the shard of them a `--shard K/N` run takes.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::options::Options;
use super::shard::{self, Shard};
use super::{fetch, matrix};
use crate::manifest::agent::AgentView;
use crate::manifest::distribution::{current_platform, Distribution, Kind};
use crate::registry::Checked;
use crate::rules::ManifestDoc;

/// What one job will do.
#[derive(Debug, Clone)]
pub(super) enum Plan {
    Run,
    NotTested(String),
    Skipped(String),
    Reuse(Box<matrix::Row>),
}

/// One agent and distribution kind to verify.
#[derive(Clone)]
pub(super) struct Job {
    pub(super) id: String,
    pub(super) version: String,
    pub(super) kind: Kind,
    pub(super) doc: Arc<ManifestDoc>,
    pub(super) dist: Arc<Distribution>,
    pub(super) plan: Plan,
    pub(super) fingerprint: String,
}

/// The ids of each shard when what `options` selects is split for `--list-shards`:
/// `ceil(M / size)` shards of the `M` selected entries, at most `max`, at least one.
#[must_use]
pub(crate) fn shards(
    checked: &Checked,
    options: &Options,
    max: usize,
    size: usize,
) -> Vec<(Shard, Vec<String>)> {
    let shards = shard::plan(&selected_ids(&plan(checked, options)), max, size);
    let count = shards.len();
    (1..=count)
        .filter_map(|k| Shard::new(k, count).ok())
        .zip(shards)
        .collect()
}

/// The ids the jobs are for, once each, in plan (registry) order.
fn selected_ids(jobs: &[Job]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for job in jobs {
        if ids.last() != Some(&job.id) {
            ids.push(job.id.clone());
        }
    }
    ids
}

/// With a shard, only its entries' jobs, and the [`matrix::Part`] that says which.
pub(super) fn take_shard(jobs: Vec<Job>, shard: Option<Shard>) -> (Vec<Job>, Option<matrix::Part>) {
    use sha2::{Digest, Sha256};
    let Some(shard) = shard else {
        return (jobs, None);
    };
    let ids = selected_ids(&jobs);
    let selected: Vec<matrix::SelectedJob> = jobs
        .iter()
        .map(|job| matrix::SelectedJob {
            id: job.id.clone(),
            distribution: job.kind,
            version: job.version.clone(),
            manifest: acp_registry_core::fs::digest::hex(&Sha256::digest(
                job.doc.root.to_json().to_string().as_bytes(),
            )),
            fingerprint: job.fingerprint.clone(),
            skipped: matches!(job.plan, Plan::Skipped(_)),
        })
        .collect();
    let lines: Vec<String> = selected.iter().map(matrix::SelectedJob::line).collect();
    let selection = shard::selection_digest(lines.iter().map(String::as_str));
    let mine: BTreeSet<&str> = ids
        .iter()
        .zip(shard::assign(&ids, shard.count()))
        .filter(|(_, s)| *s + 1 == shard.index())
        .map(|(id, _)| id.as_str())
        .collect();
    let entries = ids
        .iter()
        .filter(|id| mine.contains(id.as_str()))
        .cloned()
        .collect();
    let part = matrix::Part {
        version: matrix::PART_VERSION,
        shard: shard.to_string(),
        selection,
        selected: ids.len(),
        entries,
        jobs: selected,
    };
    let jobs = jobs
        .into_iter()
        .filter(|job| mine.contains(job.id.as_str()))
        .collect();
    (jobs, Some(part))
}

/// One job per entry and distribution kind the options select, in registry order.
pub(super) fn plan(checked: &Checked, options: &Options) -> Vec<Job> {
    let platform = current_platform();
    let path = std::env::var("PATH").ok();
    let mut jobs = Vec::new();
    for entry in &checked.entries {
        let Some(doc) = entry.manifest_doc() else {
            continue;
        };
        let id = entry.id().to_string();
        if options.agent.as_ref().is_some_and(|a| !a.contains(&id))
            || options
                .changed
                .as_ref()
                .is_some_and(|c| !c.contains(&entry.entry.name))
        {
            continue;
        }
        let quarantined = checked
            .quarantine
            .ids
            .get(&id)
            .filter(|_| options.agent.is_none());
        let dist = Arc::new(launch_model(&doc));
        let doc = Arc::new(doc.into_owned());
        let version = doc.root.get_str("version").unwrap_or_default().to_string();
        for kind in Kind::ALL {
            if !dist.has(kind) || options.kind.as_ref().is_some_and(|k| !k.contains(&kind)) {
                continue;
            }
            let fingerprint = dist.fingerprint(kind);
            let reuse = options.reuse.iter().find(|r| {
                r.id == id
                    && r.distribution == kind
                    && r.version == version
                    && r.fingerprint == fingerprint
            });
            let plan = if let Some(reason) = quarantined {
                Plan::Skipped(format!("quarantined: {reason}"))
            } else if let Some(row) = reuse {
                Plan::Reuse(Box::new(row.clone()))
            } else {
                runnable(kind, &dist, platform, path.as_deref())
            };
            jobs.push(Job {
                id: id.clone(),
                version: version.clone(),
                kind,
                doc: doc.clone(),
                dist: dist.clone(),
                plan,
                fingerprint,
            });
        }
    }
    jobs
}

/// What `verify` launches of a manifest: the stable distribution of its typed view.
pub(crate) fn launch_model(doc: &ManifestDoc) -> Distribution {
    AgentView::from_node(&doc.root).distribution
}

/// Whether the launch model has a binary build for `platform`.
pub(crate) fn has_build_for(dist: &Distribution, platform: &str) -> bool {
    dist.target(platform).is_some()
}

/// Whether this machine can launch `kind`: a build for its platform, or the launcher.
fn runnable(kind: Kind, dist: &Distribution, platform: Option<&str>, path: Option<&str>) -> Plan {
    match kind {
        Kind::Binary => match platform {
            Some(p) if has_build_for(dist, p) => Plan::Run,
            Some(p) => Plan::NotTested(format!("no binary build for {p}")),
            None => Plan::NotTested("this machine's platform has no platform key".into()),
        },
        launcher => match fetch::on_path(launcher.as_str(), path) {
            Some(_) => Plan::Run,
            None => Plan::NotTested(format!("`{launcher}` is not installed on this machine")),
        },
    }
}
