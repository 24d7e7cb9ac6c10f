//! The Claude Code marketplace of the published skills: `.claude-plugin/marketplace.json`
//! with a relative `./plugins/<plugin>` source per plugin, and each plugin's
//! `.claude-plugin/plugin.json` and `skills/<name>/…` (a plugin per skill, or one holding
//! every skill, by `skills.marketplace.grouping`).
//!
//! A plugin's version: the agent's for an agent's skill, else the skill's `metadata.version`,
//! else `0.0.0-g<12 hex>` from the sha256 of its files (paths and bytes), so a changed skill
//! is a new version to Claude Code's plugin cache and the same skill always the same one.

use std::borrow::Cow;

use super::shared::{json, OutputFile, Published};
use crate::registry::config::{Grouping, MarketplaceConfig, SkillsConfig};
use crate::rules::CheckedSkill;
use acp_registry_client::skill_index::{
    Marketplace, MarketplaceMetadata, Owner, PluginEntry, PluginManifest, MARKETPLACE_FILE,
    PLUGIN_DIR, PLUGIN_FILE,
};
use acp_registry_core::fs::digest::sha256_hex;

/// The folder of the plugins, beside `.claude-plugin/`.
const PLUGINS: &str = "plugins";

/// The plugin holding the skill `name`.
pub(super) fn plugin_of(grouping: &Grouping, name: &str) -> String {
    match grouping {
        Grouping::PerSkill => name.to_owned(),
        Grouping::Plugin(plugin) => plugin.clone(),
    }
}

/// The marketplace, its plugins' manifests and their skills' files.
pub(super) fn marketplace<'a>(
    skills: &[Published<'a>],
    config: &MarketplaceConfig,
    all: &SkillsConfig,
) -> Vec<OutputFile<'a>> {
    let owner = Owner {
        name: config.owner_name.clone(),
        email: config.owner_email.clone(),
        url: None,
    };
    let mut files = Vec::new();
    let mut groups: Vec<(String, Vec<&Published<'a>>)> = Vec::new();
    for p in skills {
        let plugin = plugin_of(&config.grouping, &p.skill.name);
        match groups.last_mut() {
            Some((name, members)) if *name == plugin => members.push(p),
            _ => groups.push((plugin, vec![p])),
        }
        for file in &p.skill.files {
            let path = format!(
                "{PLUGINS}/{}/skills/{}/{}",
                plugin_of(&config.grouping, &p.skill.name),
                p.skill.name,
                file.path
            );
            files.push((path, Cow::Borrowed(file.bytes.as_slice())));
        }
    }
    let mut entries = Vec::new();
    for (plugin, members) in groups {
        let manifest = plugin_manifest(&plugin, &members, config, all, &owner);
        entries.push(PluginEntry {
            name: plugin.clone(),
            source: serde_json::Value::String(format!("./{PLUGINS}/{plugin}")),
            description: manifest.description.clone(),
            version: manifest.version.clone(),
            license: manifest.license.clone(),
        });
        let path = format!("{PLUGINS}/{plugin}/{PLUGIN_DIR}/{PLUGIN_FILE}");
        files.push((path, Cow::Owned(json(&manifest))));
    }
    let marketplace = Marketplace {
        name: config.name.clone(),
        owner,
        metadata: Some(MarketplaceMetadata {
            description: Some(config.description.clone()),
            version: None,
        }),
        plugins: entries,
    };
    files.push((
        format!("{PLUGIN_DIR}/{MARKETPLACE_FILE}"),
        Cow::Owned(json(&marketplace)),
    ));
    files
}

/// `plugin.json` of `plugin`, holding `members` (one skill unless grouped).
fn plugin_manifest(
    plugin: &str,
    members: &[&Published<'_>],
    config: &MarketplaceConfig,
    all: &SkillsConfig,
    owner: &Owner,
) -> PluginManifest {
    let (description, version, license, homepage) = if let [one] = members {
        let skill = one.skill;
        let version = match &one.agent {
            Some(agent) if !agent.version.is_empty() => agent.version.clone(),
            _ => skill
                .version
                .clone()
                .unwrap_or_else(|| content_version(&[skill])),
        };
        let homepage = all
            .site_url
            .as_ref()
            .map(|url| format!("{url}/skills/{}/", skill.name));
        let license = skill.license.clone();
        (skill.description.clone(), version, license, homepage)
    } else {
        let skills: Vec<&CheckedSkill> = members.iter().map(|p| p.skill).collect();
        (
            config.description.clone(),
            content_version(&skills),
            None,
            all.site_url.as_ref().map(|url| format!("{url}/skills/")),
        )
    };
    PluginManifest {
        name: plugin.to_owned(),
        description: Some(description),
        version: Some(version),
        author: Some(owner.clone()),
        homepage,
        repository: None,
        license,
    }
}

/// `0.0.0-g<12 hex>`: the sha256 of every file's path and bytes, skill by skill.
fn content_version(skills: &[&CheckedSkill]) -> String {
    let mut listing = String::new();
    for skill in skills {
        for file in &skill.files {
            listing.push_str(&format!(
                "{}  {}/{}\n",
                sha256_hex(&file.bytes),
                skill.name,
                file.path
            ));
        }
    }
    format!("0.0.0-g{}", &sha256_hex(listing.as_bytes())[..12])
}
