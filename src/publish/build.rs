//! `build`: everything an editor downloads, planned from a checked registry (every input
//! problem found first), then produced one file at a time into [`super::output`] (a fresh
//! folder beside the output, swapped in whole, or the `--check` comparison), so memory does
//! not grow with the pages and files written.
//!
//! Planned, streamed, then one atomic swap. `plan` finds every input problem (outputs that would
//! not validate, unsafe icons, site ids) and lists every path before anything is written, its
//! checks on every core. `Files` then composes each file again when it is consumed (registry
//! files agent by agent, site pages as rendered), hashed as it is written, so memory holds the
//! checked registry and the site's cards but no output (BENCHMARKS.md). `SHA256SUMS` and the
//! ownership manifests are written from those digests, never composed in memory. `--check`
//! compares each file as it is produced; a real build writes through `output::write_atomically`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::sync::Mutex;

use rayon::prelude::*;
use serde_json::Value;

use super::document::{merged, output_agents, write_document};
use super::entries::publishable;
use super::error::BuildError;
use super::evidence::{
    assess, Assessment, Evidence, VERIFICATION_FILE, VERIFICATION_SCHEMA, VERIFICATION_SCHEMA_FILE,
};
use super::icons::{icon_files, published_icon, refuse_unsafe_icon};
use super::last_good::HeldBack;
use super::lifecycle::{document, LIFECYCLE_FILE, LIFECYCLE_SCHEMA, LIFECYCLE_SCHEMA_FILE};
use super::output::{write_ownership_manifest, FileSink, Tree, OWNERSHIP_FILE};
use super::site_source::{site_options, SiteSource};
use super::skills::{self, OutputFile};
use crate::published::{Form, Output};
use crate::registry::config::{base_url_problem, DEFAULT_BASE_URL};
use crate::registry::Checked;
use crate::rules::{published_agent_validator, EntryReport, Status, AGENT_SCHEMA, REGISTRY_SCHEMA};
use crate::site::{Site, SiteSkill};

/// What to build beyond the configuration.
#[derive(Debug, Clone, Default)]
pub(crate) struct BuildOptions {
    /// Overrides the configuration's `base_url`.
    pub base_url: Option<String>,
    /// Render the catalogue site under `site/`.
    pub site: bool,
    /// `build --matrix`: what `matrix` found, written as `verification.json` and shown on
    /// the site as it applies to what is published.
    pub evidence: Option<Evidence>,
    /// `--as-of` (or `SOURCE_DATE_EPOCH`): the time `lifecycle.json` describes.
    pub as_of: Option<i64>,
}

/// What one registry file publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutputSummary {
    /// The file, e.g. `registry.json`.
    pub file: String,
    /// How many agents it lists.
    pub agents: usize,
    /// Ids left out by its include/exclude lists, by quarantine (`publish_quarantined:
    /// false`) or as disabled, sorted.
    pub excluded: Vec<String>,
    /// Those of `excluded` its include/exclude lists leave out, sorted.
    pub by_settings: Vec<String>,
}

/// One quarantined entry of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QuarantineSummary {
    /// The entry id.
    pub id: String,
    /// Why it is quarantined.
    pub reason: String,
    /// Whether the configuration publishes quarantined entries anyway.
    pub published: bool,
}

/// What a build publishes, for the command's report.
#[derive(Debug, Clone, Default)]
pub(crate) struct BuildSummary {
    /// One per registry file, in configuration order.
    pub outputs: Vec<OutputSummary>,
    /// The quarantined entries, by id.
    pub quarantined: Vec<QuarantineSummary>,
    /// The disabled entries (`deprecations.json`) with their reasons, by id.
    pub disabled: Vec<(String, String)>,
    /// Every file of the output folder, manifests included.
    pub files: usize,
    /// HTML pages of the site (0 without it).
    pub site_pages: usize,
}

/// A planned build: every input problem already found, the summary known, the files
/// produced only when written or compared ([`Files`]).
pub(crate) struct Plan<'a> {
    /// Every file of the output folder, produced on demand.
    pub files: Files<'a>,
    /// What the build publishes, for the command's report.
    pub summary: BuildSummary,
}

