//! What npm's and PyPI's metadata documents say about a pinned package version.
//!
//! npm: `GET <npm>/<name>` (`@scope%2fname` for scoped names) answers
//! `{"name", "dist-tags": {"latest"}, "versions": {"1.2.3": {"deprecated": "…"}}}`.
//! PyPI: `GET <pypi>/pypi/<name>/json` answers
//! `{"info": {"version"}, "releases": {"1.2.3": [{"yanked": bool, "yanked_reason"}]}}`.

use serde_json::Value;

use crate::rules::Version;

/// The verdict on one package spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    NoPackage,
    /// The package exists but not this version; `latest` is the newest release it names.
    NoVersion {
        latest: Option<String>,
    },
    /// PyPI lists the version without any file to install.
    NoFiles,
    Deprecated(String),
    Yanked(Option<String>),
}

/// The npm metadata URL of `name`: the scope's `/` is percent-encoded, as npm expects.
pub fn npm_url(base: &str, name: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), encode(name))
}

pub fn pypi_url(base: &str, name: &str) -> String {
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
pub fn npm_verdict(doc: Option<&Value>, version: Option<&str>) -> Verdict {
    let Some(doc) = doc else {
        return Verdict::NoPackage;
    };
    let Some(version) = version else {
        return Verdict::Ok;
    };
    let versions = doc["versions"].as_object();
    match versions.and_then(|v| version_key(v, version)) {
        None => Verdict::NoVersion {
            latest: doc["dist-tags"]["latest"].as_str().map(str::to_string),
        },
        Some(meta) => match meta["deprecated"].as_str() {
            Some(message) if !message.trim().is_empty() => Verdict::Deprecated(message.into()),
            _ => Verdict::Ok,
        },
    }
}

/// `doc` is `None` when PyPI answered 404. A release is yanked when all its files are.
pub fn pypi_verdict(doc: Option<&Value>, version: Option<&str>) -> Verdict {
    let Some(doc) = doc else {
        return Verdict::NoPackage;
    };
    let Some(version) = version else {
        return Verdict::Ok;
    };
    let releases = doc["releases"].as_object();
    let Some(files) = releases.and_then(|r| version_key(r, version)) else {
        return Verdict::NoVersion {
            latest: doc["info"]["version"].as_str().map(str::to_string),
        };
    };
    let files = files.as_array().map(Vec::as_slice).unwrap_or_default();
    if files.is_empty() {
        return Verdict::NoFiles;
    }
    if files.iter().all(|f| f["yanked"].as_bool() == Some(true)) {
        let reason = files
            .iter()
            .filter_map(|f| f["yanked_reason"].as_str())
            .find(|r| !r.trim().is_empty());
        return Verdict::Yanked(reason.map(str::to_string));
    }
    Verdict::Ok
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
