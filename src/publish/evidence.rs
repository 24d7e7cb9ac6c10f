//! `verification.json` (docs/format.md#verification-evidence): what `matrix` found when it
//! launched each published agent and distribution, and whether that still holds for what
//! is published now. Written by `build --matrix` beside the registry files; the site's
//! "verified" badge and filter read the same assessment.
//!
//! Deterministic: the document depends only on the published entries, the launches and
//! the time the age is measured at, which the caller passes in ([`Evidence::as_of`]).
//!
//! The site stays plain data: `commands::build` reads `matrix.json` and fixes the time evidence
//! is judged at (`--as-of`, `SOURCE_DATE_EPOCH`, the clock), and hands the `Evidence` in through
//! `BuildOptions`; it is assessed here once for both `verification.json` and the site's
//! `Verification` values. `publish`, `registry` and `site` import nothing of `verify`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::manifest::distribution::{fingerprint, Distribution, Kind};
pub(crate) use crate::published::{VERIFICATION_FILE, VERIFICATION_SCHEMA_FILE};
use crate::rules::EntryReport;
use crate::site;
use acp_registry_core::acp::methods::OfferedAuth;
use acp_registry_core::time::format_utc;

/// The schema's text.
pub(crate) const VERIFICATION_SCHEMA: &str = include_str!("../../schemas/verification.schema.json");
/// `version` of `verification.json`: raised when a reader of the old shape would misread
/// the new one.
pub(crate) const VERIFICATION_FORMAT_VERSION: u64 = 1;

/// One launch as `matrix` recorded it (a row of `matrix.json`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Launch {
    /// The agent id.
    pub id: String,
    /// The distribution launched.
    pub distribution: Kind,
    /// The version launched.
    pub version: String,
    /// The fingerprint of the distribution launched.
    pub fingerprint: String,
    /// When, seconds since the Unix epoch.
    pub verified: i64,
    /// Whether the launch passed every check.
    pub passed: bool,
    /// The protocol version the agent answered.
    pub protocol_version: Option<u64>,
    /// The auth methods it offered.
    pub auth_methods: Vec<OfferedAuth>,
    /// The session methods that answered with success, sorted.
    pub session_methods: Vec<String>,
    /// The unstable methods it advertised, sorted.
    pub unstable_methods: Vec<String>,
}

/// The launches and how their age is judged.
#[derive(Debug, Clone, Default)]
pub(crate) struct Evidence {
    /// The launches, any order.
    pub launches: Vec<Launch>,
    /// Evidence older than this many days is expired.
    pub max_age_days: u32,
    /// The time the age is measured at, seconds since the Unix epoch.
    pub as_of: i64,
}

/// Whether a published agent's evidence still applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum State {
    /// Launched as published, within the age limit.
    Current,
    /// Launched as published, but longer ago than the age limit.
    Expired,
    /// What was launched is not what is published now (version or distribution changed).
    Stale,
    /// Never launched.
    Unverified,
}

/// What a launch found, as `verification.json` writes it.
#[derive(Debug, Clone, Serialize)]
struct Found {
    version: String,
    fingerprint: String,
    verified: String,
    expires: String,
    status: &'static str,
    protocol_version: Option<u64>,
    auth_methods: Vec<OfferedAuth>,
    session_methods: Vec<String>,
    unstable_methods: Vec<String>,
}

/// One published agent and distribution.
#[derive(Debug, Clone, Serialize)]
struct Row {
    id: String,
    distribution: Kind,
    /// What is published now.
    version: String,
    fingerprint: String,
    state: State,
    /// What differs between the launch and the published form: `version`, `distribution`.
    changed: Vec<&'static str>,
    evidence: Option<Found>,
}

/// The whole document.
#[derive(Debug, Clone, Serialize)]
struct Document {
    version: u64,
    max_age_days: u32,
    agents: Vec<Row>,
}

/// The assessment of every published agent: `verification.json` and the site's view of it.
#[derive(Debug, Clone)]
pub(crate) struct Assessment {
    document: Document,
}

