//! Checking a whole registry: every per-entry rule in parallel, then the registry-wide rules.

use std::collections::BTreeSet;
use std::path::Path;

use rayon::prelude::*;

use super::{discover, Config, RegistryError};
use crate::diagnostics::Report;
use crate::rules::{self, check_entry, EntryReport, Quarantine, Sink};

/// A checked registry: per-entry results plus everything needed to render and build.
pub struct Checked {
    pub config: Config,
    pub quarantine: Quarantine,
    pub entries: Vec<EntryReport>,
    pub report: Report,
}

/// Run every offline rule. `only`: the entry folders whose findings are reported (for
/// `--changed-since`); the other entries are still checked, because registry-wide rules
/// need their ids, but their findings are dropped.
pub fn check_registry(
    root: &Path,
    only: Option<&BTreeSet<String>>,
) -> Result<Checked, RegistryError> {
    let (config, config_findings) = Config::load(root);
    let discovered = discover(root)?;
    let entries: Vec<EntryReport> = discovered
        .entries
        .par_iter()
        .map(|dir| {
            let report = check_entry(dir, &config.policy);
            match only {
                Some(set) if !set.contains(&dir.name) => EntryReport {
                    diagnostics: Vec::new(),
                    ..report
                },
                _ => report,
            }
        })
        .collect();
    let mut report = Report {
        entries: only.map_or(entries.len(), |set| {
            entries
                .iter()
                .filter(|e| set.contains(&e.entry.name))
                .count()
        }),
        ..Report::default()
    };
    report.diagnostics.extend(config_findings);
    let mut root_sink = Sink::new(&config.policy, None);
    for finding in discovered.findings {
        root_sink.push(finding);
    }
    report.diagnostics.extend(root_sink.diagnostics);
    let ids: BTreeSet<&str> = entries.iter().map(EntryReport::id).collect();
    report.diagnostics.extend(config.check_ids(&ids));
    let mut quarantine_sink = Sink::new(&config.policy, None);
    let quarantine = Quarantine::load(root, &mut quarantine_sink);
    rules::check_quarantine(&quarantine, &ids, &mut quarantine_sink);
    report.diagnostics.extend(quarantine_sink.diagnostics);
    // With --changed-since, a duplicate id is reported on the changed entry only (its message
    // names the other one).
    let reported_manifests: Option<BTreeSet<&str>> = only.map(|set| {
        entries
            .iter()
            .filter(|e| set.contains(&e.entry.name))
            .filter_map(|e| e.manifest.as_ref().map(|m| m.source.path.as_str()))
            .collect()
    });
    let mut duplicates = Sink::new(&config.policy, None);
    rules::check_duplicate_ids(&entries, &mut duplicates);
    report
        .diagnostics
        .extend(duplicates.diagnostics.into_iter().filter(|d| {
            reported_manifests
                .as_ref()
                .is_none_or(|files| files.contains(d.file.as_str()))
        }));
    if let Some(source) = &quarantine.source {
        report.sources.insert(source.path.clone(), source.clone());
    }
    if let Some(source) = &config.source {
        report.sources.insert(source.path.clone(), source.clone());
    }
    for entry in &entries {
        report.diagnostics.extend(entry.diagnostics.iter().cloned());
        for source in &entry.sources {
            report.sources.insert(source.path.clone(), source.clone());
        }
    }
    report.finish();
    Ok(Checked {
        config,
        quarantine,
        entries,
        report,
    })
}
