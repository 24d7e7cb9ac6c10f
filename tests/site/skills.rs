//! The site's skills section: `skills/index.html` (and `skills/page/<n>/`), a page per skill
//! with its files, licence, agent, SKILL.md body and install commands, the "Skills" nav link
//! and the agent page's link to its skills; hostile strings as inert text; a registry without
//! skills gets exactly the site it had.

use crate::common as site_common;
use crate::render::{assert_page_invariants, html_files, resolve};

use std::collections::BTreeMap;

use acp_registry::site::{
    self, SiteError, SiteOptions, SiteSkill, SkillAgent, SkillFile, SkillInstall, PAGE_SIZE,
};
use site_common::*;

/// The navigation's link (the breadcrumb's is followed by another item, not a new line).
const NAV_LINK: &str = "skills/index.html\">Skills</a></li>\n";

fn file(path: &str, size: u64, executable: bool) -> SkillFile {
    SkillFile {
        path: path.to_string(),
        size,
        executable,
    }
}

/// A stand-alone skill listed by the well-known index and the marketplace.
pub(crate) fn skill(name: &str) -> SiteSkill {
    SiteSkill {
        name: name.to_string(),
        description: format!("Does {name} things."),
        license: Some("Apache-2.0".to_string()),
        compatibility: Some("Needs git.".to_string()),
        agent: None,
        files: vec![
            file("SKILL.md", 1536, false),
            file("scripts/run.sh", 12, true),
        ],
        body: "# Steps\n\nRun `scripts/run.sh`.\n".to_string(),
        install: SkillInstall {
            well_known: true,
            marketplace: Some(("acp-skills".to_string(), name.to_string())),
        },
    }
}

/// The skill agent `alpha` ships.
pub(crate) fn agent_skill() -> SiteSkill {
    SiteSkill {
        agent: Some(SkillAgent {
            id: "alpha".to_string(),
            name: "Alpha".to_string(),
        }),
        ..skill("alpha-helper")
    }
}

/// A skill whose every string is an injection attempt.
pub(crate) fn hostile_skill() -> SiteSkill {
    SiteSkill {
        name: "evil-skill".to_string(),
        description: "<script>alert('description')</script>\"><img src=x onerror=alert(1)>"
            .to_string(),
        license: Some("<svg onload=alert('license')>".to_string()),
        compatibility: Some("<iframe src=javascript:alert('compat')>".to_string()),
        agent: Some(SkillAgent {
            id: "evil\"><script>alert('agent id')</script>".to_string(),
            name: "<b onclick=alert('agent name')>Agent</b>".to_string(),
        }),
        files: vec![file("<script>alert('file')</script>.md", 3, false)],
        body: "<script>alert('body')</script>\n\n<img src=x onerror=alert('img')>\n\n\
               [x](javascript:alert('link'))\n"
            .to_string(),
        install: SkillInstall {
            well_known: true,
            marketplace: Some((
                "m\"><script>alert('marketplace')</script>".to_string(),
                "<b>plugin</b>".to_string(),
            )),
        },
    }
}

fn agents() -> Vec<site::SiteAgent> {
    vec![simple_agent("alpha", "Alpha"), simple_agent("beta", "Beta")]
}

fn with_site_url(url: &str) -> SiteOptions {
    SiteOptions {
        site_url: Some(url.to_string()),
        ..options()
    }
}

