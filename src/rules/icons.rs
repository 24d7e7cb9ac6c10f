//! Icons: presence, variants, XML well-formedness, root, size, colour, comments and safety.
//! Parsed as XML with roxmltree (DTDs refused), never matched with patterns. Safety is an
//! allow-list (`manifest::svg`, shared with the site's sanitiser): an element, attribute,
//! namespace or processing instruction not on it is `icon-unsafe`, and every value browsers
//! read as CSS is judged after CSS unescaping.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

use super::entry::{display_path, EntryDir};
use super::files::Listing;
use super::read::read_text;
use super::sink::Sink;
use crate::diagnostics::{Code, Diagnostic};
use crate::manifest::svg::{self, AttrKind, Hazard, SVG_NS};
use crate::manifest::MAX_ICON_BYTES;
use acp_registry_core::source::{Position, SourceFile, Span};

pub(crate) const ICON_FILES: [&str; 3] = ["icon.svg", "icon-light.svg", "icon-dark.svg"];

/// Check the entry's icons; returns the icon files present.
pub(crate) fn check(
    entry: &EntryDir,
    listing: &Listing,
    sink: &mut Sink,
    sources: &mut Vec<SourceFile>,
) -> Vec<String> {
    let present: Vec<String> = ICON_FILES
        .iter()
        .filter(|f| listing.files.contains(**f))
        .map(ToString::to_string)
        .collect();
    if !present.iter().any(|f| f == "icon.svg") {
        sink.push(
            Diagnostic::new(Code::IconMissing, "the entry has no icon.svg")
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
            Diagnostic::new(Code::IconVariants, format!("{has} has no {lacks}"))
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

/// Every icon rule on one SVG document, with the default policy (for checking output files).
pub fn check_icon(display: &str, text: &str) -> Vec<crate::diagnostics::Diagnostic> {
    let policy = super::policy::Policy::default();
    let mut sink = Sink::new(&policy, None);
    check_svg(&SourceFile::new(display, text.to_string()), &mut sink);
    sink.diagnostics
}

/// Every icon rule on one SVG document.
pub(crate) fn check_svg(source: &SourceFile, sink: &mut Sink) {
    let Some(doc) = parse(source, sink) else {
        return;
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
            Diagnostic::new(Code::IconRoot, message)
            .at(source, span(root.range()))
            .help(format!("wrap the drawing in <svg xmlns=\"{SVG_NS}\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\">")),
        );
        return;
    }
    check_size(source, root, sink);
    let mut walk = Walk {
        source,
        sink,
        uses_current_color: false,
        references: Vec::new(),
        namespaces: BTreeSet::new(),
    };
    walk.nodes(&doc);
    let Walk {
        uses_current_color,
        references,
        ..
    } = walk;
    check_references(source, &doc, references, sink);
    if !uses_current_color {
        sink.push(
            Diagnostic::new(Code::IconColor, "the icon never uses currentColor")
                .at(source, start_tag(root))
                .help(
                    "set `fill=\"currentColor\"` (or stroke) so the icon follows the text colour",
                ),
        );
    }
}

/// Parse without DTDs; a DOCTYPE is reported as unsafe, other errors as `icon-xml`.
fn parse<'s>(source: &'s SourceFile, sink: &mut Sink) -> Option<roxmltree::Document<'s>> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        ..Default::default()
    };
    let error = match roxmltree::Document::parse_with_options(&source.text, options) {
        Ok(doc) => return Some(doc),
        Err(e) => e,
    };
    if let roxmltree::Error::DtdDetected = error {
        let at = source.text.find("<!DOCTYPE").unwrap_or(0);
        sink.push(
            Diagnostic::new(Code::IconUnsafe, "the icon has a DOCTYPE")
                .at(source, Span::new(at, at + "<!DOCTYPE".len()))
                .help("remove the <!DOCTYPE …> declaration: it can declare entities and load external definitions"),
        );
        return None;
    }
    let pos = error.pos();
    let offset = source.offset(Position {
        line: pos.row as usize,
        column: pos.col as usize,
    });
    sink.push(
        Diagnostic::new(
            Code::IconXml,
            format!("the icon is not well-formed XML: {error}"),
        )
        .at(source, Span::new(offset, offset))
        .help("fix the markup; DTDs and entity declarations are not allowed"),
    );
    None
}

/// Where a decoded string (attribute value, text) sits in the source: byte for byte, unless
/// XML entities or CDATA changed it, in which case findings point at all of it.
#[derive(Clone, Copy)]
struct Place {
    start: usize,
    end: usize,
    exact: bool,
}

impl Place {
    fn of(source: &SourceFile, range: std::ops::Range<usize>, decoded: &str) -> Place {
        let exact = source.text.get(range.clone()) == Some(decoded);
        Place {
            start: range.start,
            end: range.end,
            exact,
        }
    }

