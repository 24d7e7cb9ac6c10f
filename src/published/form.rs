//! [`Form`]: one entry's published form, from the manifest as clients read it, taken once,
//! to the agent as each output or channel publishes it.

use serde_json::{Map, Value};

use super::order::canonical_agent;
use super::output::{Channel, Output};
use super::patch::apply_patch;
use crate::manifest::svg;
use crate::rules::{normalized_json, EntryReport, PreviewVersion, Version};

/// One entry's published form: the manifest as JSON with the legacy distribution keys under
/// `binary` (comments gone), and what each output and channel makes of it.
pub(crate) struct Form<'e> {
    entry: &'e EntryReport,
    manifest: Map<String, Value>,
}

impl<'e> Form<'e> {
    /// The form of `entry` from the manifest as clients read it, when the caller has it
    /// already (the check takes the one the schema rule judged): nothing is parsed again.
    pub(crate) fn new(entry: &'e EntryReport, manifest: Map<String, Value>) -> Self {
        Form { entry, manifest }
    }

    /// The form of `entry`, from its manifest parsed again (or its held tree) and read as
    /// clients read it, when its top level is an object.
    pub(crate) fn of(entry: &'e EntryReport) -> Option<Self> {
        match normalized_json(&entry.manifest_doc()?.root) {
            Value::Object(manifest) => Some(Form::new(entry, manifest)),
            _ => None,
        }
    }

    /// The agent exactly as `output` publishes it: the agent of the output's channel, then
    /// the output's patches for this id, then the embedded icon. `build` writes it;
    /// `validate` checks it.
    pub(crate) fn agent(&self, base_url: &str, output: &Output) -> Map<String, Value> {
        let mut agent = self.channel(self.manifest.clone(), base_url, output.channel);
        let id = self.entry.id();
        for patch in output.patches.iter().filter(|p| p.id == id) {
            apply_patch(&mut agent, patch);
        }
        if output.embed_icons {
            if let Some(svg) = self.entry.file_text("icon.svg") {
                agent.insert("icon_data_uri".into(), Value::String(svg::data_uri(svg)));
                agent = canonical_agent(agent);
            }
        }
        agent
    }

    /// The agent as published in the stable and the preview channel (the site shows both).
    pub(crate) fn into_channels(
        mut self,
        base_url: &str,
    ) -> (Map<String, Value>, Map<String, Value>) {
        let stable = self.channel(self.manifest.clone(), base_url, Channel::Stable);
        let manifest = std::mem::take(&mut self.manifest);
        (stable, self.channel(manifest, base_url, Channel::Preview))
    }

    /// `agent` (this form's manifest) as `channel` serves it: `$schema` and the manifest's
    /// `icon` dropped, the preview block's version and distribution when it is served, the
    /// icons as URLs under `base_url`, in the canonical order.
    fn channel(
        &self,
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
                serve_preview(&mut agent, &preview);
            }
        }
        let id = self.entry.id();
        let has = |file: &str| self.entry.icons.iter().any(|i| i == file);
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
}

/// The preview block's version and distribution in place of the stable ones, when it is
/// strictly newer.
fn serve_preview(agent: &mut Map<String, Value>, preview: &Map<String, Value>) {
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
}
