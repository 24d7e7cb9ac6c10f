//! The Claude Code marketplace of the published skills: `.claude-plugin/marketplace.json`,
//! a plugin per skill (or one holding every skill, by `skills.marketplace.grouping`) whose
//! files are the skill folders the 0.1.0 index serves, `.well-known/skills/<name>/`: each
//! entry is `strict: false` (it describes the plugin, which has no `plugin.json`) and lists
//! its skill folders in `skills`, relative to its `source`. So a skill's files are published
//! once for both, and Claude Code copies exactly them into its plugin cache.
//!
//! A plugin's version: the agent's for an agent's skill, else the skill's `metadata.version`,
//! else `0.0.0-g<12 hex>` from the sha256 of its files (paths and bytes), so a changed skill
//! is a new version to Claude Code's plugin cache and the same skill always the same one.

use std::borrow::Cow;

use super::shared::{json, OutputFile, Published};
use crate::registry::config::{Grouping, MarketplaceConfig, SkillsConfig};
use crate::rules::CheckedSkill;
use acp_registry_client::skill_index::{
    Marketplace, MarketplaceMetadata, Owner, PluginEntry, MARKETPLACE_FILE, PLUGIN_DIR, V1_DIR,
};
use acp_registry_core::fs::digest::sha256_hex;

/// The plugin holding the skill `name`.
pub(super) fn plugin_of(grouping: &Grouping, name: &str) -> String {
    match grouping {
        Grouping::PerSkill => name.to_owned(),
        Grouping::Plugin(plugin) => plugin.clone(),
    }
}

/// The marketplace file; the skills' files are the 0.1.0 folders, written with the index.
pub(super) fn marketplace<'a>(
    skills: &[Published<'a>],
    config: &MarketplaceConfig,
    all: &SkillsConfig,
) -> OutputFile<'a> {
    let owner = Owner {
        name: config.owner_name.clone(),
        email: config.owner_email.clone(),
        url: None,
    };
    let mut groups: Vec<(String, Vec<&Published<'a>>)> = Vec::new();
    for p in skills {
        let plugin = plugin_of(&config.grouping, &p.skill.name);
        match groups.last_mut() {
            Some((name, members)) if *name == plugin => members.push(p),
            _ => groups.push((plugin, vec![p])),
        }
    }
    let plugins = groups
        .into_iter()
        .map(|(plugin, members)| entry(plugin, &members, config, all, &owner))
        .collect();
    let marketplace = Marketplace {
        name: config.name.clone(),
        owner,
        metadata: Some(MarketplaceMetadata {
            description: Some(config.description.clone()),
            version: None,
        }),
        plugins,
    };
    (
        format!("{PLUGIN_DIR}/{MARKETPLACE_FILE}"),
        Cow::Owned(json(&marketplace)),
    )
}

/// The entry of `plugin`, holding `members` (one skill unless grouped): a skill's plugin is
/// its 0.1.0 folder; the group's, the 0.1.0 folder of them all, listing each.
fn entry(
    plugin: String,
    members: &[&Published<'_>],
    config: &MarketplaceConfig,
    all: &SkillsConfig,
    owner: &Owner,
) -> PluginEntry {
    let (source, skills, description, version, license, homepage) = if let [one] = members {
        let skill = one.skill;
        let version = match &one.agent {
            Some(agent) if !agent.version.is_empty() => agent.version.clone(),
            _ => skill
                .version
                .clone()
                .unwrap_or_else(|| content_version(&[skill])),
        };
        (
            format!("./{V1_DIR}/{}", skill.name),
            vec!["./".to_owned()],
            skill.description.clone(),
            version,
            skill.license.clone(),
            all.site_url
                .as_ref()
                .map(|url| format!("{url}/skills/{}/", skill.name)),
        )
    } else {
        let skills: Vec<&CheckedSkill> = members.iter().map(|p| p.skill).collect();
        (
            format!("./{V1_DIR}"),
            skills.iter().map(|s| format!("./{}", s.name)).collect(),
            config.description.clone(),
            content_version(&skills),
            None,
            all.site_url.as_ref().map(|url| format!("{url}/skills/")),
        )
    };
    PluginEntry {
        name: plugin,
        source: serde_json::Value::String(source),
        description: Some(description),
        version: Some(version),
        author: Some(owner.clone()),
        homepage,
        license,
        strict: Some(false),
        skills: Some(skills),
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
