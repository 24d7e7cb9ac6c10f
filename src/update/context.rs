//! What the steps of one entry's update share: the run's [`Context`] (client, endpoints,
//! options, cooldown) and the [`Candidate`] entry they work on.

use super::options::Options;
use super::select::Cooldown;
use super::sources::GitHub;
use crate::manifest::distribution::Distribution;
use crate::net::Client;
use crate::online::Endpoints;
use crate::registry::config::FeedConfig;
use crate::rules::{EntryReport, PreviewVersion};

/// Everything an entry's update needs from the run.
pub(super) struct Context {
    pub(super) client: Client,
    pub(super) endpoints: Endpoints,
    pub(super) github: GitHub,
    pub(super) options: Options,
    pub(super) cooldown: Cooldown,
}

/// An entry with something to ask the sources about.
pub(super) struct Candidate<'a> {
    pub(super) report: &'a EntryReport,
    /// `""` (stable) or `"/preview"`: where `version` and `distribution` are.
    pub(super) base: &'static str,
    pub(super) current: PreviewVersion,
    pub(super) dist: Distribution,
    pub(super) github: Option<(String, String)>,
    /// The entry's release feed (`feeds` in the configuration): its binary targets' source
    /// in place of GitHub releases.
    pub(super) feed: Option<FeedConfig>,
    /// What `releases.json` recorded of the feed's releases' times (first seen, for a feed
    /// without publish times).
    pub(super) feed_seen: std::collections::BTreeMap<PreviewVersion, i64>,
}
