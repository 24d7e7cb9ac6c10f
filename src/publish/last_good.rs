//! `build --last-good PREVIOUS`: the registry files a previous build published (a
//! `registry.json`, or the `dist/` folder holding every output), read as untrusted input, and
//! what this build serves in place of each entry that fails validation: its previous object,
//! byte for byte, or nothing when it was never published.
//!
//! A broken entry is held back, not the registry. Its previous object is served as the bytes it
//! had (their span in the previous file, from a strict JSON parse that borrows each agent's raw
//! text), never re-serialised: clients download what they downloaded before, and a previous
//! build of ours wrote those bytes at the same depth, so the document stays ours byte for byte.
//! The previous files are untrusted input like a pull request: read through `fs::read_capped`
//! (no link, hard links included), validated against the published schema again, and read in
//! bounded memory like the network's answers (`net::json`): only `agents` is read, each agent
//! kept as a span and an id, their values counted (`fs::ValueBudget`) before any object becomes
//! a value tree, since `[0,0,…]` costs 70 times its text as one. Errors that belong to no entry
//! still refuse the build; exit 3 (`commands::exit::HELD_BACK`) tells the workflow to publish and
//! raise an issue.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::de::{Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::diagnostics::{Code, Diagnostic, Severity};
use crate::manifest::{names::is_valid_id, MAX_ICON_BYTES};
use crate::net::json::{Obj, Text};
use crate::published::Output;
use crate::registry::Checked;
use crate::rules::{published_agent_validator, EntryReport, Sink};
use acp_registry_core::fs::{read_capped, ReadError, ValueBudget};
use acp_registry_core::source::Span;

/// The largest previous registry file read (64 MiB: 10,000 agents take about 15 MiB).
pub(crate) const MAX_PREVIOUS_BYTES: u64 = 64 * 1024 * 1024;
/// The most agents a previous registry file may list.
pub(crate) const MAX_PREVIOUS_AGENTS: usize = 100_000;
/// The most JSON values its agents' objects may hold in all (a published agent has about 50,
/// so 10,000 agents about 500,000): what bounds the value trees of the objects served again,
/// which cost up to 70 times their text.
pub(crate) const MAX_PREVIOUS_VALUES: u64 = 2_000_000;
/// The longest id read.
const MAX_ID_BYTES: usize = 256;

/// Why `--last-good` cannot be used; nothing is built.
#[derive(Debug, thiserror::Error)]
#[error("--last-good: `{}` {problem}; pass the registry.json a previous build published, or the dist/ folder holding it", path.display())]
pub struct LastGoodError {
    /// The file (or folder) at fault.
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: String,
}

/// The previously published registry files, by output file name.
#[derive(Debug)]
pub(crate) struct LastGood {
    documents: BTreeMap<String, Previous>,
    /// The folder named, where the previous icons are (`None`: a file was named).
    folder: Option<PathBuf>,
}

/// One previous registry file: its text and where each agent's object is in it.
#[derive(Debug)]
struct Previous {
    /// The file as named, for messages.
    path: PathBuf,
    text: String,
    agents: BTreeMap<String, Span>,
}

