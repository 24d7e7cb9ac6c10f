//! Which entries a build publishes: those with a manifest, not quarantined (unless the
//! configuration publishes quarantined entries), not served in their previous form by
//! `--last-good`, not disabled by `deprecations.json`; sorted by id.

use super::last_good::HeldBack;
use crate::registry::Checked;
use crate::rules::EntryReport;

/// Entries that can be published, sorted by id (the folder order is never trusted): not
/// those `held` serves in their previous form (or leaves out).
pub(super) fn publishable<'a>(
    checked: &'a Checked,
    held: Option<&HeldBack>,
) -> Vec<&'a EntryReport> {
    let mut entries: Vec<&EntryReport> = checked
        .entries
        .iter()
        .filter(|e| e.manifest.is_some())
        .filter(|e| held.is_none_or(|h| !h.failing.contains(&e.entry.name)))
        .filter(|e| {
            checked.config.publish_quarantined || !checked.quarantine.ids.contains_key(e.id())
        })
        .filter(|e| !checked.deprecations.is_disabled(e.id()))
        .collect();
    entries.sort_by(|a, b| a.id().cmp(b.id()));
    entries
}
