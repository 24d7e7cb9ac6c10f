//! Icons: presence, variants, XML well-formedness, root, size, colour, comments and safety.
//! Parsed as XML with roxmltree (DTDs refused), never matched with patterns.

use std::sync::OnceLock;

use regex::Regex;

use super::files::Listing;
use super::{display_path, finding, read_text, Code, EntryDir, Sink};
use crate::manifest::MAX_ICON_BYTES;
use crate::source::{Position, SourceFile, Span};

pub const ICON_FILES: [&str; 3] = ["icon.svg", "icon-light.svg", "icon-dark.svg"];
const SVG_NS: &str = "http://www.w3.org/2000/svg";

/// Check the entry's icons; returns the icon files present.
pub fn check(
    entry: &EntryDir,
    listing: &Listing,
    sink: &mut Sink,
    sources: &mut Vec<SourceFile>,
) -> Vec<String> {
    let present: Vec<String> = ICON_FILES
        .iter()
        .filter(|f| listing.files.contains(**f))
        .map(|f| f.to_string())
        .collect();
    if !present.iter().any(|f| f == "icon.svg") {
        sink.push(
            finding(Code::IconMissing, "the entry has no icon.svg")
                .in_file(display_path(entry, "icon.svg"))
                .help("add a 16x16 SVG that uses currentColor"),
        );
    }
    let light = listing.files.contains("icon-light.svg");
    let dark = listing.files.contains("icon-dark.svg");
    if light != dark {
        let (has, lacks) = if light {
            ("icon-light.svg", "icon-dark.svg")
        } else {
            ("icon-dark.svg", "icon-light.svg")
        };
        sink.push(
            finding(Code::IconVariants, format!("{has} has no {lacks}"))
                .in_file(display_path(entry, has))
                .help(format!("add {lacks}, or remove {has}")),
        );
    }
    for file in &present {
        let display = display_path(entry, file);
        if let Some(text) = read_text(&entry.path, file, &display, MAX_ICON_BYTES, sink) {
            let source = SourceFile::new(display, text);
            check_svg(&source, sink);
            sources.push(source);
        }
    }
    present
}

fn span(range: std::ops::Range<usize>) -> Span {
    Span::new(range.start, range.end)
}

