//! `build`: everything an editor downloads, composed in memory from a checked registry and
//! written atomically (a fresh folder beside the output, swapped in whole).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::variants::{output_agent, published_agent, Channel};
use super::Checked;
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
    #[error("refusing to write to `{0}`: it holds files that acp-registry did not write (no SHA256SUMS); choose another --out or empty it")]
    ForeignOutput(PathBuf),
    #[error(
        "refusing to write to `{out}`: it overlaps the registry `{registry}`; choose another --out"
    )]
    OverlapsRegistry { out: PathBuf, registry: PathBuf },
    #[error("`{0}` exists and is not a folder; choose another --out")]
    NotAFolder(PathBuf),
    #[error(transparent)]
    Site(#[from] site::SiteError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
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

fn base_url(checked: &Checked, options: &BuildOptions) -> String {
    options
        .base_url
        .as_deref()
        .unwrap_or(&checked.config.base_url)
        .trim_end_matches('/')
        .to_string()
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
    let base = base_url(checked, options);
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
        let agents = site_agents(checked, &base)?;
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
    let sums = sha256sums(&plan.files);
    plan.files.insert("SHA256SUMS".into(), sums.into_bytes());
    plan.summary.files = plan.files.len();
    Ok(plan)
}

/// `sha256sum`-compatible listing of every file, sorted by path.
pub fn sha256sums(files: &BTreeMap<String, Vec<u8>>) -> String {
    let mut out = String::new();
    for (path, bytes) in files {
        let digest = Sha256::digest(bytes);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(out, "{hex}  {path}");
    }
    out
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
                    std::fs::read(&path).map_err(io(&path))?
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
        });
    }
    Ok(agents)
}

/// Refuse outputs that would overwrite the registry or someone else's files.
pub fn check_destination(out: &Path, registry: &Path) -> Result<(), BuildError> {
    let absolute = |p: &Path| {
        std::path::absolute(p)
            .map(|a| normalize(&a))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let (out_abs, registry_abs) = (absolute(out), absolute(registry));
    if out_abs.starts_with(&registry_abs) && out_abs != registry_abs.join("dist")
        || registry_abs.starts_with(&out_abs)
    {
        // `<registry>/dist` is fine: `dist` is never an entry.
        return Err(BuildError::OverlapsRegistry {
            out: out.to_path_buf(),
            registry: registry.to_path_buf(),
        });
    }
    if out.exists() {
        if !out.is_dir() {
            return Err(BuildError::NotAFolder(out.to_path_buf()));
        }
        let empty = std::fs::read_dir(out).map_err(io(out))?.next().is_none();
        if !empty && !out.join("SHA256SUMS").is_file() && !listed_by_parent(out) {
            return Err(BuildError::ForeignOutput(out.to_path_buf()));
        }
    }
    Ok(())
}

/// Whether `out` is a folder of an output tree we wrote (e.g. `dist/site`, listed in
/// `dist/SHA256SUMS`), so `acp-registry site` may replace the site `build` made.
fn listed_by_parent(out: &Path) -> bool {
    let (Some(parent), Some(name)) = (out.parent(), out.file_name()) else {
        return false;
    };
    let needle = format!("  {}/", name.to_string_lossy());
    std::fs::read_to_string(parent.join("SHA256SUMS")).is_ok_and(|sums| sums.contains(&needle))
}

/// Lexical normalisation (`a/./b/../c` → `a/c`) without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn sibling(out: &Path, tag: &str) -> PathBuf {
    let name = out
        .file_name()
        .map_or("dist".into(), |n| n.to_string_lossy().into_owned());
    out.with_file_name(format!(".{name}.{tag}-{}", std::process::id()))
}

/// Remove leftovers of builds that were killed (`.<name>.tmp-*`, `.<name>.old-*`).
fn remove_leftovers(out: &Path) -> Result<(), BuildError> {
    let parent = parent_of(out);
    let name = out
        .file_name()
        .map_or("dist".into(), |n| n.to_string_lossy().into_owned());
    let Ok(read) = std::fs::read_dir(&parent) else {
        return Ok(());
    };
    for item in read.flatten() {
        let file = item.file_name().to_string_lossy().into_owned();
        let ours = [format!(".{name}.tmp-"), format!(".{name}.old-")]
            .iter()
            .any(|prefix| file.starts_with(prefix.as_str()));
        if ours && item.file_type().is_ok_and(|t| t.is_dir()) {
            std::fs::remove_dir_all(item.path()).map_err(io(&item.path()))?;
        }
    }
    Ok(())
}

