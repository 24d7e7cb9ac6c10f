//! Checking a whole registry: every per-entry rule in parallel, then the registry-wide rules.
//!
//! What validates, builds: after its rules, each entry is composed as every configured output
//! publishes it (`published::Form`: preview, patches, icon URL, as `build` writes it) and checked
//! against `rules::published_agent_validator`, the one compiled copy of the `registry.schema.json`
//! agent that `build` applies. A violation is reported in the manifest (through the preview block
//! when that is served), naming the outputs; the agents that pass are kept as text for `build`
//! (`Checked::published`). The report keeps the sources only of files with findings (for their
//! excerpts); `Checked::add_findings` adds those of later findings (`--online`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rayon::prelude::*;
use serde_json::Value;

use super::config::Config;
use super::discover::{discover, RegistryError};
use super::releases::Releases;
use crate::diagnostics::{Diagnostic, Report, Severity};
use crate::published::{indented, listings, preview_wins, Channel, Form, Patch};
use crate::rules::{
    self, check_entry_as_read, published_agent_validator, violations, Code, Deprecations, EntryDir,
    EntryReport, ManifestDoc, Owned, Quarantine, Sink, SkillReport, Violation, SKILLS_DIR,
};
use acp_registry_core::source::SourceFile;

/// A checked registry: per-entry results plus everything needed to render and build.
pub struct Checked {
    /// The registry's `acp-registry.jsonc`, read (defaults where it is absent).
    pub config: Config,
    /// The quarantined entries of `quarantine.json`.
    pub quarantine: Quarantine,
    /// The retired entries of `deprecations.json`.
    pub(crate) deprecations: Deprecations,
    /// The release history of `releases.json` (empty without one): what `update --apply`
    /// recorded of each entry's sources.
    pub(crate) releases: Releases,
    /// Every entry folder's findings and parsed manifest, in folder order.
    pub entries: Vec<EntryReport>,
    /// Every stand-alone skill folder (`skills/<name>/`), in folder order.
    pub(crate) skills: Vec<SkillReport>,
    /// Every finding of the run, with the sources to render them.
    pub report: Report,
    /// [`check_registry_to_build`]: by entry folder, per configured output, the agent as that
    /// output publishes it under the configured `base_url`, as `build` writes it, when it
    /// passed the published-form check (`None`: not published there, or not clean).
    pub published: BTreeMap<String, Vec<Option<String>>>,
}

/// Run every offline rule. `only`: the entry folders whose findings are reported (for
/// `--changed-since`); the other entries are still checked, because registry-wide rules
/// need their ids, but their findings are dropped.
pub fn check_registry(
    root: &Path,
    only: Option<&BTreeSet<String>>,
) -> Result<Checked, RegistryError> {
    check_registry_since(root, only, None)
}

/// [`check_registry`] for `build`: the published form of every clean agent is kept as the
/// check composed it ([`Checked::published`]), so the build writes it without composing it
/// again from a second parse of the manifest.
pub(crate) fn check_registry_to_build(root: &Path) -> Result<Checked, RegistryError> {
    check(root, None, None, true)
}

/// [`check_registry`] of a run with `--changed-since`: `changed` are the entry folders that
/// changed since the base revision (the rules that depend on it, such as `require_sha256`,
/// read them through the policy).
pub(crate) fn check_registry_since(
    root: &Path,
    only: Option<&BTreeSet<String>>,
    changed: Option<&BTreeSet<String>>,
) -> Result<Checked, RegistryError> {
    check(root, only, changed, false)
}

