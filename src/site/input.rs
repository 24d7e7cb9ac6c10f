//! What the site is made from: the agents as the build hands them over ([`SiteAgent`],
//! [`Verification`]), where they come from ([`AgentSource`]) and the site-wide settings
//! ([`SiteOptions`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;

use super::error::SiteError;

/// One agent to show, as the build hands it over.
#[derive(Debug, Clone, Default)]
pub struct SiteAgent {
    /// The entry id (valid by [`crate::manifest::names::is_valid_id`]); used in paths and CSS
    /// class names.
    pub id: String,
    /// The agent exactly as published in registry.json (canonical keys: id, name, version,
    /// description, repository, website, homepage, authors, license, `license_url`, icon
    /// (absolute URL), icons {light,dark} (URLs, optional), capabilities, auth
    /// [{type,id,name,description,args,env,vars}], tags, `protocol_version`, distribution
    /// {binary {<platform>: {archive, cmd, args, env, sha256}}, npx {package, args, env}, uvx
    /// {package, args, env}}; unknown keys possible). Treat every string as hostile.
    pub agent: serde_json::Map<String, serde_json::Value>,
    /// The preview-channel variant when it differs from `agent` (newer version/distribution),
    /// else None.
    pub preview: Option<serde_json::Map<String, serde_json::Value>>,
    /// README.md text, when the entry has one (hostile Markdown).
    pub readme: Option<String>,
    /// Icon files by name: "icon.svg", and optionally "icon-light.svg" + "icon-dark.svg".
    pub icons: BTreeMap<String, Vec<u8>>,
    /// Quarantine reason, when the id is quarantined (show a notice).
    pub quarantine: Option<String>,
    /// What `acp-registry matrix` found when it launched the agent (`build --matrix`).
    pub verification: Option<Verification>,
    /// The entry's retirement (`deprecations.json`), shown as a notice with its successor.
    pub retirement: Option<SiteRetirement>,
    /// Whether each known client can install the agent (`lifecycle.json`'s compatibility),
    /// sorted by client id.
    pub clients: Vec<SiteClient>,
}

/// A retired entry's notice. Every string is hostile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SiteRetirement {
    /// `deprecated` (a disabled entry is not on the site).
    pub status: String,
    /// Why.
    pub reason: String,
    /// The date of the decision, `YYYY-MM-DD`.
    pub since: String,
    /// The successor's id, when one is named.
    pub replacement: Option<String>,
    /// Whether the successor has a page on this site (a link), else only its id is shown.
    pub replacement_on_site: bool,
}

/// One known client's verdict on an agent. Every string is hostile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SiteClient {
    /// The client's id (a filter value).
    pub id: String,
    /// Its name, e.g. `Zed`.
    pub name: String,
    /// `yes`, `partly` or `no`.
    pub installs: String,
    /// What the client cannot do with the agent.
    pub why: Vec<String>,
}

/// One Agent Skill to show (docs/format.md#skills-on-the-site), as the build hands it over:
/// a stand-alone skill of the registry or the skill an agent ships. Every string is hostile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteSkill {
    /// The skill's name (valid by `acp_registry_client::skill_index::is_skill_name`, unique in
    /// the registry); used in paths.
    pub name: String,
    /// The front matter's `description`.
    pub description: String,
    /// The front matter's `license`, when given.
    pub license: Option<String>,
    /// The front matter's `compatibility`, when given.
    pub compatibility: Option<String>,
    /// The agent the skill ships with (`<id>/skill/<name>/`), `None` for a stand-alone skill.
    pub agent: Option<SkillAgent>,
    /// Every file of the skill, sorted by path (relative to the skill folder, `/`-separated).
    pub files: Vec<SkillFile>,
    /// The SKILL.md body after the front matter (hostile Markdown).
    pub body: String,
    /// How clients can install it, as the build published it.
    pub install: SkillInstall,
}

/// The agent a skill ships with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillAgent {
    /// The entry id (valid by `manifest::names::is_valid_id`): its page is `agents/<id>/`.
    pub id: String,
    /// The agent's `name`.
    pub name: String,
}

/// One file of a skill.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillFile {
    /// Relative to the skill folder, `/`-separated.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// Whether it is installed executable (`scripts/…`).
    pub executable: bool,
}

