//! `build`: everything an editor downloads, planned from a checked registry (every input
//! problem found first), then produced one file at a time into [`super::output`] (a fresh
//! folder beside the output, swapped in whole, or the `--check` comparison), so memory does
//! not grow with the pages and files written.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;
use serde_json::Value;

use super::config::base_url_problem;
use super::evidence::{
    assess, Assessment, Evidence, VERIFICATION_FILE, VERIFICATION_SCHEMA, VERIFICATION_SCHEMA_FILE,
};
use super::last_good::HeldBack;
use super::output::{write_ownership_manifest, FileSink, Tree, OWNERSHIP_FILE};
use super::variants::{indented, output_agent, published_channels, Output};
use super::Checked;
use crate::diagnostics::Code;
use crate::manifest::MAX_ICON_BYTES;
use crate::rules::{
    published_agent_validator, EntryReport, Manifest, AGENT_SCHEMA, REGISTRY_SCHEMA,
};
use crate::site::{self, AgentSource, Site, SiteAgent, SiteOptions};

/// `version` of the published registry files.
pub(crate) const REGISTRY_FORMAT_VERSION: &str = "1.0.0";

/// Why `build` or `site` wrote nothing (or, for [`BuildError::OldOutputLeft`], left the old
/// tree behind).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Reading or writing `path` failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    #[error("{file} would not validate against registry.schema.json: {message}; check the patches of this output in acp-registry.jsonc")]
    /// An output file would not validate against `registry.schema.json`.
    InvalidOutput {
        /// The output file.
        file: String,
        /// The first violation, naming the agent.
        message: String,
    },
    #[error("refusing to replace `{out}`: it holds paths that acp-registry did not write:\n{paths}\nmove them out of the folder or choose another --out")]
    /// `--out` holds paths this tool did not write.
    ForeignOutput {
        /// The output folder as named.
        out: PathBuf,
        /// The paths, one per line.
        paths: String,
    },
    #[error("cannot replace `{out}`: these paths cannot be removed:\n{paths}\nmake them writable or choose another --out; nothing was changed")]
    /// Paths of `--out` that this process cannot remove.
    ReadOnlyOutput {
        /// The output folder as named.
        out: PathBuf,
        /// The paths with the reason, one per line.
        paths: String,
    },
    #[error("cannot write `{out}` ({what}): {source}; `{out}` is left as it was")]
    /// A step of writing failed before the swap; the old output is intact.
    Unchanged {
        /// The output folder as named.
        out: PathBuf,
        /// The step that failed.
        what: String,
        /// The failure.
        source: std::io::Error,
    },
    #[error("`{out}` holds the new output, but the previous one could not be removed from `{old}`: {source}; remove it by hand")]
    /// The new output is in place but the previous tree could not be removed.
    OldOutputLeft {
        /// The output folder as named.
        out: PathBuf,
        /// Where the previous tree is.
        old: PathBuf,
        /// Why it could not be removed.
        source: std::io::Error,
    },
    #[error(
        "refusing to write to `{out}`: it overlaps the registry `{registry}` (an output goes outside the registry, or below `{registry}/dist`); choose another --out"
    )]
    /// `--out` and the registry overlap.
    OverlapsRegistry {
        /// The output folder as named.
        out: PathBuf,
        /// The registry as named.
        registry: PathBuf,
    },
    #[error("`{0}` exists and is not a folder; choose another --out")]
    /// `--out` names something other than a folder.
    NotAFolder(PathBuf),
    #[error("refusing to publish {file}: {message}; the icon rules stay on for published icons whatever acp-registry.jsonc says, so fix the icon")]
    /// An icon fails the icon safety rules.
    UnsafeIcon {
        /// The icon, with line and column.
        file: String,
        /// The finding and its code.
        message: String,
    },
    #[error("--base-url {problem}; pass the https URL the registry's files are published under")]
    /// `--base-url` is not a usable https URL.
    BaseUrl {
        /// What is wrong with it.
        problem: String,
    },
    #[error(transparent)]
    /// The site could not be rendered.
    Site(#[from] site::SiteError),
}

pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
    move |source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}

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
}