/// Every file of a build, by `/`-separated relative path, composed again from the checked
/// registry each time it is produced: nothing is held for the whole run but the site's cards.
pub(crate) struct Files<'a> {
    checked: &'a Checked,
    base: String,
    entries: Vec<&'a EntryReport>,
    /// `--last-good`: what is served instead of the failing entries.
    held: Option<&'a HeldBack>,
    site: Option<(Site, SiteSource<'a>, Vec<SiteSkill>)>,
    /// Only the site, at the top (`acp-registry site`).
    site_only: bool,
    /// `build --matrix`: `verification.json`.
    verification: Option<String>,
    /// `lifecycle.json`'s `--as-of`.
    as_of: Option<i64>,
    /// The skills outputs, below the site folder (with the site only).
    skills: Vec<OutputFile<'a>>,
    paths: BTreeSet<String>,
}

/// The configured `base_url` (checked when the configuration was read), or `--base-url`,
/// held to the same rule.
fn base_url(checked: &Checked, options: &BuildOptions) -> Result<String, BuildError> {
    let url = match options.base_url.as_deref() {
        Some(url) => match base_url_problem(url) {
            Some(problem) => return Err(BuildError::BaseUrl { problem }),
            None => url,
        },
        None => &checked.config.base_url,
    };
    Ok(url.trim_end_matches('/').to_string())
}

/// Summarise what `output` publishes. Under another base URL than the check's (or after a
/// check with errors), every agent is first composed and checked against
/// `registry.schema.json`, in parallel, and the first failure in id order is reported.
fn check_output(
    checked: &Checked,
    entries: &[&EntryReport],
    base: &str,
    output: &Output,
    previous: usize,
) -> Result<OutputSummary, BuildError> {
    // `validate` checked every output's agents under the configured base URL, and `schema`
    // cannot be lowered: only another base (`--base-url`) gives agents nobody has checked.
    let validated = base == checked.config.base_url && !checked.report.has_errors();
    let published: Vec<Option<String>> = entries
        .par_iter()
        .filter(|entry| output.publishes(entry.id()))
        .filter_map(|entry| {
            if validated {
                return Some(None);
            }
            let agent = Value::Object(Form::of(entry)?.agent(base, output));
            let validator = published_agent_validator();
            // The boolean check is much cheaper, and almost every agent passes it.
            if validator.is_valid(&agent) {
                return Some(None);
            }
            let error = validator.iter_errors(&agent).next();
            Some(error.map(|error| {
                let at = error.instance_path().as_str().to_string();
                format!("agent `{}`: {error} at {at}", entry.id())
            }))
        })
        .collect();
    if let Some(message) = published.iter().flatten().next() {
        return Err(BuildError::InvalidOutput {
            file: output.file.clone(),
            message: message.clone(),
        });
    }
    let agents = published.len() + previous;
    let mut by_settings: Vec<String> = entries
        .iter()
        .map(|e| e.id())
        .filter(|id| !output.publishes(id))
        .map(str::to_string)
        .collect();
    by_settings.sort();
    let mut excluded = by_settings.clone();
    if !checked.config.publish_quarantined {
        let quarantined = checked.quarantine.ids.keys();
        excluded.extend(quarantined.filter(|id| output.publishes(id)).cloned());
    }
    let disabled = checked.deprecations.ids.keys();
    excluded.extend(
        disabled
            .filter(|id| checked.deprecations.is_disabled(id) && output.publishes(id))
            .cloned(),
    );
    excluded.sort();
    excluded.dedup();
    Ok(OutputSummary {
        file: output.file.clone(),
        agents,
        excluded,
        by_settings,
    })
}

