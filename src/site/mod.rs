//! The static catalogue site (docs/format.md#site): plain data in, plain files out.
//!
//! [`render`] turns the published agents into every file of the site, keyed by path relative
//! to the site root. Nothing here touches the file system, the clock or the network, so the
//! same input always gives byte-identical output; the caller (`build`, `site`) writes the
//! files.
//!
//! Ground floor: imports only `std`, serde_json, minijinja, pulldown-cmark, ammonia, url,
//! roxmltree, rayon and the constants and id predicate of [`crate::manifest`]; the build
//! calls this module, never the reverse.
//!
//! Every string of an agent is treated as hostile:
//! - templates are rendered with HTML autoescaping, and the only value marked safe is the
//!   README after sanitising ([`markdown`]);
//! - URLs are kept only when they are absolute `http(s)` URLs without credentials, and
//!   re-serialised ([`model::safe_url`]);
//! - icons are re-serialised from an allow-list of SVG elements and attributes and served as
//!   files, shown as CSS masks painted with `currentColor` ([`icons`]);
//! - install snippets are built with serde_json and a POSIX shell quoter ([`snippets`]);
//! - every page carries a Content-Security-Policy without inline script, inline style or
//!   external origins; the JavaScript only ever sets `textContent`.

mod icons;
mod markdown;
mod model;
mod snippets;

use std::collections::{BTreeMap, BTreeSet};

use minijinja::{AutoEscape, Environment, Value};
use rayon::prelude::*;
use serde::Serialize;

use crate::manifest::names::is_valid_id;
pub use icons::sanitise as sanitise_icon;
pub use model::safe_url;

/// One agent to show, as the build hands it over.
#[derive(Debug, Clone, Default)]
pub struct SiteAgent {
    /// The entry id (valid by [`crate::manifest::names::is_valid_id`]); used in paths and CSS
    /// class names.
    pub id: String,
    /// The agent exactly as published in registry.json (canonical keys: id, name, version,
    /// description, repository, website, homepage, authors, license, license_url, icon
    /// (absolute URL), icons {light,dark} (URLs, optional), capabilities, auth
    /// [{type,id,name,description,args,env,vars}], tags, protocol_version, distribution
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

/// One agent's row of a `matrix.json`, as the site shows it (hostile strings: they come
/// from the agent's answer).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// When it was verified (`YYYY-MM-DD…` UTC).
    pub verified: String,
    /// Whether the launch passed every check.
    pub passed: bool,
    pub protocol_version: Option<u64>,
    /// Sign-in methods the agent offered: name and type.
    pub sign_in: Vec<(String, String)>,
    /// Session methods that answered with success.
    pub session_methods: Vec<String>,
}

/// Site-wide settings.
#[derive(Debug, Clone)]
pub struct SiteOptions {
    /// Page title, e.g. "ACP Agent Registry".
    pub title: String,
    /// Link to the published registry.json, relative to the site root (e.g.
    /// "../registry.json") or an absolute http(s) URL.
    pub registry_json_url: String,
}

