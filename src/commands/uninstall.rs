//! `acp-registry uninstall <ID> [--version V]`: remove an agent's installs (every version, or
//! one) from the cache. Reads no registry and asks nothing over the network.

use std::io::Write;

use acp_registry_client::document::{is_safe_id, is_safe_version};

use super::client::CacheFlags;
use super::client_text::t;
use super::error::CommandError;
use super::exit::{self, Exit};

/// `uninstall`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// The agent's id.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Only this version [default: every installed version].
    #[arg(long, value_name = "V")]
    pub version: Option<String>,
    /// `--cache-dir`.
    #[command(flatten)]
    pub cache: CacheFlags,
}

/// Removes the installs and prints each folder removed.
///
/// # Errors
/// Nothing installed matches (the message says what is installed), or the cache cannot be
/// changed.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    if !is_safe_id(&options.id) || !options.version.as_deref().is_none_or(is_safe_version) {
        return Err(CommandError::Usage(format!(
            "`{}` is not an agent id (and version) the cache can hold",
            t(&options.id)
        )));
    }
    let store = options.cache.open()?;
    let removed = store.uninstall(&options.id, options.version.as_deref())?;
    if removed.is_empty() {
        let installed: Vec<String> = store
            .installed()?
            .into_iter()
            .filter(|i| i.id == options.id)
            .map(|i| t(&i.version))
            .collect();
        let what = match &options.version {
            Some(version) => format!("{} {}", t(&options.id), t(version)),
            None => t(&options.id),
        };
        return Err(CommandError::Usage(format!(
            "{what} is not installed in {} (installed versions: {})",
            t(&store.root().display().to_string()),
            if installed.is_empty() {
                "none".into()
            } else {
                installed.join(", ")
            }
        )));
    }
    for path in removed {
        writeln!(out, "removed {}", t(&path.display().to_string()))?;
    }
    Ok(exit::OK)
}