#[test]
fn skills_get_a_listing_and_a_page_linked_both_ways_with_the_agent() {
    let skills = [skill("zeta"), agent_skill(), skill("beta-tool")];
    let files = site::render(&agents(), &skills, &options()).unwrap();
    let listing = text(&files, "skills/index.html");
    // Sorted by name, each card linked to its page, the agent named.
    let positions: Vec<usize> = ["alpha-helper", "beta-tool", "zeta"]
        .iter()
        .map(|name| {
            listing
                .find(&format!(
                    "<a href=\"../skills/{name}/index.html\">{name}</a>"
                ))
                .unwrap_or_else(|| panic!("{name} not linked: {listing}"))
        })
        .collect();
    assert!(positions.is_sorted(), "{positions:?}");
    assert!(listing.contains("<dd>Alpha</dd>"));
    assert!(listing.contains("<dd>Stand-alone skill</dd>"));
    assert!(listing.contains("3 skills"));

    let page = text(&files, "skills/alpha-helper/index.html");
    assert!(page.contains("<h1>alpha-helper</h1>"));
    assert!(page.contains("<a href=\"../../agents/alpha/index.html\">Alpha</a>"));
    assert!(page.contains("<dt>License</dt><dd>Apache-2.0</dd>"));
    assert!(page.contains("<dt>Compatibility</dt><dd>Needs git.</dd>"));
    assert!(page.contains("<code>SKILL.md</code></th><td><span title=\"1536 bytes\">1.5 KiB"));
    assert!(page.contains("<code>scripts/run.sh</code></th><td><span title=\"12 bytes\">12 bytes</span></td><td>Executable"));
    // The body as the README renderer makes it (headings below the page's h2).
    assert!(page.contains("<h3>Steps</h3>"), "{page}");
    let standalone = text(&files, "skills/zeta/index.html");
    assert!(standalone.contains("<dt>Ships with</dt><dd>Stand-alone skill</dd>"));

    // The agent's page links to its skill; the other agent's does not.
    let alpha = text(&files, "agents/alpha/index.html");
    assert!(alpha.contains("<a href=\"../../skills/alpha-helper/index.html\">alpha-helper</a>"));
    assert!(!text(&files, "agents/beta/index.html").contains("skills/alpha-helper"));

    // Every page of the site links the skills.
    for (path, html) in html_files(&files) {
        assert_eq!(html.matches(NAV_LINK).count(), 1, "{path}: no Skills link");
        assert_page_invariants(&path, &html);
        for (tag, attrs) in tags(&html) {
            for (name, value) in &attrs {
                let linked = ["href", "src"].contains(&name.as_str());
                if !linked || value.contains(':') || value.starts_with('#') {
                    continue;
                }
                let target = resolve(&path, value);
                assert!(
                    target.as_ref().is_some_and(|t| files.contains_key(t)),
                    "{path}: <{tag} {name}={value:?}> leads to {target:?}"
                );
            }
        }
    }
}

#[test]
fn a_skill_whose_agent_is_not_on_the_site_names_it_without_a_link() {
    let mut orphan = agent_skill();
    orphan.agent = Some(SkillAgent {
        id: "gone".to_string(),
        name: "Gone".to_string(),
    });
    let files = site::render(&agents(), &[orphan], &options()).unwrap();
    let page = text(&files, "skills/alpha-helper/index.html");
    assert!(page.contains("<dd>Gone (<code>gone</code>)</dd>"), "{page}");
    assert!(!page.contains("agents/gone"));
}

#[test]
fn install_commands_follow_what_the_build_published_and_the_site_url() {
    let files = site::render(
        &agents(),
        &[skill("zeta")],
        &with_site_url("https://example.org/skills/"),
    )
    .unwrap();
    let page = text(&files, "skills/zeta/index.html");
    let commands = [
        (
            "skill-skills-cli-1",
            "npx skills add https://example.org/skills --skill zeta",
        ),
        (
            "skill-acp-registry-1",
            "acp-registry skill install https://example.org/skills zeta",
        ),
        (
            "skill-claude-code-1",
            "/plugin marketplace add <folder or repository of this site>",
        ),
        ("skill-claude-code-2", "/plugin install zeta@acp-skills"),
    ];
    for (id, command) in commands {
        assert_eq!(element_text(&page, id).as_deref(), Some(command), "{page}");
        assert!(page.contains(&format!("data-copy=\"{id}\" hidden>Copy")));
    }
    assert!(!page.contains("stands for the address"));

    // Without a site URL (or with one that is not a safe http(s) URL): a placeholder, and
    // where to set it.
    for options in [options(), with_site_url("javascript:alert(1)//'")] {
        let files = site::render(&agents(), &[skill("zeta")], &options).unwrap();
        let page = text(&files, "skills/zeta/index.html");
        assert_eq!(
            element_text(&page, "skill-skills-cli-1").as_deref(),
            Some("npx skills add <site URL> --skill zeta")
        );
        assert!(page.contains("<code>skills.site_url</code> in <code>acp-registry.jsonc</code>"));
        assert!(!page.contains("javascript"));
    }

    // Only what was published: marketplace only, then nothing.
    let mut marketplace_only = skill("zeta");
    marketplace_only.install.well_known = false;
    let page = text(
        &site::render(&agents(), &[marketplace_only], &options()).unwrap(),
        "skills/zeta/index.html",
    );
    assert!(!page.contains("npx skills") && !page.contains("skill install"));
    assert!(!page.contains("stands for the address"));
    assert!(page.contains("/plugin install zeta@acp-skills"));
    let mut unpublished = skill("zeta");
    unpublished.install = SkillInstall::default();
    let page = text(
        &site::render(&agents(), &[unpublished], &options()).unwrap(),
        "skills/zeta/index.html",
    );
    assert!(!page.contains("<pre"), "{page}");
    assert!(page.contains("publishes the skill for no skill client"));
}

