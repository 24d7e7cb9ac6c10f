//! The typed view of a published `registry.json` that installing and running need: each
//! entry's id, name, version, description and distribution, and nothing else.
//!
//! The document is untrusted (a URL, a file, a mirror): it is read under the same bounds
//! wherever it comes from ([`MAX_DOCUMENT_BYTES`], [`MAX_VALUES`] counted before anything is
//! built), and one malformed entry does not hide the others: it is set aside in
//! [`Document::skipped`] with the reason. Ids and versions name folders of the install cache,
//! so an entry whose id or version is not a safe path component is set aside too.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::platform::Kind;

/// The largest `registry.json` read, from the network or a file (the public one is ~200 KB).
pub const MAX_DOCUMENT_BYTES: u64 = 16 * 1024 * 1024;
/// JSON values counted before the document is parsed into anything.
pub const MAX_VALUES: u64 = 1_000_000;
/// The longest id or version accepted (both name cache folders).
pub const MAX_NAME_LEN: usize = 128;

/// A registry document: its entries in document order, and those set aside.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    /// The document's own `version` (the format's), when it has one.
    pub version: Option<String>,
    /// The usable entries, ids unique, in document order.
    pub agents: Vec<Entry>,
    /// Entries that could not be read, with why.
    pub skipped: Vec<Skipped>,
}

/// An entry the document holds but the client cannot use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Its position in `agents` (0-based).
    pub index: usize,
    /// Its `id`, when it has a readable one.
    pub id: Option<String>,
    /// What is wrong with it.
    pub reason: String,
}

/// One agent as the registry publishes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The id: lowercase letters, digits, `-`, `.` and `_`, starting with a letter or digit.
    pub id: String,
    /// The display name (the id when the document has none).
    pub name: String,
    /// The version the registry pins.
    pub version: String,
    /// One line about the agent (empty when the document has none).
    pub description: String,
    /// How it is distributed.
    pub distribution: Distribution,
}

/// An entry's `distribution`: per-platform binaries and the `npx` and `uvx` packages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Distribution {
    /// Binary targets by platform key (`linux-x86_64`, …), sorted.
    pub binary: BTreeMap<String, BinaryTarget>,
    /// The npm package run with `npx`.
    pub npx: Option<Package>,
    /// The `PyPI` package run with `uvx`.
    pub uvx: Option<Package>,
}

impl Distribution {
    /// The kinds this distribution offers, in [`Kind::ALL`] order.
    #[must_use]
    pub fn kinds(&self) -> Vec<Kind> {
        Kind::ALL
            .into_iter()
            .filter(|kind| match kind {
                Kind::Binary => !self.binary.is_empty(),
                Kind::Npx => self.npx.is_some(),
                Kind::Uvx => self.uvx.is_some(),
            })
            .collect()
    }

    /// The `npx` or `uvx` package (`None` for [`Kind::Binary`]).
    #[must_use]
    pub fn package(&self, kind: Kind) -> Option<&Package> {
        match kind {
            Kind::Npx => self.npx.as_ref(),
            Kind::Uvx => self.uvx.as_ref(),
            Kind::Binary => None,
        }
    }
}

/// One platform's download.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BinaryTarget {
    /// The archive's (or raw executable's) URL.
    pub archive: String,
    /// The executable inside the unpacked archive, relative.
    pub cmd: String,
    /// Arguments given before the caller's.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for the agent.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The download's pinned sha256 (lowercase hex), when the registry pins one.
    #[serde(default)]
    pub sha256: Option<String>,
}

/// An `npx` or `uvx` package.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Package {
    /// The package spec (`name@version` for npm, `name==version` or `name@version` for `PyPI`).
    pub package: String,
    /// Arguments given before the caller's.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for the agent.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// Why a registry document could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// Larger than [`MAX_DOCUMENT_BYTES`].
    #[error("{origin}: the registry document is larger than {MAX_DOCUMENT_BYTES} bytes")]
    TooLarge {
        /// The URL or file it came from.
        origin: String,
    },
    /// Not JSON, more than [`MAX_VALUES`] values, or not an object with an `agents` array.
    #[error("{origin}: not a registry document: {reason}")]
    Invalid {
        /// The URL or file it came from.
        origin: String,
        /// What is wrong.
        reason: String,
    },
}

