//! `build`: everything an editor downloads, composed in memory from a checked registry (then
//! written by [`super::output`]: a fresh folder beside the output, swapped in whole).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::config::base_url_problem;
use super::output::{digest_hex, ownership_manifest, OWNERSHIP_FILE};
use super::variants::{output_agent, published_agent, Channel};
use super::Checked;
use crate::diagnostics::Code;
use crate::manifest::MAX_ICON_BYTES;
use crate::rules::{published_agent_validator, EntryReport, AGENT_SCHEMA, REGISTRY_SCHEMA};
use crate::site::{self, SiteAgent, SiteOptions};

/// `version` of the published registry files.
pub const REGISTRY_FORMAT_VERSION: &str = "1.0.0";

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file} would not validate against registry.schema.json: {message}; check the patches of this output in acp-registry.jsonc")]
    InvalidOutput { file: String, message: String },
    #[error("refusing to replace `{out}`: it holds paths that acp-registry did not write:\n{paths}\nmove them out of the folder or choose another --out")]
    ForeignOutput { out: PathBuf, paths: String },
    #[error("cannot replace `{out}`: these paths cannot be removed:\n{paths}\nmake them writable or choose another --out; nothing was changed")]
    ReadOnlyOutput { out: PathBuf, paths: String },
    #[error("cannot write `{out}` ({what}): {source}; `{out}` is left as it was")]
    Unchanged {
        out: PathBuf,
        what: String,
        source: std::io::Error,
    },
    #[error("`{out}` holds the new output, but the previous one could not be removed from `{old}`: {source}; remove it by hand")]
    OldOutputLeft {
        out: PathBuf,
        old: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "refusing to write to `{out}`: it overlaps the registry `{registry}`; choose another --out"
    )]
    OverlapsRegistry { out: PathBuf, registry: PathBuf },
    #[error("`{0}` exists and is not a folder; choose another --out")]
    NotAFolder(PathBuf),
    #[error("refusing to publish {file}: {message}; the icon rules stay on for published icons whatever acp-registry.jsonc says, so fix the icon")]
    UnsafeIcon { file: String, message: String },
    #[error("--base-url {problem}; pass the https URL the registry's files are published under")]
    BaseUrl { problem: String },
    #[error(transparent)]
    Site(#[from] site::SiteError),
}

pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
    move |source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Overrides the configuration's `base_url`.
    pub base_url: Option<String>,
    pub site: bool,
    /// `build --matrix`: per id, the version that was verified and what was found; shown
    /// only while the published version is still that one.
    pub verifications: BTreeMap<String, (String, site::Verification)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSummary {
    pub file: String,
    pub agents: usize,
    pub excluded: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuarantineSummary {
    pub id: String,
    pub reason: String,
    pub published: bool,
}

#[derive(Debug, Clone, Default)]
pub struct BuildSummary {
    pub outputs: Vec<OutputSummary>,
    pub quarantined: Vec<QuarantineSummary>,
    pub files: usize,
    pub site_pages: usize,
}

/// Every file of the output folder, by `/`-separated relative path.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub files: BTreeMap<String, Vec<u8>>,
    pub summary: BuildSummary,
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

/// Entries that can be published, sorted by id (the folder order is never trusted).
fn publishable(checked: &Checked) -> Vec<&EntryReport> {
    let mut entries: Vec<&EntryReport> = checked
        .entries
        .iter()
        .filter(|e| e.manifest.is_some())
        .filter(|e| {
            checked.config.publish_quarantined || !checked.quarantine.ids.contains_key(e.id())
        })
        .collect();
    entries.sort_by(|a, b| a.id().cmp(b.id()));
    entries
}

/// An agent pretty-printed at the depth it has inside `agents` (two levels, 4 spaces).
fn indented(agent: &Value) -> String {
    let text = serde_json::to_string_pretty(agent).expect("JSON values serialise");
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("    ");
        out.push_str(line);
    }
    out
}

/// `{"version": …, "agents": [...], "extensions": []}` exactly as `to_string_pretty` would
/// print it, assembled from pre-serialised agents.
fn registry_document(agents: &[String]) -> Vec<u8> {
    let mut out = format!("{{\n  \"version\": \"{REGISTRY_FORMAT_VERSION}\",\n  \"agents\": ");
    if agents.is_empty() {
        out.push_str("[]");
    } else {
        out.push_str("[\n");
        out.push_str(&agents.join(",\n"));
        out.push_str("\n  ]");
    }
    out.push_str(",\n  \"extensions\": []\n}\n");
    out.into_bytes()
}

