//! The lifecycle document a registry publishes beside `registry.json` (`lifecycle.json`,
//! docs/format.md "Lifecycle document"): whether an entry is deprecated or disabled (and what
//! to use instead), and when each pinned version and the recent releases of its sources were
//! published. [`crate::registry`] finds, fetches and caches it; this module reads it and
//! answers the two questions a client asks of it: may this id be used, and which version
//! does a release-age cooldown allow ([`Distribution::cooldown`]).
//!
//! The document is untrusted like `registry.json` and read the same bounded way as a
//! server's answer (`net::json`): at most [`MAX_LIFECYCLE_BYTES`], a typed view that keeps
//! only the facts above with every string and list capped, unknown members skipped without
//! allocating, a member of the wrong type read as absent. An entry without a usable id is
//! dropped, a repeated id keeps its first entry, and a `status` this client does not know reads
//! as active: the document only ever adds refusals and warnings, so what it cannot read must
//! not refuse anything.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::Deserialize;

use crate::age;
use crate::document::is_safe_version;
use crate::net::json::{deserialize_leniently, Flag, Lenient, List, Message, Obj, Text};
use crate::platform::Kind;
use crate::resolve::Resolution;

/// The largest `lifecycle.json` read, from the network, the cache or a file.
pub const MAX_LIFECYCLE_BYTES: u64 = 16 * 1024 * 1024;
/// The most agents read; the rest are skipped.
const MAX_AGENTS: usize = 10_000;
/// The most releases of one distribution's history read (the format writes about 12).
const MAX_HISTORY: usize = 100;
/// The longest id or replacement kept (the registry's own limit).
const MAX_ID_LEN: usize = 128;
/// The longest version kept.
const MAX_VERSION_LEN: usize = 256;
/// The longest time or date kept.
const MAX_TIME_LEN: usize = 64;

/// What a lifecycle document says, by agent id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lifecycle {
    /// Every readable agent, by id.
    pub agents: BTreeMap<String, AgentLifecycle>,
}

/// Whether an entry is still meant to be used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Status {
    /// In use (also any status this client does not know).
    #[default]
    Active,
    /// Still published; clients warn on install and run.
    Deprecated,
    /// Left out of `registry.json`; clients refuse it and name the replacement.
    Disabled,
}

/// One agent of the document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentLifecycle {
    /// The entry's id.
    pub id: String,
    /// Its status.
    pub status: Status,
    /// Why it is deprecated or disabled.
    pub reason: Option<String>,
    /// The date of the decision, `YYYY-MM-DD`.
    pub since: Option<String>,
    /// The id to use instead.
    pub replacement: Option<String>,
    /// Whether `registry.json` lists it.
    pub in_registry: Option<bool>,
    /// What the document knows of each kind it offers.
    pub distributions: BTreeMap<Kind, Distribution>,
}

/// One kind of an agent: its pinned version and its source's recent releases.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Distribution {
    /// The version the entry pins for this kind.
    pub version: Option<String>,
    /// When that version was published (seconds since the Unix epoch, UTC).
    pub published: Option<i64>,
    /// The source's recorded releases, as listed (highest first).
    pub history: Vec<Release>,
}

/// One release of a source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Release {
    /// Its version.
    pub version: String,
    /// When it was published (seconds since the Unix epoch, UTC).
    pub published: Option<i64>,
    /// Withdrawn by its publisher (`PyPI`).
    pub yanked: bool,
    /// Marked deprecated by its publisher (npm).
    pub deprecated: bool,
    /// A preview release.
    pub preview: bool,
}

/// Why a lifecycle document cannot be read at all.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// Larger than [`MAX_LIFECYCLE_BYTES`].
    #[error("the lifecycle document is larger than {MAX_LIFECYCLE_BYTES} bytes")]
    TooLarge,
    /// Not JSON, or not an object.
    #[error("not a lifecycle document: {0}")]
    Invalid(String),
}

/// What `--min-age` may use instead of a pin too young, from a distribution's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cooldown {
    /// The pin is old enough.
    Pin,
    /// The pin is too young; this is the newest older release that is old enough and neither
    /// yanked, deprecated nor (unless the pin is one) a preview.
    Older {
        /// Its version.
        version: String,
        /// When it was published.
        published: i64,
        /// When the pin becomes old enough.
        eligible_at: i64,
    },
    /// The pin is too young and no release of the history may be used instead.
    NoneEligible {
        /// When the pin becomes old enough.
        eligible_at: i64,
    },
}

