//! What one run of `update` is asked: the [`Channel`] each entry follows and the [`Options`].

use std::time::Duration;

use serde::Serialize;

use crate::net::NetConfig;
use crate::online::{EndpointOverrides, GitHubToken};

/// Which version an entry follows: its `version`, or its `preview` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// The entry's `version`.
    Stable,
    /// The entry's `preview` block.
    Preview,
}

/// What `update` asks and whether it edits the manifests.
#[derive(Debug, Clone)]
pub struct Options {
    /// Which version of each entry is moved: the stable one or its preview.
    pub channel: Channel,
    /// Entry ids (or folder names) to update; empty for every entry.
    pub agents: Vec<String>,
    /// Edit the manifests (`--apply`); otherwise only report.
    pub apply: bool,
    /// Write `releases.json` without editing a manifest (`--record`; `apply` records too).
    pub record: bool,
    /// Timeouts, retries and limits of the HTTP client.
    pub net: NetConfig,
    /// Flags over the configuration's `online` object over the defaults.
    pub endpoints: EndpointOverrides,
    /// `GITHUB_TOKEN`, sent to a trusted GitHub API only.
    pub github_token: GitHubToken,
    /// Longest GitHub rate-limit reset waited for; longer ones are reported.
    pub rate_limit_wait: Duration,
    /// Largest archive downloaded to hash when a release publishes no digest, in bytes.
    pub archive_cap: u64,
    /// `--min-age`: the release-age cooldown in days, over `update.min_age_days` of the
    /// configuration (`None`: the configuration's value, default 0).
    pub min_age_days: Option<u32>,
    /// The time release ages are measured at, in seconds since the Unix epoch (the clock, or
    /// `--as-of` to reproduce a run).
    pub now: i64,
}
