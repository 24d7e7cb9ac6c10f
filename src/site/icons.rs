//! Icons: re-serialised from an allow-list and inlined in the site's stylesheets, painted
//! with the text colour.
//!
//! Each icon is parsed (roxmltree) and written out again with only the drawing elements and
//! attributes of the allow-list the `icon-unsafe` rule uses (`manifest::svg`); paint other
//! than `currentColor`/`none`/`inherit` becomes `currentColor`, references are kept only
//! when they name an element that is written too (`#id`), CSS, `title`/`desc`, annotations,
//! comments and character data outside `<text>` are dropped. Pages show the icon as a CSS
//! mask over a box whose background is `currentColor` (`site.css` `.icon`), so it follows
//! the text colour in both colour schemes; the mask is the icon as a base64 `data:` URI in
//! the agent's rule of `assets/icons/<n>.css`, because browsers fetch mask images in CORS
//! mode, which a `file://` page cannot do for a file (nor a page on another origin than
//! the icon). `icon-light.svg`/`icon-dark.svg` are swapped with `prefers-color-scheme`. No
//! per-agent inline style is needed, which keeps the CSP strict.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::diagnostics::escape::{self, Quotes};
use crate::manifest::svg::{self, AttrKind};
use crate::manifest::MAX_ICON_BYTES;

/// Class of the box painted with the generic icon when an agent has none (or a broken one).
pub(crate) const FALLBACK_CLASS: &str = "i-none";

/// First line of every `assets/icons/<n>.css`.
pub(crate) const CSS_HEADER: &str =
    "/* One mask per agent icon: site.css .icon paints the box with currentColor through var(--icon). */\n";

/// Deeper elements are dropped (with their subtree).
const MAX_DEPTH: usize = 32;

/// The icons of one agent, sanitised: a plain icon, theme variants, or both.
pub(crate) struct IconSet {
    pub(crate) plain: Option<String>,
    pub(crate) light_dark: Option<(String, String)>,
}

pub(crate) fn sanitise_set(icons: &BTreeMap<String, Vec<u8>>) -> Option<IconSet> {
    let get = |name: &str| icons.get(name).and_then(|bytes| sanitise(bytes));
    let plain = get("icon.svg");
    let light_dark = match (get("icon-light.svg"), get("icon-dark.svg")) {
        (Some(light), Some(dark)) => Some((light, dark)),
        _ => None,
    };
    if plain.is_none() && light_dark.is_none() {
        return None;
    }
    Some(IconSet { plain, light_dark })
}

/// The rules of one agent: `--icon` set to its (sanitised) icon as a base64 `data:` URI,
/// which `site.css` uses as the mask; with theme variants, the light one and the dark one
/// inside `@media (prefers-color-scheme:dark)`. Ids are `^[a-z][a-z0-9-]*$`, valid in class
/// names as they are, and base64 cannot close the quoted `url("…")`.
pub(crate) fn css_rule(id: &str, set: &IconSet) -> String {
    let rule = |svg: &str| format!(".i-{id}{{--icon:url(\"{}\")}}", svg::data_uri(svg));
    match (&set.light_dark, &set.plain) {
        (Some((light, dark)), _) => format!(
            "{}\n@media (prefers-color-scheme:dark){{{}}}\n",
            rule(light),
            rule(dark)
        ),
        (None, Some(plain)) => format!("{}\n", rule(plain)),
        (None, None) => String::new(),
    }
}

/// Attribute values: only characters that can appear in numbers, path data, transforms and
/// keywords, and nothing the CSS scan objects to.
fn is_plain_value(value: &str) -> bool {
    value.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                ' ' | '\t' | '\n' | '\r' | '.' | ',' | '-' | '+' | '(' | ')' | '%' | '_'
            )
    }) && is_inert(value)
}

/// Font names, quoted or not.
fn is_font_list(value: &str) -> bool {
    value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | ',' | '-' | '_' | '.' | '\'' | '"'))
        && is_inert(value)
}

/// Nothing that fetches, runs or refers to an element.
fn is_inert(value: &str) -> bool {
    let scan = svg::scan_css(value);
    scan.hazards.is_empty() && scan.fragments.is_empty()
}

/// Whether an element is written out: on the shared allow-list and drawn.
fn is_kept(node: roxmltree::Node) -> bool {
    let tag = node.tag_name();
    node.is_element()
        && svg::is_allowed_element(tag.namespace(), tag.name())
        && !svg::NOT_DRAWN.contains(&tag.name())
}

/// Ids of the elements that will be written, so references to dropped ones can be dropped
/// too (a dangling `#id` would resolve against the page).
fn kept_ids<'a>(node: roxmltree::Node<'a, '_>, depth: usize, ids: &mut BTreeSet<&'a str>) {
    if depth > MAX_DEPTH || !is_kept(node) {
        return;
    }
    if let Some(id) = node
        .attribute("id")
        .map(str::trim)
        .filter(|id| svg::is_plain_id(id))
    {
        ids.insert(id);
    }
    for child in node.children() {
        kept_ids(child, depth + 1, ids);
    }
}