/// What one registry file publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutputSummary {
    /// The file, e.g. `registry.json`.
    pub file: String,
    /// How many agents it lists.
    pub agents: usize,
    /// Ids left out by its include/exclude lists or by quarantine, sorted.
    pub excluded: Vec<String>,
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
    site: Option<(Site, SiteSource<'a>)>,
    /// Only the site, at the top (`acp-registry site`).
    site_only: bool,
    /// `build --matrix`: `verification.json`.
    verification: Option<String>,
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

/// Entries that can be published, sorted by id (the folder order is never trusted): not
/// those `held` serves in their previous form (or leaves out).
fn publishable<'a>(checked: &'a Checked, held: Option<&HeldBack>) -> Vec<&'a EntryReport> {
    let mut entries: Vec<&EntryReport> = checked
        .entries
        .iter()
        .filter(|e| e.manifest.is_some())
        .filter(|e| held.is_none_or(|h| !h.failing.contains(&e.entry.name)))
        .filter(|e| {
            checked.config.publish_quarantined || !checked.quarantine.ids.contains_key(e.id())
        })
        .collect();
    entries.sort_by(|a, b| a.id().cmp(b.id()));
    entries
}

/// One agent of a registry file: composed by this build, or a previous build's object kept
/// by `--last-good`, written as its bytes were.
enum Published<'a> {
    /// The agent as [`indented`] prints it.
    Composed(Cow<'a, str>),
    Previous(&'a str),
}

/// `{"version": …, "agents": [...], "extensions": []}` exactly as `to_string_pretty` would
/// print it, written one agent at a time. A previous object is written at the same place,
/// its bytes unchanged (a previous build wrote them at this depth, so they read as the rest).
fn write_document<'a>(
    out: &mut dyn Write,
    agents: impl Iterator<Item = Published<'a>>,
) -> io::Result<()> {
    write!(
        out,
        "{{\n  \"version\": \"{REGISTRY_FORMAT_VERSION}\",\n  \"agents\": "
    )?;
    let mut empty = true;
    for agent in agents {
        out.write_all(if empty { b"[\n" } else { b",\n" })?;
        match agent {
            Published::Composed(agent) => out.write_all(agent.as_bytes())?,
            Published::Previous(raw) => {
                out.write_all(b"    ")?;
                out.write_all(raw.as_bytes())?;
            }
        }
        empty = false;
    }
    out.write_all(if empty { b"[]" } else { b"\n  ]" })?;
    out.write_all(b",\n  \"extensions\": []\n}\n")
}

/// The agents the `index`th output publishes, in id order, as written: the check's own
/// composition when it was made under this base URL, else composed here.
fn output_agents<'e>(
    checked: &'e Checked,
    entries: &'e [&EntryReport],
    base: &'e str,
    index: usize,
) -> impl Iterator<Item = (&'e str, Cow<'e, str>)> + 'e {
    let output = &checked.config.outputs[index];
    let checked_base = base == checked.config.base_url;
    entries
        .iter()
        .filter(move |entry| output.publishes(entry.id()))
        .filter_map(move |entry| {
            let kept = checked_base
                .then(|| {
                    checked
                        .published
                        .get(&entry.entry.name)?
                        .get(index)?
                        .as_deref()
                })
                .flatten();
            let text = match kept {
                Some(text) => Cow::Borrowed(text),
                None => Cow::Owned(indented(&Value::Object(output_agent(entry, base, output)?))),
            };
            Some((entry.id(), text))
        })
}

/// The composed agents and the previous objects together, in id order (both are sorted).
fn merged<'a>(
    composed: impl Iterator<Item = (&'a str, Cow<'a, str>)>,
    previous: Option<&'a BTreeMap<String, String>>,
) -> impl Iterator<Item = Published<'a>> {
    let mut composed = composed.peekable();
    let mut previous = previous.into_iter().flatten().peekable();
    std::iter::from_fn(move || {
        let take_previous = match (composed.peek(), previous.peek()) {
            (Some((id, _)), Some((held, _))) => held.as_str() < *id,
            (None, Some(_)) => true,
            _ => false,
        };
        if take_previous {
            previous.next().map(|(_, raw)| Published::Previous(raw))
        } else {
            composed.next().map(|(_, agent)| Published::Composed(agent))
        }
    })
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
            let agent = Value::Object(output_agent(entry, base, output)?);
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
    let mut excluded: Vec<String> = entries
        .iter()
        .map(|e| e.id())
        .filter(|id| !output.publishes(id))
        .map(str::to_string)
        .collect();
    if !checked.config.publish_quarantined {
        let quarantined = checked.quarantine.ids.keys();
        excluded.extend(quarantined.filter(|id| output.publishes(id)).cloned());
    }
    excluded.sort();
    excluded.dedup();
    Ok(OutputSummary {
        file: output.file.clone(),
        agents,
        excluded,
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
        let site = Site::new(&source, &site_options(checked, &base))?;
        summary.site_pages = site.html_pages();
        paths.extend(site.paths().into_iter().map(|path| format!("{SITE}{path}")));
        Some((site, source))
    } else {
        None
    };
    summary.quarantined = quarantined(checked);
    let mut files = Files {
        checked,
        base,
        entries,
        held,
        site,
        site_only: false,
        verification: assessment.map(|a| a.to_json()),
        paths,
    };
    files.seal(&mut summary);
    Ok(Plan { files, summary })
}

