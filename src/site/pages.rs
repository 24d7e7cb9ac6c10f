//! The site as a plan and a stream: [`Site::new`] reads every agent once for its card and
//! icon (the index, the filters, the search index and the icon stylesheets need them all);
//! [`Site::render`] reads each agent again for its page and hands every file to a sink as
//! soon as it is rendered, so no more than one page per thread is held at a time.
//!
//! The files: `index.html` (the first 48 cards and the filter form), `page/<n>/index.html` (the
//! rest, so every agent is listed and linked without JavaScript), `agents/<id>/index.html`,
//! `assets/search-index.js`, `assets/icons/<n>.css` (the icons of listing page `n`, linked by that
//! page and its cards' agent pages, so a page loads at most 48 icons where one stylesheet for
//! 10,000 agents would be megabytes) and `assets/{site.css,site.js,favicon.svg}`, from the
//! templates and assets of `site-templates/`, embedded with `include_str!`. The minijinja
//! environment autoescapes HTML in every template through the core's HTML escaper.
//!
//! Progressive enhancement: without JavaScript the pages are complete (static pager, selectable
//! snippets; the filter form and copy buttons stay `hidden`). With it, `site.js` loads the search
//! index, filters (deployment, sign-in and verification any-of; capabilities and tags all-of;
//! platform, protocol and licence one choice; a search), renders one page of 48 cards at a time
//! (only 48 cards are ever in the DOM) and keeps the state in the query string (`pushState`,
//! `popstate` restores).

use std::collections::BTreeSet;

use minijinja::{AutoEscape, Environment, Value};
use rayon::prelude::*;
use serde::Serialize;

use super::error::SiteError;
use super::identity::{self, FooterPart, Link, LOGO_CSS};
use super::input::{AgentSource, SiteAgent, SiteOptions, SiteSkill};
use super::skills::{self, AgentSkills, SkillCard};
use super::{icons, model, urls};
use crate::diagnostics::escape::{self, Quotes};
use crate::manifest::names::is_valid_id;

const BASE_HTML: &str = include_str!("../../site-templates/base.html");
const INDEX_HTML: &str = include_str!("../../site-templates/index.html");
const AGENT_HTML: &str = include_str!("../../site-templates/agent.html");
const SKILLS_HTML: &str = include_str!("../../site-templates/skills.html");
const SKILL_HTML: &str = include_str!("../../site-templates/skill.html");
const SITE_CSS: &str = include_str!("../../site-templates/site.css");
const SITE_JS: &str = include_str!("../../site-templates/site.js");
const FAVICON_SVG: &str = include_str!("../../site-templates/favicon.svg");

/// Cards per page, both for the static pages (no JavaScript) and for the script.
pub const PAGE_SIZE: usize = 48;

/// The Content-Security-Policy of every page: no inline script or style, no external origin.
/// `img-src` allows `data:` because the icons are masks given as base64 `data:` URIs in
/// the (same-origin) icon stylesheets: a mask image is fetched in CORS mode, which a
/// `file://` page cannot do for an icon file. No `connect-src`: nothing is fetched (the
/// search index is a script), so `default-src 'none'` refuses every connection.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; base-uri 'none'; form-action 'self'";

/// The files that are the same for every registry, under `assets/` (the search index and
/// the icon stylesheets are not).
const ASSETS: [(&str, &str); 3] = [
    ("assets/site.css", SITE_CSS),
    ("assets/site.js", SITE_JS),
    ("assets/favicon.svg", FAVICON_SVG),
];

/// Where rendered files go: a path relative to the site root and its bytes. Called from
/// several threads at once, in no particular order.
pub(crate) type Sink<'a, E> = dyn Fn(&str, &[u8]) -> Result<(), E> + Sync + 'a;

/// A site ready to render: every agent's card in index order and what the pages share.
pub(crate) struct Site {
    env: Environment<'static>,
    context: SiteContext,
    /// Cards sorted by name (case-insensitive), then id: the order of the index and of
    /// the search index.
    cards: Vec<model::Card>,
    /// For each card: the agent's index in the source.
    agents: Vec<usize>,
    /// `assets/icons/<n>.css`: the icon rules of the cards of listing page `n`, in order.
    icon_chunks: Vec<String>,
    /// The skills' cards, by name: the order of `skills/index.html` and its pages.
    skills: Vec<SkillCard>,
    /// For each skill card: the skill's index in the source.
    skill_order: Vec<usize>,
    /// The skills each agent of the site ships, for its page.
    agent_skills: AgentSkills,
    /// [`SiteOptions::site_url`], for the skills' install commands.
    site_url: Option<String>,
    /// `assets/logo.css`, when the registry has a logo.
    logo_css: Option<String>,
}