/// Which of the build's skill outputs list a skill, and under what names: the site derives
/// every install command from these and [`SiteOptions::site_url`], never on its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillInstall {
    /// The well-known index (either version) lists it: `npx skills add <site_url> --skill
    /// <name>` and `acp-registry skill install <site_url> <name>` work.
    pub well_known: bool,
    /// The marketplace's name and the plugin holding the skill, when the marketplace lists it:
    /// `/plugin install <plugin>@<marketplace>`.
    pub marketplace: Option<(String, String)>,
}

/// What `build --matrix` found about one agent (the distribution that says most), as the
/// site shows it: the same assessment as `verification.json` (hostile strings: they come
/// from the agent's answer).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// `verified` (launched as published, passed, within the age limit), `failed` (launched
    /// as published, with problems), `expired` (launched as published, longer ago than the
    /// limit) or `stale` (what was launched is no longer what is published).
    pub state: String,
    /// The distribution launched: `binary`, `npx` or `uvx`.
    pub distribution: String,
    /// The version launched.
    pub version: String,
    /// When it was launched (`YYYY-MM-DDTHH:MM:SSZ`).
    pub verified: String,
    /// When the evidence expires (`YYYY-MM-DDTHH:MM:SSZ`).
    pub expires: String,
    /// The age limit, in days.
    pub max_age_days: u32,
    /// What changed since the launch (`version`, `distribution`), for `stale`.
    pub changed: Vec<String>,
    /// Whether the launch passed every check.
    pub passed: bool,
    /// The ACP version the agent answered with.
    pub protocol_version: Option<u64>,
    /// Sign-in methods the agent offered: name and type.
    pub sign_in: Vec<(String, String)>,
    /// Session methods that answered with success.
    pub session_methods: Vec<String>,
    /// Unstable methods the agent advertised.
    pub unstable_methods: Vec<String>,
}

/// Site-wide settings.
#[derive(Debug, Clone)]
pub struct SiteOptions {
    /// Page title, e.g. "ACP Agent Registry".
    pub title: String,
    /// Link to the published registry.json: an absolute http(s) URL (`build` uses
    /// `<base_url>/registry.json`), since registry.json is outside the site folder, which is
    /// all GitHub Pages serves. Anything else, or None: no link.
    pub registry_json_url: Option<String>,
    /// Link to the published lifecycle.json, under the same rule.
    pub lifecycle_json_url: Option<String>,
    /// Where the site itself is served (an absolute http(s) URL, no trailing slash), for the
    /// skills' install commands (`npx skills add <site_url>`); `None`: the commands name
    /// `<site URL>` for the reader to fill in.
    pub site_url: Option<String>,
    /// The registry's description: the index's lead paragraph and every page's meta
    /// description (`None`: the lead of the public registry, and no meta description).
    pub description: Option<String>,
    /// A link to the organisation running the registry (kept under [`SiteOptions::registry_json_url`]'s
    /// rule), in the navigation, named by its host.
    pub home_url: Option<String>,
    /// The registry's logo, an SVG: re-serialised like the agents' icons (dropped when that
    /// fails) and shown before the title, painted with the text colour.
    pub logo_svg: Option<Vec<u8>>,
    /// One line of plain text for every page's footer; `https://` words in it become links
    /// (`None`: the public registry's footer).
    pub footer: Option<String>,
}

impl Default for SiteOptions {
    fn default() -> Self {
        SiteOptions {
            title: "ACP Agent Registry".to_string(),
            registry_json_url: None,
            lifecycle_json_url: None,
            site_url: None,
            description: None,
            home_url: None,
            logo_svg: None,
            footer: None,
        }
    }
}

/// Where a site's agents come from. The site reads each agent twice (its card, then its
/// page), so a source may build them one at a time instead of holding them all.
pub(crate) trait AgentSource: Sync {
    /// What building an agent can fail with.
    type Error: From<SiteError> + Send;
    /// How many agents there are.
    fn count(&self) -> usize;
    /// The agent at `index` (below [`AgentSource::count`]); the same value every time.
    fn agent(&self, index: usize) -> Result<Cow<'_, SiteAgent>, Self::Error>;
}

impl AgentSource for [SiteAgent] {
    type Error = SiteError;

    fn count(&self) -> usize {
        self.len()
    }

    fn agent(&self, index: usize) -> Result<Cow<'_, SiteAgent>, SiteError> {
        Ok(Cow::Borrowed(&self[index]))
    }
}
