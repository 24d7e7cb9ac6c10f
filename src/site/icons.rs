//! Icons: re-serialised from an allow-list and served as files, painted with the text colour.
//!
//! Each icon is parsed (roxmltree) and written out again with only drawing elements and
//! attributes; paint other than `currentColor`/`none`/`inherit` becomes `currentColor`,
//! references are kept only when they point into the same document (`#id`), text and
//! comments are dropped. Pages show the icon as a CSS mask over a box whose background is
//! `currentColor` (`assets/icons.css`), so it follows the text colour in both colour
//! schemes; `icon-light.svg`/`icon-dark.svg` are swapped with `prefers-color-scheme`. No
//! per-agent inline style is needed, which keeps the CSP strict.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::manifest::MAX_ICON_BYTES;

/// Class of the box painted with the generic icon when an agent has none (or a broken one).
pub const FALLBACK_CLASS: &str = "i-none";

/// First lines of `assets/icons.css`.
pub const CSS_HEADER: &str =
    "/* One mask per agent icon; the box is painted with currentColor (site.css .icon). */\n";

const SVG_NS: &str = "http://www.w3.org/2000/svg";
const XLINK_NS: &str = "http://www.w3.org/1999/xlink";

const ELEMENTS: [&str; 14] = [
    "svg", "g", "path", "circle", "ellipse", "line", "polyline", "polygon", "rect", "defs",
    "clipPath", "mask", "use", "symbol",
];

const ATTRIBUTES: [&str; 44] = [
    "viewBox",
    "width",
    "height",
    "x",
    "y",
    "x1",
    "y1",
    "x2",
    "y2",
    "cx",
    "cy",
    "r",
    "rx",
    "ry",
    "d",
    "points",
    "pathLength",
    "transform",
    "fill",
    "fill-rule",
    "fill-opacity",
    "stroke",
    "stroke-width",
    "stroke-linecap",
    "stroke-linejoin",
    "stroke-miterlimit",
    "stroke-dasharray",
    "stroke-dashoffset",
    "stroke-opacity",
    "opacity",
    "clip-rule",
    "clip-path",
    "mask",
    "id",
    "href",
    "preserveAspectRatio",
    "vector-effect",
    "shape-rendering",
    "maskUnits",
    "maskContentUnits",
    "clipPathUnits",
    "display",
    "visibility",
    "color",
];

/// The icons of one agent, sanitised: a plain icon, theme variants, or both.
pub struct IconSet {
    pub plain: Option<String>,
    pub light_dark: Option<(String, String)>,
}

impl IconSet {
    /// `(file name under icons/, svg)` pairs.
    pub fn files(&self, id: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(svg) = &self.plain {
            out.push((format!("{id}.svg"), svg.clone()));
        }
        if let Some((light, dark)) = &self.light_dark {
            out.push((format!("{id}-light.svg"), light.clone()));
            out.push((format!("{id}-dark.svg"), dark.clone()));
        }
        out
    }
}

pub fn sanitise_set(icons: &BTreeMap<String, Vec<u8>>) -> Option<IconSet> {
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

/// The mask rules of one agent. Ids are `^[a-z][a-z0-9-]*$`, so they are valid in class
/// names and URLs as they are.
pub fn css_rule(id: &str, set: &IconSet) -> String {
    let rule = |file: &str| {
        format!(
            ".i-{id}{{-webkit-mask-image:url(../icons/{file});mask-image:url(../icons/{file})}}\n"
        )
    };
    match (&set.light_dark, &set.plain) {
        (Some(_), _) => format!(
            "{}@media (prefers-color-scheme:dark){{{}}}\n",
            rule(&format!("{id}-light.svg")),
            rule(&format!("{id}-dark.svg")).trim_end()
        ),
        (None, _) => rule(&format!("{id}.svg")),
    }
}

/// `#fragment` with a plain id, or None.
fn fragment(value: &str) -> Option<&str> {
    let id = value.strip_prefix('#')?;
    is_plain_id(id).then_some(id)
}

fn is_plain_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// `url(#id)` with a plain id, or None.
fn url_fragment(value: &str) -> Option<&str> {
    let inner = value.trim().strip_prefix("url(")?.strip_suffix(')')?;
    let inner = inner.trim().trim_matches(|c| c == '"' || c == '\'');
    fragment(inner)
}

/// Attribute values: only characters that can appear in numbers, path data, transforms and
/// keywords.
fn is_plain_value(value: &str) -> bool {
    value.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                ' ' | '\t' | '\n' | '\r' | '.' | ',' | '-' | '+' | '(' | ')' | '%' | '#' | '_'
            )
    })
}

fn clean_attribute(name: &str, value: &str) -> Option<String> {
    let lower = value.trim().to_ascii_lowercase();
    match name {
        "fill" | "stroke" | "color" => Some(match lower.as_str() {
            "none" | "inherit" | "currentcolor" => value.trim().to_string(),
            _ => match url_fragment(value) {
                Some(id) => format!("url(#{id})"),
                None => "currentColor".to_string(),
            },
        }),
        "clip-path" | "mask" => url_fragment(value).map(|id| format!("url(#{id})")),
        "href" => fragment(value.trim()).map(|id| format!("#{id}")),
        "id" => is_plain_id(value.trim()).then(|| value.trim().to_string()),
        _ => is_plain_value(value).then(|| value.to_string()),
    }
}

fn escape_attr(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
}

fn write_element(out: &mut String, node: roxmltree::Node, depth: usize) {
    if depth > 32 {
        return;
    }
    let tag = node.tag_name();
    if tag.namespace() != Some(SVG_NS) || !ELEMENTS.contains(&tag.name()) {
        return;
    }
    let name = tag.name();
    out.push('<');
    out.push_str(name);
    if depth == 0 {
        let _ = write!(out, " xmlns=\"{SVG_NS}\"");
    }
    for attr in node.attributes() {
        let local = attr.name();
        let allowed = match attr.namespace() {
            None => ATTRIBUTES.contains(&local),
            Some(XLINK_NS) => local == "href",
            Some(_) => false,
        };
        if !allowed {
            continue;
        }
        if let Some(value) = clean_attribute(local, attr.value()) {
            out.push(' ');
            out.push_str(local);
            out.push_str("=\"");
            escape_attr(out, &value);
            out.push('"');
        }
    }
    let children: Vec<roxmltree::Node> = node.children().filter(|c| c.is_element()).collect();
    if children.is_empty() {
        out.push_str("/>");
        return;
    }
    out.push('>');
    for child in children {
        write_element(out, child, depth + 1);
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
    if root.tag_name().namespace() != Some(SVG_NS) || root.tag_name().name() != "svg" {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    write_element(&mut out, root, 0);
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
