//! The static catalogue site (docs/format.md#site): plain data in, plain files out.
//!
//! [`Site::new`] reads the published agents (from an [`AgentSource`], one at a time) and
//! [`Site::render`] hands every file of the site to a sink as it is rendered, by path
//! relative to the site root; [`render`] collects them in memory. Nothing here touches the
//! file system, the clock or the network, so the same input always gives byte-identical
//! output; the caller (`build`, `site`) writes the files.
//!
//! Ground floor: imports only `std`, `serde_json`, `minijinja`, `pulldown-cmark`, `ammonia`,
//! `url`, `roxmltree`, `rayon`, the constants, id predicate and distribution model of
//! [`crate::manifest`] and the HTML escaper of [`crate::diagnostics::escape`]; the build
//! calls this module, never the reverse.
//!
//! Every string of an agent is treated as hostile:
//! - templates are rendered with HTML autoescaping, and the only value marked safe is the
//!   README after sanitising ([`markdown`]);
//! - URLs are kept only when they are absolute `http(s)` URLs without credentials, and
//!   re-serialised ([`safe_url`]);
//! - icons are re-serialised from an allow-list of SVG elements and attributes and inlined
//!   as base64 `data:` URIs in the icon stylesheets, shown as CSS masks painted with
//!   `currentColor` ([`icons`]);
//! - install snippets are built with `serde_json` and a POSIX shell quoter ([`snippets`]);
//! - every page carries a Content-Security-Policy without inline script, inline style or
//!   external origins; the JavaScript only ever sets `textContent`;
//! - every link that leaves the site folder is absolute, so the site works wherever it is
//!   copied: opened from disk (`file://`, which allows no fetch), on GitHub Pages (which
//!   serves only the site folder) or beside the registry files on a bucket.
//!
//! The Content-Security-Policy is [`CSP`], a meta tag on every page. Ids must pass
//! `manifest::names::is_valid_id` ([`SiteError::InvalidId`]), since they become paths and class
//! names. Nothing is fetched, because a `file://` page has an opaque origin: the search index is
//! a script (`window.acpSiteIndex = …`, JSON escaped for a script) and icons are `data:` URIs
//! inside the stylesheets. Links between the site's files are relative; the only link out, to
//! `registry.json`, is absolute under `base_url`, because GitHub Pages serves `site/` alone.

mod icons;
mod labels;
mod markdown;
mod model;
mod pages;
mod snippets;
mod urls;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

pub use icons::sanitise as sanitise_icon;
#[cfg(test)]
pub(crate) use model::{distribution_facts, view_of};
pub(crate) use pages::Site;
pub(crate) use snippets::shell_quote;

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
}

impl Default for SiteOptions {
    fn default() -> Self {
        SiteOptions {
            title: "ACP Agent Registry".to_string(),
            registry_json_url: None,
        }
    }
}

/// Why the site could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("agent id `{0}` cannot be used in site paths: expected ^[a-z][a-z0-9-]*$, at most {max} bytes, not a Windows device name", max = crate::manifest::names::MAX_ID_LEN)]
    /// An id that cannot be a path segment or class name.
    InvalidId(String),
    #[error("agent id `{0}` appears more than once")]
    /// Two agents with one id.
    DuplicateId(String),
    #[error("rendering `{page}` failed: {source}")]
    /// A template failed (a bug of the templates, not of the input).
    Template {
        /// The page being rendered.
        page: String,
        /// What `minijinja` reported.
        #[source]
        source: minijinja::Error,
    },
    #[error("encoding the search index failed: {0}")]
    /// `assets/search-index.js` could not be serialised.
    Json(#[from] serde_json::Error),
}

/// Cards per page, both for the static pages (no JavaScript) and for the script.
pub const PAGE_SIZE: usize = 48;

/// The Content-Security-Policy of every page: no inline script or style, no external origin.
/// `img-src` allows `data:` because the icons are masks given as base64 `data:` URIs in
/// the (same-origin) icon stylesheets: a mask image is fetched in CORS mode, which a
/// `file://` page cannot do for an icon file. No `connect-src`: nothing is fetched (the
/// search index is a script), so `default-src 'none'` refuses every connection.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; base-uri 'none'; form-action 'self'";

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

/// Every file of the site, keyed by path relative to the site root: `index.html`,
/// `page/<n>/index.html` (static pagination beyond [`PAGE_SIZE`] agents),
/// `agents/<id>/index.html`, `assets/search-index.js` (the index the script filters),
/// `assets/icons/<n>.css` (the icons of listing page `n`), `assets/site.css`,
/// `assets/site.js` and `assets/favicon.svg`. Deterministic: same input, byte-identical
/// output.
pub fn render(
    agents: &[SiteAgent],
    options: &SiteOptions,
) -> Result<BTreeMap<String, Vec<u8>>, SiteError> {
    let site = Site::new(agents, options)?;
    let files = Mutex::new(BTreeMap::new());
    site.render(agents, &|path, bytes| {
        let mut files = files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        files.insert(path.to_string(), bytes.to_vec());
        Ok(())
    })?;
    Ok(files
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(id: &str) -> SiteAgent {
        let manifest = serde_json::json!({
            "id": id, "name": "A", "version": "1.0.0", "description": "d",
            "distribution": {"npx": {"package": "a@1.0.0"}},
        });
        SiteAgent {
            id: id.to_string(),
            agent: manifest.as_object().cloned().unwrap_or_default(),
            ..SiteAgent::default()
        }
    }

    #[test]
    fn ids_the_validator_refuses_are_refused_and_the_longest_valid_id_renders() {
        let too_long = "a".repeat(crate::manifest::names::MAX_ID_LEN + 1);
        for id in ["con", "lpt1", "nul", too_long.as_str()] {
            let result = render(&[agent(id)], &SiteOptions::default());
            assert!(
                matches!(result, Err(SiteError::InvalidId(_))),
                "{id:?} accepted"
            );
        }
        let longest = "a".repeat(crate::manifest::names::MAX_ID_LEN);
        let files = render(&[agent(&longest)], &SiteOptions::default()).unwrap();
        assert!(files.contains_key(&format!("agents/{longest}/index.html")));
    }
}
