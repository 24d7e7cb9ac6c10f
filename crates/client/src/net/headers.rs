//! The response headers callers outside `net` read, so no reqwest type leaves the HTTP layer.

use reqwest::header::HeaderMap;

/// The headers kept: GitHub's rate-limit answers and pagination.
const KEPT: [&str; 4] = [
    "link",
    "retry-after",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
];

/// The kept headers (GitHub's rate-limit answers and pagination) of one response: the first value of each, as text when it is
/// visible ASCII (as `HeaderValue::to_str` decides), else present without text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers {
    kept: Vec<(&'static str, Option<String>)>,
}

impl Headers {
    /// The kept headers of `map`.
    pub(super) fn of(map: &HeaderMap) -> Self {
        let kept = KEPT
            .iter()
            .filter_map(|name| {
                let value = map.get(*name)?;
                Some((*name, value.to_str().ok().map(str::to_string)))
            })
            .collect();
        Self { kept }
    }

    /// The text of header `name` (any case); `None` when absent or not visible ASCII.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entry(name).and_then(|(_, value)| value.as_deref())
    }

    /// Whether header `name` (any case) was sent, whatever its value.
    pub fn contains(&self, name: &str) -> bool {
        self.entry(name).is_some()
    }

    fn entry(&self, name: &str) -> Option<&(&'static str, Option<String>)> {
        self.kept.iter().find(|(n, _)| n.eq_ignore_ascii_case(name))
    }
}

/// Headers from `(name, value)` pairs, as the tests build answers; names not kept are
/// dropped, as they are from a response, and the first value of a name wins.
/// Headers from name/value pairs, as tests write them (pairs that are not valid headers are
/// skipped).
impl<'a> FromIterator<(&'a str, &'a str)> for Headers {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(pairs: I) -> Self {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::try_from(name),
                reqwest::header::HeaderValue::try_from(value),
            ) else {
                continue;
            };
            map.append(name, value);
        }
        Self::of(&map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kept_headers_are_read_in_any_case() {
        let headers: Headers = [
            ("Link", "<https://x/?page=2>; rel=\"next\""),
            ("X-RateLimit-Remaining", "0"),
            ("x-ratelimit-remaining", "5"),
            ("set-cookie", "secret"),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            headers.get("LINK"),
            Some("<https://x/?page=2>; rel=\"next\"")
        );
        assert_eq!(headers.get("x-ratelimit-remaining"), Some("0"));
        assert_eq!(headers.get("set-cookie"), None);
        assert!(!headers.contains("retry-after"));
        let mut map = HeaderMap::new();
        map.insert("retry-after", "\u{e9}".parse().unwrap());
        let headers = Headers::of(&map);
        assert!(headers.contains("Retry-After"));
        assert_eq!(headers.get("retry-after"), None);
    }
}
