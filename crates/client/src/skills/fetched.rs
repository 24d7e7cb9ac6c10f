//! What a fetch returns ([`FetchedSkill`]), which skills to take ([`Selection`]) and the bounds
//! and switches of a fetch ([`FetchOptions`], [`FetchLimits`]).

use std::collections::BTreeMap;

/// One skill fetched and verified: ready to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedSkill {
    /// The skill's name: the index's, the folder's and `SKILL.md`'s.
    pub name: String,
    /// Every file, by path below the skill folder.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Where it came from: the artifact's or the skill folder's URL or path.
    pub source: String,
    /// The 0.2.0 artifact's `sha256:<hex>` digest, when the index gave one.
    pub digest: Option<String>,
    /// What the files were verified against (`the index's digest`, `SHA256SUMS`, or
    /// `nothing (--allow-unverified)`).
    pub verified_by: String,
}

/// Which skills of a source to fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Every skill it lists.
    All,
    /// These, by name; none: the only skill it lists (refused when it lists more).
    Names(Vec<String>),
}

/// The bounds of one fetch, whatever a source claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    /// Bytes of an index, a marketplace or `SHA256SUMS`.
    pub index_bytes: u64,
    /// Skills one index may list.
    pub skills: usize,
    /// Files of one skill.
    pub files: usize,
    /// Bytes of one skill (its files together; an artifact before unpacking too).
    pub skill_bytes: u64,
}

impl Default for FetchLimits {
    fn default() -> Self {
        // The `skills` CLI's own limits for one skill: 1000 files, 50 MiB unpacked.
        FetchLimits {
            index_bytes: 16 * 1024 * 1024,
            skills: 10_000,
            files: 1000,
            skill_bytes: 50 * 1024 * 1024,
        }
    }
}

/// How careful a fetch is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchOptions {
    /// Take a 0.1.0 site's or a local marketplace's files without a `SHA256SUMS` to check
    /// them against (`--allow-unverified`). A 0.2.0 digest is always checked.
    pub allow_unverified: bool,
    /// The bounds.
    pub limits: FetchLimits,
}