/// Compose every file of the build in memory.
pub fn plan(checked: &Checked, options: &BuildOptions) -> Result<Plan, BuildError> {
    let base = base_url(checked, options)?;
    let entries = publishable(checked);
    let mut plan = Plan::default();
    for output in &checked.config.outputs {
        // Agents are validated and serialised one at a time, so memory stays flat whatever
        // the registry's size.
        let mut agents = Vec::new();
        let mut excluded = Vec::new();
        for entry in &entries {
            if !output.publishes(entry.id()) {
                excluded.push(entry.id().to_string());
                continue;
            }
            let Some(agent) = output_agent(entry, &base, output) else {
                continue;
            };
            let agent = Value::Object(agent);
            if let Some(error) = published_agent_validator().iter_errors(&agent).next() {
                return Err(BuildError::InvalidOutput {
                    file: output.file.clone(),
                    message: format!(
                        "agent `{}`: {} at {}",
                        entry.id(),
                        error,
                        error.instance_path().as_str()
                    ),
                });
            }
            agents.push(indented(&agent));
        }
        for id in checked.quarantine.ids.keys() {
            if !checked.config.publish_quarantined && output.publishes(id) {
                excluded.push(id.clone());
            }
        }
        excluded.sort();
        excluded.dedup();
        plan.summary.outputs.push(OutputSummary {
            file: output.file.clone(),
            agents: agents.len(),
            excluded,
        });
        plan.files
            .insert(output.file.clone(), registry_document(&agents));
    }
    for entry in &entries {
        for (icon, bytes) in icon_files(entry)? {
            let name = format!("{}{}", entry.id(), icon.trim_start_matches("icon"));
            refuse_unsafe_icon(&crate::rules::display_path(&entry.entry, &icon), &bytes)?;
            plan.files.insert(name, bytes);
        }
    }
    plan.files
        .insert("agent.schema.json".into(), AGENT_SCHEMA.as_bytes().to_vec());
    plan.files.insert(
        "registry.schema.json".into(),
        REGISTRY_SCHEMA.as_bytes().to_vec(),
    );
    if options.site {
        let mut agents = site_agents(checked, &base)?;
        for agent in &mut agents {
            let version = agent.agent.get("version").and_then(|v| v.as_str());
            agent.verification = options
                .verifications
                .get(&agent.id)
                .filter(|(verified, _)| Some(verified.as_str()) == version)
                .map(|(_, v)| v.clone());
        }
        let registry_json = checked
            .config
            .outputs
            .first()
            .map_or("registry.json".to_string(), |o| o.file.clone());
        let files = site::render(
            &agents,
            &SiteOptions {
                title: "ACP Agent Registry".into(),
                registry_json_url: format!("../{registry_json}"),
            },
        )?;
        plan.summary.site_pages = files.keys().filter(|k| k.ends_with(".html")).count();
        let mut files = files;
        // `site/` carries its own manifest, so `acp-registry site` may replace it alone.
        files.insert(OWNERSHIP_FILE.into(), ownership_manifest(&files));
        for (path, bytes) in files {
            plan.files.insert(format!("site/{path}"), bytes);
        }
    }
    plan.summary.quarantined = checked
        .quarantine
        .ids
        .iter()
        .filter(|(id, _)| checked.entries.iter().any(|e| e.id() == id.as_str()))
        .map(|(id, reason)| QuarantineSummary {
            id: id.clone(),
            reason: reason.clone(),
            published: checked.config.publish_quarantined,
        })
        .collect();
    seal(&mut plan);
    Ok(plan)
}

/// Only the site, as `acp-registry site` writes it: the files under `site/`, with their own
/// `SHA256SUMS` and ownership manifest.
pub fn site_only(plan: Plan) -> Plan {
    let files = plan
        .files
        .into_iter()
        .filter_map(|(path, bytes)| path.strip_prefix("site/").map(|p| (p.to_string(), bytes)))
        .collect();
    let mut plan = Plan {
        files,
        summary: plan.summary,
    };
    seal(&mut plan);
    plan
}

/// Add `SHA256SUMS` and then the ownership manifest, which lists every file, the sums too.
/// `SHA256SUMS` lists the published files, not the tool's own manifests (the two cannot list
/// each other, and a manifest is bookkeeping for the output folder, not content).
fn seal(plan: &mut Plan) {
    plan.files.remove(OWNERSHIP_FILE);
    let sums = sha256sums(&plan.files);
    plan.files.insert("SHA256SUMS".into(), sums.into_bytes());
    let manifest = ownership_manifest(&plan.files);
    plan.files.insert(OWNERSHIP_FILE.into(), manifest);
    plan.summary.files = plan.files.len();
}

/// `sha256sum`-compatible listing of every published file, sorted by path.
pub fn sha256sums(files: &BTreeMap<String, Vec<u8>>) -> String {
    let mut out = String::new();
    for (path, bytes) in files {
        let manifest = path.rsplit('/').next() == Some(OWNERSHIP_FILE);
        if path != "SHA256SUMS" && !manifest {
            let _ = writeln!(out, "{}  {path}", digest_hex(bytes));
        }
    }
    out
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
    entry
        .icons
        .iter()
        .map(|icon| {
            let bytes = match entry.file_text(icon) {
                Some(text) => text.as_bytes().to_vec(),
                None => {
                    let path = entry.entry.path.join(icon);
                    // The same refusals as the rules: no link, regular files only, capped.
                    crate::fs::read_capped(&entry.entry.path, Path::new(icon), MAX_ICON_BYTES)
                        .map_err(|e| match e {
                            crate::fs::ReadError::Io(e) => e,
                            other => std::io::Error::other(other.to_string()),
                        })
                        .map_err(io(&path))?
                }
            };
            Ok((icon.clone(), bytes))
        })
        .collect()
}

/// The site's view of every published entry: stable and (when newer) preview variants.
pub fn site_agents(checked: &Checked, base_url: &str) -> Result<Vec<SiteAgent>, BuildError> {
    let mut agents = Vec::new();
    for entry in publishable(checked) {
        let Some(agent) = published_agent(entry, base_url, Channel::Stable) else {
            continue;
        };
        let preview = published_agent(entry, base_url, Channel::Preview).filter(|p| *p != agent);
        let readme = entry.file_text("README.md").map(str::to_string);
        let icons = icon_files(entry)?.into_iter().collect();
        agents.push(SiteAgent {
            id: entry.id().to_string(),
            agent,
            preview,
            readme,
            icons,
            quarantine: checked.quarantine.ids.get(entry.id()).cloned(),
            verification: None,
        });
    }
    Ok(agents)
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
            let parts: Vec<String> = agents[..count].iter().map(indented).collect();
            assert_eq!(
                String::from_utf8(registry_document(&parts)).unwrap(),
                expected
            );
        }
    }
}