/// What the first pass learns of one agent.
struct Row {
    sort_key: (String, String),
    index: usize,
    card: model::Card,
    icon_css: Option<String>,
}

impl Site {
    /// Check the ids (valid by the registry's one predicate, unique) and the skill names
    /// (valid by the skill name rule, unique), sanitise the icons once to learn which are
    /// published, and build every card.
    pub(crate) fn new<S: AgentSource + ?Sized>(
        agents: &S,
        skills: &[SiteSkill],
        options: &SiteOptions,
    ) -> Result<Site, S::Error> {
        let rows: Vec<Result<Row, S::Error>> = (0..agents.count())
            .into_par_iter()
            .map(|index| row(index, &*agents.agent(index)?))
            .collect();
        let mut seen = BTreeSet::new();
        let mut checked = Vec::with_capacity(rows.len());
        // In source order, so the error reported is the first one, whatever the threads did.
        for row in rows {
            let row = row?;
            if !seen.insert(row.card.id.clone()) {
                return Err(SiteError::DuplicateId(row.card.id).into());
            }
            checked.push(row);
        }
        checked.sort_by(|a, b| a.sort_key.cmp(&b.sort_key));
        // One icon stylesheet per listing page (at least one), so that a page loads the
        // icons of its 48 cards, not of the whole registry.
        let mut icon_chunks = vec![String::from(icons::CSS_HEADER)];
        let mut cards = Vec::with_capacity(checked.len());
        let mut order = Vec::with_capacity(checked.len());
        for (position, row) in checked.into_iter().enumerate() {
            if position > 0 && position % PAGE_SIZE == 0 {
                icon_chunks.push(String::from(icons::CSS_HEADER));
            }
            if let (Some(chunk), Some(css)) = (icon_chunks.last_mut(), row.icon_css) {
                chunk.push_str(&css);
            }
            cards.push(row.card);
            order.push(row.index);
        }
        let agent_ids = cards.iter().map(|card| card.id.as_str()).collect();
        let (skill_cards, skill_order, agent_skills) = skills::cards(skills, &agent_ids)?;
        let logo_css = identity::logo_css(options);
        Ok(Site {
            env: environment()?,
            context: SiteContext::new(options, !skill_cards.is_empty(), logo_css.is_some()),
            cards,
            agents: order,
            icon_chunks,
            skills: skill_cards,
            skill_order,
            agent_skills,
            site_url: options.site_url.clone(),
            logo_css,
        })
    }

    /// The number of listing pages: page 1 is `index.html`.
    fn listing_pages(&self) -> usize {
        self.cards.len().div_ceil(PAGE_SIZE).max(1)
    }

    /// The number of skills listing pages: none without skills.
    fn skill_listing_pages(&self) -> usize {
        self.skills.len().div_ceil(PAGE_SIZE)
    }

    /// The number of HTML pages the site has.
    pub(crate) fn html_pages(&self) -> usize {
        self.listing_pages() + self.cards.len() + self.skill_listing_pages() + self.skills.len()
    }

    /// Every path [`Site::render`] writes, sorted.
    pub(crate) fn paths(&self) -> BTreeSet<String> {
        let mut paths: BTreeSet<String> = (1..=self.listing_pages()).map(listing_path).collect();
        paths.extend((1..=self.icon_chunks.len()).map(icons_path));
        paths.extend(self.cards.iter().map(|card| agent_path(&card.id)));
        paths.extend((1..=self.skill_listing_pages()).map(skills::listing_path));
        paths.extend(self.skills.iter().map(|card| card.href.clone()));
        paths.insert(SEARCH_INDEX.to_string());
        paths.extend(ASSETS.iter().map(|(path, _)| (*path).to_string()));
        if self.logo_css.is_some() {
            paths.insert(LOGO_CSS.to_string());
        }
        paths
    }