/// Plan the build: every problem of the input found (outputs that would not validate,
/// unsafe icons, site ids), the summary counted and every path listed, without composing
/// the files.
///
/// `held` (`build --last-good`): the failing entries are not published as they are; each
/// output serves the previous objects `held` keeps for it instead, with their icons.
pub(crate) fn plan<'a>(
    checked: &'a Checked,
    options: &BuildOptions,
    held: Option<&'a HeldBack>,
) -> Result<Plan<'a>, BuildError> {
    let base = base_url(checked, options)?;
    let entries = publishable(checked, held);
    let mut summary = BuildSummary::default();
    let mut paths = BTreeSet::new();
    for (i, output) in checked.config.outputs.iter().enumerate() {
        let previous = held.and_then(|h| h.objects_of(i)).map_or(0, BTreeMap::len);
        summary
            .outputs
            .push(check_output(checked, &entries, &base, output, previous)?);
        paths.insert(output.file.clone());
    }
    if let Some(held) = held {
        paths.extend(held.icons.iter().map(|(name, _)| name.clone()));
    }
    // A clean check passed every icon (their codes cannot be lowered); an icon changed on disk
    // since is checked again as it is written.
    if checked.report.has_errors() {
        entries.par_iter().try_for_each(|entry| {
            for (icon, bytes) in icon_files(entry)? {
                refuse_unsafe_icon(&crate::rules::display_path(&entry.entry, &icon), &bytes)?;
            }
            Ok::<_, BuildError>(())
        })?;
    }
    for entry in &entries {
        paths.extend(entry.icons.iter().map(|icon| published_icon(entry, icon)));
    }
    paths.extend(SCHEMAS.iter().map(|(name, _)| (*name).to_string()));
    paths.insert(LIFECYCLE_FILE.to_string());
    let assessment = options.evidence.as_ref().map(|e| assess(&entries, e));
    if assessment.is_some() {
        paths.insert(VERIFICATION_FILE.to_string());
        paths.insert(VERIFICATION_SCHEMA_FILE.to_string());
    }
    let site = if options.site {
        let verifications = assessment
            .as_ref()
            .map(Assessment::site)
            .unwrap_or_default();
        let source = SiteSource::new(checked, &base, verifications, held);
        // The same skills for `Site::new` and `render`: the site finds them by position.
        let site_skills = skills::site_skills(checked, &entries);
        let site = Site::new(&source, &site_skills, &site_options(checked, &base))?;
        summary.site_pages = site.html_pages();
        paths.extend(site.paths().into_iter().map(|path| format!("{SITE}{path}")));
        Some((site, source, site_skills))
    } else {
        None
    };
    // The skills outputs are part of the site (`--no-site` leaves them out).
    let skills = if site.is_some() {
        skills::plan(checked, &entries)?
    } else {
        Vec::new()
    };
    paths.extend(skills.iter().map(|(path, _)| format!("{SITE}{path}")));
    summary.quarantined = quarantined(checked);
    summary.disabled = disabled(checked);
    let mut files = Files {
        checked,
        base,
        entries,
        held,
        site,
        site_only: false,
        verification: assessment.map(|a| a.to_json()),
        as_of: options.as_of,
        skills,
        paths,
    };
    files.seal(&mut summary);
    Ok(Plan { files, summary })
}

/// The schemas published beside the registry files.
const SCHEMAS: [(&str, &str); 3] = [
    ("agent.schema.json", AGENT_SCHEMA),
    (LIFECYCLE_SCHEMA_FILE, LIFECYCLE_SCHEMA),
    ("registry.schema.json", REGISTRY_SCHEMA),
];
/// A published schema whose `$id` (and example `$schema`) name where it is served: the
/// public registry's URL in the source, `base` (JSON-escaped) in the copy `build` writes.
fn schema_under<'t>(text: &'t str, base: &str) -> std::borrow::Cow<'t, str> {
    let public = format!("{DEFAULT_BASE_URL}/");
    if base == DEFAULT_BASE_URL {
        return std::borrow::Cow::Borrowed(text);
    }
    let quoted = serde_json::Value::String(format!("{base}/")).to_string();
    std::borrow::Cow::Owned(text.replace(&public, &quoted[1..quoted.len() - 1]))
}

/// Where the site goes in a full build.
const SITE: &str = "site/";
/// The `sha256sum` listing of the published files.
const SUMS: &str = "SHA256SUMS";

/// Quarantined entries of the registry and whether they are published.
fn quarantined(checked: &Checked) -> Vec<QuarantineSummary> {
    checked
        .quarantine
        .ids
        .iter()
        .filter(|(id, _)| checked.entries.iter().any(|e| e.id() == id.as_str()))
        .map(|(id, reason)| QuarantineSummary {
            id: id.clone(),
            reason: reason.clone(),
            published: checked.config.publish_quarantined,
        })
        .collect()
}

