//! View models: what the templates and the search index see of an agent. Every value here is
//! plain text (escaped by the templates) or a URL that passed [`safe_url`](super::safe_url).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::input::SiteAgent;
use super::labels::{label, AUTH_LABELS, DEPLOY_LABELS, PLATFORM_LABELS, VERIFICATION_LABELS};
use super::markdown;
use super::snippets::{self, Install};
use super::urls::safe_url;
use crate::diagnostics::escape;
use crate::manifest::agent::AgentView;
use crate::manifest::names::is_valid_id;
use crate::manifest::{FIELD_ORDER, PLATFORMS};

/// Text of a JSON value: strings as they are, anything else as compact JSON.
pub(crate) fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn string_field(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).map(text).filter(|s| !s.trim().is_empty())
}

fn string_list(map: &Map<String, Value>, key: &str) -> Vec<String> {
    match map.get(key) {
        Some(Value::Array(items)) => items.iter().map(text).collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![text(other)],
    }
}

pub(crate) fn sort_key(agent: &SiteAgent) -> String {
    string_field(&agent.agent, "name")
        .unwrap_or_else(|| agent.id.clone())
        .to_lowercase()
}

/// One card of the index; also one record of the search index.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Card {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) description: String,
    /// Path of the agent page from the site root.
    pub(crate) href: String,
    /// CSS class that paints the icon (see `assets/icons/<n>.css`).
    pub(crate) icon: String,
    /// Distribution kinds, in `DISTRIBUTION_KINDS` order.
    pub(crate) deploy: Vec<String>,
    pub(crate) deploy_text: String,
    /// Binary platform keys (known ones in `PLATFORMS` order, then unknown ones sorted).
    pub(crate) platforms: Vec<String>,
    pub(crate) platforms_text: String,
    /// Auth types, distinct, in manifest order; `["none"]` when nothing is declared.
    pub(crate) auth: Vec<String>,
    pub(crate) auth_text: String,
    pub(crate) tags: Vec<String>,
    pub(crate) license: Option<String>,
    pub(crate) capabilities: Vec<String>,
    pub(crate) protocol: Option<String>,
    pub(crate) quarantined: bool,
    pub(crate) preview: Option<String>,
    /// The verification state when `build --matrix` has evidence for the agent (`verified`,
    /// `failed`, `expired`, `stale`: the filter's value), else empty and left out of the
    /// search index.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) verified: Vec<String>,
    /// The badge text of that state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) verified_label: Option<String>,
    /// Whether `deprecations.json` deprecates the entry (a badge).
    pub(crate) deprecated: bool,
    /// The known clients that can install the agent, at least partly (the "Works in"
    /// filter's values), by id; empty and left out when no client data was given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) works_in: Vec<String>,
    /// Their names, for the filter's labels (not in the search index: the form has them).
    #[serde(skip)]
    pub(crate) works_in_names: Vec<(String, String)>,
}

/// The agent's verification state when it is one the site knows (it names a CSS class).
fn verification_state(agent: &SiteAgent) -> Option<&str> {
    let state = agent.verification.as_ref()?.state.as_str();
    VERIFICATION_LABELS
        .iter()
        .any(|(known, _)| *known == state)
        .then_some(state)
}

/// The deploy kinds and the binary platform keys the site shows (known ones in `PLATFORMS`
/// order, then unknown ones sorted).
pub(crate) fn distribution_facts(view: &AgentView) -> (Vec<String>, Vec<String>) {
    let dist = &view.distribution;
    let deploy: Vec<String> = dist.kinds().iter().map(ToString::to_string).collect();
    let mut platforms: Vec<String> = PLATFORMS
        .iter()
        .filter(|p| dist.target(p).is_some())
        .map(ToString::to_string)
        .collect();
    let mut unknown: Vec<String> = dist
        .binary
        .iter()
        .map(|t| t.platform.clone())
        .filter(|p| !PLATFORMS.contains(&p.as_str()))
        .collect();
    unknown.sort();
    unknown.dedup();
    platforms.extend(unknown);
    (deploy, platforms)
}