/// Assess `evidence` against the published `entries` (sorted by id): one row per entry
/// and distribution it publishes, in id then distribution order.
pub(crate) fn assess(entries: &[&EntryReport], evidence: &Evidence) -> Assessment {
    let mut launches: BTreeMap<(&str, Kind), &Launch> = BTreeMap::new();
    for launch in &evidence.launches {
        launches
            .entry((launch.id.as_str(), launch.distribution))
            .or_insert(launch);
    }
    let max_age = i64::from(evidence.max_age_days) * 86_400;
    let mut agents = Vec::new();
    for entry in entries {
        let Some(doc) = entry.manifest_doc() else {
            continue;
        };
        let distribution = doc.root.get("distribution");
        let launchable = distribution
            .map(|d| Distribution::from_node(d, "/distribution"))
            .unwrap_or_default();
        let version = doc.root.get_str("version").unwrap_or_default().to_string();
        for kind in Kind::ALL.into_iter().filter(|k| launchable.has(*k)) {
            let published = fingerprint(distribution, kind);
            let launch = launches.get(&(entry.id(), kind)).copied();
            let mut changed = Vec::new();
            if let Some(launch) = launch {
                if launch.version != version {
                    changed.push("version");
                }
                if launch.fingerprint != published {
                    changed.push("distribution");
                }
            }
            let state = match launch {
                None => State::Unverified,
                Some(_) if !changed.is_empty() => State::Stale,
                Some(l) if evidence.as_of.saturating_sub(l.verified) > max_age => State::Expired,
                Some(_) => State::Current,
            };
            agents.push(Row {
                id: entry.id().to_string(),
                distribution: kind,
                version: version.clone(),
                fingerprint: published,
                state,
                changed,
                evidence: launch.map(|l| found(l, max_age)),
            });
        }
    }
    Assessment {
        document: Document {
            version: VERIFICATION_FORMAT_VERSION,
            max_age_days: evidence.max_age_days,
            agents,
        },
    }
}

fn found(launch: &Launch, max_age: i64) -> Found {
    Found {
        version: launch.version.clone(),
        fingerprint: launch.fingerprint.clone(),
        verified: format_utc(launch.verified),
        expires: format_utc(launch.verified.saturating_add(max_age)),
        status: if launch.passed { "passed" } else { "failed" },
        protocol_version: launch.protocol_version,
        auth_methods: launch.auth_methods.clone(),
        session_methods: launch.session_methods.clone(),
        unstable_methods: launch.unstable_methods.clone(),
    }
}

impl Assessment {
    /// `verification.json`: 2-space indent, trailing newline.
    pub(crate) fn to_json(&self) -> String {
        let mut text =
            serde_json::to_string_pretty(&self.document).expect("the document serialises");
        text.push('\n');
        text
    }

    /// Per id, what the site shows: the distribution whose evidence says most (verified,
    /// then failed, expired, stale; binary, npx, uvx on a tie); ids never launched are left
    /// out.
    pub(crate) fn site(&self) -> BTreeMap<String, site::Verification> {
        let mut out: BTreeMap<String, (u8, site::Verification)> = BTreeMap::new();
        for row in &self.document.agents {
            let Some(found) = &row.evidence else {
                continue;
            };
            let passed = found.status == "passed";
            let (rank, state) = match row.state {
                State::Current if passed => (0, "verified"),
                State::Current => (1, "failed"),
                State::Expired => (2, "expired"),
                _ => (3, "stale"),
            };
            if out.get(&row.id).is_some_and(|(best, _)| *best <= rank) {
                continue;
            }
            let verification = site::Verification {
                state: state.to_string(),
                distribution: row.distribution.as_str().to_string(),
                version: found.version.clone(),
                verified: found.verified.clone(),
                expires: found.expires.clone(),
                max_age_days: self.document.max_age_days,
                changed: row.changed.iter().map(ToString::to_string).collect(),
                passed,
                protocol_version: found.protocol_version,
                sign_in: found
                    .auth_methods
                    .iter()
                    .map(|a| (a.name.clone(), a.kind.clone()))
                    .collect(),
                session_methods: found.session_methods.clone(),
                unstable_methods: found.unstable_methods.clone(),
            };
            out.insert(row.id.clone(), (rank, verification));
        }
        out.into_iter().map(|(id, (_, v))| (id, v)).collect()
    }
}