/// The disabled entries of the registry with their reasons.
fn disabled(checked: &Checked) -> Vec<(String, String)> {
    checked
        .deprecations
        .ids
        .iter()
        .filter(|(id, r)| {
            r.status == Status::Disabled && checked.entries.iter().any(|e| e.id() == id.as_str())
        })
        .map(|(id, r)| (id.clone(), r.reason.clone()))
        .collect()
}

/// Only the site, as `acp-registry site` writes it: the files under `site/`, at the top,
/// with their own `SHA256SUMS` and ownership manifest.
pub(crate) fn site_only(plan: Plan<'_>) -> Plan<'_> {
    let Plan {
        mut files,
        mut summary,
    } = plan;
    files.site_only = true;
    files.paths = files
        .site
        .as_ref()
        .map(|(site, _, _)| site.paths())
        .unwrap_or_default();
    files
        .paths
        .extend(files.skills.iter().map(|(path, _)| path.clone()));
    files.seal(&mut summary);
    Plan { files, summary }
}

impl Files<'_> {
    /// Add `SHA256SUMS` and the ownership manifests to the paths, and count them all.
    fn seal(&mut self, summary: &mut BuildSummary) {
        if self.site.is_some() && !self.site_only {
            self.paths.insert(format!("{SITE}{OWNERSHIP_FILE}"));
            self.paths.insert(format!("{SITE}{SUMS}"));
        }
        self.paths.insert(SUMS.to_string());
        self.paths.insert(OWNERSHIP_FILE.to_string());
        summary.files = self.paths.len();
    }

    /// The registry files, the icons and the schemas, each handed on as composed: the
    /// registry files (composed one agent at a time, on one thread) while the icons are
    /// written beside them.
    fn produce_registry(&self, files: &Recorder<'_>) -> Result<(), BuildError> {
        let (registry, icons) = rayon::join(
            || {
                let outputs = self.checked.config.outputs.iter().enumerate();
                outputs.into_iter().try_for_each(|(i, output)| {
                    files.file(&output.file, &mut |out| {
                        let agents = output_agents(self.checked, &self.entries, &self.base, i);
                        let previous = self.held.and_then(|h| h.objects_of(i));
                        write_document(out, merged(agents, previous), output.omit_extensions)
                    })
                })
            },
            || self.produce_icons(files),
        );
        registry?;
        icons?;
        for (name, text) in SCHEMAS {
            files.bytes(name, schema_under(text, &self.base).as_bytes())?;
        }
        files.file(LIFECYCLE_FILE, &mut |out| {
            let listed = |id: &str| self.listed(id);
            out.write_all(document(self.checked, self.as_of, &listed).as_bytes())
        })?;
        if let Some(verification) = &self.verification {
            files.bytes(VERIFICATION_FILE, verification.as_bytes())?;
            let schema = schema_under(VERIFICATION_SCHEMA, &self.base);
            files.bytes(VERIFICATION_SCHEMA_FILE, schema.as_bytes())?;
        }
        Ok(())
    }

    /// Whether the first registry file lists `id` (`lifecycle.json`'s `in_registry`).
    fn listed(&self, id: &str) -> bool {
        let first = self.checked.config.outputs.first();
        let held = self
            .held
            .and_then(|h| h.objects_of(0))
            .is_some_and(|objects| objects.contains_key(id));
        // `entries` is sorted by id (`publishable`).
        let published = || self.entries.binary_search_by(|e| e.id().cmp(id)).is_ok();
        held || (first.is_some_and(|o| o.publishes(id)) && published())
    }

    fn produce_icons(&self, files: &Recorder<'_>) -> Result<(), BuildError> {
        for (name, bytes) in self.held.map(|h| h.icons.as_slice()).unwrap_or_default() {
            files.bytes(name, bytes)?;
        }
        self.entries.par_iter().try_for_each(|entry| {
            for (icon, bytes) in icon_files(entry)? {
                // Read again from disk: judge what is published, not what was planned.
                if entry.file_text(&icon).is_none() {
                    let file = crate::rules::display_path(&entry.entry, &icon);
                    refuse_unsafe_icon(&file, &bytes)?;
                }
                files.bytes(&published_icon(entry, &icon), &bytes)?;
            }
            Ok::<(), BuildError>(())
        })
    }

    /// The site's files (under `site/` unless only the site is built), then its own
    /// ownership manifest.
    fn produce_site(&self, files: &Recorder<'_>) -> Result<(), BuildError> {
        let Some((site, source, site_skills)) = &self.site else {
            return Ok(());
        };
        let prefix = if self.site_only { "" } else { SITE };
        site.render(source, site_skills, &|path, bytes| {
            files.bytes(&format!("{prefix}{path}"), bytes)
        })?;
        for (path, bytes) in &self.skills {
            files.bytes(&format!("{prefix}{path}"), bytes)?;
        }
        if !self.site_only {
            // `site/SHA256SUMS`: every file of the site folder, relative to it, so a client
            // that reaches only the site (a Pages deployment) can check each one.
            files.file(&format!("{SITE}{SUMS}"), &mut |out| {
                files.with_digests(|digests| {
                    let site: BTreeMap<String, String> = digests
                        .iter()
                        .filter_map(|(path, digest)| {
                            Some((path.strip_prefix(SITE)?.to_owned(), digest.clone()))
                        })
                        .collect();
                    write_sha256sums(out, &site)
                })
            })?;
            // `site/` carries its own manifest, so `acp-registry site` may replace it alone.
            files.file(&format!("{SITE}{OWNERSHIP_FILE}"), &mut |out| {
                files.with_digests(|digests| {
                    let listed = digests.iter().filter_map(|(path, digest)| {
                        Some((path.strip_prefix(SITE)?, digest.as_str()))
                    });
                    write_ownership_manifest(out, listed)
                })
            })?;
        }
        Ok(())
    }
}

