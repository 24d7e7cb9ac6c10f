//! Choosing the version to move to: the highest version every declared source offers on
//! the channel, compared with the current one. Pure, so every case is a unit test.

use super::sources::Offer;
use super::Channel;
use crate::rules::PreviewVersion;

/// What the sources say about one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection {
    pub(crate) decision: Decision,
    /// Set when the sources' highest versions differ: each source with its highest.
    pub(crate) mismatch: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    UpToDate,
    Update(PreviewVersion),
    /// The best common version is lower than the current one: reported, never applied.
    Downgrade(PreviewVersion),
    /// No version is offered by every source.
    NoCommon,
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

pub(crate) fn select(current: PreviewVersion, offers: &[Offer], channel: Channel) -> Selection {
    let highest: Vec<(&str, Option<PreviewVersion>)> = offers
        .iter()
        .map(|o| (o.name.as_str(), on_channel(o, channel).max()))
        .collect();
    let mismatch = (highest.windows(2).any(|w| w[0].1 != w[1].1)).then(|| {
        let parts: Vec<String> = highest
            .iter()
            .map(|(name, v)| match v {
                Some(v) => format!("{name} {v}"),
                None => format!("{name} nothing"),
            })
            .collect();
        format!("the sources' highest versions differ: {}", parts.join(", "))
    });
    let common = offers.first().and_then(|first| {
        on_channel(first, channel)
            .filter(|v| {
                offers[1..]
                    .iter()
                    .all(|o| on_channel(o, channel).any(|w| w == *v))
            })
            .max()
    });
    let decision = match common {
        None => Decision::NoCommon,
        Some(v) if v > current => Decision::Update(v),
        Some(v) if v == current => Decision::UpToDate,
        Some(v) => Decision::Downgrade(v),
    };
    Selection { decision, mismatch }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(name: &str, versions: &[&str]) -> Offer {
        Offer {
            name: name.into(),
            versions: versions
                .iter()
                .map(|v| PreviewVersion::parse(v).unwrap())
                .collect(),
            release: None,
        }
    }

    fn v(text: &str) -> PreviewVersion {
        PreviewVersion::parse(text).unwrap()
    }

    #[test]
    fn stable_takes_the_highest_version_every_source_offers() {
        let offers = [
            offer("npm", &["1.0.0", "1.1.0", "1.2.0"]),
            offer("gh", &["1.0.0", "1.1.0"]),
        ];
        let s = select(v("1.0.0"), &offers, Channel::Stable);
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
            select(v("1.0.0"), &offers, Channel::Stable).decision,
            Decision::UpToDate
        );
        assert_eq!(
            select(v("1.0.0"), &offers, Channel::Preview).decision,
            Decision::Update(v("1.1.0-preview.10"))
        );
        let overtaken = [offer("npm", &["1.1.0-preview.10", "1.1.0"])];
        assert_eq!(
            select(v("1.1.0-preview.10"), &overtaken, Channel::Preview).decision,
            Decision::Update(v("1.1.0"))
        );
    }

    #[test]
    fn a_lower_candidate_is_a_downgrade_and_no_overlap_is_reported() {
        let offers = [offer("npm", &["1.0.0"])];
        assert_eq!(
            select(v("2.0.0"), &offers, Channel::Stable).decision,
            Decision::Downgrade(v("1.0.0"))
        );
        let apart = [offer("npm", &["1.0.0"]), offer("gh", &["2.0.0"])];
        assert_eq!(
            select(v("1.0.0"), &apart, Channel::Stable).decision,
            Decision::NoCommon
        );
    }
}
