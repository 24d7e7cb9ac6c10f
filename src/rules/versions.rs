//! Versions as the registry understands them: `X.Y.Z` with digits only (leading zeros
//! allowed, compared numerically) and the preview form `X.Y.Z-preview.N`.

use std::cmp::Ordering;

/// A release version `X.Y.Z`, components compared as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Version(pub u64, pub u64, pub u64);

impl Version {
    /// `X.Y.Z`, digits only; `None` otherwise.
    pub(crate) fn parse(text: &str) -> Option<Version> {
        let mut parts = text.split('.');
        let mut next = || -> Option<u64> {
            let part = parts.next()?;
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            part.parse().ok()
        };
        let version = Version(next()?, next()?, next()?);
        parts.next().is_none().then_some(version)
    }
}

/// `X.Y.Z` or `X.Y.Z-preview.N` (N >= 1, no leading zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PreviewVersion {
    /// The `X.Y.Z` part.
    pub base: Version,
    /// `N` of `-preview.N`; `None` for a plain `X.Y.Z`.
    pub preview: Option<u64>,
}

impl PreviewVersion {
    /// `X.Y.Z` or `X.Y.Z-preview.N` (N >= 1, no leading zero); `None` otherwise.
    pub(crate) fn parse(text: &str) -> Option<PreviewVersion> {
        match text.split_once('-') {
            None => Some(PreviewVersion {
                base: Version::parse(text)?,
                preview: None,
            }),
            Some((base, tag)) => {
                let counter = tag.strip_prefix("preview.")?;
                if counter.is_empty()
                    || counter.starts_with('0')
                    || !counter.bytes().all(|b| b.is_ascii_digit())
                {
                    return None;
                }
                Some(PreviewVersion {
                    base: Version::parse(base)?,
                    preview: Some(counter.parse().ok()?),
                })
            }
        }
    }
}

impl Ord for PreviewVersion {
    /// `X.Y.Z-preview.N` ranks below `X.Y.Z` and above every lower `X.Y.Z`; counters compare
    /// numerically.
    fn cmp(&self, other: &Self) -> Ordering {
        self.base
            .cmp(&other.base)
            .then(match (self.preview, other.preview) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => a.cmp(&b),
            })
    }
}

impl std::fmt::Display for PreviewVersion {
    /// The canonical text: numbers without leading zeros (`2026.07.20` is `2026.7.20`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Version(x, y, z) = self.base;
        write!(f, "{x}.{y}.{z}")?;
        match self.preview {
            Some(n) => write!(f, "-preview.{n}"),
            None => Ok(()),
        }
    }
}

impl PartialOrd for PreviewVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compare_versions(a: &str, b: &str) -> Option<Ordering> {
        Some(PreviewVersion::parse(a)?.cmp(&PreviewVersion::parse(b)?))
    }

    #[test]
    fn leading_zeros_compare_numerically() {
        assert_eq!(
            compare_versions("2026.07.20", "2026.7.20"),
            Some(Ordering::Equal)
        );
        assert_eq!(compare_versions("1.10.0", "1.9.0"), Some(Ordering::Greater));
    }

    #[test]
    fn preview_ranks_below_its_release_and_above_the_previous() {
        let v = |s| PreviewVersion::parse(s).unwrap();
        assert!(v("1.2.3-preview.1") < v("1.2.3"));
        assert!(v("1.2.3-preview.1") > v("1.2.2"));
        assert!(v("1.2.3-preview.10") > v("1.2.3-preview.9"));
    }

    #[test]
    fn malformed_versions_are_refused() {
        for bad in [
            "1.2",
            "1.2.3.4",
            "v1.2.3",
            "1.2.x",
            "1.2.3-beta.1",
            "1.2.3-preview.0",
            "1.2.3-preview.01",
            "1.2.3-preview.",
        ] {
            assert_eq!(PreviewVersion::parse(bad), None, "{bad}");
        }
    }
}
