//! The `skills` section of the configuration: what `build` publishes of the registry's skills
//! (docs/format.md#skills-indexes): the well-known index (both versions), the Claude Code
//! marketplace (its name, owner, description and how skills are grouped into plugins) and the
//! site's public URL for the install commands.
//!
//! ```jsonc
//! "skills": {
//!   "well_known": true,
//!   "marketplace": { "name": "acme-skills", "owner": { "name": "Acme", "email": "a@acme.dev" },
//!                    "description": "Acme's skills", "grouping": "per-skill" },
//!   "site_url": "https://acme.github.io/registry"
//! }
//! ```
//!
//! The defaults make a marketplace `claude plugin validate` accepts without a warning.

use acp_registry_client::skill_index::{is_skill_name, MAX_DESCRIPTION_CHARS};

use super::outputs::base_url_problem;
use crate::manifest::fields::{Fields, Keys};
use crate::manifest::Node;

/// The longest owner name or e-mail address the marketplace takes.
const MAX_OWNER_CHARS: usize = 200;

/// What `build` publishes of the registry's skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SkillsConfig {
    /// The well-known skills index, both versions (`.well-known/agent-skills/`,
    /// `.well-known/skills/`).
    pub(crate) well_known: bool,
    /// The Claude Code marketplace; `None`: not published (`"marketplace": false`).
    pub(crate) marketplace: Option<MarketplaceConfig>,
    /// The site's public URL (an https URL without a trailing `/`), for install commands.
    pub(crate) site_url: Option<String>,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        Self {
            well_known: true,
            marketplace: Some(MarketplaceConfig::default()),
            site_url: None,
        }
    }
}

/// The marketplace's own fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MarketplaceConfig {
    /// Its name (kebab-case): users install `<plugin>@<name>`.
    pub(crate) name: String,
    /// The owner's name, also every plugin's author.
    pub(crate) owner_name: String,
    /// The owner's e-mail address.
    pub(crate) owner_email: Option<String>,
    /// The marketplace's description.
    pub(crate) description: String,
    /// How skills are grouped into plugins.
    pub(crate) grouping: Grouping,
}

impl Default for MarketplaceConfig {
    fn default() -> Self {
        Self {
            name: "acp-registry-skills".into(),
            owner_name: "ACP Registry".into(),
            owner_email: None,
            description: "Agent Skills published by an ACP agent registry".into(),
            grouping: Grouping::PerSkill,
        }
    }
}

/// How the marketplace groups skills into plugins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Grouping {
    /// One plugin per skill, named as the skill.
    PerSkill,
    /// One plugin of this name holding every skill.
    Plugin(String),
}

/// `"skills": {…}`.
pub(super) fn read_skills(fields: &mut Fields, node: &Node, skills: &mut SkillsConfig) {
    let help = "write `{\"well_known\": true, \"marketplace\": {\"name\": \"my-skills\", \"owner\": {\"name\": \"Me\"}}, \"site_url\": \"https://…\"}`";
    let Some(members) = fields.object(node, "skills must be an object", help) else {
        return;
    };
    let mut keys = Keys::new(members);
    for m in keys.get("well_known") {
        let message = "skills.well_known must be true or false";
        if let Some(b) = fields.bool(&m.value, message, "write `true` or `false`") {
            skills.well_known = b;
        }
    }
    for m in keys.get("marketplace") {
        skills.marketplace = match &m.value.value {
            crate::manifest::NodeValue::Bool(false) => None,
            _ => read_marketplace(fields, &m.value),
        };
    }
    for m in keys.get("site_url") {
        let help =
            "use the https URL the site is served at, e.g. \"https://acme.github.io/registry\"";
        let Some(url) = fields.string(&m.value, "skills.site_url must be a string", help) else {
            continue;
        };
        match base_url_problem(url) {
            None => skills.site_url = Some(url.trim_end_matches('/').to_owned()),
            Some(problem) => {
                fields.problem(m.value.span, format!("skills.site_url {problem}"), help);
            }
        }
    }
    keys.finish(fields);
}

