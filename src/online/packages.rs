//! What npm's and `PyPI`'s metadata documents say about a pinned package version.
//!
//! npm: `GET <npm>/<name>` (`@scope%2fname` for scoped names) answers
//! `{"name", "dist-tags": {"latest"}, "versions": {"1.2.3": {"deprecated": "…"}}}`.
//! `PyPI`: `GET <pypi>/pypi/<name>/json` answers
//! `{"info": {"version"}, "releases": {"1.2.3": [{"yanked": bool, "yanked_reason"}]}}`.

use serde_json::Value;

use crate::rules::Version;

/// The verdict on one package spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Ok,
    NoPackage,
    /// The package exists but not this version; `latest` is the newest release it names.
    NoVersion {
        latest: Option<String>,
    },
    /// `PyPI` lists the version without any file to install.
    NoFiles,
    Deprecated(String),
    Yanked(Option<String>),
}

/// The npm metadata URL of `name`: the scope's `/` is percent-encoded, as npm expects.
pub(crate) fn npm_url(base: &str, name: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), encode(name))
}

pub(crate) fn pypi_url(base: &str, name: &str) -> String {
    format!("{}/pypi/{}/json", base.trim_end_matches('/'), encode(name))
}

/// Percent-encode everything but unreserved characters and `@`.
fn encode(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'~' | b'-' | b'@' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02x}"),
        })
        .collect()
}

/// The key of `map` naming `version`: exactly, else the same X.Y.Z read as numbers
/// (`2026.07.20` is published as `2026.7.20`).
fn version_key<'a>(map: &'a serde_json::Map<String, Value>, version: &str) -> Option<&'a Value> {
    if let Some(value) = map.get(version) {
        return Some(value);
    }
    let wanted = Version::parse(version)?;
    map.iter()
        .find(|(key, _)| Version::parse(key) == Some(wanted))
        .map(|(_, value)| value)
}

/// `doc` is `None` when npm answered 404.
pub(crate) fn npm_verdict(doc: Option<&Value>, version: Option<&str>) -> Verdict {
    match pinned(doc, version, "versions", "/dist-tags/latest") {
        Err(verdict) => verdict,
        Ok(meta) => npm_deprecation(meta).map_or(Verdict::Ok, |m| Verdict::Deprecated(m.into())),
    }
}

/// `doc` is `None` when `PyPI` answered 404. A release is yanked when all its files are.
pub(crate) fn pypi_verdict(doc: Option<&Value>, version: Option<&str>) -> Verdict {
    let files = match pinned(doc, version, "releases", "/info/version") {
        Err(verdict) => return verdict,
        Ok(files) => files.as_array().map(Vec::as_slice).unwrap_or_default(),
    };
    if files.is_empty() {
        return Verdict::NoFiles;
    }
    if !pypi_installable(files) {
        let reason = files
            .iter()
            .filter_map(|f| f["yanked_reason"].as_str())
            .find(|r| !r.trim().is_empty());
        return Verdict::Yanked(reason.map(str::to_string));
    }
    Verdict::Ok
}

/// The entry of the pinned `version` in `doc[list]`, or the verdict reached without one:
/// no package, no pin, or no such version (`latest` points at the newest one named).
fn pinned<'a>(
    doc: Option<&'a Value>,
    version: Option<&str>,
    list: &str,
    latest: &str,
) -> Result<&'a Value, Verdict> {
    let doc = doc.ok_or(Verdict::NoPackage)?;
    let version = version.ok_or(Verdict::Ok)?;
    let entries = doc[list].as_object();
    entries
        .and_then(|map| version_key(map, version))
        .ok_or_else(|| Verdict::NoVersion {
            latest: doc
                .pointer(latest)
                .and_then(Value::as_str)
                .map(str::to_string),
        })
}

/// The message of an npm version's `deprecated` field; a blank one does not count.
pub(crate) fn npm_deprecation(meta: &Value) -> Option<&str> {
    meta["deprecated"].as_str().filter(|m| !m.trim().is_empty())
}

/// Whether a `PyPI` release has a file to install: at least one not yanked.
pub(crate) fn pypi_installable(files: &[Value]) -> bool {
    files.iter().any(|f| f["yanked"].as_bool() != Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scoped_npm_names_are_requested_encoded() {
        assert_eq!(
            npm_url("https://r.example/", "@acme/agent"),
            "https://r.example/@acme%2fagent"
        );
        assert_eq!(
            pypi_url("https://p.example", "acme-agent"),
            "https://p.example/pypi/acme-agent/json"
        );
    }

    #[test]
    fn npm_documents_give_each_verdict() {
        let doc = json!({
            "name": "a", "dist-tags": {"latest": "2.0.0"},
            "versions": {"1.0.0": {"deprecated": "use 2"}, "2.0.0": {}}
        });
        assert_eq!(npm_verdict(Some(&doc), Some("2.0.0")), Verdict::Ok);
        assert_eq!(
            npm_verdict(Some(&doc), Some("1.0.0")),
            Verdict::Deprecated("use 2".into())
        );
        assert_eq!(
            npm_verdict(Some(&doc), Some("3.0.0")),
            Verdict::NoVersion {
                latest: Some("2.0.0".into())
            }
        );
        assert_eq!(npm_verdict(None, Some("1.0.0")), Verdict::NoPackage);
    }

    #[test]
    fn pypi_releases_are_yanked_only_when_every_file_is() {
        let doc = json!({"info": {"version": "1.1"}, "releases": {
            "1.0": [{"yanked": true, "yanked_reason": "broken"}, {"yanked": true}],
            "1.1": [{"yanked": true}, {"yanked": false}],
            "0.9": []
        }});
        assert_eq!(
            pypi_verdict(Some(&doc), Some("1.0")),
            Verdict::Yanked(Some("broken".into()))
        );
        assert_eq!(pypi_verdict(Some(&doc), Some("1.1")), Verdict::Ok);
        assert_eq!(pypi_verdict(Some(&doc), Some("0.9")), Verdict::NoFiles);
        assert_eq!(
            pypi_verdict(Some(&doc), Some("2.0")),
            Verdict::NoVersion {
                latest: Some("1.1".into())
            }
        );
    }

    #[test]
    fn versions_match_as_numbers() {
        let doc = json!({"versions": {"2026.7.20": {}}});
        assert_eq!(npm_verdict(Some(&doc), Some("2026.07.20")), Verdict::Ok);
    }
}