impl Tree for Files<'_> {
    fn paths(&self) -> Vec<&str> {
        self.paths.iter().map(String::as_str).collect()
    }

    /// Every file once: the registry's, the site's, then `SHA256SUMS` and the ownership
    /// manifest, which lists every file, the sums too, by the digests taken as the files
    /// went by. `SHA256SUMS` lists the published files, not the tool's own manifests (the
    /// two cannot list each other, and a manifest is bookkeeping for the output folder, not
    /// content).
    fn produce(&self, sink: &dyn FileSink) -> Result<(), BuildError> {
        let files = Recorder::new(sink);
        if !self.site_only {
            self.produce_registry(&files)?;
        }
        self.produce_site(&files)?;
        files.file(SUMS, &mut |out| {
            files.with_digests(|digests| write_sha256sums(out, digests))
        })?;
        sink.file(OWNERSHIP_FILE, &mut |out| {
            files.with_digests(|digests| {
                write_ownership_manifest(out, digests.iter().map(|(p, d)| (p.as_str(), d.as_str())))
            })
        })?;
        Ok(())
    }
}

/// A sink that keeps the digest of every file it passes on.
struct Recorder<'s> {
    sink: &'s dyn FileSink,
    digests: Mutex<BTreeMap<String, String>>,
}

impl<'s> Recorder<'s> {
    fn new(sink: &'s dyn FileSink) -> Self {
        Recorder {
            sink,
            digests: Mutex::new(BTreeMap::new()),
        }
    }

    fn file(
        &self,
        path: &str,
        content: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), BuildError> {
        let digest = self.sink.file(path, content)?;
        self.lock().insert(path.to_string(), digest);
        Ok(())
    }

    fn bytes(&self, path: &str, bytes: &[u8]) -> Result<(), BuildError> {
        self.file(path, &mut |out| out.write_all(bytes))
    }

    /// `f` of the digests so far, by path (not a copy: there is one per file).
    fn with_digests<T>(&self, f: impl FnOnce(&BTreeMap<String, String>) -> T) -> T {
        f(&self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.digests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `sha256sum`-compatible listing of every published file, sorted by path: not
/// `SHA256SUMS` itself, not the ownership manifests.
fn write_sha256sums(out: &mut dyn Write, digests: &BTreeMap<String, String>) -> io::Result<()> {
    for (path, digest) in digests {
        let manifest = path.rsplit('/').next() == Some(OWNERSHIP_FILE);
        if path != SUMS && !manifest {
            writeln!(out, "{digest}  {path}")?;
        }
    }
    Ok(())
}
