//! What an icon may contain: the one SVG allow-list shared by the `icon-unsafe` rule and the
//! site's sanitiser, and the CSS scan both judge values with.
//!
//! Ground floor: the lists are data, the scan works on plain strings. Anything not listed
//! here is refused by the rule and dropped by the site.

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

/// The SVG namespace, the only one an icon's elements may be in.
pub(crate) const SVG_NS: &str = "http://www.w3.org/2000/svg";
/// Only for `xlink:href="#id"`.
pub(crate) const XLINK_NS: &str = "http://www.w3.org/1999/xlink";
/// The implicit `xml:` prefix (`xml:space`, `xml:lang`).
pub(crate) const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";

/// Elements of the SVG namespace an icon may use: structure, shapes, gradients, clip paths
/// and masks, text, and the non-rendered `title`, `desc` and `style`. Everything that can
/// load, link, animate or embed (`image`, `a`, `use` of other files, `animate`, `set`,
/// filters, `foreignObject`, `script`) is absent.
pub(crate) const ELEMENTS: [&str; 22] = [
    "svg",
    "g",
    "defs",
    "symbol",
    "use",
    "path",
    "circle",
    "ellipse",
    "line",
    "polyline",
    "polygon",
    "rect",
    "linearGradient",
    "radialGradient",
    "stop",
    "clipPath",
    "mask",
    "text",
    "tspan",
    "title",
    "desc",
    "style",
];

/// Allowed elements that draw nothing; the site drops them (it serves no CSS or metadata).
pub(crate) const NOT_DRAWN: [&str; 3] = ["title", "desc", "style"];

/// Allowed elements whose character data is drawn.
pub(crate) const TEXT_ELEMENTS: [&str; 2] = ["text", "tspan"];

/// How an allowed attribute's value is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttrKind {
    /// `fill`, `stroke`: one of [`PAINT_KEYWORDS`] or `url(#id)`.
    Paint,
    /// `color`, `stop-color`: a colour the site replaces with `currentColor`.
    Color,
    /// `clip-path`, `mask`, `filter`: `none` or `url(#id)`.
    Reference,
    /// `href`, `xlink:href`: `#id` only.
    Href,
    /// `id`: a plain identifier.
    Id,
    /// `style`: CSS declarations.
    Style,
    /// Numbers, lengths, path data, transforms, keywords.
    Plain,
    /// `font-family`: names, quoted or not.
    FontList,
    /// Inert annotations that draw nothing (`class`, `role`, `aria-*`, Illustrator's
    /// `data-name`, `version`); the site drops them.
    Annotation,
}

/// Attributes without a namespace, sorted by name for binary search.
const ATTRIBUTES: [(&str, AttrKind); 90] = {
    use AttrKind::*;
    [
        ("alignment-baseline", Plain),
        ("aria-hidden", Annotation),
        ("aria-label", Annotation),
        ("baseProfile", Annotation),
        ("baseline-shift", Plain),
        ("class", Annotation),
        ("clip-path", Reference),
        ("clip-rule", Plain),
        ("clipPathUnits", Plain),
        ("color", Color),
        ("color-interpolation", Plain),
        ("cx", Plain),
        ("cy", Plain),
        ("d", Plain),
        ("data-name", Annotation),
        ("direction", Plain),
        ("display", Plain),
        ("dominant-baseline", Plain),
        ("dx", Plain),
        ("dy", Plain),
        ("enable-background", Plain),
        ("fill", Paint),
        ("fill-opacity", Plain),
        ("fill-rule", Plain),
        ("filter", Reference),
        ("focusable", Annotation),
        ("font-family", FontList),
        ("font-size", Plain),
        ("font-stretch", Plain),
        ("font-style", Plain),
        ("font-variant", Plain),
        ("font-weight", Plain),
        ("fr", Plain),
        ("fx", Plain),
        ("fy", Plain),
        ("gradientTransform", Plain),
        ("gradientUnits", Plain),
        ("height", Plain),
        ("href", Href),
        ("id", Id),
        ("lengthAdjust", Plain),
        ("letter-spacing", Plain),
        ("mask", Reference),
        ("maskContentUnits", Plain),
        ("maskUnits", Plain),
        ("offset", Plain),
        ("opacity", Plain),
        ("overflow", Plain),
        ("paint-order", Plain),
        ("pathLength", Plain),
        ("points", Plain),
        ("preserveAspectRatio", Plain),
        ("r", Plain),
        ("role", Annotation),
        ("rotate", Plain),
        ("rx", Plain),
        ("ry", Plain),
        ("shape-rendering", Plain),
        ("spreadMethod", Plain),
        ("stop-color", Color),
        ("stop-opacity", Plain),
        ("stroke", Paint),
        ("stroke-dasharray", Plain),
        ("stroke-dashoffset", Plain),
        ("stroke-linecap", Plain),
        ("stroke-linejoin", Plain),
        ("stroke-miterlimit", Plain),
        ("stroke-opacity", Plain),
        ("stroke-width", Plain),
        ("style", Style),
        ("text-anchor", Plain),
        ("text-decoration", Plain),
        ("text-rendering", Plain),
        ("textLength", Plain),
        ("transform", Plain),
        ("transform-origin", Plain),
        ("type", Annotation),
        ("vector-effect", Plain),
        ("version", Annotation),
        ("viewBox", Plain),
        ("visibility", Plain),
        ("width", Plain),
        ("word-spacing", Plain),
        ("writing-mode", Plain),
        ("x", Plain),
        ("x1", Plain),
        ("x2", Plain),
        ("y", Plain),
        ("y1", Plain),
        ("y2", Plain),
    ]
};

