//! Published agents and output variants: the canonical form of an entry as clients read it,
//! preview resolution, and the per-output include/exclude lists and patches.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::manifest::distribution::{node_of, Distribution, Kind};
use crate::manifest::order::key_order;
use crate::manifest::svg;
use crate::manifest::FIELD_ORDER;
use crate::rules::{normalized_json, EntryReport, PreviewVersion, Version};

/// Which version of each entry an output serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Channel {
    /// The top-level version and distribution.
    #[default]
    Stable,
    /// The preview block when it is strictly newer than the stable version.
    Preview,
}

/// A change applied to one agent in one output.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Patch {
    /// The agent it applies to.
    pub id: String,
    /// Arguments appended per distribution kind (`binary` applies to every platform).
    pub append_args: BTreeMap<String, Vec<String>>,
    /// Top-level fields set (or replaced) on the agent.
    pub set: BTreeMap<String, Value>,
}

/// One registry file `build` writes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Output {
    /// The file name, e.g. `registry.json`.
    pub file: String,
    /// When set, only these ids are published in this output.
    pub include: Option<BTreeSet<String>>,
    /// Ids never published in this output.
    pub exclude: BTreeSet<String>,
    /// Which version of each entry it serves.
    pub channel: Channel,
    /// Changes to single agents.
    pub patches: Vec<Patch>,
    /// Add `icon_data_uri` (the icon as a `data:` URI) next to `icon`, so a client lists
    /// every agent with one request.
    pub embed_icons: bool,
}

impl Output {
    /// The outputs without configuration: `registry.json`, stable, every agent.
    pub fn default_outputs() -> Vec<Output> {
        vec![Output {
            file: "registry.json".into(),
            ..Output::default()
        }]
    }

    /// Whether this output lists the agent `id`.
    pub fn publishes(&self, id: &str) -> bool {
        self.include.as_ref().is_none_or(|ids| ids.contains(id)) && !self.exclude.contains(id)
    }
}

/// Whether the preview block should be served instead of the stable version.
pub(crate) fn preview_wins(stable: &str, preview: &str) -> bool {
    match (Version::parse(stable), PreviewVersion::parse(preview)) {
        (Some(stable), Some(preview)) => {
            preview
                > PreviewVersion {
                    base: stable,
                    preview: None,
                }
        }
        _ => false,
    }
}

/// The agent as published in the stable and the preview channel, from one parse of the
/// manifest (the site shows both).
pub(crate) fn published_channels(
    entry: &EntryReport,
    base_url: &str,
) -> Option<(Map<String, Value>, Map<String, Value>)> {
    let json = manifest_json(entry)?;
    let stable = publish(entry, json.clone(), base_url, Channel::Stable);
    Some((stable, publish(entry, json, base_url, Channel::Preview)))
}

/// The manifest as JSON with the legacy distribution normalised, when its top level is an
/// object: what every published form starts from.
fn manifest_json(entry: &EntryReport) -> Option<Map<String, Value>> {
    match normalized_json(&entry.manifest_doc()?.root) {
        Value::Object(json) => Some(json),
        _ => None,
    }
}

fn publish(
    entry: &EntryReport,
    mut agent: Map<String, Value>,
    base_url: &str,
    channel: Channel,
) -> Map<String, Value> {
    // `canonical_agent` orders the keys at the end, so removals need not keep the order.
    let preview = agent.swap_remove("preview");
    agent.swap_remove("$schema");
    agent.swap_remove("icon");
    if channel == Channel::Preview {
        if let Some(Value::Object(preview)) = preview {
            let stable = agent
                .get("version")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let candidate = preview
                .get("version")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if preview_wins(stable, candidate) {
                if let Some(version) = preview.get("version") {
                    agent.insert("version".into(), version.clone());
                }
                if let Some(distribution) = preview.get("distribution") {
                    agent.insert("distribution".into(), distribution.clone());
                }
            }
        }
    }
    let id = entry.id().to_string();
    let has = |file: &str| entry.icons.iter().any(|i| i == file);
    if has("icon.svg") {
        agent.insert("icon".into(), Value::String(format!("{base_url}/{id}.svg")));
    }
    if has("icon-light.svg") && has("icon-dark.svg") {
        let mut icons = Map::new();
        icons.insert(
            "light".into(),
            Value::String(format!("{base_url}/{id}-light.svg")),
        );
        icons.insert(
            "dark".into(),
            Value::String(format!("{base_url}/{id}-dark.svg")),
        );
        agent.insert("icons".into(), Value::Object(icons));
    }
    canonical_agent(agent)
}

/// The agent exactly as `output` publishes it: the agent as published in the output's channel,
/// then the output's patches for this id. `build` writes it; `validate` checks it.
pub(crate) fn output_agent(
    entry: &EntryReport,
    base_url: &str,
    output: &Output,
) -> Option<Map<String, Value>> {
    Some(output_agent_of(
        entry,
        manifest_json(entry)?,
        base_url,
        output,
    ))
}

/// [`output_agent`] from the manifest as JSON (comments stripped, the legacy distribution
/// form normalised), for a caller that has it already: one parse serves every output.
pub(crate) fn output_agent_of(
    entry: &EntryReport,
    manifest: Map<String, Value>,
    base_url: &str,
    output: &Output,
) -> Map<String, Value> {
    let mut agent = publish(entry, manifest, base_url, output.channel);
    for patch in output.patches.iter().filter(|p| p.id == entry.id()) {
        apply_patch(&mut agent, patch);
    }
    if output.embed_icons {
        if let Some(svg) = entry.file_text("icon.svg") {
            agent.insert("icon_data_uri".into(), Value::String(svg::data_uri(svg)));
            agent = canonical_agent(agent);
        }
    }
    agent
}

