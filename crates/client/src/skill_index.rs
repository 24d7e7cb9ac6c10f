//! The vocabulary of the indexes skill clients read (docs/format.md#skills-indexes): the
//! well-known skills discovery index in its two versions and Claude Code plugin marketplaces.
//! One place for their paths, names and shapes, so the files `build` writes, the checks of
//! other people's indexes and the installer that reads them agree.
//!
//! - Version 0.2.0, at [`V2_DIR`]`/index.json`: [`IndexV2`], `$schema` [`DISCOVERY_SCHEMA_V2`],
//!   each skill one artifact (`type` [`ArtifactType`]) at a `url` relative to the index, with
//!   the `digest` of its bytes (`sha256:` and 64 lowercase hex digits).
//! - Version 0.1.0, at [`V1_DIR`]`/index.json`: [`IndexV1`], no `$schema`, each skill's
//!   `files` served at `<V1_DIR>/<name>/<path>`.
//! - A marketplace, `.claude-plugin/marketplace.json` ([`Marketplace`]), and a plugin's
//!   optional `.claude-plugin/plugin.json` ([`PluginManifest`]), its skills under
//!   `skills/<name>/` and in the folders its entry's `skills` lists ([`PluginEntry::skills`]).
//!
//! The predicates are what the clients enforce (the `skills` CLI 1.7.4 skips or refuses an
//! entry that fails them), so a registry never publishes, and a check never passes, what a
//! client would drop.

use serde::{Deserialize, Serialize};

/// The `$schema` of a version 0.2.0 index; an index without `$schema` is version 0.1.0.
pub const DISCOVERY_SCHEMA_V2: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// Where a site serves its version 0.2.0 index, relative to the site root.
pub const V2_DIR: &str = ".well-known/agent-skills";
/// Where a site serves its version 0.1.0 index and every listed file.
pub const V1_DIR: &str = ".well-known/skills";
/// The index's file name in either folder.
pub const INDEX_FILE: &str = "index.json";
/// Where a marketplace (or a plugin) keeps its manifest, relative to its root.
pub const PLUGIN_DIR: &str = ".claude-plugin";
/// A marketplace's manifest in [`PLUGIN_DIR`].
pub const MARKETPLACE_FILE: &str = "marketplace.json";
/// A plugin's manifest in [`PLUGIN_DIR`].
pub const PLUGIN_FILE: &str = "plugin.json";
/// The prefix of a 0.2.0 digest.
pub const DIGEST_PREFIX: &str = "sha256:";
/// A description's length limit in characters (both index versions, and SKILL.md).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// A skill name's length limit in characters.
pub const MAX_NAME_CHARS: usize = acp_registry_core::skill_install::MAX_NAME_CHARS;

/// A skill name by the Agent Skills rule: 1-64 characters of `^[a-z0-9]+(-[a-z0-9]+)*$`
/// (lowercase letters, digits, single hyphens inside). The core's rule, which the installer
/// applies too: one definition.
#[must_use]
pub fn is_skill_name(name: &str) -> bool {
    acp_registry_core::skill_install::is_skill_name(name)
}

/// A path as a 0.1.0 `files` entry (and an archive member) may name it: relative, forward
/// slashes, printable ASCII, no empty or `.` segment, no `..` anywhere (the `skills` CLI
/// drops any path holding it), no backslash or drive letter. The core's rule for an
/// installed skill's files: one definition.
#[must_use]
pub fn is_safe_listed_path(path: &str) -> bool {
    acp_registry_core::skill_install::is_safe_file_path(path)
}

/// The 64 lowercase hex digits of a 0.2.0 `digest` (`sha256:<hex>`), or `None` when it is
/// not exactly that shape (the clients compare it with their own lowercase hash as text).
#[must_use]
pub fn digest_hex(digest: &str) -> Option<&str> {
    let hex = digest.strip_prefix(DIGEST_PREFIX)?;
    (hex.len() == 64
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    .then_some(hex)
}

/// A version 0.2.0 index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexV2 {
    /// Always [`DISCOVERY_SCHEMA_V2`].
    #[serde(rename = "$schema")]
    pub schema: String,
    /// The skills, one artifact each.
    pub skills: Vec<EntryV2>,
}

/// One skill of a version 0.2.0 index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryV2 {
    /// The skill's name ([`is_skill_name`]): the folder a client installs it as.
    pub name: String,
    /// 1-1024 characters.
    pub description: String,
    /// What `url` serves.
    #[serde(rename = "type")]
    pub kind: ArtifactType,
    /// The artifact, relative to the index (or absolute).
    pub url: String,
    /// `sha256:<64 lowercase hex>` of the bytes `url` serves.
    pub digest: String,
}