/// The paint keywords an icon may use (compared without case): they follow the text colour
/// or paint nothing. Any other colour is fixed (`icon-color`) and the site replaces it with
/// `currentColor`.
pub(crate) const PAINT_KEYWORDS: [&str; 3] = ["currentColor", "none", "inherit"];

/// Whether `value` (surrounding spaces ignored) is one of [`PAINT_KEYWORDS`].
pub(crate) fn is_paint_keyword(value: &str) -> bool {
    let value = value.trim();
    PAINT_KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(value))
}

/// Whether an element may appear in an icon: in the SVG namespace and listed in [`ELEMENTS`].
pub(crate) fn is_allowed_element(namespace: Option<&str>, name: &str) -> bool {
    namespace == Some(SVG_NS) && ELEMENTS.contains(&name)
}

/// The kind of an allowed attribute, or None when the attribute is refused. `xmlns`
/// declarations are not attributes here (see [`is_allowed_namespace`]).
pub(crate) fn attribute_kind(namespace: Option<&str>, name: &str) -> Option<AttrKind> {
    match namespace {
        None => ATTRIBUTES
            .binary_search_by(|(n, _)| n.cmp(&name))
            .ok()
            .map(|i| ATTRIBUTES[i].1),
        Some(XLINK_NS) if name == "href" => Some(AttrKind::Href),
        Some(XML_NS) if name == "space" || name == "lang" => Some(AttrKind::Annotation),
        _ => None,
    }
}

/// Namespaces an icon may declare: SVG, xlink (for `#id` references) and the implicit XML one.
pub(crate) fn is_allowed_namespace(uri: &str) -> bool {
    matches!(uri, SVG_NS | XLINK_NS | XML_NS)
}

/// A plain id: ASCII letters, digits, `-`, `_`, `.`, `:`.
pub(crate) fn is_plain_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// `svg` as a base64 `data:` URI, for `icon_data_uri` and the site's stylesheets. Base64
/// rather than percent-encoding: nothing in it a client must unescape, and its alphabet
/// (`A-Z a-z 0-9 + / =`) cannot end a CSS `url("…")` or a JSON string, whatever the icon holds.
pub(crate) fn data_uri(svg: &str) -> String {
    use base64::Engine;
    format!(
        "data:image/svg+xml;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(svg)
    )
}

/// The id of a `#fragment` reference with a plain id, or None.
pub(crate) fn fragment(value: &str) -> Option<&str> {
    let id = value.trim().strip_prefix('#')?;
    is_plain_id(id).then_some(id)
}

/// The id of a whole `url(#id)` value (quotes allowed), or None.
pub(crate) fn url_fragment(value: &str) -> Option<&str> {
    let trimmed = value.trim();
    let head = trimmed.get(..4)?;
    if !head.eq_ignore_ascii_case("url(") {
        return None;
    }
    let inner = trimmed[4..].strip_suffix(')')?.trim();
    fragment(inner.trim_matches(|c| c == '"' || c == '\''))
}