/// The value to write for an allowed attribute, or None to drop it.
fn clean_attribute(kind: AttrKind, value: &str, ids: &BTreeSet<&str>) -> Option<String> {
    let kept = |id: &str| ids.contains(id);
    let keyword = svg::is_paint_keyword(value);
    match kind {
        AttrKind::Paint | AttrKind::Color => Some(match svg::url_fragment(value) {
            _ if keyword => value.trim().to_string(),
            Some(id) if kind == AttrKind::Paint && kept(id) => format!("url(#{id})"),
            _ => "currentColor".to_string(),
        }),
        AttrKind::Reference => svg::url_fragment(value)
            .filter(|id| kept(id))
            .map(|id| format!("url(#{id})")),
        AttrKind::Href => svg::fragment(value)
            .filter(|id| kept(id))
            .map(|id| format!("#{id}")),
        AttrKind::Id => svg::is_plain_id(value.trim()).then(|| value.trim().to_string()),
        AttrKind::Plain => is_plain_value(value).then(|| value.to_string()),
        AttrKind::FontList => is_font_list(value).then(|| value.to_string()),
        AttrKind::Style | AttrKind::Annotation => None,
    }
}

fn write_element(out: &mut String, node: roxmltree::Node, depth: usize, ids: &BTreeSet<&str>) {
    if depth > MAX_DEPTH || !is_kept(node) {
        return;
    }
    let name = node.tag_name().name();
    out.push('<');
    out.push_str(name);
    if depth == 0 {
        let _ = write!(out, " xmlns=\"{}\"", svg::SVG_NS);
    }
    for attr in node.attributes() {
        let Some(kind) = svg::attribute_kind(attr.namespace(), attr.name()) else {
            continue;
        };
        if let Some(value) = clean_attribute(kind, attr.value(), ids) {
            // `xlink:href` is written as plain `href` (SVG 2), so no xlink declaration is needed.
            let _ = write!(out, " {}=\"", attr.name());
            let _ = escape::html_into(out, &value, Quotes::Double);
            out.push('"');
        }
    }
    // Character data is drawn only inside text elements; elsewhere it is whitespace or junk.
    let draws_text = svg::TEXT_ELEMENTS.contains(&name);
    let children: Vec<roxmltree::Node> = node
        .children()
        .filter(|c| c.is_element() || (draws_text && c.is_text()))
        .collect();
    if children.is_empty() {
        out.push_str("/>");
        return;
    }
    out.push('>');
    for child in children {
        match child.text().filter(|_| child.is_text()) {
            Some(text) => {
                let _ = escape::html_into(out, text, Quotes::Double);
            }
            None => write_element(out, child, depth + 1, ids),
        }
    }
    let _ = write!(out, "</{name}>");
}

/// The icon re-serialised from the allow-list, or None when it is not a well-formed SVG
/// document of acceptable size.
pub fn sanitise(bytes: &[u8]) -> Option<String> {
    if bytes.len() as u64 > MAX_ICON_BYTES {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, options).ok()?;
    let root = doc.root_element();
    if root.tag_name().namespace() != Some(svg::SVG_NS) || root.tag_name().name() != "svg" {
        return None;
    }
    let mut ids = BTreeSet::new();
    kept_ids(root, 0, &mut ids);
    let mut out = String::with_capacity(text.len());
    write_element(&mut out, root, 0, &ids);
    out.push('\n');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_drawing_and_drops_the_rest() {
        let svg = br##"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="16" height="16" viewBox="0 0 16 16" onload="alert(1)">
<!-- c --><script>alert(2)</script><style>*{fill:red}</style>
<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>
<defs><clipPath id="c"><rect width="16" height="16"/></clipPath></defs>
<path d="M0 0h16" fill="red" stroke="currentColor" style="fill:blue" clip-path="url(#c)"/>
<use xlink:href="javascript:alert(3)"/><use href="#c"/><a href="https://x"><path d="M1 1"/></a>
<circle cx="8" cy="8" r="4" fill="url(https://evil/x.svg#a)" transform="url(javascript:1)"/>
</svg>"##;
        let out = sanitise(svg).unwrap();
        assert_eq!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\"><defs><clipPath id=\"c\"><rect width=\"16\" height=\"16\"/></clipPath></defs><path d=\"M0 0h16\" fill=\"currentColor\" stroke=\"currentColor\" clip-path=\"url(#c)\"/><use/><use href=\"#c\"/><circle cx=\"8\" cy=\"8\" r=\"4\" fill=\"currentColor\"/></svg>\n"
        );
    }

    #[test]
    fn refuses_non_svg() {
        assert!(sanitise(b"<html/>").is_none());
        assert!(sanitise(b"not xml").is_none());
        assert!(sanitise(&[0xff, 0xfe]).is_none());
    }
}
