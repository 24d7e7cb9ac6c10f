//! Why skills could not be fetched ([`SkillFetchError`]): every message names the file or URL
//! (escaped) and what to change.

use crate::net::NetError;

/// Why a skill could not be fetched or verified; nothing was installed.
#[derive(Debug, thiserror::Error)]
pub enum SkillFetchError {
    /// A request failed.
    #[error("cannot fetch {what}: {source}")]
    Net {
        /// The URL, escaped.
        what: String,
        /// Why.
        source: NetError,
    },
    /// A source, index, list or file is refused (the message says which and why).
    #[error("{0}")]
    Refused(String),
}

/// A refusal naming `what` (escaped here) and why.
pub(crate) fn refused(what: &str, why: impl std::fmt::Display) -> SkillFetchError {
    SkillFetchError::Refused(format!(
        "{}: {why}",
        acp_registry_core::escape::terminal(what)
    ))
}