impl LastGood {
    /// Read `named` for `outputs`. A folder gives each output its file of the same name (the
    /// first output's must be there); a file is the previous form of the output of its name,
    /// or of the first output when none has it. The named path itself must not be a link;
    /// files are read without following links, regular files only, at most
    /// [`MAX_PREVIOUS_BYTES`].
    pub(crate) fn read(named: &Path, outputs: &[Output]) -> Result<LastGood, LastGoodError> {
        let unusable = |path: &Path, problem: String| LastGoodError {
            path: path.to_path_buf(),
            problem,
        };
        let meta = std::fs::symlink_metadata(named)
            .map_err(|e| unusable(named, format!("cannot be read: {e}")))?;
        if meta.file_type().is_symlink() {
            return Err(unusable(
                named,
                "is a symbolic link, which is never followed".into(),
            ));
        }
        let mut documents = BTreeMap::new();
        if meta.is_dir() {
            for (i, output) in outputs.iter().enumerate() {
                let path = named.join(&output.file);
                match read_capped(named, Path::new(&output.file), MAX_PREVIOUS_BYTES) {
                    Ok(bytes) => {
                        documents.insert(output.file.clone(), Previous::parse(&path, bytes)?);
                    }
                    Err(ReadError::NotFound) if i > 0 => {}
                    Err(e) => return Err(unusable(&path, read_problem(&e))),
                }
            }
            return Ok(LastGood {
                documents,
                folder: Some(named.to_path_buf()),
            });
        }
        let (Some(parent), Some(name)) = (named.parent(), named.file_name()) else {
            return Err(unusable(named, "names no file".into()));
        };
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let bytes = read_capped(parent, Path::new(name), MAX_PREVIOUS_BYTES)
            .map_err(|e| unusable(named, read_problem(&e)))?;
        let name = name.to_string_lossy();
        let output = outputs
            .iter()
            .find(|o| o.file == name)
            .or(outputs.first())
            .map_or_else(|| "registry.json".to_string(), |o| o.file.clone());
        documents.insert(output, Previous::parse(named, bytes)?);
        Ok(LastGood {
            documents,
            folder: None,
        })
    }
}

fn read_problem(error: &ReadError) -> String {
    match error {
        ReadError::NotFound => "does not exist".into(),
        ReadError::TooLarge { limit, .. } => format!("is over the {limit}-byte limit"),
        other => format!("cannot be read: {other}"),
    }
}

/// The one member of a previous registry file that is read: `agents`, each object kept as
/// its place in the text, everything else skipped without allocating.
#[derive(Deserialize)]
struct Document<'t> {
    #[serde(borrow, default)]
    agents: Agents<'t>,
}

/// The `agents` array as the raw objects (`None`: absent or not an array); more than
/// [`MAX_PREVIOUS_AGENTS`] is an error.
#[derive(Default)]
struct Agents<'t>(Option<Vec<&'t RawValue>>);

impl<'de: 't, 't> Deserialize<'de> for Agents<'t> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AgentsVisitor(std::marker::PhantomData))
    }
}

struct AgentsVisitor<'t>(std::marker::PhantomData<&'t ()>);

