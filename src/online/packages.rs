//! What npm's and `PyPI`'s metadata documents say about a pinned package version, read into
//! typed views that keep only that (`net::json`: capped strings and version counts, the rest
//! of the document skipped), shared by the online rules and `update`.
//!
//! npm: `GET <npm>/<name>` (`@scope%2fname` for scoped names) answers
//! `{"name", "dist-tags": {"latest"}, "versions": {"1.2.3": {"deprecated": "…"}},
//! "time": {"1.2.3": "<ISO 8601>"}}`.
//! `PyPI`: `GET <pypi>/pypi/<name>/json` answers `{"info": {"version"}, "releases": {"1.2.3":
//! [{"yanked": bool, "yanked_reason", "upload_time_iso_8601"}]}}`.

use std::collections::BTreeMap;

use serde::de::SeqAccess;
use serde::Deserialize;

use crate::net::json::{
    deserialize_leniently, Flag, Lenient, Message, Obj, Text, Versions, MAX_VERSION_LEN,
};
use crate::rules::Version;
use acp_registry_core::fs::digest::{is_sha256_hex, HexCase};

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

/// An npm package document: `dist-tags.latest`, each version's `deprecated` message and its
/// publish time (`None` when the answer is not an object).
pub(crate) type NpmAnswer = Obj<NpmDocument>;

/// A `PyPI` project document: `info.version` and each release's files, counted.
pub(crate) type PypiAnswer = Obj<PypiDocument>;

/// What `update` and the online rules read of an npm package document.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NpmDocument {
    #[serde(rename = "dist-tags")]
    dist_tags: Obj<NpmDistTags>,
    versions: Versions<Obj<NpmVersion>>,
    /// Publish time per version (and npm's own `created`, `modified`).
    time: Versions<Text<MAX_TIME_LEN>>,
}

/// The longest publish time kept (`2026-01-01T00:00:00.000000+00:00` is 32 bytes).
const MAX_TIME_LEN: usize = 64;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NpmDistTags {
    latest: Text<MAX_VERSION_LEN>,
}

/// One version of an npm package: its `deprecated` message and `dist.integrity`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NpmVersion {
    deprecated: Message,
    dist: Obj<NpmDist>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NpmDist {
    integrity: Text<MAX_DIGEST_LEN>,
}

/// The longest digest kept (an npm `sha512-` integrity is 95 bytes; several space-separated
/// hashes a few hundred).
const MAX_DIGEST_LEN: usize = 512;

/// What the release history records of one npm version (its key as listed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NpmHistory<'a> {
    pub(crate) key: &'a str,
    pub(crate) published: Option<i64>,
    /// `dist.integrity`, as npm writes it (`sha512-<base64>`).
    pub(crate) integrity: Option<&'a str>,
    /// The `deprecated` message, when not blank.
    pub(crate) deprecated: Option<&'a str>,
}

impl NpmDocument {
    /// Every version key with whether it is deprecated; `None` when `versions` is not an
    /// object.
    pub(crate) fn versions(&self) -> Option<impl Iterator<Item = (&str, bool)>> {
        let versions = self.versions.0.as_ref()?;
        Some(
            versions
                .iter()
                .map(|(key, meta)| (key.as_str(), npm_deprecation(meta).is_some())),
        )
    }

    /// When the version `key` was published, from `time` (seconds since the epoch); `None`
    /// when `time` lacks it or it does not parse.
    pub(crate) fn published(&self, key: &str) -> Option<i64> {
        let time = self.time.0.as_ref()?.get(key)?.0.as_deref()?;
        acp_registry_core::time::parse_iso_utc_seconds(time)
    }

    /// Every version key with what the release history records of it, deprecated ones
    /// included; `None` when `versions` is not an object.
    pub(crate) fn history(&self) -> Option<impl Iterator<Item = NpmHistory<'_>>> {
        let versions = self.versions.0.as_ref()?;
        Some(versions.iter().map(|(key, meta)| {
            NpmHistory {
                key,
                published: self.published(key),
                integrity: meta
                    .0
                    .as_ref()
                    .and_then(|m| m.dist.0.as_ref()?.integrity.0.as_deref()),
                deprecated: npm_deprecation(meta),
            }
        }))
    }
}

/// What `update` and the online rules read of a `PyPI` project document.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PypiDocument {
    info: Obj<PypiInfo>,
    releases: Versions<PypiRelease>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PypiInfo {
    version: Text<MAX_VERSION_LEN>,
}

