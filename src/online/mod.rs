//! The online rules of `validate --online`: binary archive URLs answer, npm and `PyPI` pins
//! exist (and are not deprecated or yanked), and with `--verify-archives` archives match
//! their `sha256` pin. All HTTP goes through [`crate::net`]; findings are ordinary
//! [`Diagnostic`](crate::diagnostics::Diagnostic)s pointing at the URL or package value in `agent.json`, filtered through
//! the registry's [`Policy`](crate::rules::Policy) like every offline finding.
//!
//! `check` collects the targets of the checked entries (the stable distribution's archive URLs
//! and npx/uvx packages; preview artefacts and values the offline rules already reported as
//! errors are skipped), runs one task per target on `net::runtime`'s two workers, and turns the
//! answers into findings at the value's span through the policy's `Sink`. Provenance
//! (`provenance`) compares what is shipped with the manifest's `repository` through the one
//! normaliser, `manifest::repository`, which the configuration's `provenance` section reads too.

pub(crate) mod cache;
mod checks;
pub(crate) mod digest;
mod options;
pub(crate) mod packages;
mod provenance;
mod quote;
pub(crate) mod release;
pub(crate) mod target;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use crate::net::Client;
use crate::rules::{EntryReport, Policy, Sink};

use cache::Cache;
pub use digest::PinError;
pub use options::{
    Baseline, EndpointOverrides, Endpoints, GitHubToken, OnlineError, Options, Outcome, Progress,
    ProvenanceConfig, Silent, DEFAULT_ARCHIVE_CAP_MIB,
};
use target::{collect, retag_reason};

/// An entry of the private-host list, for the configuration's `network` section to check.
pub(crate) use crate::net::PrivateHost;

/// Run the online rules on `entries` (only those in `only`, when given).
pub fn check(
    entries: &[EntryReport],
    only: Option<&BTreeSet<String>>,
    policy: &Policy,
    options: &Options,
    progress: Arc<dyn Progress>,
) -> Result<Outcome, OnlineError> {
    let mut outcome = Outcome::default();
    let cache = match &options.cache_dir {
        Some(dir) => {
            let (cache, warning) = Cache::open(dir, options.max_age);
            outcome.warnings.extend(warning);
            cache
        }
        None => Cache::disabled(),
    };
    let mut jobs = Vec::new();
    let mut identities = BTreeMap::new();
    for entry in entries {
        if only.is_some_and(|set| !set.contains(&entry.entry.name)) {
            continue;
        }
        let Some(doc) = entry.manifest_doc() else {
            continue;
        };
        let doc = Arc::new(doc.into_owned());
        let version = doc.root.get_str("version").unwrap_or_default().to_string();
        identities.insert(entry.entry.name.clone(), (entry.id().to_string(), version));
        for target in collect(&doc, &entry.diagnostics) {
            jobs.push((entry.entry.name.clone(), doc.clone(), target));
        }
    }
    let runtime = crate::net::runtime()?;
    let context = Arc::new(checks::Context {
        client: Client::new(options.net.clone())?,
        cache: Mutex::new(cache),
        options: options.clone(),
    });
    progress.start(jobs.len());
    let results = runtime.block_on(checks::run_all(context.clone(), jobs, progress));
    if let Err(warning) = context.cache.lock().expect("cache").save() {
        outcome.warnings.push(warning);
    }
    for (entry, findings) in results {
        let mut sink = Sink::new(policy, Some(entry.clone()));
        for finding in findings {
            sink.push(finding);
        }
        let retagged = sink
            .diagnostics
            .iter()
            .any(|d| d.code == crate::rules::Code::ArchiveRetagged);
        if let (true, Some((id, version))) = (retagged, identities.get(&entry)) {
            outcome.retagged.insert(id.clone(), retag_reason(version));
        }
        outcome.diagnostics.extend(sink.diagnostics);
    }
    Ok(outcome)
}