fn parent_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn sync_dir(path: &Path) -> Result<(), BuildError> {
    std::fs::File::open(path)
        .and_then(|d| d.sync_all())
        .map_err(io(path))
}

/// Write `files` as the complete new content of `out`: into a fresh folder beside it, flushed
/// to disk, then swapped in with one atomic exchange. A kill at any moment leaves the old
/// complete folder or the new complete one.
pub fn write_atomically(out: &Path, files: &BTreeMap<String, Vec<u8>>) -> Result<(), BuildError> {
    let parent = parent_of(out);
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    remove_leftovers(out)?;
    let staging = sibling(out, "tmp");
    std::fs::create_dir(&staging).map_err(io(&staging))?;
    let mut dirs = std::collections::BTreeSet::from([staging.clone()]);
    for path in files.keys() {
        if let Some(dir) = staging.join(path).parent() {
            if !dirs.contains(dir) {
                std::fs::create_dir_all(dir).map_err(io(dir))?;
                dirs.insert(dir.to_path_buf());
            }
        }
    }
    // Each file is written and synced on its own, in parallel: the disk overlaps the flushes,
    // and only our data is waited for (a file-system-wide sync would wait for everyone's).
    files.par_iter().try_for_each(|(path, bytes)| {
        let target = staging.join(path);
        let mut file = std::fs::File::create(&target).map_err(io(&target))?;
        file.write_all(bytes).map_err(io(&target))?;
        file.sync_all().map_err(io(&target))
    })?;
    for dir in dirs.iter().rev() {
        sync_dir(dir)?;
    }
    if out.exists() {
        swap(&staging, out)?;
        // `staging` now holds the previous tree.
        std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
    } else {
        std::fs::rename(&staging, out).map_err(io(out))?;
    }
    sync_dir(&parent)
}

/// Exchange two folders atomically (Linux `renameat2(RENAME_EXCHANGE)`); elsewhere, or on file
/// systems without it, two renames (a kill between them leaves the old tree under a hidden
/// name, which the next build cleans up).
fn swap(new: &Path, out: &Path) -> Result<(), BuildError> {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let a = CString::new(new.as_os_str().as_bytes()).map_err(|e| io(new)(e.into()))?;
        let b = CString::new(out.as_os_str().as_bytes()).map_err(|e| io(out)(e.into()))?;
        // SAFETY: both pointers are valid NUL-terminated strings for the duration of the call.
        let result = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if result == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if !matches!(error.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
            return Err(io(out)(error));
        }
    }
    let old = sibling(out, "old");
    std::fs::rename(out, &old).map_err(io(out))?;
    std::fs::rename(new, out).map_err(io(out))?;
    std::fs::rename(&old, new).map_err(io(new))
}

/// A difference between a fresh build and an existing folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    Missing(String),
    Extra(String),
    Changed(String),
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Missing(p) => write!(f, "missing  {p}"),
            Difference::Extra(p) => write!(f, "extra    {p}"),
            Difference::Changed(p) => write!(f, "changed  {p}"),
        }
    }
}

fn list_files(
    root: &Path,
    prefix: &str,
    out: &mut BTreeMap<String, PathBuf>,
) -> Result<(), BuildError> {
    for item in std::fs::read_dir(root).map_err(io(root))? {
        let item = item.map_err(io(root))?;
        let name = item.file_name().to_string_lossy().into_owned();
        let relative = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if item.file_type().map_err(io(&item.path()))?.is_dir() {
            list_files(&item.path(), &relative, out)?;
        } else {
            out.insert(relative, item.path());
        }
    }
    Ok(())
}

/// Compare a fresh build with the folder `out` (sorted by path).
pub fn compare(
    out: &Path,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<Vec<Difference>, BuildError> {
    let mut existing = BTreeMap::new();
    if out.is_dir() {
        list_files(out, "", &mut existing)?;
    }
    let mut differences = Vec::new();
    for (path, bytes) in files {
        match existing.get(path) {
            None => differences.push(Difference::Missing(path.clone())),
            Some(disk) => {
                if std::fs::read(disk).map_err(io(disk))? != *bytes {
                    differences.push(Difference::Changed(path.clone()));
                }
            }
        }
    }
    for path in existing.keys() {
        if !files.contains_key(path) {
            differences.push(Difference::Extra(path.clone()));
        }
    }
    differences.sort_by(|a, b| {
        let key = |d: &Difference| match d {
            Difference::Missing(p) | Difference::Extra(p) | Difference::Changed(p) => p.clone(),
        };
        key(a).cmp(&key(b))
    });
    Ok(differences)
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