/// A release's list of files, counted as it is read: how many, whether one is not yanked,
/// the first non-blank `yanked_reason`, and the newest upload time of the files not yanked
/// (`None` when one of them has none); for the release history, the earliest upload time of
/// any file and the first file's `digests.sha256`. A value that is not a list has no files.
#[derive(Debug, Default)]
pub(crate) struct PypiRelease {
    files: usize,
    installable: bool,
    reason: Option<String>,
    uploaded: Uploaded,
    earliest: Option<i64>,
    first_sha256: Option<String>,
}

/// What the release history records of one `PyPI` release (its key as listed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PypiHistory<'a> {
    pub(crate) key: &'a str,
    /// The earliest `upload_time_iso_8601` of its files: when the release appeared.
    pub(crate) published: Option<i64>,
    /// Every file is yanked.
    pub(crate) yanked: bool,
    /// Lowercase hex `sha256` of the release's only file; `None` with several files.
    pub(crate) sha256: Option<&'a str>,
}

/// The newest upload time among files, or that one of them had none.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Uploaded {
    #[default]
    NoFile,
    At(i64),
    Unknown,
}

impl Uploaded {
    fn add(self, time: Option<i64>) -> Uploaded {
        match (self, time) {
            (Uploaded::Unknown, _) | (_, None) => Uploaded::Unknown,
            (Uploaded::NoFile, Some(t)) => Uploaded::At(t),
            (Uploaded::At(a), Some(t)) => Uploaded::At(a.max(t)),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PypiFile {
    yanked: Flag,
    yanked_reason: Message,
    upload_time_iso_8601: Text<MAX_TIME_LEN>,
    digests: Obj<PypiDigests>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PypiDigests {
    sha256: Text<64>,
}

impl Lenient for PypiRelease {
    fn seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut release = PypiRelease::default();
        while let Some(Obj(file)) = seq.next_element::<Obj<PypiFile>>()? {
            release.files += 1;
            release.record(file.as_ref());
            // As `file["yanked"] != true` reads: a file that is not an object is not yanked.
            let installable = file.as_ref().and_then(|f| f.yanked.0) != Some(true);
            release.installable |= installable;
            if installable {
                let time = file
                    .as_ref()
                    .and_then(|f| f.upload_time_iso_8601.0.as_deref());
                let time = time.and_then(acp_registry_core::time::parse_iso_utc_seconds);
                release.uploaded = release.uploaded.add(time);
            }
            let reason = file.and_then(|f| f.yanked_reason.0);
            if release.reason.is_none() {
                release.reason = reason.filter(|r| !r.trim().is_empty());
            }
        }
        Ok(release)
    }
}

impl PypiRelease {
    /// Keep what the release history needs of one more file: its upload time, if earliest,
    /// and the first file's digest (only a release of one file is given one).
    fn record(&mut self, file: Option<&PypiFile>) {
        let time = file.and_then(|f| f.upload_time_iso_8601.0.as_deref());
        if let Some(time) = time.and_then(acp_registry_core::time::parse_iso_utc_seconds) {
            self.earliest = Some(self.earliest.map_or(time, |t| t.min(time)));
        }
        if self.files == 1 {
            let sha256 = file.and_then(|f| f.digests.0.as_ref()?.sha256.0.as_deref());
            self.first_sha256 = sha256
                .filter(|h| is_sha256_hex(h, HexCase::Any))
                .map(str::to_ascii_lowercase);
        }
    }
}

deserialize_leniently!(PypiRelease);

impl PypiDocument {
    /// Every release key with whether it has a file to install; `None` when `releases` is
    /// not an object.
    pub(crate) fn releases(&self) -> Option<impl Iterator<Item = (&str, bool)>> {
        let releases = self.releases.0.as_ref()?;
        Some(
            releases
                .iter()
                .map(|(key, release)| (key.as_str(), release.installable)),
        )
    }

    /// Every release key with files, with what the release history records of it, yanked
    /// ones included; `None` when `releases` is not an object.
    pub(crate) fn history(&self) -> Option<impl Iterator<Item = PypiHistory<'_>>> {
        let releases = self.releases.0.as_ref()?;
        let with_files = releases.iter().filter(|(_, r)| r.files > 0);
        Some(with_files.map(|(key, release)| {
            PypiHistory {
                key,
                published: release.earliest,
                yanked: !release.installable,
                sha256: release
                    .first_sha256
                    .as_deref()
                    .filter(|_| release.files == 1),
            }
        }))
    }

    /// When the release `key` was published: the newest upload time of its files not yanked
    /// (a file added later is what a resolver may pick), in seconds since the epoch; `None`
    /// when one of them has no time, or the release has no such file.
    pub(crate) fn published(&self, key: &str) -> Option<i64> {
        match self.releases.0.as_ref()?.get(key)?.uploaded {
            Uploaded::At(time) => Some(time),
            Uploaded::NoFile | Uploaded::Unknown => None,
        }
    }
}

/// The npm metadata URL of `name`: the scope's `/` is percent-encoded, as npm expects.
pub(crate) fn npm_url(base: &str, name: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), encode(name))
}