/// CSS as a browser reads it: escapes resolved (`u\72l(` is `url(`, `\40import` is
/// `@import`) and comments removed (so `ur/**/l(` is judged as `url(`, erring on the safe
/// side). `map[i]` is the byte offset in `css` of output byte `i`; `map` has one more entry
/// than the output, for its end.
pub(crate) fn normalise_css(css: &str) -> (String, Vec<usize>) {
    let bytes = css.as_bytes();
    let mut out = String::with_capacity(css.len());
    let mut map = Vec::with_capacity(css.len() + 1);
    let mut i = 0;
    while i < bytes.len() {
        if css[i..].starts_with("/*") {
            i = css[i + 2..]
                .find("*/")
                .map_or(css.len(), |end| i + 2 + end + 2);
            continue;
        }
        let (c, next) = if bytes[i] == b'\\' {
            unescape(css, i)
        } else {
            let c = css[i..].chars().next().expect("in bounds");
            (Some(c), i + c.len_utf8())
        };
        if let Some(c) = c {
            map.extend(std::iter::repeat_n(i, c.len_utf8()));
            out.push(c);
        }
        i = next;
    }
    map.push(css.len());
    (out, map)
}

/// The escape starting at byte `at` (a backslash): the character it stands for (None for a
/// line continuation) and the offset after it.
fn unescape(css: &str, at: usize) -> (Option<char>, usize) {
    let rest = &css[at + 1..];
    let hex: String = rest
        .chars()
        .take(6)
        .take_while(char::is_ascii_hexdigit)
        .collect();
    if !hex.is_empty() {
        let mut end = at + 1 + hex.len();
        if css[end..].starts_with("\r\n") {
            end += 2;
        } else if css[end..].starts_with([' ', '\t', '\n', '\r', '\x0c']) {
            end += 1;
        }
        let code = u32::from_str_radix(&hex, 16).expect("hex digits");
        let c = char::from_u32(code)
            .filter(|c| *c != '\0')
            .unwrap_or('\u{fffd}');
        return (Some(c), end);
    }
    match rest.chars().next() {
        None => (None, css.len()),
        Some(c @ ('\n' | '\r' | '\x0c')) => (None, at + 1 + c.len_utf8()),
        Some(c) => (Some(c), at + 1 + c.len_utf8()),
    }
}

/// Something in CSS (or a presentation attribute, which browsers parse as CSS) that can
/// fetch or run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hazard {
    /// `url(...)` or `src(...)` whose target is not `#id`.
    ExternalUrl(String),
    /// `@import`.
    Import,
    /// `image-set(`, `image(`: fetch by a bare string, without `url(`.
    ImageFunction(String),
    /// `expression(`: script in old Internet Explorer.
    Expression,
    /// `-moz-binding` or `behavior`: XBL and HTC bindings run script.
    Binding(String),
    /// `javascript:`.
    Javascript,
}

/// One finding of [`scan_css`], at a byte range of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found<T> {
    /// Where it is, in bytes of the scanned input.
    pub range: Range<usize>,
    /// What was found there.
    pub what: T,
}

/// What CSS text can fetch or run, and the `url(#id)` references it makes, after
/// [`normalise_css`]; ranges are in the input.
#[derive(Debug, Default)]
pub(crate) struct CssScan {
    /// What fetches or runs, by position.
    pub hazards: Vec<Found<Hazard>>,
    /// The ids of the `url(#id)` references.
    pub fragments: Vec<Found<String>>,
}