impl<'de: 't, 't> Visitor<'de> for AgentsVisitor<'t> {
    type Value = Agents<'t>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of agents")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Agents<'t>, A::Error> {
        let mut list = Vec::new();
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            if list.len() == MAX_PREVIOUS_AGENTS {
                return Err(A::Error::custom(format!(
                    "`agents` lists more than {MAX_PREVIOUS_AGENTS} agents"
                )));
            }
            list.push(raw);
        }
        Ok(Agents(Some(list)))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Agents<'t>, A::Error> {
        IgnoredAny.visit_map(map)?;
        Ok(Agents(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Agents<'t>, E> {
        Ok(Agents(None))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Agents<'t>, E> {
        Ok(Agents(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Agents<'t>, E> {
        Ok(Agents(None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Agents<'t>, E> {
        Ok(Agents(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Agents<'t>, E> {
        Ok(Agents(None))
    }
    fn visit_unit<E>(self) -> Result<Agents<'t>, E> {
        Ok(Agents(None))
    }
}

/// What is read of each agent object to index it: its id (other members skipped).
#[derive(Default, Deserialize)]
#[serde(default)]
struct Head {
    id: Text<MAX_ID_BYTES>,
}

impl Previous {
    /// Strict JSON (no comments, no trailing commas: the object bytes are published again),
    /// `{"agents": [{"id": "…", …}, …]}`, no id twice, `agents` and each `id` once, within
    /// the bounds (agents, values, depth). Read in bounded memory: the text, one span and id
    /// per agent; a value tree is built only for an object served again (`agent`).
    fn parse(path: &Path, bytes: Vec<u8>) -> Result<Previous, LastGoodError> {
        let malformed = |problem: String| LastGoodError {
            path: path.to_path_buf(),
            problem: format!("is not a registry file: {problem}"),
        };
        let text = String::from_utf8(bytes).map_err(|_| malformed("it is not UTF-8".into()))?;
        if !text.trim_start().starts_with('{') {
            return Err(malformed("it is not a JSON object".into()));
        }
        let document: Document =
            serde_json::from_str(&text).map_err(|e| malformed(format!("it is not JSON ({e})")))?;
        let Some(list) = document.agents.0 else {
            return Err(malformed("it has no `agents` array".into()));
        };
        let mut budget = ValueBudget::new(MAX_PREVIOUS_VALUES);
        let mut agents = BTreeMap::new();
        for (i, raw) in list.into_iter().enumerate() {
            let head: Obj<Head> = serde_json::from_str(raw.get())
                .map_err(|e| malformed(format!("/agents/{i}: {e}")))?;
            let Some(id) = head.0.and_then(|h| h.id.0) else {
                return Err(malformed(format!(
                    "/agents/{i} is not an object with an `id` (a string of at most {MAX_ID_BYTES} bytes)"
                )));
            };
            budget.spend(raw.get()).map_err(|e| {
                malformed(format!(
                    "its agents' objects hold {e} (the bound is there to keep memory bounded)"
                ))
            })?;
            // The object's place in the text: `raw` borrows from it.
            let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
            let span = Span::new(start, start + raw.get().len());
            if agents.insert(id.clone(), span).is_some() {
                return Err(malformed(format!("the id `{id}` is listed twice")));
            }
        }
        Ok(Previous {
            path: path.to_path_buf(),
            text,
            agents,
        })
    }

    /// The object of `id` as it is in the file; usable when it still validates against
    /// `registry.schema.json` (the file is untrusted; the output must validate).
    fn agent(&self, id: &str) -> Option<PreviousAgent<'_>> {
        let span = self.agents.get(id)?;
        let raw = &self.text[span.start..span.end];
        // Bounded by `MAX_PREVIOUS_VALUES`, counted when the file was read. A key twice in
        // the object makes it unusable: clients could read either value.
        let value: Value = serde_json::from_str(raw).ok()?;
        let repeated =
            crate::manifest::parse(raw).map_or(true, |tree| !tree.duplicate_keys().is_empty());
        Some(match value {
            _ if repeated => PreviousAgent::Invalid,
            Value::Object(map)
                if published_agent_validator().is_valid(&Value::Object(map.clone())) =>
            {
                PreviousAgent::Usable(raw, map)
            }
            _ => PreviousAgent::Invalid,
        })
    }
}

/// An agent object of a previous registry file.
enum PreviousAgent<'a> {
    /// Its bytes and its value.
    Usable(&'a str, Map<String, Value>),
    /// It no longer validates.
    Invalid,
}

/// What a build with `--last-good` serves instead of the failing entries.
#[derive(Debug, Default)]
pub(crate) struct HeldBack {
    /// Folder names of the entries that fail validation: none is published as it is now.
    pub failing: BTreeSet<String>,
    /// Per output (configuration order): id → the previous object's bytes.
    pub(super) objects: Vec<BTreeMap<String, String>>,
    /// Previous icons published again: (file name in the output, bytes).
    pub(super) icons: Vec<(String, Vec<u8>)>,
    /// The site's view of each entry served in its previous form.
    pub(super) site: Vec<crate::site::SiteAgent>,
    /// One per failing entry, by folder: what was served and why.
    pub entries: Vec<HeldEntry>,
}

/// One failing entry and what the build did with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeldEntry {
    /// The folder name (the id the previous files are searched for).
    pub id: String,
    /// The codes of its errors, sorted.
    pub codes: Vec<Code>,
    /// The version of the previous object served (from the first output serving it).
    pub version: Option<String>,
    /// The outputs that serve its previous object.
    pub kept_in: Vec<String>,
    /// The outputs that list it but had no usable previous object.
    pub left_out_of: Vec<String>,
    /// Icons its previous object names that could not be taken, with the reason.
    pub missing_icons: Vec<String>,
}

impl HeldBack {
    /// How many failing entries are still served in some output in their previous form.
    pub(crate) fn kept(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| !e.kept_in.is_empty())
            .count()
    }

    /// The previous objects of output `index`, by id.
    pub(super) fn objects_of(&self, index: usize) -> Option<&BTreeMap<String, String>> {
        self.objects.get(index)
    }
}

/// The errors of `checked` that belong to no entry (configuration, quarantine, duplicate
/// ids): they stop the build even with `--last-good`.
pub(crate) fn registry_wide_errors(checked: &Checked) -> usize {
    checked
        .report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .filter(|d| !checked.entries.iter().any(|e| e.diagnostics.contains(d)))
        .count()
}

/// Decide, for every entry of `checked` with an error, what each output serves: the previous
/// object of the same id when `last_good` has one that still validates, else nothing.
pub(crate) fn hold_back(checked: &Checked, last_good: &LastGood) -> HeldBack {
    let config = &checked.config;
    let passing: BTreeSet<&str> = checked
        .entries
        .iter()
        .filter(|e| !fails(e))
        .map(EntryReport::id)
        .collect();
    let mut held = HeldBack {
        objects: vec![BTreeMap::new(); config.outputs.len()],
        ..HeldBack::default()
    };
    let mut failing: Vec<&EntryReport> = checked.entries.iter().filter(|e| fails(e)).collect();
    failing.sort_by(|a, b| a.entry.name.cmp(&b.entry.name));
    for entry in failing {
        let id = entry.entry.name.as_str();
        held.failing.insert(id.to_string());
        let mut record = HeldEntry {
            id: id.to_string(),
            codes: error_codes(entry),
            version: None,
            kept_in: Vec::new(),
            left_out_of: Vec::new(),
            missing_icons: Vec::new(),
        };
        let quarantined = (!config.publish_quarantined && checked.quarantine.ids.contains_key(id))
            || checked.deprecations.is_disabled(id);
        let mut site_agent = None;
        for (i, output) in config.outputs.iter().enumerate() {
            if !output.publishes(id) || quarantined {
                continue;
            }
            let previous = last_good.documents.get(&output.file);
            match previous.and_then(|p| p.agent(id)) {
                Some(PreviousAgent::Usable(raw, map)) if !passing.contains(id) => {
                    record.kept_in.push(output.file.clone());
                    if record.version.is_none() {
                        record.version = map
                            .get("version")
                            .and_then(Value::as_str)
                            .map(str::to_string);
                    }
                    held.objects[i].insert(id.to_string(), raw.to_string());
                    site_agent.get_or_insert((raw.to_string(), map));
                }
                _ => record.left_out_of.push(output.file.clone()),
            }
        }
        if let Some((raw, agent)) = site_agent {
            let icons = previous_icons(last_good, id, &raw, &mut record.missing_icons);
            if is_valid_id(id) {
                held.site.push(crate::site::SiteAgent {
                    id: id.to_string(),
                    preview: None,
                    readme: None,
                    icons: icons
                        .iter()
                        .map(|(name, bytes)| (format!("icon{}", &name[id.len()..]), bytes.clone()))
                        .collect(),
                    quarantine: checked.quarantine.ids.get(id).cloned(),
                    verification: None,
                    agent,
                    // The notice and the clients' verdicts are of the current manifest,
                    // which failed: the previous form shows neither.
                    ..Default::default()
                });
            }
            held.icons.extend(icons);
        }
        held.entries.push(record);
    }
    held
}

/// Whether the entry has an error finding.
fn fails(entry: &EntryReport) -> bool {
    entry
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error)
}

fn error_codes(entry: &EntryReport) -> Vec<Code> {
    let mut codes: Vec<Code> = entry
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.code)
        .collect();
    codes.sort_by_key(|c| c.as_str());
    codes.dedup();
    codes
}

