//! The registry's identity on the site ([`SiteOptions`]): the meta description, the home
//! link in the navigation, the logo before the title and the footer line. All of it is
//! plain data for the templates, which escape it; links are kept only under
//! [`urls::safe_url`]'s rule and the logo only as the icon sanitiser writes it.

use serde::Serialize;

use super::input::SiteOptions;
use super::{icons, urls};
use crate::manifest::svg;

/// Where the logo's rule is written (linked by every page when there is a logo).
pub(crate) const LOGO_CSS: &str = "assets/logo.css";

/// A link: its (re-serialised) URL and its text.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Link {
    pub(crate) href: String,
    pub(crate) text: String,
}

/// A run of the footer: text, or a link whose text is its URL.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FooterPart {
    pub(crate) text: String,
    pub(crate) href: Option<String>,
}

/// The home link, named by its host (`www.` left off).
pub(crate) fn home(options: &SiteOptions) -> Option<Link> {
    let href = urls::safe_url(options.home_url.as_deref()?)?;
    let host = url::Url::parse(&href).ok()?.host_str()?.to_string();
    let text = host.strip_prefix("www.").unwrap_or(&host).to_string();
    Some(Link { href, text })
}

/// The footer line in runs: each space-separated word that is an `https://` URL (without the
/// brackets, quotes and sentence punctuation around it) becomes a link, the rest stays text.
pub(crate) fn footer(text: &str) -> Vec<FooterPart> {
    let mut parts: Vec<FooterPart> = Vec::new();
    let mut plain = String::new();
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            plain.push(' ');
        }
        let lead = word.len() - word.trim_start_matches(['(', '"', '\'']).len();
        let url = word[lead..].trim_end_matches(['.', ',', ';', ':', ')', '!', '?', '"', '\'']);
        let link = url
            .get(..8)
            .is_some_and(|head| head.eq_ignore_ascii_case("https://"))
            .then(|| urls::safe_url(url))
            .flatten();
        match link {
            Some(href) => {
                plain.push_str(&word[..lead]);
                if !plain.is_empty() {
                    parts.push(FooterPart {
                        text: std::mem::take(&mut plain),
                        href: None,
                    });
                }
                parts.push(FooterPart {
                    text: url.to_string(),
                    href: Some(href),
                });
                plain.push_str(&word[lead + url.len()..]);
            }
            None => plain.push_str(word),
        }
    }
    if !plain.is_empty() {
        parts.push(FooterPart {
            text: plain,
            href: None,
        });
    }
    parts
}

/// `assets/logo.css`: the logo as the mask of `.site-logo` (painted like an icon), or
/// `None` without a logo or when it is not an SVG the sanitiser keeps.
pub(crate) fn logo_css(options: &SiteOptions) -> Option<String> {
    let svg_text = icons::sanitise(options.logo_svg.as_deref()?)?;
    Some(format!(
        "/* The registry's logo: site.css .icon paints it with currentColor. */\n.site-logo{{--icon:url(\"{}\")}}\n",
        svg::data_uri(&svg_text)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_words_of_the_footer_become_links_and_the_rest_stays_text() {
        let parts =
            footer("Run by Acme (https://acme.example/help). Not http://x.example or javascript:x");
        let shown: Vec<(&str, Option<&str>)> = parts
            .iter()
            .map(|p| (p.text.as_str(), p.href.as_deref()))
            .collect();
        assert_eq!(
            shown,
            [
                ("Run by Acme (", None),
                (
                    "https://acme.example/help",
                    Some("https://acme.example/help")
                ),
                ("). Not http://x.example or javascript:x", None),
            ]
        );
        assert_eq!(footer("plain").len(), 1);
    }

    #[test]
    fn the_home_link_is_named_by_its_host_and_unsafe_urls_are_dropped() {
        let with = |url: &str| {
            home(&SiteOptions {
                home_url: Some(url.into()),
                ..SiteOptions::default()
            })
        };
        let link = with("https://www.acme.example/agents").unwrap();
        assert_eq!(
            (link.href.as_str(), link.text.as_str()),
            ("https://www.acme.example/agents", "acme.example")
        );
        assert!(with("javascript:alert(1)").is_none());
        assert!(with("https://user:pw@acme.example").is_none());
    }
}