impl Lifecycle {
    /// Read a lifecycle document (see the module doc for what is kept).
    ///
    /// # Errors
    /// [`LifecycleError`] when `bytes` are over the cap, not JSON or not an object.
    pub fn parse(bytes: &[u8]) -> Result<Lifecycle, LifecycleError> {
        if bytes.len() as u64 > MAX_LIFECYCLE_BYTES {
            return Err(LifecycleError::TooLarge);
        }
        let Obj(raw) = serde_json::from_slice::<Obj<RawDocument>>(bytes)
            .map_err(|e| LifecycleError::Invalid(e.to_string()))?;
        let raw = raw.ok_or_else(|| LifecycleError::Invalid("not an object".into()))?;
        let mut agents = BTreeMap::new();
        for Obj(agent) in raw.agents.items {
            if let Some(agent) = agent.and_then(RawAgent::read) {
                agents.entry(agent.id.clone()).or_insert(agent);
            }
        }
        Ok(Lifecycle { agents })
    }

    /// The agent with this id.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<&AgentLifecycle> {
        self.agents.get(id)
    }
}

impl AgentLifecycle {
    /// "since 2026-11-01: renamed to new-agent; use new-agent instead (`acp-registry install
    /// new-agent`)", for a deprecated or disabled entry; parts the document leaves out are
    /// left out. Untrusted text: the caller escapes it for where it goes.
    #[must_use]
    pub fn notice(&self) -> String {
        let mut text = String::new();
        if let Some(since) = &self.since {
            text.push_str(&format!("since {since}"));
        }
        if let Some(reason) = &self.reason {
            let sep = if text.is_empty() { "" } else { ": " };
            text.push_str(&format!("{sep}{reason}"));
        }
        if let Some(replacement) = &self.replacement {
            let sep = if text.is_empty() { "" } else { "; " };
            text.push_str(&format!(
                "{sep}use {replacement} instead (`acp-registry install {replacement}`)"
            ));
        }
        text
    }
}

impl Distribution {
    /// When `version` was published, as this document says: the pin's own time, else its
    /// release's in the history.
    #[must_use]
    pub fn published_of(&self, version: &str) -> Option<i64> {
        let pinned = self
            .published
            .filter(|_| self.version.as_deref() == Some(version));
        pinned.or_else(|| {
            let release = self.history.iter().find(|r| r.version == version)?;
            release.published
        })
    }

    /// Whether `version` may be used under a cooldown of `window` seconds at `now`: `None`
    /// when the document does not know when it was published.
    #[must_use]
    pub fn allows(&self, version: &str, window: i64, now: i64) -> Option<bool> {
        let published = self.published_of(version)?;
        let withdrawn = self
            .history
            .iter()
            .any(|r| r.version == version && (r.yanked || r.deprecated));
        Some(!withdrawn && published.saturating_add(window) <= now)
    }

    /// `--min-age` for the pin `pin` with a cooldown of `window` seconds at `now` (see
    /// [`Cooldown`]); `None` when the document does not know when the pin was published.
    #[must_use]
    pub fn cooldown(&self, pin: &str, window: i64, now: i64) -> Option<Cooldown> {
        let eligible_at = self.published_of(pin)?.saturating_add(window);
        if eligible_at <= now {
            return Some(Cooldown::Pin);
        }
        let pin_preview =
            is_prerelease(pin) || self.history.iter().any(|r| r.version == pin && r.preview);
        let newest = self
            .history
            .iter()
            .filter(|r| !r.yanked && !r.deprecated)
            .filter(|r| pin_preview || !(r.preview || is_prerelease(&r.version)))
            .filter(|r| version_order(&r.version, pin).is_lt())
            .filter_map(|r| Some((r, r.published.filter(|p| p.saturating_add(window) <= now)?)))
            .max_by(|(a, _), (b, _)| version_order(&a.version, &b.version));
        Some(match newest {
            Some((release, published)) => Cooldown::Older {
                version: release.version.clone(),
                published,
                eligible_at,
            },
            None => Cooldown::NoneEligible { eligible_at },
        })
    }
}

/// The version `resolution` pins for its kind: the package spec's exact version for npx and
/// uvx (`None` for a tag or range), the entry's for a binary.
#[must_use]
pub fn pinned_version(resolution: &Resolution) -> Option<String> {
    match (&resolution.package, resolution.kind) {
        (_, Kind::Binary) => Some(resolution.entry.version.clone()),
        (Some(package), kind) => Some(age::split_pin(kind, &package.package)?.1.to_string()),
        (None, _) => None,
    }
}