/// Every icon rule on one SVG document.
pub fn check_svg(source: &SourceFile, sink: &mut Sink) {
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        ..Default::default()
    };
    let doc = match roxmltree::Document::parse_with_options(&source.text, options) {
        Ok(doc) => doc,
        Err(e) => {
            let pos = e.pos();
            let offset = source.offset(Position {
                line: pos.row as usize,
                column: pos.col as usize,
            });
            sink.push(
                finding(
                    Code::IconXml,
                    format!("the icon is not well-formed XML: {e}"),
                )
                .at(source, Span::new(offset, offset))
                .help("fix the markup; DTDs and entity declarations are not allowed"),
            );
            return;
        }
    };
    let root = doc.root_element();
    if root.tag_name().name() != "svg" || root.tag_name().namespace() != Some(SVG_NS) {
        let message = if root.tag_name().name() == "svg" {
            format!("the root <svg> is not in the SVG namespace (`xmlns=\"{SVG_NS}\"` is missing or wrong)")
        } else {
            format!(
                "the root element is <{}>, not <svg>",
                root.tag_name().name()
            )
        };
        sink.push(
            finding(Code::IconRoot, message)
            .at(source, span(root.range()))
            .help(format!("wrap the drawing in <svg xmlns=\"{SVG_NS}\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\">")),
        );
        return;
    }
    check_size(source, root, sink);
    let mut uses_current_color = false;
    for node in doc.descendants() {
        if node.is_comment() {
            sink.push(
                finding(Code::IconComment, "the icon contains an XML comment")
                    .at(source, span(node.range()))
                    .help("remove the comment: `<!-- -->` breaks MDX embedding"),
            );
            continue;
        }
        if node.is_text() {
            if let Some(text) = node.text() {
                let is_style = node
                    .parent_element()
                    .is_some_and(|p| p.tag_name().name() == "style");
                if is_style {
                    uses_current_color |= check_css(source, text, node.range().start, sink);
                } else {
                    check_javascript(source, text, node.range().start, sink);
                }
            }
            continue;
        }
        if !node.is_element() {
            continue;
        }
        let name = node.tag_name().name();
        if name.eq_ignore_ascii_case("script") || name.eq_ignore_ascii_case("foreignObject") {
            sink.push(
                finding(
                    Code::IconUnsafe,
                    format!("<{name}> is not allowed in an icon"),
                )
                .at(source, span(node.range()))
                .help("icons are inlined into web pages; remove the element"),
            );
        }
        let animates = matches!(
            name,
            "set" | "animate" | "animateTransform" | "animateMotion"
        );
        if animates {
            let target = node
                .attribute("attributeName")
                .unwrap_or_default()
                .to_ascii_lowercase();
            if target.ends_with("href") || target.starts_with("on") {
                sink.push(
                    finding(
                        Code::IconUnsafe,
                        format!("<{name}> rewrites `{target}` at run time"),
                    )
                    .at(source, span(node.range()))
                    .help("icons must not animate links or event handlers; remove the element"),
                );
            }
        }
        for attr in node.attributes() {
            let attr_name = attr.name();
            let value = attr.value();
            let value_span = span(attr.range_value());
            let lower = attr_name.to_ascii_lowercase();
            if lower.starts_with("on") {
                sink.push(
                    finding(
                        Code::IconUnsafe,
                        format!("event handler attribute `{attr_name}`"),
                    )
                    .at(source, span(attr.range()))
                    .help("remove the attribute"),
                );
                continue;
            }
            if lower == "href" && !value.trim_start().starts_with('#') {
                sink.push(
                    finding(
                        Code::IconUnsafe,
                        format!("`{attr_name}` points outside the icon: `{value}`"),
                    )
                    .at(source, value_span)
                    .help("only same-document `#fragment` references are allowed"),
                );
                continue;
            }
            if value.to_ascii_lowercase().contains("javascript:") && lower != "href" {
                sink.push(
                    finding(
                        Code::IconUnsafe,
                        format!("`{attr_name}` contains `javascript:`"),
                    )
                    .at(source, value_span)
                    .help("remove it"),
                );
                continue;
            }
            match lower.as_str() {
                "fill" | "stroke" => {
                    uses_current_color |= check_paint(source, attr_name, value, value_span, sink);
                }
                "style" => {
                    uses_current_color |= check_css(source, value, attr.range_value().start, sink);
                }
                _ => {
                    if value.to_ascii_lowercase().contains("url(") {
                        check_urls(source, value, attr.range_value().start, sink);
                    }
                }
            }
        }
    }
    if !uses_current_color {
        sink.push(
            finding(Code::IconColor, "the icon never uses currentColor")
                .at(source, start_tag(root))
                .help(
                    "set `fill=\"currentColor\"` (or stroke) so the icon follows the text colour",
                ),
        );
    }
}

/// The `<svg` start of an element: a short span to point at.
fn start_tag(node: roxmltree::Node) -> Span {
    let start = node.range().start;
    Span::new(start, start + 1 + node.tag_name().name().len())
}

fn parse_length(value: &str) -> Option<f64> {
    let trimmed = value.trim();
    let number = trimmed.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    if trimmed.ends_with('%') {
        return None;
    }
    number.trim().parse().ok()
}