/// What a 0.2.0 entry's `url` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArtifactType {
    /// The skill's `SKILL.md`, for a skill that is that one file.
    SkillMd,
    /// A `.tar.gz` or `.zip` of the skill folder's contents, `SKILL.md` at its root.
    Archive,
}

/// A version 0.1.0 index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexV1 {
    /// The skills, with their files.
    pub skills: Vec<EntryV1>,
}

/// One skill of a version 0.1.0 index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryV1 {
    /// The skill's name ([`is_skill_name`]).
    pub name: String,
    /// 1-1024 characters.
    pub description: String,
    /// Every file of the skill ([`is_safe_listed_path`]), `SKILL.md` among them, each served
    /// at `<V1_DIR>/<name>/<path>`.
    pub files: Vec<String>,
}

/// A Claude Code plugin marketplace (`.claude-plugin/marketplace.json`), the keys this
/// project writes and reads; others are kept by readers that need them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marketplace {
    /// The marketplace's name: what users type after `@` in `/plugin install`.
    pub name: String,
    /// Who maintains it.
    pub owner: Owner,
    /// Optional marketplace-level metadata (`description`, `version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<MarketplaceMetadata>,
    /// The plugins.
    pub plugins: Vec<PluginEntry>,
}

/// A marketplace's or a plugin's owner or author.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// A name.
    pub name: String,
    /// An e-mail address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// A web page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A marketplace's `metadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarketplaceMetadata {
    /// What the marketplace offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The marketplace's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// One plugin of a marketplace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginEntry {
    /// The plugin's name (kebab-case).
    pub name: String,
    /// Where the plugin is: a relative path (`./plugins/x`) or an object
    /// (`{"source": "github", "repo": …}`, `url`, `git-subdir`, `npm`).
    pub source: serde_json::Value,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its author.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Owner>,
    /// Its home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// Its licence (SPDX).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// `false`: this entry describes the plugin, which needs no `plugin.json` of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Skill folders of the plugin beside its `skills/`, each relative to `source`
    /// (`./` + a path; `./` alone is the plugin folder itself): a folder holding `SKILL.md`
    /// is one skill, any other folder holds skill folders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
}

/// A plugin's `.claude-plugin/plugin.json`, the keys this project writes and reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginManifest {
    /// The plugin's name (kebab-case), equal to its marketplace entry's.
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its author.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Owner>,
    /// Its home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// Its repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Its licence (SPDX).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_names_follow_the_agent_skills_rule() {
        for ok in ["a", "pdf", "web-design-2", &"a".repeat(64)] {
            assert!(is_skill_name(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "é", &"a".repeat(65)] {
            assert!(!is_skill_name(bad), "{bad}");
        }
    }

    #[test]
    fn listed_paths_are_relative_and_never_climb() {
        for ok in ["SKILL.md", "scripts/run.py", "a b/c.md", ".hidden/x"] {
            assert!(is_safe_listed_path(ok), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "..a/b",
            "a/../b",
            "a//b",
            "a/./b",
            "a\\b",
            "C:x",
            "a\0b",
            "a/",
            "é.md",
            "a\nb",
        ] {
            assert!(!is_safe_listed_path(bad), "{bad:?}");
        }
    }

    #[test]
    fn digests_are_sha256_and_64_lowercase_hex() {
        let hex = "0".repeat(63) + "a";
        assert_eq!(digest_hex(&format!("sha256:{hex}")), Some(hex.as_str()));
        assert_eq!(digest_hex(&format!("sha256:{}", hex.to_uppercase())), None);
        assert_eq!(digest_hex(&format!("sha512:{hex}")), None);
        assert_eq!(digest_hex(&format!("sha256:{hex}0")), None);
    }

    #[test]
    fn a_v2_entry_round_trips_with_its_wire_names() {
        let text = r#"{"$schema":"https://schemas.agentskills.io/discovery/0.2.0/schema.json","skills":[{"name":"a","description":"d","type":"skill-md","url":"a/SKILL.md","digest":"sha256:00"}]}"#;
        let index: IndexV2 = serde_json::from_str(text).unwrap();
        assert_eq!(index.skills[0].kind, ArtifactType::SkillMd);
        assert_eq!(serde_json::to_string(&index).unwrap(), text);
    }
}