    fn span(self, range: std::ops::Range<usize>) -> Span {
        if self.exact {
            Span::new(self.start + range.start, self.start + range.end)
        } else {
            Span::new(self.start, self.end)
        }
    }
}

/// The allow-list walk over every node; collects `#id` references for the end.
struct Walk<'a, 'p> {
    source: &'a SourceFile,
    sink: &'a mut Sink<'p>,
    uses_current_color: bool,
    references: Vec<(Span, String)>,
    /// Foreign namespaces already reported.
    namespaces: BTreeSet<String>,
}

impl Walk<'_, '_> {
    fn unsafe_at(&mut self, at: Span, message: String, help: &str) {
        self.sink.push(
            Diagnostic::new(Code::IconUnsafe, message)
                .at(self.source, at)
                .help(help),
        );
    }

    fn nodes(&mut self, doc: &roxmltree::Document) {
        // End of the refused element whose subtree is being skipped (one finding is enough).
        let mut skip_until = 0;
        for node in doc.descendants() {
            let range = node.range();
            if node.is_comment() {
                self.sink.push(
                    Diagnostic::new(Code::IconComment, "the icon contains an XML comment")
                        .at(self.source, span(range))
                        .help("remove the comment: `<!-- -->` breaks MDX embedding"),
                );
            } else if range.start < skip_until {
                // Inside a refused element: already reported.
            } else if let Some(pi) = node.pi() {
                let message = if pi.target.eq_ignore_ascii_case("xml-stylesheet") {
                    "`<?xml-stylesheet?>` loads an external stylesheet".to_string()
                } else {
                    format!("processing instruction `<?{}` is not allowed", pi.target)
                };
                self.unsafe_at(
                    span(range),
                    message,
                    "remove it; only the XML declaration may stand outside <svg>",
                );
            } else if node.is_text() {
                self.text(node);
            } else if node.is_element() {
                if self.element(node) {
                    self.attributes(node);
                } else {
                    skip_until = range.end;
                }
            }
        }
    }

    fn text(&mut self, node: roxmltree::Node) {
        let Some(text) = node.text() else { return };
        let place = Place::of(self.source, node.range(), text);
        let is_style = node
            .parent_element()
            .is_some_and(|p| p.tag_name().name() == "style");
        if is_style {
            self.css(text, place);
        } else if let Some(i) = text.to_ascii_lowercase().find("javascript:") {
            let (message, help) = hazard_message(&Hazard::Javascript);
            self.unsafe_at(place.span(i..i + 11), message, help);
        }
    }

    /// Whether the element is on the allow-list (reporting it when not), then its namespaces.
    fn element(&mut self, node: roxmltree::Node) -> bool {
        let tag = node.tag_name();
        if !svg::is_allowed_element(tag.namespace(), tag.name()) {
            let message = match tag.namespace() {
                Some(SVG_NS) => format!("<{}> is not allowed in an icon", tag.name()),
                Some(ns) => format!("<{}> is in the namespace `{ns}`, not SVG", tag.name()),
                None => format!("<{}> is in no namespace, not SVG", tag.name()),
            };
            self.unsafe_at(span(node.range()), message, ELEMENT_HELP);
            return false;
        }
        for ns in node.namespaces() {
            let uri = ns.uri();
            if !svg::is_allowed_namespace(uri) && self.namespaces.insert(uri.to_string()) {
                let declaration = ns
                    .name()
                    .map_or("xmlns".to_string(), |p| format!("xmlns:{p}"));
                self.unsafe_at(
                    start_tag(node),
                    format!("the icon declares the namespace `{uri}` ({declaration})"),
                    "remove the declaration and everything in that namespace; icons use only SVG (and xlink for `#id` references)",
                );
            }
        }
        true
    }

    fn attributes(&mut self, node: roxmltree::Node) {
        for attr in node.attributes() {
            let name = attr.name();
            let value = attr.value();
            let place = Place::of(self.source, attr.range_value(), value);
            let whole = place.span(0..value.len());
            if attr.namespace().is_none() && name.to_ascii_lowercase().starts_with("on") {
                let message = format!("event handler attribute `{name}`");
                self.unsafe_at(span(attr.range()), message, "remove the attribute");
                continue;
            }
            let Some(kind) = svg::attribute_kind(attr.namespace(), name) else {
                // As written (`xlink:actuate`): the prefix is what the author sees.
                let written = self.source.text[attr.range()].split('=').next();
                let written = written.unwrap_or(name).trim();
                let message = match attr.namespace() {
                    Some(ns) => format!(
                        "attribute `{written}` (namespace `{ns}`) is not allowed in an icon"
                    ),
                    None => format!("attribute `{name}` is not allowed in an icon"),
                };
                self.unsafe_at(span(attr.range()), message, ATTRIBUTE_HELP);
                continue;
            };
            match kind {
                AttrKind::Id => {}
                AttrKind::Href => match value.trim().strip_prefix('#') {
                    Some(id) => self.references.push((whole, id.to_string())),
                    None => self.unsafe_at(
                        whole,
                        format!("`{name}` points outside the icon: `{value}`"),
                        "only same-document `#fragment` references are allowed",
                    ),
                },
                AttrKind::Style => self.css(value, place),
                AttrKind::Paint => {
                    self.uses_current_color |=
                        check_paint(self.source, name, value, whole, self.sink);
                    self.value(value, place);
                }
                _ => self.value(value, place),
            }
        }
    }

