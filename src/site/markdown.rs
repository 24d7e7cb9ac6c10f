//! README rendering: `CommonMark` (`pulldown-cmark`) to HTML, sanitised (ammonia for raw HTML).
//!
//! Allowed: text formatting, lists, tables, code, quotes and links whose URL is `http(s)` or
//! relative; every link gets `rel="noopener noreferrer"`. Dropped: scripts and styles with
//! their content, event handlers, `style=`/`class=`/`id=` attributes, forms, frames, and
//! images (the CSP allows no external image, so an image becomes a link to it). Headings are
//! moved below the page's own `<h2>` without skipping a level. Raw HTML is the only input
//! that needs an HTML sanitiser; Markdown without it is clean by construction (see
//! [`render`]), which keeps 10,000 READMEs fast.
//!
//! A unit test checks that ammonia leaves the output of Markdown without raw HTML unchanged;
//! skipping it cut the benchmark's render time by about a third.

use std::collections::{BTreeMap, HashSet};
use std::sync::OnceLock;

use pulldown_cmark::{
    html, Alignment, CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd,
};

use crate::diagnostics::escape::{self, Quotes};

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

/// Whether a README link may keep its URL: absolute `http`/`https`, or relative (no scheme),
/// decided by the WHATWG URL parser as browsers do (the same test ammonia applies).
fn allowed_url(url: &str) -> bool {
    match url::Url::parse(url) {
        Ok(parsed) => matches!(parsed.scheme(), "http" | "https"),
        Err(url::ParseError::RelativeUrlWithoutBase) => true,
        Err(_) => false,
    }
}

/// README Markdown to sanitised HTML.
///
/// The Markdown events are rewritten first ([`Rewrite`]): headings moved under the page's
/// `<h2>`, images turned into links, links written by us with `rel` (and without their URL
/// when it is not http(s) or relative), code-block info strings and table alignments (which
/// would become `class=`/`style=`) dropped. A README without raw HTML then yields only the
/// tags of pulldown-cmark's writer, with escaped text, which is already clean; a README with
/// raw HTML goes through ammonia as well. `tests::fast_path_output_is_already_clean` checks
/// that ammonia leaves the first kind unchanged.
pub(crate) fn render(markdown: &str) -> String {
    let events: Vec<Event> = Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    )
    .collect();
    let has_raw_html = events
        .iter()
        .any(|e| matches!(e, Event::Html(_) | Event::InlineHtml(_)));
    let mut rewrite = Rewrite::new(&events);
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(
        &mut out,
        events.into_iter().filter_map(|event| rewrite.event(event)),
    );
    if has_raw_html {
        sanitizer().clean(&out).to_string()
    } else {
        out
    }
}

/// The state of the event rewrite: heading levels and the links opened so far.
struct Rewrite {
    /// The README's heading levels, in order of rank, mapped to h3..h6.
    rank: BTreeMap<usize, usize>,
    /// The level of the previous heading (the section's h2 comes first).
    previous: usize,
    open_headings: Vec<HeadingLevel>,
    /// For each open link or image: whether we wrote an `<a>`.
    open_links: Vec<bool>,
}

impl Rewrite {
    fn new(events: &[Event]) -> Self {
        let mut used: Vec<usize> = events
            .iter()
            .filter_map(|e| match e {
                Event::Start(Tag::Heading { level, .. }) => Some(level_number(*level)),
                _ => None,
            })
            .collect();
        used.sort_unstable();
        used.dedup();
        Rewrite {
            rank: used
                .iter()
                .enumerate()
                .map(|(i, level)| (*level, (3 + i).min(6)))
                .collect(),
            previous: 2,
            open_headings: Vec::new(),
            open_links: Vec::new(),
        }
    }