/// The schemas published beside the registry files.
const SCHEMAS: [(&str, &str); 2] = [
    ("agent.schema.json", AGENT_SCHEMA),
    ("registry.schema.json", REGISTRY_SCHEMA),
];
/// Where the site goes in a full build.
const SITE: &str = "site/";
/// The `sha256sum` listing of the published files.
const SUMS: &str = "SHA256SUMS";

/// The name an entry's icon is published under: `<id>.svg`, `<id>-light.svg`, ….
fn published_icon(entry: &EntryReport, icon: &str) -> String {
    format!("{}{}", entry.id(), icon.trim_start_matches("icon"))
}

/// The site's title and its link to the first output, absolute under `base_url`: the site
/// folder may be served alone (GitHub Pages) or opened from disk, where `../` leads nowhere.
fn site_options(checked: &Checked, base_url: &str) -> SiteOptions {
    let registry_json = checked
        .config
        .outputs
        .first()
        .map_or("registry.json", |o| o.file.as_str());
    SiteOptions {
        title: "ACP Agent Registry".into(),
        registry_json_url: Some(format!("{base_url}/{registry_json}")),
    }
}

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
        .map(|(site, _)| site.paths())
        .unwrap_or_default();
    files.seal(&mut summary);
    Plan { files, summary }
}

impl Files<'_> {
    /// Add `SHA256SUMS` and the ownership manifests to the paths, and count them all.
    fn seal(&mut self, summary: &mut BuildSummary) {
        if self.site.is_some() && !self.site_only {
            self.paths.insert(format!("{SITE}{OWNERSHIP_FILE}"));
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
                        write_document(out, merged(agents, previous))
                    })
                })
            },
            || self.produce_icons(files),
        );
        registry?;
        icons?;
        for (name, text) in SCHEMAS {
            files.bytes(name, text.as_bytes())?;
        }
        if let Some(verification) = &self.verification {
            files.bytes(VERIFICATION_FILE, verification.as_bytes())?;
            files.bytes(VERIFICATION_SCHEMA_FILE, VERIFICATION_SCHEMA.as_bytes())?;
        }
        Ok(())
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
        let Some((site, source)) = &self.site else {
            return Ok(());
        };
        let prefix = if self.site_only { "" } else { SITE };
        site.render(source, &|path, bytes| {
            files.bytes(&format!("{prefix}{path}"), bytes)
        })?;
        if !self.site_only {
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

/// Icons are published byte for byte, so they must pass the safety rules even when the
/// policy silenced them (the configuration is part of an untrusted pull request).
fn refuse_unsafe_icon(file: &str, bytes: &[u8]) -> Result<(), BuildError> {
    let text = String::from_utf8_lossy(bytes);
    let findings = crate::rules::check_icon(file, &text);
    let unsafe_icon = findings
        .iter()
        .find(|d| matches!(d.code, Code::IconUnsafe | Code::IconXml | Code::IconRoot));
    match unsafe_icon {
        Some(d) => Err(BuildError::UnsafeIcon {
            file: format!("{file}:{}:{}", d.line(), d.column()),
            message: format!("{} ({})", d.message, d.code),
        }),
        None => Ok(()),
    }
}

/// The entry's icons as validated (the text the rules read; from disk only if it was not kept).
fn icon_files(entry: &EntryReport) -> Result<Vec<(String, Vec<u8>)>, BuildError> {
    let read = |icon: &String| {
        if let Some(text) = entry.file_text(icon) {
            return Ok(text.as_bytes().to_vec());
        }
        // The same refusals as the rules: no link, regular files only, capped.
        crate::fs::read_capped(&entry.entry.path, Path::new(icon), MAX_ICON_BYTES)
            .map_err(|e| match e {
                crate::fs::ReadError::Io(e) => e,
                other => std::io::Error::other(other.to_string()),
            })
            .map_err(io(&entry.entry.path.join(icon)))
    };
    entry
        .icons
        .iter()
        .map(|icon| Ok((icon.clone(), read(icon)?)))
        .collect()
}

/// The site's view of the published entries (stable and, when newer, preview variants),
/// each built when the site asks for it, and of the entries served in their previous form.
struct SiteSource<'a> {
    checked: &'a Checked,
    /// In id order: a checked entry, or the index of a previous agent of `held`.
    items: Vec<SiteItem<'a>>,
    held: Option<&'a HeldBack>,
    base: String,
    /// `build --matrix`: per id, the evidence as it applies to what is published.
    verifications: BTreeMap<String, site::Verification>,
}

