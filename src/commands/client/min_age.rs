//! `--min-age` for `install` and `run`: whether the registry's release is old enough, and
//! what to use instead when it is not (an older release of the lifecycle document's history,
//! installed now for npx and uvx, or an older install), else a refusal saying when the
//! release becomes eligible.

use std::io::Write;

use acp_registry_client::age;
use acp_registry_client::lifecycle::{self, Cooldown};
use acp_registry_client::resolve::Resolution;
use acp_registry_client::store::Installed;
use acp_registry_core::time::now_secs;

use super::{Choice, Session};
use crate::commands::client_text::{t, version_order};
use crate::commands::error::CommandError;

impl Session<'_> {
    /// `--min-age`: `None` when the registry's release may be used (old enough, or of
    /// unknown age, with a note), else what to use instead: from the lifecycle document's
    /// `history` when it knows when the pin was published, else from npm's or `PyPI`'s time
    /// and the installed versions.
    pub(super) fn min_age(
        &self,
        resolution: &Resolution,
        installed: Vec<Installed>,
        days: u32,
        history: Option<&lifecycle::Distribution>,
        err: &mut dyn Write,
    ) -> Result<Option<Choice>, CommandError> {
        let window = i64::from(days) * 86_400;
        let pin = lifecycle::pinned_version(resolution);
        if let (Some(history), Some(pin)) = (history, pin) {
            if let Some(cooldown) = history.cooldown(&pin, window, now_secs()) {
                let cooled = Cooled {
                    resolution,
                    history,
                    pin: &pin,
                    days,
                };
                return self.cooled(&cooled, cooldown, installed, err);
            }
        }
        let older = self.min_age_by_index(resolution, installed, days, err)?;
        Ok(older.map(|older| Choice {
            resolution: resolution.clone(),
            installed: Some(older),
        }))
    }

    /// `--min-age` decided by the lifecycle document's history: the pin, an older npx or
    /// uvx release (installed now unless it is), an older install, or a refusal.
    fn cooled(
        &self,
        cooled: &Cooled<'_>,
        cooldown: Cooldown,
        installed: Vec<Installed>,
        err: &mut dyn Write,
    ) -> Result<Option<Choice>, CommandError> {
        let (eligible_at, candidate) = match cooldown {
            Cooldown::Pin => return Ok(None),
            Cooldown::Older {
                version,
                published,
                eligible_at,
            } => (eligible_at, Some((version, published))),
            Cooldown::NoneEligible { eligible_at } => (eligible_at, None),
        };
        if let Some((version, published)) = &candidate {
            if let Some(older) = lifecycle::at_version(cooled.resolution, version) {
                writeln!(
                    err,
                    "note: {}",
                    cooled.older_text(eligible_at, version, *published)
                )?;
                let installed = self.store.find(&older);
                return Ok(Some(Choice {
                    resolution: older,
                    installed,
                }));
            }
        }
        let window = i64::from(cooled.days) * 86_400;
        let now = now_secs();
        let old_enough = |i: &Installed| {
            cooled
                .history
                .allows(&i.version, window, now)
                .unwrap_or_else(|| installed_long_ago(i, window, now))
        };
        let entry = &cooled.resolution.entry;
        match fallback(installed, &entry.version, old_enough) {
            Some(older) => {
                let note =
                    installed_instead(&entry.id, cooled.pin, cooled.days, eligible_at, &older);
                writeln!(err, "note: {note}")?;
                Ok(Some(Choice {
                    resolution: cooled.resolution.clone(),
                    installed: Some(older),
                }))
            }
            None => Err(cooled.refusal(eligible_at, candidate.as_ref())),
        }
    }

    /// `--min-age` decided by npm's or `PyPI`'s publish time of the pin and the installed
    /// versions (the lifecycle document does not say when the pin was published).
    fn min_age_by_index(
        &self,
        resolution: &Resolution,
        installed: Vec<Installed>,
        days: u32,
        err: &mut dyn Write,
    ) -> Result<Option<Installed>, CommandError> {
        let entry = &resolution.entry;
        let root = self.store.root().to_path_buf();
        let published = if self.flags.offline {
            None
        } else {
            let (runtime, client) = self.net()?;
            runtime.block_on(age::publish_time(client, &root, resolution))?
        };
        let Some(published) = published else {
            writeln!(
                err,
                "note: the publish time of {} {} is unknown; --min-age {days} allows it",
                t(&entry.id),
                t(&entry.version)
            )?;
            return Ok(None);
        };
        match min_age_decision(published, days, now_secs(), installed, &entry.version) {
            MinAge::Allowed => Ok(None),
            MinAge::Fallback { older, eligible_at } => {
                let note = installed_instead(&entry.id, &entry.version, days, eligible_at, &older);
                writeln!(err, "note: {note}")?;
                Ok(Some(*older))
            }
            MinAge::Refused { eligible_at } => Err(CommandError::Usage(format!(
                "{} {} was published less than {days} days ago: --min-age {days} allows it from {}, and no older installed version has been in the cache {days} days; wait, or lower --min-age",
                t(&entry.id),
                t(&entry.version),
                when(eligible_at)
            ))),
        }
    }
}

/// What `--min-age` decides for a release published at `published` (seconds since the
/// epoch), measured at `now`.
#[derive(Debug, PartialEq, Eq)]
enum MinAge {
    /// Old enough.
    Allowed,
    /// Too young; this older install is used instead.
    Fallback {
        /// The newest older install known to be old enough.
        older: Box<Installed>,
        /// When the release becomes eligible.
        eligible_at: i64,
    },
    /// Too young, and no older install is known to be old enough.
    Refused {
        /// When the release becomes eligible.
        eligible_at: i64,
    },
}

