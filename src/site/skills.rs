//! The skills section's view models (docs/format.md#skills-on-the-site): a card per skill for
//! `skills/index.html` (and `skills/page/<n>/index.html`), a page per skill for
//! `skills/<name>/index.html`, and the install commands, derived only from what the build
//! published ([`SkillInstall`]) and where the site is served ([`SiteOptions::site_url`]).
//!
//! Like every other value of the site, each string here is plain text that the templates
//! escape; the SKILL.md body goes through the README renderer ([`markdown`]).
//!
//! [`SiteOptions::site_url`]: super::SiteOptions::site_url

use std::collections::{BTreeMap, BTreeSet};

use acp_registry_client::skill_index::is_skill_name;
use serde::Serialize;

use super::error::SiteError;
use super::input::{SiteSkill, SkillInstall};
use super::markdown;
use super::snippets::shell_quote;
use super::urls::safe_url;

/// What the commands say in place of the site's address when the build was not told it.
pub(crate) const SITE_URL_PLACEHOLDER: &str = "<site URL>";

/// One skill on the listing.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SkillCard {
    pub(crate) name: String,
    pub(crate) description: String,
    /// Path of the skill's page from the site root.
    pub(crate) href: String,
    /// The agent it ships with, `None` for a stand-alone skill.
    pub(crate) agent: Option<AgentRef>,
}

/// The agent a skill ships with, as the skills section links it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AgentRef {
    pub(crate) id: String,
    pub(crate) name: String,
    /// Path of the agent's page from the site root, when the site has that agent.
    pub(crate) href: Option<String>,
}

/// A skill an agent page links to.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SkillLink {
    pub(crate) name: String,
    pub(crate) description: String,
    /// Path of the skill's page from the site root.
    pub(crate) href: String,
}

/// One file of the skill, as the page lists it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FileView {
    pub(crate) path: String,
    /// The size as people read it (`512 bytes`, `1.5 KiB`).
    pub(crate) size: String,
    /// The exact size in bytes.
    pub(crate) bytes: u64,
    pub(crate) executable: bool,
}

/// A client that can install the skill, with the commands to type, in order.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct InstallTarget {
    /// Used in element ids.
    pub(crate) key: &'static str,
    pub(crate) title: &'static str,
    pub(crate) hint: &'static str,
    pub(crate) commands: Vec<String>,
}

/// Everything a skill's page shows.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SkillPage {
    pub(crate) card: SkillCard,
    pub(crate) license: Option<String>,
    pub(crate) compatibility: Option<String>,
    pub(crate) files: Vec<FileView>,
    /// The sum of the files' sizes, as people read it.
    pub(crate) total_size: String,
    /// Sanitised HTML of the SKILL.md body (the only value rendered unescaped).
    pub(crate) body: Option<String>,
    pub(crate) install: Vec<InstallTarget>,
    /// Whether the commands name [`SITE_URL_PLACEHOLDER`] (the build was given no site URL).
    pub(crate) placeholder: bool,
    pub(crate) placeholder_text: &'static str,
}

/// The skills in listing order (by name; names are unique) with each one's index in `skills`,
/// and for each agent id the skills that ship with it. Every name must pass the skill name
/// rule, since it becomes a path; an agent is linked only when the site has its page.
pub(crate) fn cards(
    skills: &[SiteSkill],
    agent_ids: &BTreeSet<&str>,
) -> Result<(Vec<SkillCard>, Vec<usize>, AgentSkills), SiteError> {
    let mut seen = BTreeSet::new();
    for skill in skills {
        if !is_skill_name(&skill.name) {
            return Err(SiteError::InvalidSkillName(skill.name.clone()));
        }
        if !seen.insert(skill.name.as_str()) {
            return Err(SiteError::DuplicateSkill(skill.name.clone()));
        }
    }
    let mut order: Vec<usize> = (0..skills.len()).collect();
    order.sort_by(|a, b| skills[*a].name.cmp(&skills[*b].name));
    let mut by_agent: AgentSkills = BTreeMap::new();
    let cards = order
        .iter()
        .map(|index| {
            let skill = &skills[*index];
            let card = card(skill, agent_ids);
            if let Some(AgentRef {
                id, href: Some(_), ..
            }) = &card.agent
            {
                by_agent.entry(id.clone()).or_default().push(SkillLink {
                    name: card.name.clone(),
                    description: card.description.clone(),
                    href: card.href.clone(),
                });
            }
            card
        })
        .collect();
    Ok((cards, order, by_agent))
}

/// For each agent id (of the site), the skills it ships, by name.
pub(crate) type AgentSkills = BTreeMap<String, Vec<SkillLink>>;

fn card(skill: &SiteSkill, agent_ids: &BTreeSet<&str>) -> SkillCard {
    SkillCard {
        name: skill.name.clone(),
        description: skill.description.clone(),
        href: skill_path(&skill.name),
        agent: skill.agent.as_ref().map(|agent| AgentRef {
            id: agent.id.clone(),
            name: if agent.name.trim().is_empty() {
                agent.id.clone()
            } else {
                agent.name.clone()
            },
            href: agent_ids
                .contains(agent.id.as_str())
                .then(|| format!("agents/{}/index.html", agent.id)),
        }),
    }
}