enum SiteItem<'a> {
    Entry(&'a EntryReport),
    Previous(usize),
}

impl<'a> SiteSource<'a> {
    fn new(
        checked: &'a Checked,
        base: &str,
        verifications: BTreeMap<String, site::Verification>,
        held: Option<&'a HeldBack>,
    ) -> Self {
        // The entries `publish` publishes: a manifest whose top level is an object.
        let mut items: Vec<(&str, SiteItem)> = publishable(checked, held)
            .into_iter()
            .filter(|e| e.manifest.as_ref().is_some_and(Manifest::is_object))
            .map(|e| (e.id(), SiteItem::Entry(e)))
            .collect();
        let previous = held.map(|h| h.site.as_slice()).unwrap_or_default();
        items.extend(
            previous
                .iter()
                .enumerate()
                .map(|(i, agent)| (agent.id.as_str(), SiteItem::Previous(i))),
        );
        items.sort_by(|a, b| a.0.cmp(b.0));
        SiteSource {
            checked,
            items: items.into_iter().map(|(_, item)| item).collect(),
            held,
            base: base.to_string(),
            verifications,
        }
    }
}

impl AgentSource for SiteSource<'_> {
    type Error = BuildError;

    fn count(&self) -> usize {
        self.items.len()
    }

    fn agent(&self, index: usize) -> Result<Cow<'_, SiteAgent>, BuildError> {
        let entry = match self.items[index] {
            SiteItem::Entry(entry) => entry,
            SiteItem::Previous(i) => {
                let held = self.held.expect("previous agents come from `held`");
                return Ok(Cow::Borrowed(&held.site[i]));
            }
        };
        let (agent, preview) = published_channels(entry, &self.base).unwrap_or_default();
        let preview = Some(preview).filter(|p| *p != agent);
        let verification = self.verifications.get(entry.id()).cloned();
        Ok(Cow::Owned(SiteAgent {
            id: entry.id().to_string(),
            preview,
            readme: entry.file_text("README.md").map(str::to_string),
            icons: icon_files(entry)?.into_iter().collect(),
            quarantine: self.checked.quarantine.ids.get(entry.id()).cloned(),
            verification,
            agent,
        }))
    }
}

/// The site's view of every published entry, as `build` hands it to the site (without
/// verifications).
pub fn site_agents(checked: &Checked, base_url: &str) -> Result<Vec<SiteAgent>, BuildError> {
    let source = SiteSource::new(checked, base_url, BTreeMap::new(), None);
    (0..source.count())
        .map(|index| source.agent(index).map(Cow::into_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembled_document_equals_pretty_printing_the_whole_value() {
        let agents = [
            serde_json::json!({"id": "a", "args": [], "env": {}, "nested": {"x": [1, {"y": "é"}]}}),
            serde_json::json!({"id": "b"}),
        ];
        for count in 0..=agents.len() {
            let expected = serde_json::json!({
                "version": REGISTRY_FORMAT_VERSION,
                "agents": agents[..count],
                "extensions": [],
            });
            let mut expected = serde_json::to_string_pretty(&expected).unwrap();
            expected.push('\n');
            let mut written = Vec::new();
            let composed = agents[..count]
                .iter()
                .map(|agent| Published::Composed(Cow::Owned(indented(agent))));
            write_document(&mut written, composed).unwrap();
            assert_eq!(String::from_utf8(written).unwrap(), expected);
        }
    }
}