#[test]
fn a_site_url_with_shell_characters_is_quoted_in_the_commands() {
    let files = site::render(
        &agents(),
        &[skill("zeta")],
        &with_site_url("https://example.org/a'b;$(x)"),
    )
    .unwrap();
    let page = text(&files, "skills/zeta/index.html");
    let command = element_text(&page, "skill-skills-cli-1").unwrap();
    // Re-serialised by the URL parser (percent-encoding what it must), then shell-quoted.
    assert_eq!(
        command,
        "npx skills add 'https://example.org/a'\\''b;$(x)' --skill zeta"
    );
}

#[test]
fn hostile_skill_strings_render_as_inert_text() {
    let files = site::render(&agents(), &[hostile_skill()], &options()).unwrap();
    for (path, html) in html_files(&files) {
        assert_page_invariants(&path, &html);
    }
    let page = text(&files, "skills/evil-skill/index.html");
    let listing = text(&files, "skills/index.html");
    for html in [&page, &listing] {
        for (tag, attrs) in tags(html) {
            assert!(
                !["img", "svg", "iframe", "b", "script"].contains(&tag.as_str())
                    || (tag == "script" && attrs.iter().any(|(n, _)| n == "src")),
                "hostile markup became a <{tag}> element: {attrs:?}"
            );
        }
        assert!(!html.contains("<script>alert"));
        assert!(html.contains(
            "&lt;script&gt;alert(&#39;description&#39;)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"
        ));
    }
    assert!(page.contains("<dt>License</dt><dd>&lt;svg onload=alert(&#39;license&#39;)&gt;</dd>"));
    assert!(page.contains("&lt;iframe src=javascript:alert(&#39;compat&#39;)&gt;"));
    assert!(page.contains("<code>&lt;script&gt;alert(&#39;file&#39;)&lt;/script&gt;.md</code>"));
    assert!(page.contains("&lt;b onclick=alert(&#39;agent name&#39;)&gt;Agent&lt;/b&gt;"));
    // The agent id is not a page of the site: named, escaped, never a link.
    assert!(!page.contains("href=\"../../agents/evil"));
    assert!(page.contains("/plugin install &lt;b&gt;plugin&lt;/b&gt;@m&quot;&gt;&lt;script&gt;"));
    // The body is sanitised like a README: scripts and images gone, javascript: links dropped.
    let body = &page[page.find("id=\"instructions\"").unwrap()..];
    assert!(!body.contains("alert(&#39;body&#39;)") && !body.contains("alert('body')"));
    assert!(
        !body.contains("<img") && body.contains("&lt;img src=x"),
        "{body}"
    );
    assert!(!body.contains("javascript:"), "{body}");
}

#[test]
fn skill_names_that_cannot_be_paths_and_duplicates_are_refused() {
    for name in [
        "", "Upper", "a/b", "..", "-lead", "trail-", "a--b", "a b", "é",
    ] {
        let mut bad = skill("x");
        bad.name = name.to_string();
        let result = site::render(&agents(), &[bad], &options());
        assert!(
            matches!(&result, Err(SiteError::InvalidSkillName(n)) if n == name),
            "{name:?}: {result:?}"
        );
    }
    let too_long = "a".repeat(65);
    let mut long = skill("x");
    long.name = too_long.clone();
    assert!(matches!(
        site::render(&agents(), &[long], &options()),
        Err(SiteError::InvalidSkillName(n)) if n == too_long
    ));
    let longest = "a".repeat(64);
    let files = site::render(&agents(), &[skill(&longest)], &options()).unwrap();
    assert!(files.contains_key(&format!("skills/{longest}/index.html")));
    let twice = site::render(&agents(), &[skill("zeta"), skill("zeta")], &options());
    assert!(matches!(twice, Err(SiteError::DuplicateSkill(n)) if n == "zeta"));
}