    /// Render every file of [`Site::paths`] into `sink`, reading each agent from `agents`
    /// and each skill from `skills` (what [`Site::new`] was given) once more. Deterministic:
    /// the same input gives byte-identical files.
    pub(crate) fn render<S: AgentSource + ?Sized>(
        &self,
        agents: &S,
        skills: &[SiteSkill],
        sink: &Sink<'_, S::Error>,
    ) -> Result<(), S::Error> {
        self.render_listing(sink)?;
        self.render_skills(skills, sink)?;
        // Agent pages, in parallel: they are independent and the bulk of the work.
        self.cards
            .par_iter()
            .zip(self.agents.par_iter())
            .enumerate()
            .try_for_each(|(position, (card, index))| {
                let page = position / PAGE_SIZE + 1;
                self.render_agent(&*agents.agent(*index)?, card, page, sink)
            })?;
        sink(
            SEARCH_INDEX,
            &model::index_script(&self.cards, PAGE_SIZE).map_err(SiteError::from)?,
        )?;
        for (page, css) in (1..).zip(&self.icon_chunks) {
            sink(&icons_path(page), css.as_bytes())?;
        }
        for (path, text) in ASSETS {
            sink(path, text.as_bytes())?;
        }
        if let Some(css) = &self.logo_css {
            sink(LOGO_CSS, css.as_bytes())?;
        }
        Ok(())
    }

    /// Listing pages: page 1 is index.html with the filter form; later pages exist so that
    /// every agent is listed and linked without JavaScript.
    fn render_listing<E: From<SiteError> + Send>(&self, sink: &Sink<'_, E>) -> Result<(), E> {
        let facets = model::facets(&self.cards);
        let pages = self.listing_pages();
        (1..=pages).into_par_iter().try_for_each(|page| {
            let start = (page - 1) * PAGE_SIZE;
            let end = (start + PAGE_SIZE).min(self.cards.len());
            let root = if page == 1 { "" } else { "../../" };
            let path = listing_path(page);
            let context = minijinja::context! {
                site => &self.context.with_root(root),
                icons => page,
                agents => &self.cards[start..end],
                total => self.cards.len(),
                first => start + 1,
                last => end,
                page => page,
                pages => pages,
                pager => model::pager(page, pages, root),
                facets => if page == 1 { Some(&facets) } else { None },
                page_size => PAGE_SIZE,
            };
            let html = render_page(&self.env, "index.html", &path, context)?;
            sink(&path, html.as_bytes())
        })
    }

    /// One agent's page; its icon is in the stylesheet of the listing page its card is on.
    fn render_agent<E: From<SiteError>>(
        &self,
        agent: &SiteAgent,
        card: &model::Card,
        listing_page: usize,
        sink: &Sink<'_, E>,
    ) -> Result<(), E> {
        let path = agent_path(&agent.id);
        let skills = self
            .agent_skills
            .get(&agent.id)
            .map_or(&[][..], Vec::as_slice);
        let context = minijinja::context! {
            site => &self.context.with_root("../../"),
            icons => listing_page,
            a => &model::page(agent, card),
            skills => skills,
        };
        let html = render_page(&self.env, "agent.html", &path, context)?;
        sink(&path, html.as_bytes())
    }
}

impl Site {
    /// The skills section: listing pages of [`PAGE_SIZE`] cards (none without skills) and a
    /// page per skill, reading each skill from `skills` (what [`Site::new`] was given).
    fn render_skills<E: From<SiteError> + Send>(
        &self,
        skills: &[SiteSkill],
        sink: &Sink<'_, E>,
    ) -> Result<(), E> {
        let pages = self.skill_listing_pages();
        (1..=pages).into_par_iter().try_for_each(|page| {
            let start = (page - 1) * PAGE_SIZE;
            let end = (start + PAGE_SIZE).min(self.skills.len());
            let root = skills::listing_root(page);
            let path = skills::listing_path(page);
            let context = minijinja::context! {
                site => &self.context.with_root(root),
                icons => 0,
                skills => &self.skills[start..end],
                total => self.skills.len(),
                first => start + 1,
                last => end,
                page => page,
                pages => pages,
                pager => model::pager(page, pages, &format!("{root}skills/")),
            };
            let html = render_page(&self.env, "skills.html", &path, context)?;
            sink(&path, html.as_bytes())
        })?;
        self.skills
            .par_iter()
            .zip(self.skill_order.par_iter())
            .try_for_each(|(card, index)| {
                let page = skills::page(&skills[*index], card, self.site_url.as_deref());
                let context = minijinja::context! {
                    site => &self.context.with_root("../../"),
                    icons => 0,
                    s => &page,
                };
                let html = render_page(&self.env, "skill.html", &card.href, context)?;
                sink(&card.href, html.as_bytes())
            })
    }
}