/// The typed view of a published agent (or of its preview block).
pub(crate) fn view_of(agent: &Map<String, Value>) -> AgentView {
    AgentView::from_json(agent)
}

pub(crate) fn card(agent: &SiteAgent, icon_class: &str) -> Card {
    let a = &agent.agent;
    let view = view_of(a);
    let (deploy, platforms) = distribution_facts(&view);
    let mut auth: Vec<String> = view.auth_types().into_iter().map(str::to_string).collect();
    if auth.is_empty() {
        auth.push("none".to_string());
    }
    let mut platforms_text: Vec<String> = Vec::new();
    if deploy.iter().any(|d| d == "npx" || d == "uvx") {
        platforms_text.push("Any".to_string());
    }
    platforms_text.extend(
        platforms
            .iter()
            .map(|p| label(&PLATFORM_LABELS, p).to_string()),
    );
    let deploy_text = deploy
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    let auth_text = auth
        .iter()
        .map(|k| label(&AUTH_LABELS, k))
        .collect::<Vec<_>>()
        .join(", ");
    Card {
        id: agent.id.clone(),
        name: string_field(a, "name").unwrap_or_else(|| agent.id.clone()),
        version: string_field(a, "version").unwrap_or_default(),
        description: string_field(a, "description").unwrap_or_default(),
        href: format!("agents/{}/index.html", agent.id),
        icon: icon_class.to_string(),
        deploy_text: if deploy_text.is_empty() {
            "None".to_string()
        } else {
            deploy_text
        },
        deploy,
        platforms_text: if platforms_text.is_empty() {
            "None".to_string()
        } else {
            platforms_text.join(", ")
        },
        platforms,
        auth_text,
        auth,
        tags: string_list(a, "tags"),
        license: string_field(a, "license"),
        capabilities: string_list(a, "capabilities"),
        protocol: string_field(a, "protocol_version"),
        quarantined: agent.quarantine.is_some(),
        verified: verification_state(agent)
            .into_iter()
            .map(str::to_string)
            .collect(),
        verified_label: verification_state(agent)
            .map(|state| label(&VERIFICATION_LABELS, state).to_string()),
        deprecated: agent.retirement.is_some(),
        works_in: works_in(agent).map(|c| c.id.clone()).collect(),
        works_in_names: works_in(agent)
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect(),
        preview: agent
            .preview
            .as_ref()
            .and_then(|p| string_field(p, "version")),
    }
}

/// The clients that can install `agent`, at least partly.
fn works_in(agent: &SiteAgent) -> impl Iterator<Item = &super::input::SiteClient> {
    agent.clients.iter().filter(|c| c.installs != "no")
}

/// One value of a filter, with the number of agents that have it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FacetValue {
    pub(crate) value: String,
    pub(crate) label: String,
    pub(crate) count: usize,
}

/// The filter form's choices. Long lists (tags, capabilities, licenses) show the most
/// common values; the script adds any other value that arrives through the URL.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Facets {
    pub(crate) deploy: Vec<FacetValue>,
    pub(crate) platform: Vec<FacetValue>,
    pub(crate) auth: Vec<FacetValue>,
    pub(crate) protocol: Vec<FacetValue>,
    pub(crate) license: Vec<FacetValue>,
    pub(crate) cap: Vec<FacetValue>,
    pub(crate) tag: Vec<FacetValue>,
    /// Offered only for the states some agent is in.
    pub(crate) verified: Vec<FacetValue>,
    /// "Works in": the known clients, labelled by name, in id order.
    pub(crate) works: Vec<FacetValue>,
}

/// Most values a facet lists in the form.
pub(crate) const FACET_LIMIT: usize = 40;