/// `--min-age DAYS` for the release `version` published at `published`: allowed once
/// `DAYS` days old, else the newest of `installed` (newest first) older than `version` that
/// has been installed at least `DAYS` days (so published at least that long ago).
fn min_age_decision(
    published: i64,
    days: u32,
    now: i64,
    installed: Vec<Installed>,
    version: &str,
) -> MinAge {
    let window = i64::from(days) * 86_400;
    let eligible_at = published.saturating_add(window);
    if eligible_at <= now {
        return MinAge::Allowed;
    }
    match fallback(installed, version, |i| installed_long_ago(i, window, now)) {
        Some(older) => MinAge::Fallback {
            older: Box::new(older),
            eligible_at,
        },
        None => MinAge::Refused { eligible_at },
    }
}

/// The newest of `installed` (newest first) older than `version` that is `old_enough`.
fn fallback(
    installed: Vec<Installed>,
    version: &str,
    old_enough: impl Fn(&Installed) -> bool,
) -> Option<Installed> {
    installed
        .into_iter()
        .filter(|i| version_order(&i.version, version).is_lt())
        .find(|i| old_enough(i))
}

/// Whether `install` has been in the cache `window` seconds at `now` (so its release was
/// published at least that long ago).
fn installed_long_ago(install: &Installed, window: i64, now: i64) -> bool {
    acp_registry_core::time::parse_iso_utc_seconds(&install.installed_at)
        .is_some_and(|at| at.saturating_add(window) <= now)
}

/// A pin too young under `--min-age`, and the lifecycle history that decides instead.
struct Cooled<'r> {
    resolution: &'r Resolution,
    history: &'r lifecycle::Distribution,
    pin: &'r str,
    days: u32,
}

impl Cooled<'_> {
    /// The note for installing the older `version` instead of the pin.
    fn older_text(&self, eligible_at: i64, version: &str, published: i64) -> String {
        format!(
            "{} {} was published {}, less than --min-age {} days ago (eligible {}); using {} (published {}), the newest older release at least that old that is not yanked, deprecated or a preview",
            t(&self.resolution.entry.id),
            t(self.pin),
            self.published_text(),
            self.days,
            when(eligible_at),
            t(version),
            when(published)
        )
    }

    fn published_text(&self) -> String {
        self.history
            .published_of(self.pin)
            .map_or_else(|| "recently".to_string(), when)
    }

    /// Why nothing can be used: the eligible release (a binary's, which cannot be installed
    /// at another version) or none.
    fn refusal(&self, eligible_at: i64, candidate: Option<&(String, i64)>) -> CommandError {
        let entry = &self.resolution.entry;
        let days = self.days;
        let head = format!(
            "{} {} was published {}, less than --min-age {days} days ago (eligible {})",
            t(&entry.id),
            t(self.pin),
            self.published_text(),
            when(eligible_at)
        );
        CommandError::Usage(match candidate {
            Some((version, published)) => format!(
                "{head}; {} (published {}) is old enough, but a {} is installed only at the registry's version (its archives are pinned for {} alone) and {} is not installed; wait, or lower --min-age",
                t(version),
                when(*published),
                self.resolution.kind,
                t(&entry.version),
                t(version)
            ),
            None => format!(
                "{head}; no older release in the registry's history is old enough and not yanked or deprecated, and no older installed version is; wait, or lower --min-age"
            ),
        })
    }
}

/// The note for using the installed `older` instead of `id`'s `version`, too young.
fn installed_instead(
    id: &str,
    version: &str,
    days: u32,
    eligible_at: i64,
    older: &Installed,
) -> String {
    format!(
        "{} {} was published less than {days} days ago (eligible {}); using the installed {}",
        t(id),
        t(version),
        when(eligible_at),
        t(&older.version)
    )
}

/// A UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
fn when(at: i64) -> String {
    acp_registry_core::time::format_utc(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_registry_client::platform::Kind;
    use std::path::PathBuf;

    fn install(version: &str, installed_at: &str) -> Installed {
        Installed {
            id: "a".into(),
            version: version.into(),
            platform: "linux-x86_64".into(),
            kind: Kind::Npx,
            dir: PathBuf::from("/c"),
            program: PathBuf::from("/c/p"),
            args: Vec::new(),
            env: std::collections::BTreeMap::new(),
            sha256: None,
            installed_at: installed_at.into(),
            source: "a@1".into(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn min_age_allows_an_old_release_and_falls_back_to_an_older_install_old_enough() {
        let day = 86_400;
        let now = 100 * day;
        // Installed on day 80 and day 98 (newest first, as `installed_versions` gives them).
        let installs = || {
            vec![
                install("1.2.0", "1970-04-09T00:00:00Z"),
                install("1.1.0", "1970-03-22T00:00:00Z"),
            ]
        };
        assert_eq!(
            min_age_decision(90 * day, 7, now, installs(), "2.0.0"),
            MinAge::Allowed
        );
        assert_eq!(
            min_age_decision(99 * day, 7, now, installs(), "2.0.0"),
            MinAge::Fallback {
                older: Box::new(installs()[1].clone()),
                eligible_at: 106 * day
            }
        );
        assert_eq!(
            min_age_decision(99 * day, 30, now, installs(), "2.0.0"),
            MinAge::Refused {
                eligible_at: 129 * day
            }
        );
        // The release itself installed long ago is no fallback for itself.
        let same = vec![install("2.0.0", "1970-01-02T00:00:00Z")];
        assert_eq!(
            min_age_decision(99 * day, 7, now, same, "2.0.0"),
            MinAge::Refused {
                eligible_at: 106 * day
            }
        );
    }
}