/// The id checked, the icons sanitised (kept only as a CSS rule) and the card.
fn row<E: From<SiteError>>(index: usize, agent: &SiteAgent) -> Result<Row, E> {
    // The id becomes a path segment and a CSS class name: the registry's one id predicate.
    if !is_valid_id(&agent.id) {
        return Err(SiteError::InvalidId(agent.id.clone()).into());
    }
    let set = icons::sanitise_set(&agent.icons);
    let icon_class = match &set {
        Some(_) => format!("i-{}", agent.id),
        None => icons::FALLBACK_CLASS.to_string(),
    };
    Ok(Row {
        sort_key: (model::sort_key(agent), agent.id.clone()),
        index,
        card: model::card(agent, &icon_class),
        icon_css: set.as_ref().map(|s| icons::css_rule(&agent.id, s)),
    })
}

fn listing_path(page: usize) -> String {
    if page == 1 {
        "index.html".to_string()
    } else {
        format!("page/{page}/index.html")
    }
}

fn agent_path(id: &str) -> String {
    format!("agents/{id}/index.html")
}

/// The icon stylesheet of listing page `page` (which the agent pages of its cards use too).
fn icons_path(page: usize) -> String {
    format!("assets/icons/{page}.css")
}

/// The search index: a script, since a `file://` page may not fetch a file.
const SEARCH_INDEX: &str = "assets/search-index.js";

/// What every page knows about the site.
#[derive(Debug, Clone, Serialize)]
struct SiteContext {
    title: String,
    csp: &'static str,
    /// Prefix from the page to the site root ("" or "../../").
    root: String,
    /// The registry.json link, when it is an absolute http(s) URL (re-serialised).
    registry_json: Option<String>,
    /// The lifecycle.json link, under the same rule.
    lifecycle_json: Option<String>,
    /// Whether the site has skills (a "Skills" link in the navigation).
    skills: bool,
    /// The registry's description (the index's lead and the meta description).
    description: Option<String>,
    /// The link to the organisation running the registry.
    home: Option<Link>,
    /// Whether `assets/logo.css` exists (the logo before the title).
    logo: bool,
    /// The footer line in runs of text and links (`None`: the default footer).
    footer: Option<Vec<FooterPart>>,
}

impl SiteContext {
    fn new(options: &SiteOptions, skills: bool, logo: bool) -> Self {
        SiteContext {
            description: options.description.clone(),
            home: identity::home(options),
            logo,
            footer: options.footer.as_deref().map(identity::footer),
            title: options.title.clone(),
            csp: CSP,
            root: String::new(),
            skills,
            registry_json: options
                .registry_json_url
                .as_deref()
                .and_then(urls::safe_url),
            lifecycle_json: options
                .lifecycle_json_url
                .as_deref()
                .and_then(urls::safe_url),
        }
    }

    fn with_root(&self, root: &str) -> Self {
        let mut copy = self.clone();
        copy.root = root.to_string();
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
            Some(text) => escape::html_into(out, text, Quotes::Both),
            None => escape::html_into(out, &value.to_string(), Quotes::Both),
        }
        .map_err(|_| minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "write failed"))
    });
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    for (name, source) in [
        ("base.html", BASE_HTML),
        ("index.html", INDEX_HTML),
        ("agent.html", AGENT_HTML),
        ("skills.html", SKILLS_HTML),
        ("skill.html", SKILL_HTML),
    ] {
        env.add_template(name, source)
            .map_err(|source| SiteError::Template {
                page: name.to_string(),
                source,
            })?;
    }
    Ok(env)
}

fn render_page(
    env: &Environment<'static>,
    template: &str,
    path: &str,
    context: Value,
) -> Result<String, SiteError> {
    let failed = |source| SiteError::Template {
        page: path.to_string(),
        source,
    };
    env.get_template(template)
        .map_err(failed)?
        .render(context)
        .map_err(failed)
}