fn facet<'a>(
    values: impl Iterator<Item = &'a String>,
    labels: &[(&str, &str)],
    fixed_order: bool,
) -> Vec<FacetValue> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for value in values {
        *counts.entry(value.as_str()).or_default() += 1;
    }
    let mut out: Vec<FacetValue> = counts
        .into_iter()
        .map(|(value, count)| FacetValue {
            value: value.to_string(),
            label: label(labels, value).to_string(),
            count,
        })
        .collect();
    if fixed_order {
        let rank = |v: &str| {
            labels
                .iter()
                .position(|(k, _)| *k == v)
                .unwrap_or(usize::MAX)
        };
        out.sort_by(|a, b| (rank(&a.value), &a.value).cmp(&(rank(&b.value), &b.value)));
    } else {
        out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
        out.truncate(FACET_LIMIT);
        out.sort_by(|a, b| a.value.cmp(&b.value));
    }
    out
}

pub(crate) fn facets(cards: &[Card]) -> Facets {
    // Every platform is offered: npx/uvx agents run on all of them.
    let platform = PLATFORM_LABELS
        .iter()
        .map(|(key, text)| FacetValue {
            value: key.to_string(),
            label: text.to_string(),
            count: cards
                .iter()
                .filter(|c| {
                    c.platforms.iter().any(|p| p == key)
                        || c.deploy.iter().any(|d| d == "npx" || d == "uvx")
                })
                .count(),
        })
        .collect();
    Facets {
        deploy: facet(
            cards.iter().flat_map(|c| c.deploy.iter()),
            &DEPLOY_LABELS,
            true,
        ),
        platform,
        auth: facet(cards.iter().flat_map(|c| c.auth.iter()), &AUTH_LABELS, true),
        protocol: facet(cards.iter().filter_map(|c| c.protocol.as_ref()), &[], false),
        license: facet(cards.iter().filter_map(|c| c.license.as_ref()), &[], false),
        cap: facet(cards.iter().flat_map(|c| c.capabilities.iter()), &[], false),
        tag: facet(cards.iter().flat_map(|c| c.tags.iter()), &[], false),
        verified: facet(
            cards.iter().flat_map(|c| c.verified.iter()),
            &VERIFICATION_LABELS,
            true,
        ),
        works: works_facet(cards),
    }
}

/// The "Works in" choices: every client some agent works in, labelled by its name.
fn works_facet(cards: &[Card]) -> Vec<FacetValue> {
    let names: BTreeMap<&str, &str> = cards
        .iter()
        .flat_map(|c| c.works_in_names.iter())
        .map(|(id, name)| (id.as_str(), name.as_str()))
        .collect();
    let labels: Vec<(&str, &str)> = names.into_iter().collect();
    facet(cards.iter().flat_map(|c| c.works_in.iter()), &labels, true)
}

/// Links of the static pager; `gap` stands for skipped page numbers.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PagerLink {
    pub(crate) number: usize,
    pub(crate) href: String,
    pub(crate) current: bool,
    pub(crate) gap: bool,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Pager {
    pub(crate) prev: Option<String>,
    pub(crate) next: Option<String>,
    pub(crate) links: Vec<PagerLink>,
}

fn page_href(page: usize, root: &str) -> String {
    if page == 1 {
        format!("{root}index.html")
    } else {
        format!("{root}page/{page}/index.html")
    }
}

/// Previous/next and a window of page numbers: the first, the last, and two on each side of
/// the current one.
pub(crate) fn pager(page: usize, pages: usize, root: &str) -> Option<Pager> {
    if pages <= 1 {
        return None;
    }
    let mut links: Vec<PagerLink> = Vec::new();
    let mut last_shown = 0;
    for n in 1..=pages {
        let shown = n == 1 || n == pages || n.abs_diff(page) <= 2;
        if !shown {
            continue;
        }
        if n > last_shown + 1 {
            links.push(PagerLink {
                number: 0,
                href: String::new(),
                current: false,
                gap: true,
            });
        }
        links.push(PagerLink {
            number: n,
            href: page_href(n, root),
            current: n == page,
            gap: false,
        });
        last_shown = n;
    }
    Some(Pager {
        prev: (page > 1).then(|| page_href(page - 1, root)),
        next: (page < pages).then(|| page_href(page + 1, root)),
        links,
    })
}