/// Scan CSS text (a `style` attribute, a `<style>` element, a presentation attribute).
pub(crate) fn scan_css(css: &str) -> CssScan {
    static URL: OnceLock<Regex> = OnceLock::new();
    static OTHER: OnceLock<Regex> = OnceLock::new();
    let url = URL.get_or_init(|| {
        Regex::new(r#"(?:url|src)\(\s*['"]?([^'")]*)['"]?\s*\)?"#).expect("valid regex")
    });
    let other = OTHER.get_or_init(|| {
        Regex::new(r"@import|(?:-webkit-)?image-set\(|image\(|expression\(|javascript:|(?:^|[^a-z0-9_-])(-moz-binding|behavior)\s*:")
            .expect("valid regex")
    });
    let (text, map) = normalise_css(css);
    let lower = text.to_ascii_lowercase();
    let range = |r: Range<usize>| map[r.start]..map[r.end];
    let mut scan = CssScan::default();
    for c in url.captures_iter(&lower) {
        let whole = c.get(0).expect("match");
        let target = &text[c.get(1).expect("group").range()];
        let found = |what| Found {
            range: range(whole.range()),
            what,
        };
        match fragment(target) {
            Some(id) => scan.fragments.push(found(id.to_string())),
            None if target.trim().starts_with('#') => {
                scan.fragments.push(found(target.trim()[1..].to_string()));
            }
            None => scan.hazards.push(Found {
                range: range(whole.range()),
                what: Hazard::ExternalUrl(target.trim().to_string()),
            }),
        }
    }
    for m in other.captures_iter(&lower) {
        let binding = m.get(1);
        let whole = binding.unwrap_or_else(|| m.get(0).expect("match"));
        let what = match whole.as_str() {
            "@import" => Hazard::Import,
            "expression(" => Hazard::Expression,
            "javascript:" => Hazard::Javascript,
            name if binding.is_some() => Hazard::Binding(name.to_string()),
            function => Hazard::ImageFunction(function.trim_end_matches('(').to_string()),
        };
        scan.hazards.push(Found {
            range: range(whole.range()),
            what,
        });
    }
    scan.hazards.sort_by_key(|h| h.range.start);
    scan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attribute_table_is_sorted_so_binary_search_finds_every_entry() {
        assert!(ATTRIBUTES.windows(2).all(|w| w[0].0 < w[1].0));
        for (name, kind) in &ATTRIBUTES {
            assert_eq!(attribute_kind(None, name), Some(*kind), "{name}");
        }
        assert_eq!(attribute_kind(None, "onload"), None);
        assert_eq!(attribute_kind(Some(XLINK_NS), "href"), Some(AttrKind::Href));
        assert_eq!(attribute_kind(Some(XLINK_NS), "actuate"), None);
    }

    #[test]
    fn paint_keywords_are_matched_without_case_and_colours_are_not() {
        for kept in ["currentColor", " CURRENTCOLOR ", "none", "None", "inherit"] {
            assert!(is_paint_keyword(kept), "{kept}");
        }
        for fixed in ["red", "#000", "url(#a)", "", "nonee"] {
            assert!(!is_paint_keyword(fixed), "{fixed}");
        }
    }

    #[test]
    fn css_escapes_and_comments_are_resolved_before_judging() {
        let (text, map) = normalise_css("u\\72l(x) \\40 import /* c */ a\\\nb");
        assert_eq!(text, "url(x) @import  ab");
        // `r` comes from the escape at byte 1, `l` from byte 4.
        assert_eq!(&map[..4], [0, 1, 4, 5]);
        assert_eq!(normalise_css("\\0 x\\110000").0, "\u{fffd}x\u{fffd}");
    }

    #[test]
    fn scan_reports_what_fetches_or_runs_at_its_place_in_the_input() {
        let css = "a{fill:u\\72l(http://x/y)} @\\69mport 'z'; b{background:image-set('p.png' 1x)}";
        let scan = scan_css(css);
        let what: Vec<&Hazard> = scan.hazards.iter().map(|h| &h.what).collect();
        assert_eq!(
            what,
            [
                &Hazard::ExternalUrl("http://x/y".into()),
                &Hazard::Import,
                &Hazard::ImageFunction("image-set".into())
            ]
        );
        assert_eq!(&css[scan.hazards[0].range.clone()], "u\\72l(http://x/y)");
        assert_eq!(&css[scan.hazards[1].range.clone()], "@\\69mport");
        let bindings = scan_css("x{-moz-binding:none;behavior : y}");
        assert_eq!(bindings.hazards.len(), 2);
        let fragments = scan_css("fill: url( '#g' ); clip-path:url(#c)").fragments;
        let ids: Vec<&str> = fragments.iter().map(|f| f.what.as_str()).collect();
        assert_eq!(ids, ["g", "c"]);
        assert!(scan_css("expr\\65ssion(alert(1))").hazards[0].what == Hazard::Expression);
    }
}
