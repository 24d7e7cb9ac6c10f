//! [`CommandError`]: why a command could not run (exit 2), and the failures it wraps.

/// Why a command could not run (exit 2); findings are never errors. Shown as the failure
/// it wraps (its display and its sources), so the message names the path or flag to change.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// A flag names something that does not exist or cannot be used.
    #[error("{0}")]
    Usage(String),
    /// A failure of the domain (registry, output folder, network, launch, package) or of
    /// writing the report.
    #[error(transparent)]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// Each failure a command passes on through `?`.
macro_rules! failed_from {
    ($($error:ty),* $(,)?) => {
        $(impl From<$error> for CommandError {
            fn from(error: $error) -> Self {
                CommandError::Failed(error.into())
            }
        })*
    };
}

// `commands/mod.rs` adds the failures of the commands that define their own (`init`, `new`).
pub(super) use failed_from;

failed_from!(
    std::io::Error,
    serde_json::Error,
    crate::registry::RegistryError,
    crate::publish::BuildError,
    crate::registry::git::GitError,
    crate::publish::last_good::LastGoodError,
    crate::registry::quarantine::QuarantineError,
    crate::online::OnlineError,
    crate::verify::matrix::read::MatrixError,
    crate::update::UpdateError,
    crate::pack::PackError,
    crate::diagnostics::UnknownCode,
    crate::indexes::CheckError,
);

impl From<crate::verify::VerifyError> for CommandError {
    fn from(error: crate::verify::VerifyError) -> Self {
        match error {
            crate::verify::VerifyError::Usage(message) => CommandError::Usage(message),
            error => CommandError::Failed(error.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use acp_registry_core::cli::failure_line;

    use super::*;

    /// The error and its sources, outermost first, as the binaries print them.
    fn chain(error: &CommandError) -> impl Iterator<Item = &dyn std::error::Error> {
        std::iter::successors(Some(error as &dyn std::error::Error), |e| e.source())
    }

    #[test]
    fn a_command_error_shows_the_wrapped_failure_and_its_sources_once() {
        let wrapped = std::io::Error::other("cannot read `x`: no such file");
        let shown = CommandError::from(wrapped);
        assert_eq!(
            failure_line(chain(&shown)),
            "error: cannot read `x`: no such file"
        );
        let usage = CommandError::Usage("--agent a: no entry".into());
        assert_eq!(failure_line(chain(&usage)), "error: --agent a: no entry");
    }
}