/// The global `assets/search-index.js` assigns, which `site.js` reads once the script has
/// loaded.
pub(crate) const INDEX_GLOBAL: &str = "acpSiteIndex";

/// `assets/search-index.js`: what the script filters and pages through, as a script that
/// assigns it to `window.acpSiteIndex` (a `file://` page may load a script, not fetch JSON).
pub(crate) fn index_script(cards: &[Card], page_size: usize) -> Result<Vec<u8>, serde_json::Error> {
    #[derive(Serialize)]
    struct Labels {
        deploy: BTreeMap<&'static str, &'static str>,
        platform: BTreeMap<&'static str, &'static str>,
        auth: BTreeMap<&'static str, &'static str>,
    }
    #[derive(Serialize)]
    struct Index<'a> {
        format: u32,
        page_size: usize,
        labels: Labels,
        agents: &'a [Card],
    }
    let index = Index {
        format: 1,
        page_size,
        labels: Labels {
            deploy: DEPLOY_LABELS.into_iter().collect(),
            platform: PLATFORM_LABELS.into_iter().collect(),
            auth: AUTH_LABELS.into_iter().collect(),
        },
        agents: cards,
    };
    let json = escape::json_for_script(&serde_json::to_string(&index)?);
    Ok(format!(
        "/* The catalogue's search index (docs/format.md#site), read by site.js. */\nwindow.{INDEX_GLOBAL} = {json};\n"
    )
    .into_bytes())
}

/// A link with its text; `url` is always a safe absolute http(s) URL.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Link {
    pub(crate) text: String,
    pub(crate) url: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AuthView {
    pub(crate) kind: String,
    pub(crate) kind_label: String,
    pub(crate) id: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) vars: Vec<String>,
    pub(crate) command: Option<String>,
    pub(crate) env: Vec<(String, String)>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Download {
    pub(crate) platform: String,
    pub(crate) platform_label: String,
    pub(crate) archive: Option<Link>,
    pub sha256: Option<String>,
    pub(crate) command: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Channel {
    /// `stable` or `preview` (used in element ids).
    pub(crate) name: &'static str,
    /// `Stable` or `Preview`.
    pub(crate) label: &'static str,
    /// Id of the install section.
    pub(crate) section_id: &'static str,
    /// Heading of the install section.
    pub(crate) title: String,
    pub(crate) version: String,
    pub(crate) install: Install,
    pub(crate) downloads: Vec<Download>,
}

/// Everything the agent page shows.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Page {
    pub(crate) card: Card,
    pub(crate) quarantine: Option<String>,
    /// The deprecation notice, with the successor.
    pub(crate) retirement: Option<super::input::SiteRetirement>,
    /// Every known client's verdict.
    pub(crate) clients: Vec<super::input::SiteClient>,
    pub(crate) authors: Vec<String>,
    pub(crate) repository: Option<Link>,
    pub(crate) website: Option<Link>,
    pub(crate) homepage: Option<Link>,
    pub(crate) license: Option<String>,
    pub(crate) license_link: Option<Link>,
    pub(crate) auth: Vec<AuthView>,
    /// Stable, then preview when there is one.
    pub(crate) channels: Vec<Channel>,
    pub(crate) has_downloads: bool,
    /// Other fields of the manifest, as compact JSON text.
    pub(crate) other: Vec<(String, String)>,
    /// Sanitised README HTML (the only value rendered unescaped).
    pub(crate) readme: Option<String>,
    /// What `matrix` found, when the build was given one.
    pub(crate) verification: Option<super::input::Verification>,
}

fn link(map: &Map<String, Value>, key: &str) -> Option<Link> {
    let raw = string_field(map, key)?;
    let url = safe_url(&raw)?;
    Some(Link {
        text: url.clone(),
        url,
    })
}

