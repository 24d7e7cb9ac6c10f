//! Choosing the version to move to: the highest version every declared source offers on
//! the channel and, under a release-age cooldown, published long enough ago by every one of
//! them; compared with the current one. Pure (the time is passed in), so every case is a
//! unit test.

use super::options::Channel;
use super::sources::Offer;
use crate::rules::PreviewVersion;

/// Seconds in a day of the cooldown.
const DAY: i64 = 86_400;

/// The release-age cooldown: how old a release must be, measured at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cooldown {
    pub(crate) min_age_days: u32,
    /// Seconds since the epoch.
    pub(crate) now: i64,
}

impl Cooldown {
    /// When a release published at `published` may be applied: `None` when its time is
    /// unknown under a cooldown (never applied), the publish time plus the cooldown otherwise.
    pub(crate) fn eligible_at(self, published: Option<i64>) -> Option<i64> {
        published.map(|t| t.saturating_add(i64::from(self.min_age_days) * DAY))
    }

    /// Whether a release published at `published` may be applied now. Without a cooldown
    /// every release may, its time known or not.
    pub(crate) fn allows(self, published: Option<i64>) -> bool {
        self.min_age_days == 0 || self.eligible_at(published).is_some_and(|at| at <= self.now)
    }
}

/// When `version` was published as far as `offers` tell: the latest of their times (the
/// version must have aged at each), `None` when one of them does not say.
pub(crate) fn published(offers: &[Offer], version: PreviewVersion) -> Option<i64> {
    offers
        .iter()
        .map(|o| o.published(version))
        .try_fold(i64::MIN, |latest, t| Some(latest.max(t?)))
        .filter(|_| !offers.is_empty())
}

/// What the sources say about one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection {
    pub(crate) decision: Decision,
    /// Set when the sources' highest versions differ: each source with its highest.
    pub(crate) mismatch: Option<String>,
    /// The newest common version above the current one when the cooldown holds it back.
    pub(crate) held: Option<Held>,
}

/// A release newer than the one chosen, held back by the cooldown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Held {
    pub(crate) version: PreviewVersion,
    /// The latest of the sources' publish times; `None` when one does not say.
    pub(crate) published: Option<i64>,
    /// The sources that give no publish time for it.
    pub(crate) untimed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    UpToDate,
    Update(PreviewVersion),
    /// The best common version is lower than the current one: reported, never applied.
    Downgrade(PreviewVersion),
    /// No version is offered by every source.
    NoCommon,
    /// Newer versions exist, but the cooldown holds back every one of them.
    Waiting,
}

/// Whether `channel` follows `version`: stable sees only `X.Y.Z`; preview sees previews and
/// stable versions (a newer stable overtakes a preview).
pub(crate) fn follows(channel: Channel, version: PreviewVersion) -> bool {
    channel == Channel::Preview || version.preview.is_none()
}

/// The versions of `offer` on `channel`.
fn on_channel(offer: &Offer, channel: Channel) -> impl Iterator<Item = PreviewVersion> + '_ {
    offer
        .versions
        .iter()
        .copied()
        .filter(move |v| follows(channel, *v))
}

pub(crate) fn select(
    current: PreviewVersion,
    offers: &[Offer],
    channel: Channel,
    cooldown: Cooldown,
) -> Selection {
    let mismatch = mismatch(offers, channel);
    let common: Vec<PreviewVersion> = offers.first().map_or_else(Vec::new, |first| {
        on_channel(first, channel)
            .filter(|v| {
                offers[1..]
                    .iter()
                    .all(|o| o.versions.binary_search(v).is_ok())
            })
            .collect()
    });
    let (decision, held) = match common.last().copied() {
        None => (Decision::NoCommon, None),
        Some(v) if v < current => (Decision::Downgrade(v), None),
        Some(v) if v == current => (Decision::UpToDate, None),
        Some(newest) => {
            let aged = common
                .iter()
                .rev()
                .copied()
                .take_while(|v| *v > current)
                .find(|v| cooldown.allows(published(offers, *v)));
            let held = (aged != Some(newest)).then(|| Held {
                version: newest,
                published: published(offers, newest),
                untimed: offers
                    .iter()
                    .filter(|o| o.published(newest).is_none())
                    .map(|o| o.name.clone())
                    .collect(),
            });
            (aged.map_or(Decision::Waiting, Decision::Update), held)
        }
    };
    Selection {
        decision,
        mismatch,
        held,
    }
}