/// Apply a patch (after preview resolution).
pub(crate) fn apply_patch(agent: &mut Map<String, Value>, patch: &Patch) {
    if let Some(dist) = agent.get_mut("distribution") {
        append_args(dist, &patch.append_args);
    }
    for (key, value) in &patch.set {
        agent.insert(key.clone(), value.clone());
    }
    let canonical = canonical_agent(std::mem::take(agent));
    *agent = canonical;
}

/// Appends each kind's `args` to its targets: every binary target or the package, as the
/// one distribution model finds them (the published form has no legacy keys left).
fn append_args(dist: &mut Value, append: &BTreeMap<String, Vec<String>>) {
    let model = Distribution::from_node(&node_of(dist), "");
    for (kind, args) in append {
        let pointers: Vec<&str> = match kind.as_str() {
            "binary" => model.binary.iter().map(|t| t.pointer.as_str()).collect(),
            _ => Kind::ALL
                .into_iter()
                .filter(|k| k.as_str() == kind)
                .filter_map(|k| model.package(k))
                .map(|p| p.pointer.as_str())
                .collect(),
        };
        for pointer in pointers {
            if let Some(Value::Object(target)) = dist.pointer_mut(pointer) {
                let list = target
                    .entry("args")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(list) = list {
                    list.extend(args.iter().cloned().map(Value::String));
                }
            }
        }
    }
}

const AGENT_EXTRA_ORDER: [(&str, &str); 2] = [("icon_data_uri", "icon"), ("icons", "icon")];

/// Rebuild `map` with `order` first and every other key after, sorted; values are
/// canonicalised by `value_fn(key, value)`.
fn ordered(
    mut map: Map<String, Value>,
    order: &[&str],
    mut value_fn: impl FnMut(&str, Value) -> Value,
) -> Map<String, Value> {
    let mut out = Map::new();
    // What is left is sorted below, so the cheap removal that moves the last key is fine.
    for key in order {
        if map.is_empty() {
            break;
        }
        if let Some(value) = map.swap_remove(*key) {
            out.insert(key.to_string(), value_fn(key, value));
        }
    }
    let mut rest: Vec<(String, Value)> = map.into_iter().collect();
    rest.sort_by(|a, b| a.0.cmp(&b.0));
    for (key, value) in rest {
        let value = value_fn(&key, value);
        out.insert(key, value);
    }
    out
}

/// `value` with every object below `path` in the order `manifest::order` gives its place.
fn canonical_value(value: Value, path: &mut Vec<String>) -> Value {
    match value {
        Value::Object(map) => Value::Object(canonical_object(map, path, &[])),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| within(path, i.to_string(), |path| canonical_value(item, path)))
                .collect(),
        ),
        other => other,
    }
}

fn canonical_object(
    map: Map<String, Value>,
    path: &mut Vec<String>,
    order: &[&str],
) -> Map<String, Value> {
    let steps: Vec<&str> = path.iter().map(String::as_str).collect();
    let listed = if order.is_empty() {
        key_order(&steps).0
    } else {
        order
    };
    ordered(map, listed, |key, value| {
        within(path, key.to_string(), |path| canonical_value(value, path))
    })
}

fn within<T>(path: &mut Vec<String>, step: String, f: impl FnOnce(&mut Vec<String>) -> T) -> T {
    path.push(step);
    let out = f(path);
    path.pop();
    out
}

/// An agent pretty-printed at the depth it has inside `agents` (two levels, 4 spaces).
pub(crate) fn indented(agent: &Value) -> String {
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

/// The agent's keys in the canonical order (`docs/format.md#build-outputs`), unknown keys after, sorted.
pub(crate) fn canonical_agent(agent: Map<String, Value>) -> Map<String, Value> {
    let mut order: Vec<&str> = Vec::new();
    for field in FIELD_ORDER {
        order.push(field);
        for (extra, after) in AGENT_EXTRA_ORDER {
            if after == field {
                order.push(extra);
            }
        }
    }
    canonical_object(agent, &mut Vec::new(), &order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_is_served_only_when_strictly_newer() {
        assert!(preview_wins("1.2.2", "1.2.3-preview.1"));
        assert!(preview_wins("1.2.2", "1.2.3"));
        assert!(!preview_wins("1.2.3", "1.2.3-preview.5"));
        assert!(!preview_wins("1.2.3", "1.2.3"));
        assert!(!preview_wins("1.3.0", "1.2.9-preview.1"));
        assert!(preview_wins("1.2.3", "1.2.10-preview.1"));
        assert!(!preview_wins("1.2.3", "garbage"));
    }

    #[test]
    fn canonical_order_ignores_source_order() {
        let a: Map<String, Value> = serde_json::from_str(
            r#"{"version": "1.0.0", "zeta": {"b": 1, "a": 2}, "id": "x", "distribution": {"npx": {"args": [], "package": "p@1.0.0"}}}"#,
        )
        .unwrap();
        let keys: Vec<String> = canonical_agent(a.clone()).keys().cloned().collect();
        assert_eq!(keys, ["id", "version", "distribution", "zeta"]);
        let text = serde_json::to_string(&canonical_agent(a)).unwrap();
        assert!(text.contains(r#""zeta":{"a":2,"b":1}"#), "{text}");
        assert!(
            text.contains(r#""npx":{"package":"p@1.0.0","args":[]}"#),
            "{text}"
        );
    }
}