/// The previous icons the object names (`…/<id>.svg`, `-light`, `-dark`), from the named
/// folder: read without following links, capped, and only when they pass the icon safety
/// rules. What cannot be taken is described in `missing`.
fn previous_icons(
    last_good: &LastGood,
    id: &str,
    raw: &str,
    missing: &mut Vec<String>,
) -> Vec<(String, Vec<u8>)> {
    let mut icons = Vec::new();
    for suffix in ["", "-light", "-dark"] {
        let name = format!("{id}{suffix}.svg");
        if !raw.contains(&format!("/{name}\"")) {
            continue;
        }
        let Some(folder) = &last_good.folder else {
            missing.push(format!("`{name}` (--last-good names a file, not a folder)"));
            continue;
        };
        match read_capped(folder, Path::new(&name), MAX_ICON_BYTES) {
            Ok(bytes) => match unsafe_icon(&name, &bytes) {
                None => icons.push((name, bytes)),
                Some(why) => missing.push(format!("`{name}` ({why})")),
            },
            Err(e) => missing.push(format!("`{name}` ({})", read_problem(&e))),
        }
    }
    icons
}

/// Why an icon may not be published, if it may not.
fn unsafe_icon(name: &str, bytes: &[u8]) -> Option<String> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Some("not UTF-8".into());
    };
    crate::rules::check_icon(name, text)
        .into_iter()
        .find(|d| matches!(d.code, Code::IconUnsafe | Code::IconXml | Code::IconRoot))
        .map(|d| format!("{}: {}", d.code, d.message))
}