/// `resolution` with its package pinned at `version` instead (npx and uvx: the spec's version
/// replaced, and the entry's version set to it so the install is kept, found and described as
/// that version). `None` for a binary (its archives are pinned for the registry's version
/// only), a spec without an exact version, or a version that is not one.
#[must_use]
pub fn at_version(resolution: &Resolution, version: &str) -> Option<Resolution> {
    let package = resolution.package.as_ref()?;
    let (prefix, _) = age::split_pin(resolution.kind, &package.package)?;
    let spec = format!("{prefix}{version}");
    // The new spec must read back as a pin of exactly `version`: a hostile history cannot
    // smuggle a range, a URL or a path into the install.
    let reread = age::split_pin(resolution.kind, &spec).map(|(_, v)| v);
    if reread != Some(version) || !is_safe_version(version) {
        return None;
    }
    let mut older = resolution.clone();
    older.entry.version = version.to_string();
    if let Some(package) = older.package.as_mut() {
        package.package = spec;
    }
    Some(older)
}

/// The [version order](docs/format.md#version-order), extended to what npm and `PyPI`
/// publish: dot-separated parts compared numerically when both are numbers, else as text; a
/// pre-release (`-…`) below its release; build metadata (`+…`) ignored.
#[must_use]
pub fn version_order(a: &str, b: &str) -> Ordering {
    let split = |v: &'_ str| -> (String, Option<String>) {
        let v = v.split('+').next().unwrap_or_default();
        match v.split_once('-') {
            Some((core, pre)) => (core.to_string(), Some(pre.to_string())),
            None => (v.to_string(), None),
        }
    };
    let ((core_a, pre_a), (core_b, pre_b)) = (split(a), split(b));
    parts_order(&core_a, &core_b).then_with(|| match (pre_a, pre_b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => parts_order(&x, &y),
    })
}

fn parts_order(a: &str, b: &str) -> Ordering {
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    _ => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// Whether `version` has a pre-release part (`1.2.0-preview.1`, `2.0.0-rc.1`).
fn is_prerelease(version: &str) -> bool {
    version.split('+').next().unwrap_or_default().contains('-')
}

fn time(text: &Text<MAX_TIME_LEN>) -> Option<i64> {
    acp_registry_core::time::parse_iso_utc_seconds(text.0.as_deref()?)
}

/// The document as written; only what [`Lifecycle`] keeps.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawDocument {
    agents: List<Obj<RawAgent>, MAX_AGENTS>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawAgent {
    id: Text<MAX_ID_LEN>,
    status: Text<16>,
    reason: Message,
    since: Text<MAX_TIME_LEN>,
    replacement: Text<MAX_ID_LEN>,
    in_registry: Flag,
    distributions: Obj<RawDistributions>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawDistributions {
    binary: Obj<RawDistribution>,
    npx: Obj<RawDistribution>,
    uvx: Obj<RawDistribution>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawDistribution {
    version: Text<MAX_VERSION_LEN>,
    published: Text<MAX_TIME_LEN>,
    history: List<Obj<RawRelease>, MAX_HISTORY>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawRelease {
    version: Text<MAX_VERSION_LEN>,
    published: Text<MAX_TIME_LEN>,
    yanked: Flag,
    deprecated: Marked,
    preview: Flag,
}

/// npm's `deprecated`: a message (any non-empty one marks the release), or a boolean.
#[derive(Debug, Default)]
struct Marked(bool);

impl Lenient for Marked {
    fn string(s: &str) -> Self {
        Marked(!s.is_empty())
    }
    fn boolean(b: bool) -> Self {
        Marked(b)
    }
}

deserialize_leniently!(Marked);

impl RawAgent {
    fn read(self) -> Option<AgentLifecycle> {
        let id = self.id.0.filter(|id| !id.is_empty())?;
        let status = match self.status.0.as_deref() {
            Some("deprecated") => Status::Deprecated,
            Some("disabled") => Status::Disabled,
            _ => Status::Active,
        };
        let mut distributions = BTreeMap::new();
        if let Some(raw) = self.distributions.0 {
            for (kind, dist) in [
                (Kind::Binary, raw.binary),
                (Kind::Npx, raw.npx),
                (Kind::Uvx, raw.uvx),
            ] {
                if let Some(dist) = dist.0 {
                    distributions.insert(kind, dist.read());
                }
            }
        }
        Some(AgentLifecycle {
            id,
            status,
            reason: self.reason.0,
            since: self.since.0,
            replacement: self.replacement.0.filter(|r| !r.is_empty()),
            in_registry: self.in_registry.0,
            distributions,
        })
    }
}

impl RawDistribution {
    fn read(self) -> Distribution {
        let history = self
            .history
            .items
            .into_iter()
            .filter_map(|Obj(release)| {
                let release = release?;
                Some(Release {
                    published: time(&release.published),
                    version: release.version.0.filter(|v| !v.is_empty())?,
                    yanked: release.yanked.0 == Some(true),
                    deprecated: release.deprecated.0,
                    preview: release.preview.0 == Some(true),
                })
            })
            .collect();
        Distribution {
            published: time(&self.published),
            version: self.version.0,
            history,
        }
    }
}

#[cfg(test)]
mod tests;
