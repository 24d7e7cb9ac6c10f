//! The outputs `acp-registry.jsonc` configures: which file, which agents, which channel,
//! which patches. `registry::config` reads them; [`super::Form`] applies them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// `build --matrix`: the evidence file published beside the registry files (no output may be
/// named so).
pub(crate) const VERIFICATION_FILE: &str = "verification.json";
/// Its JSON Schema, published beside it.
pub(crate) const VERIFICATION_SCHEMA_FILE: &str = "verification.schema.json";

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
    /// Leave the `"extensions": []` member out of the file (the public registry's `JetBrains`
    /// files have none).
    pub omit_extensions: bool,
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

/// Each output's file and whether it lists the agent `id`: what `rules::compatibility` needs
/// to know of the configuration (a client reading a file that leaves the agent out cannot
/// install it).
pub(crate) fn listings(outputs: &[Output], id: &str) -> BTreeMap<String, bool> {
    outputs
        .iter()
        .map(|o| (o.file.clone(), o.publishes(id)))
        .collect()
}
