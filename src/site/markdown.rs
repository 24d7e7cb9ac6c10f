//! README rendering: CommonMark (pulldown-cmark) to HTML, then sanitised with ammonia.
//!
//! Allowed: text formatting, lists, tables, code, quotes and links whose URL is `http(s)` or
//! relative; every link gets `rel="noopener noreferrer"`. Dropped: scripts and styles with
//! their content, event handlers, `style=`/`class=`/`id=` attributes, forms, frames, and
//! images (the CSP allows no external image, so an image becomes a link to it). Headings are
//! moved below the page's own `<h2>` without skipping a level.

use std::collections::{BTreeMap, HashSet};
use std::sync::OnceLock;

use pulldown_cmark::{html, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// Tags the README may keep. Headings start at h3: the page owns h1 and h2.
const TAGS: [&str; 36] = [
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "code",
    "dd",
    "del",
    "details",
    "dl",
    "dt",
    "em",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "kbd",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "samp",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
];

fn sanitizer() -> &'static ammonia::Builder<'static> {
    static BUILDER: OnceLock<ammonia::Builder<'static>> = OnceLock::new();
    BUILDER.get_or_init(|| {
        let mut builder = ammonia::Builder::empty();
        builder
            .tags(TAGS.into_iter().collect::<HashSet<_>>())
            .clean_content_tags(HashSet::from(["script", "style"]))
            .tag_attributes(
                [
                    ("a", HashSet::from(["href", "title"])),
                    ("abbr", HashSet::from(["title"])),
                    ("ol", HashSet::from(["start"])),
                ]
                .into_iter()
                .collect(),
            )
            .url_schemes(HashSet::from(["http", "https"]))
            .url_relative(ammonia::UrlRelative::PassThrough)
            .link_rel(Some("noopener noreferrer"))
            .strip_comments(true);
        builder
    })
}

fn level_number(level: HeadingLevel) -> usize {
    level as usize
}

fn level_of(n: usize) -> HeadingLevel {
    match n {
        0..=1 => HeadingLevel::H1,
        2 => HeadingLevel::H2,
        3 => HeadingLevel::H3,
        4 => HeadingLevel::H4,
        5 => HeadingLevel::H5,
        _ => HeadingLevel::H6,
    }
}

/// README Markdown to sanitised HTML.
pub fn render(markdown: &str) -> String {
    let events: Vec<Event> = Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    )
    .collect();

    // Map the README's heading levels, in order of rank, to h3..h6, never skipping a level
    // after the previous heading (the section's h2 comes first).
    let mut used: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            Event::Start(Tag::Heading { level, .. }) => Some(level_number(*level)),
            _ => None,
        })
        .collect();
    used.sort_unstable();
    used.dedup();
    let rank: BTreeMap<usize, usize> = used
        .iter()
        .enumerate()
        .map(|(i, level)| (*level, (3 + i).min(6)))
        .collect();
    let mut previous = 2;
    let mut open: Vec<HeadingLevel> = Vec::new();

    let events = events.into_iter().map(|event| match event {
        Event::Start(Tag::Heading { level, .. }) => {
            let mapped = rank[&level_number(level)].min(previous + 1);
            previous = mapped;
            let level = level_of(mapped);
            open.push(level);
            Event::Start(Tag::Heading {
                level,
                id: None,
                classes: Vec::new(),
                attrs: Vec::new(),
            })
        }
        Event::End(TagEnd::Heading(_)) => {
            Event::End(TagEnd::Heading(open.pop().unwrap_or(HeadingLevel::H6)))
        }
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    let mut raw = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut raw, events);
    sanitizer().clean(&raw).to_string()
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn headings_start_at_h3_without_gaps() {
        // Ranks: # → h3, ## → h4, #### → h5; but never deeper than one below the previous.
        let html = render("## A\n\n#### B\n\n# C\n\n## D\n\n#### E\n");
        assert_eq!(
            html,
            "<h3>A</h3>\n<h4>B</h4>\n<h3>C</h3>\n<h4>D</h4>\n<h5>E</h5>\n"
        );
    }

    #[test]
    fn scripts_handlers_and_bad_links_are_removed() {
        let html = render(
            "<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n\
             [x](javascript:alert(3)) [y](https://example.com/) [z](docs/a.md)\n\n\
             <a href=\"data:text/html,hi\" onclick=\"alert(4)\">d</a>",
        );
        assert!(!html.contains("alert(1)"), "{html}");
        assert!(!html.contains("onerror"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(!html.contains("onclick"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(
            html.contains(r#"<a href="https://example.com/" rel="noopener noreferrer">y</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"href="docs/a.md""#), "{html}");
    }

    #[test]
    fn images_become_links() {
        let html = render("![logo](https://example.com/logo.png)");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains(
                r#"<a href="https://example.com/logo.png" rel="noopener noreferrer">logo</a>"#
            ),
            "{html}"
        );
    }
}