fn check(
    root: &Path,
    only: Option<&BTreeSet<String>>,
    changed: Option<&BTreeSet<String>>,
    keep_published: bool,
) -> Result<Checked, RegistryError> {
    let (mut config, config_findings) = Config::load(root);
    config.policy.changed = changed.cloned();
    let discovered = discover(root)?;
    let (entries, published) = check_entries(&discovered.entries, &config, only, keep_published);
    let (skills, skills_findings) = check_skills(root, &config, &entries, only);
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
    report.diagnostics.extend(skills_findings);
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
    let deprecations = check_deprecations(root, &config, &entries, &mut report);
    let mut releases_sink = Sink::new(&config.policy, None);
    let releases = Releases::load(root, &mut releases_sink);
    report.diagnostics.extend(releases_sink.diagnostics);
    // With --changed-since, a duplicate id is reported on the changed entry only (its message
    // names the other one).
    let reported_manifests: Option<BTreeSet<&str>> = only.map(|set| {
        entries
            .iter()
            .filter(|e| set.contains(&e.entry.name))
            .filter_map(|e| e.manifest.as_ref().map(|m| m.source().path.as_str()))
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
    if let Some(source) = &deprecations.source {
        report.sources.insert(source.path.clone(), source.clone());
    }
    if let Some(source) = releases.source.as_ref().filter(|_| releases.malformed) {
        // Only a file with findings needs its text in the report (for their excerpts).
        report.sources.insert(source.path.clone(), source.clone());
    }
    if let Some(source) = &config.source {
        report.sources.insert(source.path.clone(), source.clone());
    }
    for entry in &entries {
        report.diagnostics.extend(entry.diagnostics.iter().cloned());
    }
    let mut checked = Checked {
        config,
        quarantine,
        deprecations,
        releases,
        entries,
        skills,
        report,
        published,
    };
    checked.add_sources_of_findings();
    checked.report.finish();
    Ok(checked)
}

/// `deprecations.json` read and checked against the entries (and, with `--changed-since`,
/// the changed entries against it).
fn check_deprecations(
    root: &Path,
    config: &Config,
    entries: &[EntryReport],
    report: &mut Report,
) -> Deprecations {
    let mut sink = Sink::new(&config.policy, None);
    let deprecations = Deprecations::load(root, &mut sink);
    rules::check_deprecations(&deprecations, entries, &mut sink);
    if let Some(changed) = &config.policy.changed {
        rules::check_changed_retired(&deprecations, entries, changed, &mut sink);
    }
    report.diagnostics.extend(sink.diagnostics);
    deprecations
}

/// Every entry's rules, in parallel, in folder order; with `keep_published`, the published
/// form of each clean agent by folder (see [`Checked::published`]).
fn check_entries(
    dirs: &[EntryDir],
    config: &Config,
    only: Option<&BTreeSet<String>>,
    keep_published: bool,
) -> (Vec<EntryReport>, BTreeMap<String, Vec<Option<String>>>) {
    let (entries, published): (Vec<EntryReport>, Vec<Vec<Option<String>>>) = dirs
        .par_iter()
        .map(|dir| {
            let (mut report, as_read) = check_entry_as_read(dir, &config.policy);
            let published = check_published(&mut report, as_read, config, keep_published);
            check_compat(&mut report, config);
            // The per-entry rules are done: what follows parses again the few it needs.
            if let Some(manifest) = &mut report.manifest {
                manifest.release_tree();
            }
            let report = match only {
                Some(set) if !set.contains(&dir.name) => EntryReport {
                    diagnostics: Vec::new(),
                    ..report
                },
                _ => report,
            };
            (report, published)
        })
        .unzip();
    let published = entries
        .iter()
        .zip(published)
        .filter(|(_, texts)| !texts.is_empty())
        .map(|(entry, texts)| (entry.entry.name.clone(), texts))
        .collect();
    (entries, published)
}

/// `client-incompatible`: the entry judged against the known clients, here because it needs
/// the configured outputs (a client whose file leaves the entry out cannot install it).
fn check_compat(report: &mut EntryReport, config: &Config) {
    let Some(doc) = report.manifest_doc() else {
        return;
    };
    let mut sink = Sink::new(&config.policy, Some(report.entry.name.clone()));
    let listed = listings(&config.outputs, report.id());
    rules::check_client_compat(&doc, &listed, &mut sink);
    drop(doc);
    report.diagnostics.extend(sink.diagnostics);
}

/// The stand-alone skills of `skills/` (each folder's findings kept when `only` selects it:
/// `skills/<name>`, or `skills` for all), and the findings about `skills/` itself and about
/// skill names used twice in the registry (reported where `only` selects the later one).
fn check_skills(
    root: &Path,
    config: &Config,
    entries: &[EntryReport],
    only: Option<&BTreeSet<String>>,
) -> (Vec<SkillReport>, Vec<Diagnostic>) {
    let (mut skills, mut findings) = rules::check_standalone(root, &config.policy);
    let selects = |key: &str| only.is_none_or(|set| set.contains(key) || set.contains(SKILLS_DIR));
    if !selects(SKILLS_DIR) {
        findings.clear();
    }
    for skill in &mut skills {
        if !selects(&format!("{SKILLS_DIR}/{}", skill.folder)) {
            skill.diagnostics.clear();
        }
    }
    let mut duplicates = Sink::new(&config.policy, None);
    let all = entries
        .iter()
        .flat_map(|e| &e.skills)
        .chain(skills.iter().filter_map(|s| s.skill.as_ref()));
    rules::check_duplicate_skill_names(all, &mut duplicates);
    let reported = |file: &str| {
        let in_entry = entries
            .iter()
            .find(|e| file.starts_with(&format!("{}/", e.entry.display)));
        if let Some(entry) = in_entry {
            only.is_none_or(|set| set.contains(&entry.entry.name))
        } else {
            let folder = file.split('/').nth(1).unwrap_or_default();
            selects(&format!("{SKILLS_DIR}/{folder}"))
        }
    };
    findings.extend(
        duplicates
            .diagnostics
            .into_iter()
            .filter(|d| reported(&d.file)),
    );
    for skill in &skills {
        findings.extend(skill.diagnostics.iter().cloned());
    }
    (skills, findings)
}

impl Checked {
    /// Add findings about the checked entries (the online checks'), with the sources they
    /// point into.
    pub fn add_findings(&mut self, findings: impl IntoIterator<Item = Diagnostic>) {
        self.report.diagnostics.extend(findings);
        self.add_sources_of_findings();
        self.report.finish();
    }

    /// The entries' files that findings point into, for excerpts: only those, as a clean
    /// registry needs none of them.
    fn add_sources_of_findings(&mut self) {
        let files: BTreeSet<&str> = self
            .report
            .diagnostics
            .iter()
            .map(|d| d.file.as_str())
            .collect();
        let skills = self.skills.iter().flat_map(|skill| &skill.sources);
        let wanted: Vec<SourceFile> = self
            .entries
            .iter()
            .flat_map(|entry| &entry.sources)
            .chain(skills)
            .filter(|source| files.contains(source.path.as_str()))
            .cloned()
            .collect();
        for source in wanted {
            self.report.sources.insert(source.path.clone(), source);
        }
    }
}

/// The agent as every output publishes it (preview resolved, patches applied, `icon` set)
/// against `registry.schema.json`, as `build` checks it: what validates also builds. Each
/// problem is reported once, in the manifest (through the preview block when the output
/// serves it), naming the outputs; places where the manifest already has an error or a
/// schema finding are not repeated. With `keep`, returns per output the agent as written when
/// it passed (empty without `keep`). `as_read`: the manifest as the rules read it, from which
/// every output's agent is composed (one [`Form`], no second parse or normalization).
fn check_published(
    report: &mut EntryReport,
    as_read: Option<Value>,
    config: &Config,
    keep: bool,
) -> Vec<Option<String>> {
    let mut kept = Vec::new();
    let Some(doc) = report.manifest_doc() else {
        return kept;
    };
    let reported: BTreeSet<String> = report
        .diagnostics
        .iter()
        .filter(|d| d.file == doc.source.path)
        .filter(|d| d.severity == Severity::Error || d.code == Code::Schema)
        .filter_map(|d| d.pointer.clone())
        .collect();
    let serves_preview = preview_wins(
        doc.root.get_str("version").unwrap_or_default(),
        doc.root
            .pointer("/preview/version")
            .and_then(|(node, _)| node.as_str())
            .unwrap_or_default(),
    );
    let Some(Value::Object(manifest)) = as_read else {
        return kept;
    };
    let form = Form::new(report, manifest);
    let mut found: BTreeMap<Violation, (Vec<&str>, bool)> = BTreeMap::new();
    for output in &config.outputs {
        if !output.publishes(report.id()) {
            kept.push(None);
            continue;
        }
        let agent = form.agent(&config.base_url, output);
        let preview = output.channel == Channel::Preview && serves_preview;
        let already: BTreeSet<String> = reported
            .iter()
            .filter_map(|p| published_pointer(p, preview))
            .collect();
        let agent = Value::Object(agent);
        // Nothing left out as reported elsewhere, nothing found: the agent is what gets written.
        let mut clean = already.is_empty();
        for mut v in violations(
            published_agent_validator(),
            &agent,
            &already,
            Owned::Reported,
        ) {
            clean = false;
            let patched = output
                .patches
                .iter()
                .any(|p| p.id == report.id() && patch_touches(p, &v.pointer));
            if preview {
                v.at = manifest_pointer(&v.at);
                v.pointer = manifest_pointer(&v.pointer);
            }
            let entry = found.entry(v).or_default();
            entry.0.push(&output.file);
            entry.1 |= patched;
        }
        kept.push((keep && clean).then(|| indented(&agent)));
    }
    let mut sink = Sink::new(&config.policy, Some(report.entry.name.clone()));
    for (violation, (outputs, patched)) in found {
        sink.push(published_finding(&doc, &violation, &outputs, patched));
    }
    report.diagnostics.extend(sink.diagnostics);
    if keep {
        kept
    } else {
        Vec::new()
    }
}

fn published_finding(
    doc: &ManifestDoc,
    violation: &Violation,
    outputs: &[&str],
    patched: bool,
) -> crate::diagnostics::Diagnostic {
    let mut d = violation.finding(doc);
    let top = violation.at.split('/').nth(1).unwrap_or_default();
    if !top.is_empty() && doc.root.pointer(&format!("/{top}")).is_none() {
        // A field only the output has (set by a patch, the icon URL): point at the manifest's
        // first brace rather than underlining the whole manifest.
        let start = doc.root.span.start;
        d = d.at(
            &doc.source,
            acp_registry_core::source::Span::new(start, start + 1),
        );
    }
    d.message = format!("{} (as published in {})", d.message, outputs.join(", "));
    if patched {
        d.help = Some(format!(
            "a patch of {} in acp-registry.jsonc sets this field; fix the patch",
            outputs.join(", ")
        ));
    }
    d
}

/// Whether `patch` sets or extends the field at `pointer` of the published agent.
fn patch_touches(patch: &Patch, pointer: &str) -> bool {
    let top = pointer
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default();
    patch
        .set
        .keys()
        .any(|k| crate::manifest::escape_pointer(k) == top)
        || (top == "distribution" && !patch.append_args.is_empty())
}

/// Whether the published agent's `pointer` comes from the preview block when it is served.
fn from_preview(pointer: &str) -> bool {
    ["/version", "/distribution"]
        .iter()
        .any(|f| pointer == *f || pointer.starts_with(&format!("{f}/")))
}

/// Where the manifest's `pointer` lands in the published agent (`None`: it is not published).
fn published_pointer(pointer: &str, preview: bool) -> Option<String> {
    match pointer.strip_prefix("/preview/") {
        Some(rest) if preview => Some(format!("/{rest}")),
        None if preview && from_preview(pointer) => None,
        _ => Some(pointer.to_string()),
    }
}

/// The inverse of [`published_pointer`] for a served preview.
fn manifest_pointer(pointer: &str) -> String {
    if from_preview(pointer) {
        format!("/preview{pointer}")
    } else {
        pointer.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_pointers_map_both_ways_when_the_preview_is_served() {
        assert_eq!(
            published_pointer("/preview/distribution/npx", true).as_deref(),
            Some("/distribution/npx")
        );
        assert_eq!(published_pointer("/distribution/npx", true), None);
        assert_eq!(published_pointer("/name", true).as_deref(), Some("/name"));
        assert_eq!(
            published_pointer("/distribution/npx", false).as_deref(),
            Some("/distribution/npx")
        );
        assert_eq!(manifest_pointer("/version"), "/preview/version");
        assert_eq!(manifest_pointer("/versions"), "/versions");
        assert_eq!(manifest_pointer("/bundled"), "/bundled");
    }
}