fn channel(
    name: &'static str,
    agent_name: &str,
    map: &Map<String, Value>,
    view: &AgentView,
) -> Channel {
    let (_, platforms) = distribution_facts(view);
    let distribution = &view.distribution;
    let mut downloads = Vec::new();
    for platform in &platforms {
        let Some(target) = distribution.target(platform) else {
            continue;
        };
        let archive = target
            .archive
            .clone()
            .filter(|s| !s.trim().is_empty())
            .and_then(|raw| {
                safe_url(&raw).map(|url| Link {
                    text: url.rsplit('/').next().unwrap_or(&url).to_string(),
                    url,
                })
            });
        downloads.push(Download {
            platform: platform.clone(),
            platform_label: label(&PLATFORM_LABELS, platform).to_string(),
            archive,
            sha256: target.sha256.clone().filter(|s| !s.trim().is_empty()),
            command: snippets::binary_command_line(platform, target),
        });
    }
    let version = string_field(map, "version").unwrap_or_default();
    let preview = name == "preview";
    Channel {
        name,
        label: if preview { "Preview" } else { "Stable" },
        section_id: if preview {
            "install-preview"
        } else {
            "install"
        },
        title: if preview {
            format!("Install the preview {version}")
        } else {
            "Install".to_string()
        },
        version,
        install: snippets::install(agent_name, distribution, &platforms),
        downloads,
    }
}

/// Whether the page shows `key` in its own place (or, for `$schema`, never): every canonical
/// field but `schema_version` and `bundled`, plus `icons` (the page shows the icon files).
/// Everything else is listed under "Other fields".
fn shown_in_place(key: &str) -> bool {
    key == "icons" || (FIELD_ORDER.contains(&key) && !matches!(key, "schema_version" | "bundled"))
}

pub(crate) fn page(agent: &SiteAgent, card: &Card) -> Page {
    let a = &agent.agent;
    let view = view_of(a);
    let mut auth = Vec::new();
    if let Some(Value::Array(methods)) = a.get("auth") {
        // The view has one method per item, so they pair up; it gives the type.
        for (method, typed) in methods.iter().zip(&view.auth) {
            let empty = Map::new();
            let m = match method {
                Value::Object(m) => m,
                _ => &empty,
            };
            let kind = typed.kind().to_string();
            let args = string_list(m, "args");
            let env: Vec<(String, String)> = match m.get("env") {
                Some(Value::Object(env)) => {
                    let sorted: BTreeMap<String, String> =
                        env.iter().map(|(k, v)| (k.clone(), text(v))).collect();
                    sorted.into_iter().collect()
                }
                _ => Vec::new(),
            };
            auth.push(AuthView {
                kind_label: label(&AUTH_LABELS, &kind).to_string(),
                kind,
                id: string_field(m, "id"),
                name: string_field(m, "name"),
                description: string_field(m, "description"),
                vars: string_list(m, "vars"),
                command: (!args.is_empty()).then(|| snippets::shell_join(&args)),
                env,
            });
        }
    }
    let mut other: Vec<(String, String)> = a
        .iter()
        .filter(|(k, _)| !shown_in_place(k))
        .map(|(k, v)| (k.clone(), text(v)))
        .collect();
    other.sort();
    let mut channels = vec![channel("stable", &card.name, a, &view)];
    if let Some(preview) = &agent.preview {
        channels.push(channel("preview", &card.name, preview, &view_of(preview)));
    }
    let website = link(a, "website");
    let homepage = link(a, "homepage").filter(|h| website.as_ref().is_none_or(|w| w.url != h.url));
    Page {
        card: card.clone(),
        quarantine: agent.quarantine.clone(),
        retirement: agent.retirement.clone().map(|mut r| {
            // A link only to a page this site can have: the caller's word and a valid id.
            r.replacement_on_site &= r.replacement.as_deref().is_some_and(is_valid_id);
            r
        }),
        clients: agent.clients.clone(),
        authors: string_list(a, "authors"),
        repository: link(a, "repository"),
        website,
        homepage,
        license: string_field(a, "license"),
        license_link: link(a, "license_url"),
        auth,
        has_downloads: channels.iter().any(|c| !c.downloads.is_empty()),
        channels,
        other,
        readme: agent.readme.as_deref().map(markdown::render),
        verification: agent.verification.clone(),
    }
}
