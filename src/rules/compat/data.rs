//! `clients.jsonc` read into typed facts, once per process.
//!
//! The file is part of the binary (`include_str!`), so a malformed file is a bug of this
//! repository, not of a registry: it panics on first use, and a unit test parses it on every
//! `cargo test`. Each fact keeps its `source` so a test can hold every fact to a public URL.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::manifest::distribution::{ArchiveFormat, Kind};
use crate::manifest::{parse, PLATFORMS};

/// The data file, as committed.
pub(crate) const CLIENTS_FILE: &str = include_str!("clients.jsonc");

/// The fact keys every client states (and no other).
pub(crate) const FACT_KEYS: [&str; 15] = [
    "reads",
    "platforms",
    "order",
    "kind.binary",
    "kind.npx",
    "kind.uvx",
    "archive.zip",
    "archive.tar.gz",
    "archive.tar.bz2",
    "archive.tar.xz",
    "archive.raw",
    "env",
    "auth.agent",
    "auth.terminal",
    "auth.env_var",
];

/// A yes-or-no fact, or one nobody could establish (never a reason against an entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Known {
    Yes,
    No,
    Unknown,
}

/// One fact as written: its value and where it was established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fact {
    pub value: serde_json::Value,
    pub source: String,
}

/// One known client and what it can consume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Client {
    /// Stable id (`zed`, `acpr`, `jetbrains`).
    pub id: String,
    /// Display name used in sentences.
    pub name: String,
    /// Every fact by key ([`FACT_KEYS`]).
    pub facts: BTreeMap<String, Fact>,
}

impl Client {
    /// A yes-or-no fact (`true`, `false`, anything else unknown).
    pub(crate) fn known(&self, key: &str) -> Known {
        match self.facts.get(key).map(|f| &f.value) {
            Some(serde_json::Value::Bool(true)) => Known::Yes,
            Some(serde_json::Value::Bool(false)) => Known::No,
            _ => Known::Unknown,
        }
    }

    /// A list fact, or `None` when it is unknown.
    pub(crate) fn list(&self, key: &str) -> Option<Vec<&str>> {
        let items = self.facts.get(key)?.value.as_array()?;
        Some(items.iter().filter_map(serde_json::Value::as_str).collect())
    }

    /// Whether the client installs `kind` at all.
    pub(crate) fn kind(&self, kind: Kind) -> Known {
        self.known(&format!("kind.{}", kind.as_str()))
    }

    /// Whether the client unpacks (or runs, for raw) an archive of `format`.
    pub(crate) fn archive(&self, format: ArchiveFormat) -> Known {
        self.known(&format!("archive.{}", format_name(format)))
    }

    /// The kinds it tries in order, first offered wins (`None`: unknown, any it supports).
    pub(crate) fn order(&self) -> Option<Vec<Kind>> {
        let names = self.list("order")?;
        Some(
            names
                .iter()
                .filter_map(|n| Kind::ALL.into_iter().find(|k| k.as_str() == *n))
                .collect(),
        )
    }

    /// The platforms it runs on (all six when unknown).
    pub(crate) fn platforms(&self) -> Vec<&str> {
        self.list("platforms").unwrap_or_else(|| PLATFORMS.to_vec())
    }
}

/// The name of an archive format in the data file and in sentences (`.`-less).
pub(crate) fn format_name(format: ArchiveFormat) -> &'static str {
    match format {
        ArchiveFormat::Zip => "zip",
        ArchiveFormat::TarGz => "tar.gz",
        ArchiveFormat::TarBz2 => "tar.bz2",
        ArchiveFormat::TarXz => "tar.xz",
        ArchiveFormat::Raw => "raw",
    }
}

/// The committed clients, sorted by id, parsed on first use.
pub(crate) fn clients() -> &'static [Client] {
    static CLIENTS: OnceLock<Vec<Client>> = OnceLock::new();
    CLIENTS.get_or_init(|| parse_clients(CLIENTS_FILE).expect("src/rules/compat/clients.jsonc"))
}

/// Parse a clients file: `{"clients": [{"id", "name", "facts": {key: {value, source}}}]}`.
/// Every client states exactly the keys of [`FACT_KEYS`].
pub(crate) fn parse_clients(text: &str) -> Result<Vec<Client>, String> {
    let root = parse(text).map_err(|e| e.to_string())?.to_json();
    let items = root
        .get("clients")
        .and_then(serde_json::Value::as_array)
        .ok_or("`clients` must be a list")?;
    let mut clients = items
        .iter()
        .map(parse_client)
        .collect::<Result<Vec<_>, _>>()?;
    clients.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(clients)
}

fn parse_client(item: &serde_json::Value) -> Result<Client, String> {
    let text = |key: &str| {
        item.get(key)
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
            .ok_or(format!("a client needs a string `{key}`"))
    };
    let id = text("id")?;
    let facts = item
        .get("facts")
        .and_then(serde_json::Value::as_object)
        .ok_or(format!("client `{id}` needs `facts`"))?;
    let mut parsed = BTreeMap::new();
    for (key, fact) in facts {
        if !FACT_KEYS.contains(&key.as_str()) {
            return Err(format!("client `{id}`: unknown fact `{key}`"));
        }
        let value = fact.get("value").cloned().unwrap_or_default();
        let source = fact
            .get("source")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_string();
        parsed.insert(key.clone(), Fact { value, source });
    }
    if let Some(missing) = FACT_KEYS.iter().find(|k| !parsed.contains_key(**k)) {
        return Err(format!("client `{id}`: missing fact `{missing}`"));
    }
    Ok(Client {
        name: text("name")?,
        id,
        facts: parsed,
    })
}
