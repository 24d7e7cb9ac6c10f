//! `acp-registry list`: the agents installed in the cache and those the registry offers,
//! sorted by id (installs by version), as lines or one JSON document. `--installed` reads only
//! the cache (no registry, no network).

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use super::client::{ClientFlags, Installed, OutputFormat, Session};
use super::client_text::{t, version_order};
use super::error::CommandError;
use super::exit::{self, Exit};
use acp_registry_client::registry::Origin;

/// `list`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(mut_arg("allow_loopback_for_tests", |arg| arg.help(
    "TEST ONLY: allow loopback addresses, over plain http too (see `validate`)"
)))]
pub struct Options {
    /// Only the agents installed in the cache (reads no registry).
    #[arg(long, conflicts_with = "available")]
    pub installed: bool,
    /// Only the agents the registry offers.
    #[arg(long)]
    pub available: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: OutputFormat,
    /// The registry, the cache and what to choose.
    #[command(flatten)]
    pub client: ClientFlags,
}

/// The `--format json` document.
#[derive(Serialize)]
struct List {
    version: u32,
    registry: Option<RegistryInfo>,
    agents: Vec<Agent>,
}

#[derive(Serialize)]
struct RegistryInfo {
    source: String,
    origin: &'static str,
    age_seconds: Option<u64>,
}

#[derive(Serialize, Default)]
struct Agent {
    id: String,
    name: Option<String>,
    description: Option<String>,
    /// The registry's current version, when the registry lists the agent.
    version: Option<String>,
    kinds: Vec<String>,
    installed: Vec<Install>,
}

#[derive(Serialize)]
struct Install {
    version: String,
    platform: String,
    kind: String,
    dir: String,
    source: String,
    sha256: Option<String>,
    installed_at: String,
}

impl From<&Installed> for Install {
    fn from(i: &Installed) -> Self {
        Install {
            version: i.version.clone(),
            platform: i.platform.clone(),
            kind: i.kind.to_string(),
            dir: i.dir.display().to_string(),
            source: i.source.clone(),
            sha256: i.sha256.clone(),
            installed_at: i.installed_at.clone(),
        }
    }
}

/// The name of an [`Origin`] in the JSON document.
fn origin_name(origin: &Origin) -> &'static str {
    match origin {
        Origin::Network => "network",
        Origin::NotModified => "not-modified",
        Origin::FreshCache => "fresh-cache",
        Origin::StaleCache => "stale-cache",
        Origin::Snapshot => "snapshot",
        Origin::File => "file",
    }
}

/// Lists the agents; notes go to `err`.
///
/// # Errors
/// A cache or registry that cannot be read.
pub fn run(
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    let session = Session::open(&options.client)?;
    let mut agents: BTreeMap<String, Agent> = BTreeMap::new();
    let mut info = None;
    if !options.installed {
        let registry = session.registry(err)?;
        info = Some(RegistryInfo {
            source: options.client.registry.clone(),
            origin: origin_name(&registry.origin),
            age_seconds: registry.age.map(|a| a.as_secs()),
        });
        for entry in &registry.document.agents {
            agents.insert(
                entry.id.clone(),
                Agent {
                    id: entry.id.clone(),
                    name: Some(entry.name.clone()),
                    description: Some(entry.description.clone()),
                    version: Some(entry.version.clone()),
                    kinds: entry
                        .distribution
                        .kinds()
                        .iter()
                        .map(ToString::to_string)
                        .collect(),
                    installed: Vec::new(),
                },
            );
        }
    }
    let mut installs = session.store.installed()?;
    installs.sort_by(|a, b| {
        a.id.cmp(&b.id)
            .then_with(|| version_order(&a.version, &b.version))
            .then_with(|| a.platform.cmp(&b.platform))
            .then_with(|| a.kind.cmp(&b.kind))
    });
    for installed in &installs {
        if options.available && !agents.contains_key(&installed.id) {
            continue;
        }
        agents
            .entry(installed.id.clone())
            .or_insert_with(|| Agent {
                id: installed.id.clone(),
                ..Agent::default()
            })
            .installed
            .push(installed.into());
    }
    let list = List {
        version: 1,
        registry: info,
        agents: agents.into_values().collect(),
    };
    match options.format {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &list)?;
            writeln!(out)?;
        }
        OutputFormat::Human => human(&list, out)?,
    }
    Ok(exit::OK)
}

fn human(list: &List, out: &mut dyn Write) -> std::io::Result<()> {
    if list.agents.is_empty() {
        writeln!(out, "no agents")?;
    }
    for agent in &list.agents {
        let mut line = t(&agent.id);
        if let Some(version) = &agent.version {
            line.push_str(&format!(" {}", t(version)));
        }
        if !agent.installed.is_empty() {
            let versions: Vec<String> = agent
                .installed
                .iter()
                .map(|i| format!("{} ({}, {})", t(&i.version), i.kind, t(&i.platform)))
                .collect();
            line.push_str(&format!(" [installed: {}]", versions.join(", ")));
        }
        if let Some(name) = agent.name.as_ref().filter(|n| **n != agent.id) {
            line.push_str(&format!(" - {}", t(name)));
        }
        if let Some(description) = agent.description.as_ref().filter(|d| !d.is_empty()) {
            line.push_str(&format!(": {}", t(description)));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}
