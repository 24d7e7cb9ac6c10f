//! The site's view of a build: each published entry as a [`SiteAgent`] (both channels from
//! one [`Form`]), built when the site asks for it, and the agents `--last-good` serves in
//! their previous form.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::entries::publishable;
use super::error::BuildError;
use super::icons::icon_files;
use super::last_good::HeldBack;
use crate::published::Form;
use crate::registry::Checked;
use crate::rules::{EntryReport, Manifest};
use crate::site::{self, AgentSource, SiteAgent, SiteOptions};

/// The site's title and its link to the first output, absolute under `base_url`: the site
/// folder may be served alone (GitHub Pages) or opened from disk, where `../` leads nowhere.
pub(super) fn site_options(checked: &Checked, base_url: &str) -> SiteOptions {
    let registry_json = checked
        .config
        .outputs
        .first()
        .map_or("registry.json", |o| o.file.as_str());
    SiteOptions {
        title: "ACP Agent Registry".into(),
        registry_json_url: Some(format!("{base_url}/{registry_json}")),
        site_url: checked.config.skills.site_url.clone(),
    }
}

/// The site's view of the published entries (stable and, when newer, preview variants),
/// each built when the site asks for it, and of the entries served in their previous form.
pub(super) struct SiteSource<'a> {
    checked: &'a Checked,
    /// In id order: a checked entry, or the index of a previous agent of `held`.
    items: Vec<SiteItem<'a>>,
    held: Option<&'a HeldBack>,
    base: String,
    /// `build --matrix`: per id, the evidence as it applies to what is published.
    verifications: BTreeMap<String, site::Verification>,
}

enum SiteItem<'a> {
    Entry(&'a EntryReport),
    Previous(usize),
}

impl<'a> SiteSource<'a> {
    pub(super) fn new(
        checked: &'a Checked,
        base: &str,
        verifications: BTreeMap<String, site::Verification>,
        held: Option<&'a HeldBack>,
    ) -> Self {
        // The entries `publish` publishes: a manifest whose top level is an object.
        let mut items: Vec<(&str, SiteItem)> = publishable(checked, held)
            .into_iter()
            .filter(|e| e.manifest.as_ref().is_some_and(Manifest::is_object))
            .map(|e| (e.id(), SiteItem::Entry(e)))
            .collect();
        let previous = held.map(|h| h.site.as_slice()).unwrap_or_default();
        items.extend(
            previous
                .iter()
                .enumerate()
                .map(|(i, agent)| (agent.id.as_str(), SiteItem::Previous(i))),
        );
        items.sort_by(|a, b| a.0.cmp(b.0));
        SiteSource {
            checked,
            items: items.into_iter().map(|(_, item)| item).collect(),
            held,
            base: base.to_string(),
            verifications,
        }
    }
}

impl AgentSource for SiteSource<'_> {
    type Error = BuildError;

    fn count(&self) -> usize {
        self.items.len()
    }

    fn agent(&self, index: usize) -> Result<Cow<'_, SiteAgent>, BuildError> {
        let entry = match self.items[index] {
            SiteItem::Entry(entry) => entry,
            SiteItem::Previous(i) => {
                let held = self.held.expect("previous agents come from `held`");
                return Ok(Cow::Borrowed(&held.site[i]));
            }
        };
        let (agent, preview) = Form::of(entry)
            .map(|form| form.into_channels(&self.base))
            .unwrap_or_default();
        let preview = Some(preview).filter(|p| *p != agent);
        let verification = self.verifications.get(entry.id()).cloned();
        Ok(Cow::Owned(SiteAgent {
            id: entry.id().to_string(),
            preview,
            readme: entry.file_text("README.md").map(str::to_string),
            icons: icon_files(entry)?.into_iter().collect(),
            quarantine: self.checked.quarantine.ids.get(entry.id()).cloned(),
            verification,
            agent,
        }))
    }
}

/// The site's view of every published entry, as `build` hands it to the site (without
/// verifications).
pub fn site_agents(checked: &Checked, base_url: &str) -> Result<Vec<SiteAgent>, BuildError> {
    let source = SiteSource::new(checked, base_url, BTreeMap::new(), None);
    (0..source.count())
        .map(|index| source.agent(index).map(Cow::into_owned))
        .collect()
}