impl Default for SiteOptions {
    fn default() -> Self {
        SiteOptions {
            title: "ACP Agent Registry".to_string(),
            registry_json_url: "../registry.json".to_string(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("agent id `{0}` cannot be used in site paths: expected ^[a-z][a-z0-9-]*$, at most {max} bytes, not a Windows device name", max = crate::manifest::names::MAX_ID_LEN)]
    InvalidId(String),
    #[error("agent id `{0}` appears more than once")]
    DuplicateId(String),
    #[error("rendering `{page}` failed: {source}")]
    Template {
        page: String,
        #[source]
        source: minijinja::Error,
    },
    #[error("encoding the agent index failed: {0}")]
    Json(#[from] serde_json::Error),
}

/// Cards per page, both for the static pages (no JavaScript) and for the script.
pub const PAGE_SIZE: usize = 48;

/// The Content-Security-Policy of every page: no inline script or style, no external origin.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'";

const BASE_HTML: &str = include_str!("../../site-templates/base.html");
const INDEX_HTML: &str = include_str!("../../site-templates/index.html");
const AGENT_HTML: &str = include_str!("../../site-templates/agent.html");
const SITE_CSS: &str = include_str!("../../site-templates/site.css");
const SITE_JS: &str = include_str!("../../site-templates/site.js");
const FAVICON_SVG: &str = include_str!("../../site-templates/favicon.svg");

/// Every file of the site, keyed by path relative to the site root: `index.html`,
/// `page/<n>/index.html` (static pagination beyond [`PAGE_SIZE`] agents),
/// `agents/<id>/index.html`, `agents.json` (the index the script filters),
/// `assets/site.css`, `assets/site.js`, `assets/icons.css`, `assets/favicon.svg` and
/// `icons/<id>[-light|-dark].svg`. Deterministic: same input, byte-identical output.
pub fn render(
    agents: &[SiteAgent],
    options: &SiteOptions,
) -> Result<BTreeMap<String, Vec<u8>>, SiteError> {
    let mut seen = BTreeSet::new();
    for agent in agents {
        // The id becomes a path segment and a CSS class name: the registry's one id predicate.
        if !is_valid_id(&agent.id) {
            return Err(SiteError::InvalidId(agent.id.clone()));
        }
        if !seen.insert(agent.id.as_str()) {
            return Err(SiteError::DuplicateId(agent.id.clone()));
        }
    }

    // Sorted by name (case-insensitive), then id: the order of the index and of agents.json.
    let mut order: Vec<&SiteAgent> = agents.iter().collect();
    order.sort_by_cached_key(|a| (model::sort_key(a), a.id.clone()));

    let mut files = BTreeMap::new();

    // Icons first: the cards need to know which agents have one.
    let mut icons_css = String::from(icons::CSS_HEADER);
    let mut icon_class = BTreeMap::new();
    for agent in &order {
        if let Some(set) = icons::sanitise_set(&agent.icons) {
            icons_css.push_str(&icons::css_rule(&agent.id, &set));
            for (name, svg) in set.files(&agent.id) {
                files.insert(format!("icons/{name}"), svg.into_bytes());
            }
            icon_class.insert(agent.id.as_str(), format!("i-{}", agent.id));
        }
    }

    let cards: Vec<model::Card> = order
        .iter()
        .map(|a| {
            model::card(
                a,
                icon_class
                    .get(a.id.as_str())
                    .map_or(icons::FALLBACK_CLASS, String::as_str),
            )
        })
        .collect();

    let env = environment()?;
    let site = SiteContext::new(options);

    // Listing pages: page 1 is index.html with the filter form; later pages exist so that
    // every agent is listed and linked without JavaScript.
    let facets = model::facets(&cards);
    let pages = cards.len().div_ceil(PAGE_SIZE).max(1);
    for page in 1..=pages {
        let start = (page - 1) * PAGE_SIZE;
        let end = (start + PAGE_SIZE).min(cards.len());
        let (path, root) = if page == 1 {
            ("index.html".to_string(), "")
        } else {
            (format!("page/{page}/index.html"), "../../")
        };
        let html = render_page(
            &env,
            "index.html",
            &path,
            minijinja::context! {
                site => &site.with_root(root),
                agents => &cards[start..end],
                total => cards.len(),
                first => start + 1,
                last => end,
                page => page,
                pages => pages,
                pager => model::pager(page, pages, root),
                facets => if page == 1 { Some(&facets) } else { None },
                page_size => PAGE_SIZE,
            },
        )?;
        files.insert(path, html.into_bytes());
    }

    // Agent pages, in parallel: they are independent and the bulk of the work.
    let agent_site = site.with_root("../../");
    let rendered: Vec<(String, Result<String, SiteError>)> = order
        .par_iter()
        .zip(cards.par_iter())
        .map(|(agent, card)| {
            let path = format!("agents/{}/index.html", agent.id);
            let page = model::page(agent, card);
            let html = render_page(
                &env,
                "agent.html",
                &path,
                minijinja::context! { site => &agent_site, a => &page },
            );
            (path, html)
        })
        .collect();
    for (path, html) in rendered {
        files.insert(path, html?.into_bytes());
    }

    files.insert(
        "agents.json".to_string(),
        model::index_json(&cards, PAGE_SIZE)?,
    );
    files.insert("assets/site.css".to_string(), SITE_CSS.as_bytes().to_vec());
    files.insert("assets/site.js".to_string(), SITE_JS.as_bytes().to_vec());
    files.insert("assets/icons.css".to_string(), icons_css.into_bytes());
    files.insert(
        "assets/favicon.svg".to_string(),
        FAVICON_SVG.as_bytes().to_vec(),
    );
    Ok(files)
}

/// What every page knows about the site.
#[derive(Debug, Clone, Serialize)]
struct SiteContext {
    title: String,
    csp: &'static str,
    /// Prefix from the page to the site root ("" or "../../").
    root: String,
    /// The registry.json link as given, when it is an absolute http(s) URL or a relative path.
    registry_json: Option<String>,
    registry_json_absolute: bool,
}

impl SiteContext {
    fn new(options: &SiteOptions) -> Self {
        let raw = options.registry_json_url.trim();
        let (registry_json, absolute) = if let Some(url) = safe_url(raw) {
            (Some(url), true)
        } else if model::is_relative_path(raw) {
            (Some(raw.to_string()), false)
        } else {
            (None, false)
        };
        SiteContext {
            title: options.title.clone(),
            csp: CSP,
            root: String::new(),
            registry_json,
            registry_json_absolute: absolute,
        }
    }

    fn with_root(&self, root: &str) -> Self {
        let mut copy = self.clone();
        copy.root = root.to_string();
        if !copy.registry_json_absolute {
            copy.registry_json = copy.registry_json.map(|path| format!("{root}{path}"));
        }
        copy
    }
}

fn environment() -> Result<Environment<'static>, SiteError> {
    let mut env = Environment::new();
    // Autoescape every template (they are all HTML), whatever its name.
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    // HTML-escape the five characters that matter, and leave `/` alone so URLs stay readable.
    env.set_formatter(|out, state, value| {
        if state.auto_escape() != AutoEscape::Html || value.is_safe() {
            return minijinja::escape_formatter(out, state, value);
        }
        if value.is_undefined() {
            return Ok(());
        }
        match value.as_str() {
            Some(text) => write_html_escaped(out, text),
            None => write_html_escaped(out, &value.to_string()),
        }
        .map_err(|_| minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "write failed"))
    });
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    for (name, source) in [
        ("base.html", BASE_HTML),
        ("index.html", INDEX_HTML),
        ("agent.html", AGENT_HTML),
    ] {
        env.add_template(name, source)
            .map_err(|source| SiteError::Template {
                page: name.to_string(),
                source,
            })?;
    }
    Ok(env)
}

fn write_html_escaped(out: &mut impl std::fmt::Write, text: &str) -> std::fmt::Result {
    let mut last = 0;
    for (i, byte) in text.bytes().enumerate() {
        let replacement = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.write_str(&text[last..i])?;
        out.write_str(replacement)?;
        last = i + 1;
    }
    out.write_str(&text[last..])
}

fn render_page(
    env: &Environment<'static>,
    template: &str,
    path: &str,
    context: Value,
) -> Result<String, SiteError> {
    let template = env
        .get_template(template)
        .map_err(|source| SiteError::Template {
            page: path.to_string(),
            source,
        })?;
    template
        .render(context)
        .map_err(|source| SiteError::Template {
            page: path.to_string(),
            source,
        })
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