    /// A `style` attribute or `<style>` text: fixed paints, then what it can fetch or run.
    fn css(&mut self, css: &str, place: Place) {
        static DECL: OnceLock<Regex> = OnceLock::new();
        let decl = DECL.get_or_init(|| {
            Regex::new(r"(?i)(?:^|[;{\s])(fill|stroke)\s*:\s*([^;}]+)").expect("valid regex")
        });
        let (text, map) = svg::normalise_css(css);
        for c in decl.captures_iter(&text) {
            let value = c.get(2).expect("group");
            let at = place.span(map[value.start()]..map[value.end()]);
            self.uses_current_color |= check_paint(
                self.source,
                &c[1].to_lowercase(),
                value.as_str(),
                at,
                self.sink,
            );
        }
        self.value(css, place);
    }

    /// Any value browsers may parse as CSS: nothing that fetches or runs, `#id` references
    /// recorded.
    fn value(&mut self, value: &str, place: Place) {
        let scan = svg::scan_css(value);
        for hazard in scan.hazards {
            let (message, help) = hazard_message(&hazard.what);
            self.unsafe_at(place.span(hazard.range), message, help);
        }
        for reference in scan.fragments {
            self.references
                .push((place.span(reference.range), reference.what));
        }
    }
}

const ELEMENT_HELP: &str = "icons are inlined into web pages; remove the element (allowed: svg, g, defs, symbol, use, shapes and paths, gradients, clip paths, masks, text, title, desc, style)";
const ATTRIBUTE_HELP: &str =
    "remove the attribute; icons may use only geometry, presentation and `#id` reference attributes";

fn hazard_message(hazard: &Hazard) -> (String, &'static str) {
    match hazard {
        Hazard::ExternalUrl(target) => (
            format!("`url({target})` loads an external resource"),
            "only same-document `url(#id)` references are allowed",
        ),
        Hazard::Import => (
            "CSS `@import` loads an external stylesheet".into(),
            "remove the import",
        ),
        Hazard::ImageFunction(function) => (
            format!("CSS `{function}()` loads an image"),
            "remove it; icons load nothing",
        ),
        Hazard::Expression => ("CSS `expression()` runs script".into(), "remove it"),
        Hazard::Binding(property) => (
            format!("CSS `{property}` attaches a script binding"),
            "remove the property",
        ),
        Hazard::Javascript => ("the icon contains `javascript:`".into(), "remove it"),
    }
}

/// Every `#id` reference must name an element of the icon: inlined into a page, a dangling
/// one resolves against the page's own elements.
fn check_references(
    source: &SourceFile,
    doc: &roxmltree::Document,
    references: Vec<(Span, String)>,
    sink: &mut Sink,
) {
    let ids: BTreeSet<&str> = doc
        .descendants()
        .filter_map(|n| n.attribute("id"))
        .collect();
    for (at, id) in references {
        if !ids.contains(id.as_str()) {
            sink.push(
                Diagnostic::new(
                    Code::IconUnsafe,
                    format!("`#{id}` names no element of the icon"),
                )
                .at(source, at)
                .help(format!("define the element with id=\"{id}\" in the icon, or remove the reference: inlined into a page it would reach the page's elements")),
            );
        }
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
                Diagnostic::new(
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
            Diagnostic::new(
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
            Diagnostic::new(
                Code::IconSize,
                format!("viewBox `{view_box}` is not a 16x16 square"),
            )
            .at(source, at_root)
            .help("add width=\"16\" height=\"16\", or use viewBox=\"0 0 16 16\""),
        );
    }
}

/// A paint keyword (CSS keywords ignore ASCII case, as the site's recolouring does) or a
/// reference to a paint server in the icon.
fn allowed_paint(value: &str) -> bool {
    let v = value.trim().trim_end_matches("!important").trim();
    svg::is_paint_keyword(v) || svg::url_fragment(v).is_some()
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
            Diagnostic::new(
                Code::IconColor,
                format!("`{property}` is `{}`, a fixed colour", value.trim()),
            )
            .at(source, at)
            .help(format!("use `{property}=\"currentColor\"` (or `none`)")),
        );
    }
    value.trim().eq_ignore_ascii_case("currentColor")
}