fn check_size(source: &SourceFile, root: roxmltree::Node, sink: &mut Sink) {
    let width = root.attribute("width");
    let height = root.attribute("height");
    let at_root = start_tag(root);
    if width.is_some() || height.is_some() {
        let w = width.and_then(parse_length);
        let h = height.and_then(parse_length);
        if w != Some(16.0) || h != Some(16.0) {
            sink.push(
                finding(
                    Code::IconSize,
                    format!(
                        "the icon is {}x{}, not 16x16",
                        width.unwrap_or("(no width)"),
                        height.unwrap_or("(no height)")
                    ),
                )
                .at(source, at_root)
                .help(
                    "set width=\"16\" height=\"16\" and keep the drawing's coordinates in viewBox",
                ),
            );
        }
        return;
    }
    let Some(view_box) = root.attribute("viewBox") else {
        sink.push(
            finding(
                Code::IconSize,
                "the icon has neither width/height nor a viewBox",
            )
            .at(source, at_root)
            .help("add width=\"16\" height=\"16\" viewBox=\"0 0 16 16\""),
        );
        return;
    };
    let numbers: Vec<f64> = view_box
        .split([' ', ','])
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    let ok = numbers.len() == 4 && numbers[2] == 16.0 && numbers[3] == 16.0;
    if !ok {
        sink.push(
            finding(
                Code::IconSize,
                format!("viewBox `{view_box}` is not a 16x16 square"),
            )
            .at(source, at_root)
            .help("add width=\"16\" height=\"16\", or use viewBox=\"0 0 16 16\""),
        );
    }
}

fn allowed_paint(value: &str) -> bool {
    let v = value.trim().trim_end_matches("!important").trim();
    v.eq_ignore_ascii_case("currentColor")
        || v == "none"
        || v == "inherit"
        || v.starts_with("url(#")
}

/// Report a fixed paint; returns whether it uses currentColor.
fn check_paint(
    source: &SourceFile,
    property: &str,
    value: &str,
    at: Span,
    sink: &mut Sink,
) -> bool {
    if !allowed_paint(value) {
        sink.push(
            finding(
                Code::IconColor,
                format!("`{property}` is `{}`, a fixed colour", value.trim()),
            )
            .at(source, at)
            .help(format!("use `{property}=\"currentColor\"` (or `none`)")),
        );
    }
    if value.trim().to_ascii_lowercase().starts_with("url(") {
        check_urls(source, value, at.start, sink);
    }
    value.trim().eq_ignore_ascii_case("currentColor")
}

/// Check CSS (a `style` attribute or a `<style>` element) at byte `base` of the source;
/// returns whether it uses currentColor.
fn check_css(source: &SourceFile, css: &str, base: usize, sink: &mut Sink) -> bool {
    static DECL: OnceLock<Regex> = OnceLock::new();
    let decl = DECL.get_or_init(|| {
        Regex::new(r"(?i)(?:^|[;{\s])(fill|stroke)\s*:\s*([^;}]+)").expect("valid regex")
    });
    let mut uses = false;
    for c in decl.captures_iter(css) {
        let value = c.get(2).expect("group");
        let at = Span::new(base + value.start(), base + value.end());
        uses |= check_paint(source, &c[1].to_lowercase(), value.as_str(), at, sink);
    }
    let lower = css.to_ascii_lowercase();
    if let Some(i) = lower.find("@import") {
        sink.push(
            finding(
                Code::IconUnsafe,
                "CSS `@import` loads an external stylesheet",
            )
            .at(source, Span::new(base + i, base + i + 7))
            .help("remove the import"),
        );
    }
    check_urls(source, css, base, sink);
    check_javascript(source, css, base, sink);
    uses
}

fn check_urls(source: &SourceFile, text: &str, base: usize, sink: &mut Sink) {
    static URL: OnceLock<Regex> = OnceLock::new();
    let url = URL.get_or_init(|| Regex::new(r#"(?i)url\(\s*['"]?([^'")]*)"#).expect("valid regex"));
    for c in url.captures_iter(text) {
        let target = c.get(1).expect("group");
        if !target.as_str().trim().starts_with('#') {
            let whole = c.get(0).expect("match");
            sink.push(
                finding(
                    Code::IconUnsafe,
                    format!("`url({})` loads an external resource", target.as_str()),
                )
                .at(source, Span::new(base + whole.start(), base + whole.end()))
                .help("only same-document `url(#id)` references are allowed"),
            );
        }
    }
}

fn check_javascript(source: &SourceFile, text: &str, base: usize, sink: &mut Sink) {
    if let Some(i) = text.to_ascii_lowercase().find("javascript:") {
        sink.push(
            finding(Code::IconUnsafe, "the icon contains `javascript:`")
                .at(source, Span::new(base + i, base + i + 11))
                .help("remove it"),
        );
    }
}