pub(crate) fn pypi_url(base: &str, name: &str) -> String {
    format!("{}/pypi/{}/json", base.trim_end_matches('/'), encode(name))
}

/// Percent-encode everything but unreserved characters and `@`.
pub(crate) fn encode(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'~' | b'-' | b'@' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02x}"),
        })
        .collect()
}

/// The entry of `map` naming `version`: exactly, else the same X.Y.Z read as numbers
/// (`2026.07.20` is published as `2026.7.20`).
fn version_key<'a, V>(map: &'a BTreeMap<String, V>, version: &str) -> Option<&'a V> {
    map.get(&listed_key(map, version)?)
}

/// `doc` is `None` when npm answered 404.
pub(crate) fn npm_verdict(doc: Option<&NpmAnswer>, version: Option<&str>) -> Verdict {
    let Some(Obj(doc)) = doc else {
        return Verdict::NoPackage;
    };
    let latest = doc
        .as_ref()
        .and_then(|d| d.dist_tags.0.as_ref()?.latest.0.clone());
    let versions = doc.as_ref().and_then(|d| d.versions.0.as_ref());
    match pinned(versions, version, latest) {
        Err(verdict) => verdict,
        Ok(meta) => npm_deprecation(meta).map_or(Verdict::Ok, |m| Verdict::Deprecated(m.into())),
    }
}

/// `doc` is `None` when `PyPI` answered 404. A release is yanked when all its files are.
pub(crate) fn pypi_verdict(doc: Option<&PypiAnswer>, version: Option<&str>) -> Verdict {
    let Some(Obj(doc)) = doc else {
        return Verdict::NoPackage;
    };
    let latest = doc
        .as_ref()
        .and_then(|d| d.info.0.as_ref()?.version.0.clone());
    let releases = doc.as_ref().and_then(|d| d.releases.0.as_ref());
    let release = match pinned(releases, version, latest) {
        Err(verdict) => return verdict,
        Ok(release) => release,
    };
    if release.files == 0 {
        return Verdict::NoFiles;
    }
    if !release.installable {
        return Verdict::Yanked(release.reason.clone());
    }
    Verdict::Ok
}

/// The entry of the pinned `version` in `list` (`None` when the document has no such
/// object), or the verdict reached without one: no pin, or no such version (`latest` is
/// the newest one the document names).
fn pinned<'a, V>(
    list: Option<&'a BTreeMap<String, V>>,
    version: Option<&str>,
    latest: Option<String>,
) -> Result<&'a V, Verdict> {
    let version = version.ok_or(Verdict::Ok)?;
    list.and_then(|map| version_key(map, version))
        .ok_or(Verdict::NoVersion { latest })
}

/// The message of an npm version's `deprecated` field; a blank one does not count.
fn npm_deprecation(meta: &Obj<NpmVersion>) -> Option<&str> {
    let message = meta.0.as_ref()?.deprecated.0.as_deref()?;
    (!message.trim().is_empty()).then_some(message)
}

/// The key under which the npm document lists the pinned `version` (`2026.07.20` may be
/// listed as `2026.7.20`), when it lists it.
pub(crate) fn npm_version_key(doc: &NpmAnswer, version: &str) -> Option<String> {
    let versions = doc.0.as_ref()?.versions.0.as_ref()?;
    listed_key(versions, version)
}

/// The key under which the `PyPI` document lists the pinned `version`, when it lists it.
pub(crate) fn pypi_version_key(doc: &PypiAnswer, version: &str) -> Option<String> {
    let releases = doc.0.as_ref()?.releases.0.as_ref()?;
    listed_key(releases, version)
}