/// The document's outline: entries kept as raw text until each is read on its own.
#[derive(Deserialize)]
struct Outline<'a> {
    #[serde(default)]
    version: Option<serde_json::Value>,
    #[serde(borrow)]
    agents: Vec<&'a serde_json::value::RawValue>,
}

/// An entry's fields as written; unknown fields are ignored (the format grows).
#[derive(Deserialize)]
struct RawEntry {
    id: String,
    #[serde(default)]
    name: Option<String>,
    version: String,
    #[serde(default)]
    description: Option<String>,
    distribution: RawDistribution,
}

#[derive(Deserialize)]
struct RawDistribution {
    #[serde(default)]
    binary: BTreeMap<String, BinaryTarget>,
    #[serde(default)]
    npx: Option<Package>,
    #[serde(default)]
    uvx: Option<Package>,
}

impl Document {
    /// Read a registry document from `bytes`; `origin` (its URL or file) names it in errors.
    ///
    /// # Errors
    /// [`DocumentError`] when the whole document is unusable; a bad entry is only skipped.
    pub fn parse(bytes: &[u8], origin: &str) -> Result<Document, DocumentError> {
        let invalid = |reason: String| DocumentError::Invalid {
            origin: origin.to_string(),
            reason,
        };
        if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
            return Err(DocumentError::TooLarge {
                origin: origin.to_string(),
            });
        }
        let text = std::str::from_utf8(bytes).map_err(|e| invalid(e.to_string()))?;
        acp_registry_core::fs::ValueBudget::new(MAX_VALUES)
            .spend(text)
            .map_err(|e| invalid(e.to_string()))?;
        let outline: Outline = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let mut document = Document {
            version: outline
                .version
                .as_ref()
                .and_then(|v| v.as_str())
                .map(String::from),
            ..Document::default()
        };
        let mut seen = BTreeSet::new();
        for (index, raw) in outline.agents.iter().enumerate() {
            match entry(raw.get()) {
                Ok(entry) if !seen.insert(entry.id.clone()) => document.skipped.push(Skipped {
                    index,
                    id: Some(entry.id),
                    reason: "a second entry with this id".into(),
                }),
                Ok(entry) => document.agents.push(entry),
                Err(reason) => document.skipped.push(Skipped {
                    index,
                    id: id_of(raw.get()),
                    reason,
                }),
            }
        }
        Ok(document)
    }

    /// The entry with this id.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.agents.iter().find(|entry| entry.id == id)
    }
}

fn entry(text: &str) -> Result<Entry, String> {
    let raw: RawEntry = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if !is_safe_id(&raw.id) {
        return Err(format!(
            "the id `{}` is not lowercase letters, digits, `-`, `.` and `_` (at most {MAX_NAME_LEN})",
            raw.id.escape_debug()
        ));
    }
    if !is_safe_version(&raw.version) {
        return Err(format!(
            "the version `{}` is not letters, digits, `.`, `-`, `+` and `_` (at most {MAX_NAME_LEN})",
            raw.version.escape_debug()
        ));
    }
    let distribution = Distribution {
        binary: raw.distribution.binary,
        npx: raw.distribution.npx,
        uvx: raw.distribution.uvx,
    };
    if distribution.kinds().is_empty() {
        return Err("the distribution offers no binary, npx or uvx".into());
    }
    Ok(Entry {
        name: raw.name.unwrap_or_else(|| raw.id.clone()),
        id: raw.id,
        version: raw.version,
        description: raw.description.unwrap_or_default(),
        distribution,
    })
}

/// The `id` of an entry that could not be read, when it has a string one.
fn id_of(text: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Id {
        id: String,
    }
    serde_json::from_str::<Id>(text).ok().map(|found| found.id)
}

/// An id safe as a folder name on every system: `[a-z0-9][a-z0-9._-]*`, no `..`.
#[must_use]
pub fn is_safe_id(id: &str) -> bool {
    id.len() <= MAX_NAME_LEN
        && id.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._".contains(c))
        && !id.contains("..")
}