/// `html` without the lines the skills section adds to the agents' pages.
fn without_skill_lines(html: &str) -> String {
    html.split_inclusive('\n')
        .filter(|line| *line != format!("<li><a href=\"../../{NAV_LINK}"))
        .filter(|line| *line != format!("<li><a href=\"{NAV_LINK}"))
        .filter(|line| !line.starts_with("<dt>Agent Skills</dt>"))
        .collect()
}

#[test]
fn without_skills_the_site_is_unchanged_and_with_them_only_the_links_are_added() {
    let plain = site::render(&agents(), &[], &options()).unwrap();
    assert!(plain.keys().all(|path| !path.starts_with("skills/")));
    for (path, html) in html_files(&plain) {
        assert!(!html.contains("Skills</a>"), "{path}");
        assert!(!html.contains("Agent Skills"), "{path}");
    }
    let with = site::render(&agents(), &[agent_skill()], &options()).unwrap();
    let added: Vec<&String> = with.keys().filter(|p| !plain.contains_key(*p)).collect();
    assert_eq!(
        added,
        ["skills/alpha-helper/index.html", "skills/index.html"]
    );
    for (path, bytes) in &plain {
        let other = &with[path];
        if path.ends_with(".html") {
            let html = String::from_utf8(other.clone()).unwrap();
            assert_eq!(
                without_skill_lines(&html),
                String::from_utf8(bytes.clone()).unwrap(),
                "{path}"
            );
        } else {
            assert_eq!(other, bytes, "{path}");
        }
    }
}

#[test]
fn skills_render_deterministically_whatever_their_order() {
    let skills = vec![
        skill("zeta"),
        agent_skill(),
        hostile_skill(),
        skill("beta-tool"),
    ];
    let first = site::render(&agents(), &skills, &options()).unwrap();
    assert_eq!(first, site::render(&agents(), &skills, &options()).unwrap());
    let mut reversed = skills.clone();
    reversed.reverse();
    assert_eq!(
        first,
        site::render(&agents(), &reversed, &options()).unwrap()
    );
}

#[test]
fn a_thousand_skills_are_listed_on_static_pages_of_bounded_size() {
    let skills: Vec<SiteSkill> = (0..1000)
        .map(|i| SiteSkill {
            description: "d".repeat(1024),
            ..skill(&format!("skill-{i:04}"))
        })
        .collect();
    let files = site::render(&agents(), &skills, &options()).unwrap();
    let pages = 1000_usize.div_ceil(PAGE_SIZE);
    let mut listed = BTreeMap::new();
    for page in 1..=pages {
        let path = if page == 1 {
            "skills/index.html".to_string()
        } else {
            format!("skills/page/{page}/index.html")
        };
        let html = text(&files, &path);
        assert!(html.len() < 100_000, "{path}: {} bytes", html.len());
        assert_page_invariants(&path, &html);
        let cards = html.matches("<li class=\"card\">").count();
        assert_eq!(
            cards,
            if page < pages {
                PAGE_SIZE
            } else {
                1000 % PAGE_SIZE
            }
        );
        for (_, attrs) in tags(&html) {
            for (name, value) in attrs {
                if name != "href" || value.contains(':') || value.starts_with('#') {
                    continue;
                }
                let target = resolve(&path, &value).unwrap();
                assert!(files.contains_key(&target), "{path}: {value}");
                if target.starts_with("skills/skill-") {
                    *listed.entry(target).or_insert(0) += 1;
                }
            }
        }
        // The pager reaches the first and the last page from every page.
        if page != 1 {
            assert!(html.contains("skills/index.html\">1</a>"), "{path}");
        }
        if page != pages {
            assert!(html.contains(&format!("skills/page/{pages}/index.html\">{pages}</a>")));
        }
    }
    assert_eq!(listed.len(), 1000);
    assert!(listed.values().all(|count| *count == 1));
    assert!(!files.contains_key(&format!("skills/page/{}/index.html", pages + 1)));
    assert!(files.contains_key("skills/skill-0999/index.html"));
}