fn listed_key<V>(map: &BTreeMap<String, V>, version: &str) -> Option<String> {
    if map.contains_key(version) {
        return Some(version.to_string());
    }
    let wanted = Version::parse(version)?;
    map.keys()
        .find(|key| Version::parse(key) == Some(wanted))
        .cloned()
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
        let doc = answer(json!({
            "name": "a", "dist-tags": {"latest": "2.0.0"},
            "versions": {"1.0.0": {"deprecated": "use 2"}, "2.0.0": {}, "3.0.0": {"deprecated": " "}}
        }));
        let verdict = |v| npm_verdict(Some(&doc), Some(v));
        assert_eq!(verdict("2.0.0"), Verdict::Ok);
        assert_eq!(
            verdict("3.0.0"),
            Verdict::Ok,
            "a blank message does not count"
        );
        assert_eq!(verdict("1.0.0"), Verdict::Deprecated("use 2".into()));
        assert_eq!(
            verdict("4.0.0"),
            Verdict::NoVersion {
                latest: Some("2.0.0".into())
            }
        );
        assert_eq!(npm_verdict(None, Some("1.0.0")), Verdict::NoPackage);
        let not_an_object = answer(json!(["1.0.0"]));
        assert_eq!(
            npm_verdict(Some(&not_an_object), Some("1.0.0")),
            Verdict::NoVersion { latest: None }
        );
    }

    fn answer<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn pypi_releases_are_yanked_only_when_every_file_is() {
        let doc: PypiAnswer = answer(json!({"info": {"version": "1.1"}, "releases": {
            "1.0": [{"yanked": true, "yanked_reason": "broken"}, {"yanked": true}],
            "1.1": [{"yanked": true}, {"yanked": false}],
            "1.2": ["not an object"],
            "0.9": [],
            "0.8": {"not": "a list"}
        }}));
        let verdict = |v| pypi_verdict(Some(&doc), Some(v));
        assert_eq!(verdict("1.0"), Verdict::Yanked(Some("broken".into())));
        assert_eq!(verdict("1.1"), Verdict::Ok);
        assert_eq!(verdict("1.2"), Verdict::Ok);
        assert_eq!(verdict("0.9"), Verdict::NoFiles);
        assert_eq!(verdict("0.8"), Verdict::NoFiles);
        assert_eq!(
            verdict("2.0"),
            Verdict::NoVersion {
                latest: Some("1.1".into())
            }
        );
    }

    #[test]
    fn versions_match_as_numbers() {
        let doc: NpmAnswer = answer(json!({"versions": {"2026.7.20": {}}}));
        assert_eq!(npm_verdict(Some(&doc), Some("2026.07.20")), Verdict::Ok);
    }

    #[test]
    fn a_long_deprecation_message_is_cut_and_the_rest_of_a_version_skipped() {
        let zeros = vec![0u8; 100_000];
        let doc: NpmAnswer = answer(json!({
            "versions": {"1.0.0": {"deprecated": "x".repeat(10_000), "dist": zeros}},
            "time": {"1.0.0": "2026-01-01"}
        }));
        let Verdict::Deprecated(message) = npm_verdict(Some(&doc), Some("1.0.0")) else {
            panic!("not deprecated");
        };
        assert!(message.len() < 1_000, "{}", message.len());
    }

    #[test]
    fn npm_publish_times_come_from_the_time_map() {
        let doc: NpmAnswer = answer(json!({
            "versions": {"1.0.0": {}, "1.1.0": {}, "1.2.0": {}},
            "time": {"created": "2025-01-01T00:00:00Z", "1.0.0": "2026-01-01T00:00:00.123Z",
                     "1.1.0": "yesterday", "9.9.9": "2026-01-01T00:00:00Z"}
        }));
        let doc = doc.0.unwrap();
        assert_eq!(doc.published("1.0.0"), Some(1_767_225_600));
        assert_eq!(
            doc.published("1.1.0"),
            None,
            "an unreadable time is unknown"
        );
        assert_eq!(
            doc.published("1.2.0"),
            None,
            "a version without a time is unknown"
        );
    }

    #[test]
    fn a_pypi_release_is_as_old_as_its_newest_file_not_yanked() {
        let doc: PypiAnswer = answer(json!({"releases": {
            "1.0": [{"upload_time_iso_8601": "2026-01-01T00:00:00.000001Z"},
                    {"upload_time_iso_8601": "2026-01-03T00:00:00Z"},
                    {"yanked": true, "upload_time_iso_8601": "2026-02-01T00:00:00Z"}],
            "1.1": [{"upload_time_iso_8601": "2026-01-01T00:00:00Z"}, {}],
            "1.2": []
        }}));
        let doc = doc.0.unwrap();
        assert_eq!(doc.published("1.0"), Some(1_767_398_400));
        assert_eq!(doc.published("1.1"), None, "one file without a time");
        assert_eq!(doc.published("1.2"), None);
    }
}
