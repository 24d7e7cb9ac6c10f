//! The offline rules, one file per family, and the engine that runs them on an entry.
//!
//! Every rule reports into a [`Sink`], which applies the [`Policy`] (severity overrides,
//! exemptions) as findings are made, so a rule never needs to know about configuration.

mod changes;
mod compat;
mod deprecations;
mod distribution;
mod entry;
mod files;
mod icons;
mod identity;
mod license;
mod metadata;
mod package_spec;
mod placeholder;
mod policy;
mod preview;
mod read;
mod registry_wide;
mod schema;
mod sink;
mod skills;
mod versions;

/// The catalogue lives with `Diagnostic` (the ground layer); rules name codes from here too.
pub(crate) use crate::diagnostics::{did_you_mean, Code};
pub(crate) use changes::{check_changes, ChangeBase};
pub(crate) use compat::check as check_client_compat;
#[cfg(test)]
pub(crate) use compat::CLIENTS_FILE;
pub(crate) use compat::{client_list, compatibility};
pub(crate) use deprecations::{check_changed_retired, check_deprecations};
pub(crate) use deprecations::{Deprecations, Status};
#[cfg(test)]
pub(crate) use distribution::take_normalized_count;
pub(crate) use distribution::{normalized_json, reserved_env, url_versions};
pub(crate) use entry::{display_path, Manifest, ManifestDoc};
pub use entry::{EntryDir, EntryReport};
pub use icons::check_icon;
pub(crate) use metadata::url_problem;
pub(crate) use package_spec::package_name_and_pin;
pub(crate) use placeholder::{PLACEHOLDERS, SCAFFOLD_ICON};
pub use policy::Policy;
pub(crate) use policy::{is_enforced, Level, RequireSha256, DEFAULT_REQUIRED_OS};
pub(crate) use read::{read_failure, read_text, refused};
pub(crate) use registry_wide::{check_duplicate_ids, check_quarantine, Quarantine};
pub use schema::registry_validator;
pub(crate) use schema::{
    published_agent_validator, violations, Owned, Violation, AGENT_SCHEMA, REGISTRY_SCHEMA,
};
pub(crate) use sink::Sink;
pub(crate) use skills::{
    check_duplicate_skill_names, check_skill_folder, check_standalone, CheckedSkill, SkillReport,
    MAX_SKILL_BYTES, SKILLS_DIR,
};
pub(crate) use versions::{PreviewVersion, Version};

use crate::diagnostics::Severity;

/// Run every offline per-entry rule on one entry folder.
pub fn check_entry(entry: &EntryDir, policy: &Policy) -> EntryReport {
    check_entry_as_read(entry, policy).0
}

/// [`check_entry`], and the manifest as clients read it ([`normalized_json`], the instance
/// the schema rule judged) when the manifest parsed: the published form starts from it
/// (`published::Form::new`), so a check normalizes each manifest once.
pub(crate) fn check_entry_as_read(
    entry: &EntryDir,
    policy: &Policy,
) -> (EntryReport, Option<serde_json::Value>) {
    let mut sink = Sink::new(policy, Some(entry.name.clone()));
    let mut sources = Vec::new();
    let Some(listing) = files::list_entry(entry, &mut sink) else {
        // The folder could not be listed: reported as unreadable, not as missing its manifest.
        return (without_manifest(entry, sink), None);
    };
    if !listing.files.contains("agent.json") {
        files::load_manifest(entry, &mut sink); // reports missing-manifest
        return (without_manifest(entry, sink), None);
    }
    let manifest = files::load_manifest(entry, &mut sink);
    let mut as_read = None;
    if let Some(doc) = &manifest {
        sources.push(doc.source.clone());
        identity::check(doc, &entry.name, &mut sink);
        // The typed view, built once per entry (the distribution rules judge the slots its
        // distribution model is built from, `manifest::distribution::Written`).
        let view = crate::manifest::agent::AgentView::from_node(&doc.root);
        metadata::check(doc, &view, &mut sink);
        distribution::check(doc, &mut sink);
        preview::check(doc, &mut sink);
        // The schema runs last so it can leave out errors a specific rule already reported
        // (a specific warning does not hide a schema error).
        let reported = sink
            .diagnostics
            .iter()
            .filter(|d| d.file == doc.source.path && d.severity == Severity::Error)
            .filter_map(|d| d.pointer.clone())
            .collect();
        let instance = distribution::normalized_json(&doc.root);
        schema::check(doc, &instance, &reported, &mut sink);
        as_read = Some(instance);
    }
    let icons = icons::check(entry, &listing, &mut sink, &mut sources);
    sources.extend(files::check_readme(entry, &listing, &mut sink));
    placeholder::check(manifest.as_ref(), entry, &sources, &mut sink);
    let skills = skills::check(entry, &listing, &mut sink, &mut sources);
    let report = EntryReport {
        entry: entry.clone(),
        manifest: manifest.map(Manifest::new),
        icons,
        diagnostics: sink.diagnostics,
        sources,
        skills,
    };
    (report, as_read)
}

/// The report of an entry whose manifest could not even be looked for or is missing.
fn without_manifest(entry: &EntryDir, sink: Sink) -> EntryReport {
    EntryReport {
        entry: entry.clone(),
        manifest: None,
        icons: Vec::new(),
        diagnostics: sink.diagnostics,
        sources: Vec::new(),
        skills: Vec::new(),
    }
}
