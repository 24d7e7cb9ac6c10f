//! The static catalogue site (docs/format.md#site): plain data in, plain files out.
//!
//! [`Site::new`] reads the published agents (from an [`AgentSource`], one at a time) and
//! [`Site::render`] hands every file of the site to a sink as it is rendered, by path
//! relative to the site root; [`render`] collects them in memory. Nothing here touches the
//! file system, the clock or the network, so the same input always gives byte-identical
//! output; the caller (`build`, `site`) writes the files.
//!
//! Ground floor: imports only `std`, `serde_json`, `minijinja`, `pulldown-cmark`, `ammonia`,
//! `url`, `roxmltree`, `rayon`, the skill name rule of `acp_registry_client::skill_index`, the
//! constants, id predicate and distribution model of [`crate::manifest`] and the HTML escaper
//! of [`crate::diagnostics::escape`]; the build
//! calls this module, never the reverse.
//!
//! The skills section (`skills/`, docs/format.md#skills-on-the-site) is made from
//! [`SiteSkill`]s the same way ([`skills`]); a registry without skills gets exactly the site it
//! had before (no nav link, no `skills/` pages).
//!
//! Every string of an agent or a skill is treated as hostile:
//! - templates are rendered with HTML autoescaping, and the only value marked safe is the
//!   README after sanitising ([`markdown`]);
//! - URLs are kept only when they are absolute `http(s)` URLs without credentials, and
//!   re-serialised ([`safe_url`]);
//! - icons are re-serialised from an allow-list of SVG elements and attributes and inlined
//!   as base64 `data:` URIs in the icon stylesheets, shown as CSS masks painted with
//!   `currentColor` ([`icons`]);
//! - install snippets are built with `serde_json` and a POSIX shell quoter ([`snippets`]);
//! - every page carries a Content-Security-Policy without inline script, inline style or
//!   external origins; the JavaScript only ever sets `textContent`;
//! - every link that leaves the site folder is absolute, so the site works wherever it is
//!   copied: opened from disk (`file://`, which allows no fetch), on GitHub Pages (which
//!   serves only the site folder) or beside the registry files on a bucket.
//!
//! The Content-Security-Policy is [`CSP`], a meta tag on every page. Ids must pass
//! `manifest::names::is_valid_id` ([`SiteError::InvalidId`]), since they become paths and class
//! names; skill names must pass the skill name rule ([`SiteError::InvalidSkillName`]). Nothing
//! is fetched, because a `file://` page has an opaque origin: the search index is a script
//! (`window.acpSiteIndex = …`, JSON escaped for a script) and icons are `data:` URIs inside
//! the stylesheets. Links between the site's files are relative; the only link out, to
//! `registry.json`, is absolute under `base_url`, because GitHub Pages serves `site/` alone.

mod error;
mod icons;
mod identity;
mod input;
mod labels;
mod markdown;
mod model;
mod pages;
mod skills;
mod snippets;
mod urls;

use std::collections::BTreeMap;
use std::sync::Mutex;

pub use error::SiteError;
pub use icons::sanitise as sanitise_icon;
pub(crate) use input::AgentSource;
pub use input::{
    SiteAgent, SiteClient, SiteOptions, SiteRetirement, SiteSkill, SkillAgent, SkillFile,
    SkillInstall, Verification,
};
#[cfg(test)]
pub(crate) use model::{distribution_facts, view_of};
pub(crate) use pages::Site;
pub use pages::{CSP, PAGE_SIZE};

/// Every file of the site, keyed by path relative to the site root: `index.html`,
/// `page/<n>/index.html` (static pagination beyond [`PAGE_SIZE`] agents),
/// `agents/<id>/index.html`, `assets/search-index.js` (the index the script filters),
/// `assets/icons/<n>.css` (the icons of listing page `n`), `assets/site.css`,
/// `assets/site.js` and `assets/favicon.svg`; with skills, also `skills/index.html`,
/// `skills/page/<n>/index.html` (beyond [`PAGE_SIZE`] skills) and `skills/<name>/index.html`.
/// Deterministic: same input, byte-identical output.
pub fn render(
    agents: &[SiteAgent],
    skills: &[SiteSkill],
    options: &SiteOptions,
) -> Result<BTreeMap<String, Vec<u8>>, SiteError> {
    let site = Site::new(agents, skills, options)?;
    let files = Mutex::new(BTreeMap::new());
    site.render(agents, skills, &|path, bytes| {
        let mut files = files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        files.insert(path.to_string(), bytes.to_vec());
        Ok(())
    })?;
    Ok(files
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(id: &str) -> SiteAgent {
        let manifest = serde_json::json!({
            "id": id, "name": "A", "version": "1.0.0", "description": "d",
            "distribution": {"npx": {"package": "a@1.0.0"}},
        });
        SiteAgent {
            id: id.to_string(),
            agent: manifest.as_object().cloned().unwrap_or_default(),
            ..SiteAgent::default()
        }
    }

    #[test]
    fn ids_the_validator_refuses_are_refused_and_the_longest_valid_id_renders() {
        let too_long = "a".repeat(crate::manifest::names::MAX_ID_LEN + 1);
        for id in ["con", "lpt1", "nul", too_long.as_str()] {
            let result = render(&[agent(id)], &[], &SiteOptions::default());
            assert!(
                matches!(result, Err(SiteError::InvalidId(_))),
                "{id:?} accepted"
            );
        }
        let longest = "a".repeat(crate::manifest::names::MAX_ID_LEN);
        let files = render(&[agent(&longest)], &[], &SiteOptions::default()).unwrap();
        assert!(files.contains_key(&format!("agents/{longest}/index.html")));
    }
}