/// `"marketplace": {…}`: every field optional, the defaults' where absent.
fn read_marketplace(fields: &mut Fields, node: &Node) -> Option<MarketplaceConfig> {
    let help = "write `{\"name\": \"my-skills\", \"owner\": {\"name\": \"Me\"}}`, or `false` for no marketplace";
    let members = fields.object(node, "skills.marketplace must be an object or false", help)?;
    let mut config = MarketplaceConfig::default();
    let mut keys = Keys::new(members);
    for m in keys.get("name") {
        if let Some(name) = kebab(fields, &m.value, "skills.marketplace.name") {
            config.name = name;
        }
    }
    for m in keys.get("owner") {
        read_owner(fields, &m.value, &mut config);
    }
    for m in keys.get("description") {
        if let Some(text) = text(
            fields,
            &m.value,
            "skills.marketplace.description",
            MAX_DESCRIPTION_CHARS,
        ) {
            config.description = text;
        }
    }
    for m in keys.get("grouping") {
        if let Some(grouping) = read_grouping(fields, &m.value) {
            config.grouping = grouping;
        }
    }
    keys.finish(fields);
    Some(config)
}

fn read_owner(fields: &mut Fields, node: &Node, config: &mut MarketplaceConfig) {
    let help = "write `{\"name\": \"Acme\", \"email\": \"skills@acme.dev\"}`";
    let Some(members) = fields.object(node, "skills.marketplace.owner must be an object", help)
    else {
        return;
    };
    let mut keys = Keys::new(members);
    for m in keys.get("name") {
        if let Some(name) = text(
            fields,
            &m.value,
            "skills.marketplace.owner.name",
            MAX_OWNER_CHARS,
        ) {
            config.owner_name = name;
        }
    }
    for m in keys.get("email") {
        let Some(email) = text(
            fields,
            &m.value,
            "skills.marketplace.owner.email",
            MAX_OWNER_CHARS,
        ) else {
            continue;
        };
        let parts = email.split_once('@');
        if parts.is_some_and(|(user, host)| !user.is_empty() && host.contains('.'))
            && !email.chars().any(char::is_whitespace)
        {
            config.owner_email = Some(email);
        } else {
            fields.problem(
                m.value.span,
                "skills.marketplace.owner.email is not an e-mail address",
                "write an address such as \"skills@acme.dev\", or remove `email`",
            );
        }
    }
    keys.finish(fields);
}

/// `"per-skill"` or `{"plugin": "<name>"}`.
fn read_grouping(fields: &mut Fields, node: &Node) -> Option<Grouping> {
    let help = "write `\"per-skill\"` (a plugin per skill) or `{\"plugin\": \"my-skills\"}` (one plugin holding every skill)";
    if let Some(text) = node.as_str() {
        if text == "per-skill" {
            return Some(Grouping::PerSkill);
        }
        fields.problem(node.span, format!("unknown grouping `{text}`"), help);
        return None;
    }
    let members = fields.object(
        node,
        "skills.marketplace.grouping must be \"per-skill\" or an object",
        help,
    )?;
    let mut keys = Keys::new(members);
    let mut grouping = None;
    for m in keys.get("plugin") {
        grouping =
            kebab(fields, &m.value, "skills.marketplace.grouping.plugin").map(Grouping::Plugin);
    }
    let missing = grouping.is_none() && !members.iter().any(|m| m.key == "plugin");
    keys.finish(fields);
    if missing {
        fields.problem(
            node.span,
            "the grouping has no `plugin`",
            "add `\"plugin\": \"my-skills\"`",
        );
    }
    grouping
}

/// A kebab-case name (the skill name rule: what Claude Code takes for marketplace and plugin
/// names).
fn kebab(fields: &mut Fields, node: &Node, key: &str) -> Option<String> {
    let help = "use lowercase letters, digits and single hyphens, at most 64 characters (e.g. \"acme-skills\")";
    let name = fields.string(node, format!("{key} must be a string"), help)?;
    if is_skill_name(name) {
        return Some(name.to_owned());
    }
    fields.problem(
        node.span,
        format!("{key} `{name}` is not a kebab-case name"),
        help,
    );
    None
}

/// A non-empty one-line text of at most `max` characters.
fn text(fields: &mut Fields, node: &Node, key: &str, max: usize) -> Option<String> {
    let text = fields.string(
        node,
        format!("{key} must be a string"),
        "write it in quotes",
    )?;
    let problem = if text.trim().is_empty() {
        "is empty"
    } else if text.chars().count() > max {
        "is too long"
    } else if text.chars().any(char::is_control) {
        "holds a control character"
    } else {
        return Some(text.to_owned());
    };
    fields.problem(
        node.span,
        format!("{key} {problem}"),
        format!("write one line of at most {max} characters"),
    );
    None
}
