//! [`CheckError`]: why a source could not be checked at all (exit 2); every problem of
//! what it holds is a finding instead.

/// Why a source could not be checked at all (exit 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    /// Nothing checkable at the source.
    #[error("`{given}` holds no skills index or marketplace (looked for {tried})")]
    NothingThere {
        /// The source as given.
        given: String,
        /// What was looked for.
        tried: String,
    },
    /// The source could not be read or reached.
    #[error("cannot read `{given}`: {reason}")]
    Unreachable {
        /// The source as given.
        given: String,
        /// Why.
        reason: String,
    },
    /// The scratch folder or the network runtime could not be set up.
    #[error("cannot set up the check: {0}")]
    Setup(String),
}
