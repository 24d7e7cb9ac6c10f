//! Why a `verify` or `matrix` run could not take place.

/// Why a run could not take place.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The async runtime could not start.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(#[from] crate::net::NetError),
    /// The private folder of the run could not be created.
    #[error("cannot create the run folder {path}: {source}")]
    RunDir {
        /// The folder asked for.
        path: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The registry could not be checked.
    #[error(transparent)]
    Registry(#[from] crate::registry::RegistryError),
    /// `--changed-since` could not be read from git.
    #[error(transparent)]
    Git(#[from] crate::registry::git::GitError),
    /// A flag names something that does not exist or cannot be used (exit 2 as a usage
    /// error).
    #[error("{0}")]
    Usage(String),
    /// The report could not be written.
    #[error(transparent)]
    Write(#[from] std::io::Error),
}