/// One finding per failing entry: `entry-held-back` when some output serves its previous
/// object, else `entry-left-out`; in the entry's manifest, policy applied.
pub(crate) fn findings(
    checked: &Checked,
    held: &HeldBack,
    last_good: &LastGood,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for record in &held.entries {
        let Some(entry) = checked.entries.iter().find(|e| e.entry.name == record.id) else {
            continue;
        };
        let mut sink = Sink::new(&checked.config.policy, Some(record.id.clone()));
        sink.push(finding(entry, record, last_good));
        out.extend(sink.diagnostics);
    }
    out
}

fn finding(entry: &EntryReport, record: &HeldEntry, last_good: &LastGood) -> Diagnostic {
    let codes: Vec<&str> = record.codes.iter().map(|c| c.as_str()).collect();
    let why = format!("`{}` fails validation ({})", record.id, codes.join(", "));
    let file = crate::rules::display_path(&entry.entry, "agent.json");
    let from: Vec<String> = record
        .kept_in
        .iter()
        .filter_map(|f| last_good.documents.get(f))
        .map(|p| format!("`{}`", p.path.display()))
        .collect();
    let mut message = if record.kept_in.is_empty() {
        format!(
            "{why} and has no usable previous form in --last-good: left out of {}",
            record.left_out_of.join(", ")
        )
    } else {
        let version = record
            .version
            .as_deref()
            .map_or_else(String::new, |v| format!(" (version {v})"));
        format!(
            "{why}: {} keeps its previous published form{version}, from {}",
            record.kept_in.join(", "),
            from.join(", ")
        )
    };
    if !record.kept_in.is_empty() && !record.left_out_of.is_empty() {
        message.push_str(&format!("; left out of {}", record.left_out_of.join(", ")));
    }
    if !record.missing_icons.is_empty() {
        message.push_str(&format!(
            "; previous icons not published: {}",
            record.missing_icons.join(", ")
        ));
    }
    let code = if record.kept_in.is_empty() {
        Code::EntryLeftOut
    } else {
        Code::EntryHeldBack
    };
    Diagnostic::new(code, message).in_file(file).help(
        "fix the errors reported for this entry; the next build publishes its current form again",
    )
}
