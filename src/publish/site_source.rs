//! The site's view of a build: each published entry as a [`SiteAgent`] (both channels from
//! one [`Form`]), built when the site asks for it, and the agents `--last-good` serves in
//! their previous form.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::entries::publishable;
use super::error::BuildError;
use super::icons::icon_files;
use super::last_good::HeldBack;
use super::lifecycle::{client_verdicts, LIFECYCLE_FILE};
use crate::published::Form;
use crate::registry::Checked;
use crate::rules::{EntryReport, Manifest};
use crate::site::{self, AgentSource, SiteAgent, SiteClient, SiteOptions, SiteRetirement};

/// The site's identity (the configuration's `registry`: name, description, home link, logo,
/// footer) and its link to the first output, absolute under `base_url`: the site folder may
/// be served alone (GitHub Pages) or opened from disk, where `../` leads nowhere.
pub(super) fn site_options(checked: &Checked, base_url: &str) -> SiteOptions {
    let registry_json = checked
        .config
        .outputs
        .first()
        .map_or("registry.json", |o| o.file.as_str());
    let identity = &checked.config.identity;
    SiteOptions {
        title: identity.name().to_string(),
        registry_json_url: Some(format!("{base_url}/{registry_json}")),
        lifecycle_json_url: Some(format!("{base_url}/{LIFECYCLE_FILE}")),
        site_url: checked.config.skills.site_url.clone(),
        description: identity.description.clone(),
        home_url: identity.home.clone(),
        logo_svg: identity.logo_svg.clone(),
        footer: identity.footer.clone(),
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

impl<'a> SiteSource<'a> {
    /// The deprecation notice of `id`, its successor linked when it has a page here.
    fn retirement(&self, id: &str) -> Option<SiteRetirement> {
        let retirement = self.checked.deprecations.ids.get(id)?;
        let replacement = retirement.replacement.clone();
        // `items` is sorted by id (`new`).
        let replacement_on_site = replacement.as_deref().is_some_and(|r| {
            self.items
                .binary_search_by(|item| self.item_id(item).cmp(r))
                .is_ok()
        });
        Some(SiteRetirement {
            status: retirement.status.as_str().to_string(),
            reason: retirement.reason.clone(),
            since: retirement.since.clone(),
            replacement,
            replacement_on_site,
        })
    }

    fn item_id<'s>(&'s self, item: &'s SiteItem<'a>) -> &'s str {
        match *item {
            SiteItem::Entry(entry) => entry.id(),
            SiteItem::Previous(i) => self.held.map_or("", |h| h.site[i].id.as_str()),
        }
    }
}

/// Each known client's verdict on `entry`, as `lifecycle.json` gives it.
fn site_clients(checked: &Checked, entry: &EntryReport) -> Vec<SiteClient> {
    client_verdicts(checked, entry)
        .into_iter()
        .map(|v| SiteClient {
            id: v.id,
            name: v.name,
            installs: v.installs.to_string(),
            why: v.why,
        })
        .collect()
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
            retirement: self.retirement(entry.id()),
            clients: site_clients(self.checked, entry),
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