/// A version safe as a folder name: `[A-Za-z0-9][A-Za-z0-9.+_-]*`, no `..`.
#[must_use]
pub fn is_safe_version(version: &str) -> bool {
    version.len() <= MAX_NAME_LEN
        && version.starts_with(|c: char| c.is_ascii_alphanumeric())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".+-_".contains(c))
        && !version.contains("..")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"id":"a","name":"A","version":"1.0.0","description":"d","distribution":{"npx":{"package":"a@1.0.0","args":["--acp"],"env":{"X":"1"}}}}"#;

    #[test]
    fn entries_are_read_with_their_distribution_and_unknown_fields_ignored() {
        let text = r#"{"version":"1.0.0","extensions":{},"agents":[
            {"id":"b","version":"2.0.0","icon":"x","distribution":{"binary":{"linux-x86_64":{"archive":"https://x/b.tgz","cmd":"./b","sha256":"ab"}}}},
            GOOD]}"#
            .replace("GOOD", GOOD);
        let document = Document::parse(text.as_bytes(), "r.json").unwrap();
        assert_eq!(document.version.as_deref(), Some("1.0.0"));
        assert_eq!(document.agents.len(), 2, "{:?}", document.skipped);
        let b = document.get("b").unwrap();
        assert_eq!(b.name, "b");
        assert_eq!(b.distribution.kinds(), vec![Kind::Binary]);
        let a = document.get("a").unwrap();
        assert_eq!(a.distribution.npx.as_ref().unwrap().args, vec!["--acp"]);
    }

    #[test]
    fn a_bad_entry_is_skipped_with_its_reason_and_the_others_kept() {
        let text = format!(
            r#"{{"agents":[{GOOD},{GOOD},{{"id":"../x","version":"1","distribution":{{"npx":{{"package":"p"}}}}}},{{"id":"v","version":"../1","distribution":{{"npx":{{"package":"p"}}}}}},{{"id":"n","version":"1","distribution":{{}}}},{{"id":"t","version":"1","distribution":{{"npx":{{"package":"p","args":[1]}}}}}},7]}}"#
        );
        let document = Document::parse(text.as_bytes(), "r.json").unwrap();
        assert_eq!(document.agents.len(), 1);
        let reasons: Vec<(usize, Option<&str>)> = document
            .skipped
            .iter()
            .map(|s| (s.index, s.id.as_deref()))
            .collect();
        assert_eq!(
            reasons,
            vec![
                (1, Some("a")),
                (2, Some("../x")),
                (3, Some("v")),
                (4, Some("n")),
                (5, Some("t")),
                (6, None)
            ]
        );
        assert!(document.skipped[0].reason.contains("second entry"));
        assert!(document.skipped[1].reason.contains("not lowercase"));
        assert!(document.skipped[3].reason.contains("offers no"));
    }

    #[test]
    fn a_document_that_is_not_a_registry_or_too_large_is_refused_naming_its_origin() {
        for text in ["[]", "{}", "nope", r#"{"agents":{}}"#] {
            let error = Document::parse(text.as_bytes(), "https://r/registry.json").unwrap_err();
            assert!(
                error.to_string().starts_with("https://r/registry.json: "),
                "{error}"
            );
        }
        let big = vec![b' '; usize::try_from(MAX_DOCUMENT_BYTES).unwrap() + 1];
        assert!(matches!(
            Document::parse(&big, "f"),
            Err(DocumentError::TooLarge { .. })
        ));
        let many = format!(r#"{{"agents":[],"x":[{}0]}}"#, "0,".repeat(1_100_000));
        let error = Document::parse(many.as_bytes(), "f").unwrap_err();
        assert!(error.to_string().contains("more than"), "{error}");
    }

    #[test]
    fn ids_and_versions_that_could_leave_a_cache_folder_are_unsafe() {
        for id in ["a", "a-b.c_d", "0x"] {
            assert!(is_safe_id(id), "{id}");
        }
        for id in ["", "A", "-a", ".a", "a/b", "a\\b", "a..b", "a b"] {
            assert!(!is_safe_id(id), "{id}");
        }
        for version in ["1.0.0", "1.0.0-rc.1+b", "v2"] {
            assert!(is_safe_version(version), "{version}");
        }
        for version in ["", ".1", "1/2", "..", "1..2", "1 2"] {
            assert!(!is_safe_version(version), "{version}");
        }
    }
}