/// The finding when the sources' highest versions on the channel differ.
fn mismatch(offers: &[Offer], channel: Channel) -> Option<String> {
    let highest: Vec<(&str, Option<PreviewVersion>)> = offers
        .iter()
        .map(|o| (o.name.as_str(), on_channel(o, channel).max()))
        .collect();
    (highest.windows(2).any(|w| w[0].1 != w[1].1)).then(|| {
        let parts: Vec<String> = highest
            .iter()
            .map(|(name, v)| match v {
                Some(v) => format!("{name} {v}"),
                None => format!("{name} nothing"),
            })
            .collect();
        format!("the sources' highest versions differ: {}", parts.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An offer of `versions`, each published on day `i` (its index) since the epoch.
    fn offer(name: &str, versions: &[&str]) -> Offer {
        let timed: Vec<(&str, Option<i64>)> = (0..)
            .zip(versions)
            .map(|(day, v)| (*v, Some(day * DAY)))
            .collect();
        timed_offer(name, &timed)
    }

    fn timed_offer(name: &str, versions: &[(&str, Option<i64>)]) -> Offer {
        let published: std::collections::BTreeMap<_, _> =
            versions.iter().map(|(text, t)| (v(text), *t)).collect();
        Offer {
            name: name.into(),
            kind: crate::registry::releases::SourceKind::Npm,
            package: name.into(),
            history: Vec::new(),
            versions: published.keys().copied().collect(),
            published,
            release: None,
            feed: None,
        }
    }

    /// No cooldown.
    const NONE: Cooldown = Cooldown {
        min_age_days: 0,
        now: 0,
    };

    fn v(text: &str) -> PreviewVersion {
        PreviewVersion::parse(text).unwrap()
    }

    #[test]
    fn stable_takes_the_highest_version_every_source_offers() {
        let offers = [
            offer("npm", &["1.0.0", "1.1.0", "1.2.0"]),
            offer("gh", &["1.0.0", "1.1.0"]),
        ];
        let s = select(v("1.0.0"), &offers, Channel::Stable, NONE);
        assert_eq!(s.decision, Decision::Update(v("1.1.0")));
        assert_eq!(
            s.mismatch.as_deref(),
            Some("the sources' highest versions differ: npm 1.2.0, gh 1.1.0")
        );
    }

    #[test]
    fn stable_ignores_previews_and_preview_sees_both() {
        let offers = [offer(
            "npm",
            &["1.0.0", "1.1.0-preview.2", "1.1.0-preview.10"],
        )];
        assert_eq!(
            select(v("1.0.0"), &offers, Channel::Stable, NONE).decision,
            Decision::UpToDate
        );
        assert_eq!(
            select(v("1.0.0"), &offers, Channel::Preview, NONE).decision,
            Decision::Update(v("1.1.0-preview.10"))
        );
        let overtaken = [offer("npm", &["1.1.0-preview.10", "1.1.0"])];
        assert_eq!(
            select(v("1.1.0-preview.10"), &overtaken, Channel::Preview, NONE).decision,
            Decision::Update(v("1.1.0"))
        );
    }

    #[test]
    fn a_lower_candidate_is_a_downgrade_and_no_overlap_is_reported() {
        let offers = [offer("npm", &["1.0.0"])];
        assert_eq!(
            select(v("2.0.0"), &offers, Channel::Stable, NONE).decision,
            Decision::Downgrade(v("1.0.0"))
        );
        let apart = [offer("npm", &["1.0.0"]), offer("gh", &["2.0.0"])];
        assert_eq!(
            select(v("1.0.0"), &apart, Channel::Stable, NONE).decision,
            Decision::NoCommon
        );
    }

    /// A 7-day cooldown measured on day 10.
    const WEEK_ON_DAY_10: Cooldown = Cooldown {
        min_age_days: 7,
        now: 10 * DAY,
    };

    #[test]
    fn a_cooldown_takes_the_newest_aged_version_and_holds_the_newest() {
        // Published on days 0, 1, 2, 3, 4: on day 10 only days 0 to 3 are a week old.
        let offers = [offer("npm", &["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0"])];
        let s = select(v("1.1.0"), &offers, Channel::Stable, WEEK_ON_DAY_10);
        assert_eq!(s.decision, Decision::Update(v("1.3.0")));
        let held = s.held.unwrap();
        assert_eq!((held.version, held.published), (v("1.4.0"), Some(4 * DAY)));
        assert_eq!(WEEK_ON_DAY_10.eligible_at(held.published), Some(11 * DAY));
        // Exactly a week old is old enough.
        let at_11 = Cooldown {
            now: 11 * DAY,
            ..WEEK_ON_DAY_10
        };
        let s = select(v("1.1.0"), &offers, Channel::Stable, at_11);
        assert_eq!((s.decision, s.held), (Decision::Update(v("1.4.0")), None));
    }

    #[test]
    fn a_cooldown_never_goes_below_the_current_version() {
        let offers = [offer("npm", &["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0"])];
        let s = select(
            v("1.4.0-preview.1"),
            &offers,
            Channel::Preview,
            WEEK_ON_DAY_10,
        );
        assert_eq!(s.decision, Decision::Waiting);
        assert_eq!(s.held.map(|h| h.version), Some(v("1.4.0")));
        let s = select(v("1.4.0"), &offers, Channel::Stable, WEEK_ON_DAY_10);
        assert_eq!((s.decision, s.held), (Decision::UpToDate, None));
    }

    #[test]
    fn every_source_must_have_aged_and_an_unknown_time_is_never_applied() {
        let npm = timed_offer("npm", &[("1.1.0", Some(0)), ("1.2.0", Some(0))]);
        let github = timed_offer("gh", &[("1.1.0", Some(DAY)), ("1.2.0", Some(5 * DAY))]);
        let offers = [npm, github];
        assert_eq!(published(&offers, v("1.2.0")), Some(5 * DAY));
        let s = select(v("1.0.0"), &offers, Channel::Stable, WEEK_ON_DAY_10);
        assert_eq!(s.decision, Decision::Update(v("1.1.0")));
        assert!(s.held.unwrap().untimed.is_empty());

        let untimed = [timed_offer("pypi", &[("1.1.0", None)])];
        let s = select(v("1.0.0"), &untimed, Channel::Stable, WEEK_ON_DAY_10);
        assert_eq!(s.decision, Decision::Waiting);
        let held = s.held.unwrap();
        assert_eq!(
            (held.published, held.untimed),
            (None, vec!["pypi".to_string()])
        );
        assert_eq!(WEEK_ON_DAY_10.eligible_at(held.published), None);
        // Without a cooldown the time does not matter.
        let s = select(v("1.0.0"), &untimed, Channel::Stable, NONE);
        assert_eq!((s.decision, s.held), (Decision::Update(v("1.1.0")), None));
    }
}