/// The page of a skill: `skills/<name>/index.html`.
pub(crate) fn skill_path(name: &str) -> String {
    format!("skills/{name}/index.html")
}

/// Listing page `page` of the skills: page 1 is `skills/index.html`, then
/// `skills/page/<n>/index.html` (no skill's page can be there: a name has no `/`).
pub(crate) fn listing_path(page: usize) -> String {
    if page == 1 {
        "skills/index.html".to_string()
    } else {
        format!("skills/page/{page}/index.html")
    }
}

/// From a skills listing page to the site root.
pub(crate) fn listing_root(page: usize) -> &'static str {
    if page == 1 {
        "../"
    } else {
        "../../../"
    }
}

/// Everything the page of `skill` shows; `site_url` is [`SiteOptions::site_url`] as given.
///
/// [`SiteOptions::site_url`]: super::SiteOptions::site_url
pub(crate) fn page(skill: &SiteSkill, card: &SkillCard, site_url: Option<&str>) -> SkillPage {
    let files = skill
        .files
        .iter()
        .map(|file| FileView {
            path: file.path.clone(),
            size: human_size(file.size),
            bytes: file.size,
            executable: file.executable,
        })
        .collect();
    let total: u64 = skill
        .files
        .iter()
        .fold(0, |sum, file| sum.saturating_add(file.size));
    let site = site_address(site_url);
    let install = install(&skill.name, &skill.install, site.as_deref());
    let placeholder = site.is_none() && skill.install.well_known;
    SkillPage {
        card: card.clone(),
        license: non_blank(skill.license.as_deref()),
        compatibility: non_blank(skill.compatibility.as_deref()),
        files,
        total_size: human_size(total),
        body: (!skill.body.trim().is_empty()).then(|| markdown::render(&skill.body)),
        install,
        placeholder,
        placeholder_text: SITE_URL_PLACEHOLDER,
    }
}

fn non_blank(text: Option<&str>) -> Option<String> {
    text.filter(|t| !t.trim().is_empty()).map(str::to_string)
}

/// The site's address as the commands name it: an absolute http(s) URL without credentials,
/// re-serialised, without a trailing `/`; anything else is as good as none.
fn site_address(site_url: Option<&str>) -> Option<String> {
    let url = safe_url(site_url?)?;
    Some(url.trim_end_matches('/').to_string())
}

/// The clients that can install the skill, from what the build published only.
fn install(name: &str, install: &SkillInstall, site: Option<&str>) -> Vec<InstallTarget> {
    let mut targets = Vec::new();
    if install.well_known {
        let site = site.map_or_else(|| SITE_URL_PLACEHOLDER.to_string(), shell_quote);
        targets.push(InstallTarget {
            key: "skills-cli",
            title: "skills CLI (npx)",
            hint: "Reads this site's well-known skills index and asks which agents to install \
                   the skill for.",
            commands: vec![format!("npx skills add {site} --skill {name}")],
        });
        targets.push(InstallTarget {
            key: "acp-registry",
            title: "acp-registry",
            hint: "The registry's own client: checks every file against the index before \
                   writing it.",
            commands: vec![format!("acp-registry skill install {site} {name}")],
        });
    }
    if let Some((marketplace, plugin)) = &install.marketplace {
        targets.push(InstallTarget {
            key: "claude-code",
            title: "Claude Code",
            hint: "Add the marketplace from a copy of this site's folder or from a git \
                   repository that holds it (not from its web address: its plugins are \
                   relative folders), then install the plugin.",
            commands: vec![
                "/plugin marketplace add <folder or repository of this site>".to_string(),
                format!("/plugin install {plugin}@{marketplace}"),
            ],
        });
    }
    targets
}

/// A size as people read it: bytes below 1 KiB, else KiB or MiB with one decimal.
fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    let tenths = |unit: u64| {
        let scaled = u128::from(bytes) * 10 / u128::from(unit);
        format!("{}.{}", scaled / 10, scaled % 10)
    };
    match bytes {
        1 => "1 byte".to_string(),
        b if b < KIB => format!("{b} bytes"),
        b if b < MIB => format!("{} KiB", tenths(KIB)),
        _ => format!("{} MiB", tenths(MIB)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_the_unit_people_expect() {
        assert_eq!(human_size(0), "0 bytes");
        assert_eq!(human_size(1), "1 byte");
        assert_eq!(human_size(1023), "1023 bytes");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(5 * 1024 * 1024 + 1), "5.0 MiB");
        assert_eq!(human_size(u64::MAX), "17592186044415.9 MiB");
    }

    #[test]
    fn the_site_address_is_kept_only_when_safe() {
        assert_eq!(
            site_address(Some("https://example.org/skills/")).as_deref(),
            Some("https://example.org/skills")
        );
        assert_eq!(
            site_address(Some("https://example.org")).as_deref(),
            Some("https://example.org")
        );
        for bad in [
            "javascript:alert(1)",
            "https://u:p@example.org",
            "/relative",
            "",
        ] {
            assert_eq!(site_address(Some(bad)), None, "{bad}");
        }
    }
}