    /// The event to write instead of `event`, or None to drop it.
    fn event<'a>(&mut self, event: Event<'a>) -> Option<Event<'a>> {
        Some(match event {
            Event::Start(Tag::Heading { level, .. }) => self.heading(level),
            Event::End(TagEnd::Heading(_)) => Event::End(TagEnd::Heading(
                self.open_headings.pop().unwrap_or(HeadingLevel::H6),
            )),
            Event::Start(
                Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    ..
                }
                | Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    ..
                },
            ) => self.link(link_type, &dest_url, &title)?,
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if !self.open_links.pop().unwrap_or(false) {
                    return None;
                }
                Event::InlineHtml("</a>".into())
            }
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => {
                Event::Start(Tag::CodeBlock(CodeBlockKind::Indented))
            }
            Event::Start(Tag::Table(alignments)) => {
                Event::Start(Tag::Table(vec![Alignment::None; alignments.len()]))
            }
            other => other,
        })
    }

    /// A heading at its rank, never deeper than one below the previous heading.
    fn heading<'a>(&mut self, level: HeadingLevel) -> Event<'a> {
        let mapped = self.rank[&level_number(level)].min(self.previous + 1);
        self.previous = mapped;
        let level = level_of(mapped);
        self.open_headings.push(level);
        Event::Start(Tag::Heading {
            level,
            id: None,
            classes: Vec::new(),
            attrs: Vec::new(),
        })
    }

    /// Our own `<a>` for a link or an image, or None (the text stays) when its URL is not
    /// allowed.
    fn link<'a>(&mut self, link_type: LinkType, url: &str, title: &str) -> Option<Event<'a>> {
        // E-mail autolinks would need `mailto:`, which is not allowed.
        let keep = link_type != LinkType::Email && allowed_url(url);
        self.open_links.push(keep);
        if !keep {
            return None;
        }
        let mut tag = String::from("<a href=\"");
        let _ = escape::html_into(&mut tag, url, Quotes::Both);
        tag.push('"');
        if !title.is_empty() {
            tag.push_str(" title=\"");
            let _ = escape::html_into(&mut tag, title, Quotes::Both);
            tag.push('"');
        }
        tag.push_str(" rel=\"noopener noreferrer\">");
        Some(Event::InlineHtml(tag.into()))
    }
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

    /// Tags with sorted, entity-decoded attributes, and text with entities decoded, so two
    /// serialisations of the same DOM compare equal.
    fn normalise(html: &str) -> Vec<String> {
        let token =
            regex::Regex::new(r#"<(/?)([a-zA-Z0-9]+)((?:\s+[a-z-]+(?:="[^"]*")?)*)\s*/?>|[^<]+"#)
                .unwrap();
        let attr = regex::Regex::new(r#"([a-z-]+)(?:="([^"]*)")?"#).unwrap();
        let decode = |t: &str| {
            t.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&#x27;", "'")
                .replace("&nbsp;", "\u{a0}")
                .replace("&amp;", "&")
        };
        token
            .captures_iter(html)
            .map(|c| match c.get(2) {
                Some(name) => {
                    let mut attrs: Vec<String> = attr
                        .captures_iter(&c[3])
                        .map(|a| {
                            format!("{}={}", &a[1], decode(a.get(2).map_or("", |m| m.as_str())))
                        })
                        .collect();
                    attrs.sort();
                    format!("<{}{} {}>", &c[1], name.as_str(), attrs.join(" "))
                }
                None => decode(&c[0]),
            })
            .collect()
    }

    #[test]
    fn fast_path_output_is_already_clean() {
        let markdown = r#"# Title with `<script>` and *emphasis*

Text with **strong**, ~~deleted~~, `code <b>`, an entity &amp; &#x3C;script&#x3E; and a
hard break  
here. Autolink <https://example.com/a?b=1&c=2> and <mail@example.com>.

[good](https://example.com/x "a \"quoted\" title") [relative](docs/a.md) [frag](#top)
[js](javascript:alert(1)) [JS](JAVASCRIPT:alert(1)) [data](data:text/html,x) [mail](mailto:a@b.c)
[spaced]( javascript:alert(1) ) [proto](//example.com/x) ![img](https://example.com/i.png)
![bad img](javascript:alert(1))

> quote with [link](https://example.com/q)

3. three
4. four

- a
- b

```"><script>alert(1)</script>
fenced <code>
```

| left | centre | right |
|:-----|:------:|------:|
| 1 | 2 | 3 |

---
"#;
        let html = render(markdown);
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("style="), "{html}");
        assert!(!html.contains("class="), "{html}");
        assert!(
            !html.to_ascii_lowercase().contains("javascript:alert(1)\""),
            "{html}"
        );
        assert!(!html.contains("href=\"mailto:"), "{html}");
        assert!(!html.contains("href=\"data:"), "{html}");
        assert!(
            html.contains(r#"<a href="//example.com/x" rel="noopener noreferrer">proto</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"<ol start="3">"#), "{html}");
        assert!(html.contains(" and mail@example.com."), "{html}");
        let cleaned = super::sanitizer().clean(&html).to_string();
        assert_eq!(
            normalise(&cleaned),
            normalise(&html),
            "ammonia changed the fast-path output:\n{html}\n---\n{cleaned}"
        );
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
