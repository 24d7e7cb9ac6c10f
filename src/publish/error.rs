//! [`BuildError`]: why `build` or `site` wrote nothing, or left the old tree behind. Its own
//! file, below both the plan ([`super::build`]) and the output folder ([`super::output`]),
//! which report through it.

use std::path::{Path, PathBuf};

use crate::site;

/// Why `build` or `site` wrote nothing (or, for [`BuildError::OldOutputLeft`], left the old
/// tree behind).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Reading or writing `path` failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    #[error("{file} would not validate against registry.schema.json: {message}; check the patches of this output in acp-registry.jsonc")]
    /// An output file would not validate against `registry.schema.json`.
    InvalidOutput {
        /// The output file.
        file: String,
        /// The first violation, naming the agent.
        message: String,
    },
    #[error("refusing to replace `{out}`: it holds paths that acp-registry did not write:\n{paths}\nmove them out of the folder or choose another --out")]
    /// `--out` holds paths this tool did not write.
    ForeignOutput {
        /// The output folder as named.
        out: PathBuf,
        /// The paths, one per line.
        paths: String,
    },
    #[error("cannot replace `{out}`: these paths cannot be removed:\n{paths}\nmake them writable or choose another --out; nothing was changed")]
    /// Paths of `--out` that this process cannot remove.
    ReadOnlyOutput {
        /// The output folder as named.
        out: PathBuf,
        /// The paths with the reason, one per line.
        paths: String,
    },
    #[error("cannot write `{out}` ({what}): {source}; `{out}` is left as it was")]
    /// A step of writing failed before the swap; the old output is intact.
    Unchanged {
        /// The output folder as named.
        out: PathBuf,
        /// The step that failed.
        what: String,
        /// The failure.
        source: std::io::Error,
    },
    #[error("`{out}` holds the new output, but the previous one could not be removed from `{old}`: {source}; remove it by hand")]
    /// The new output is in place but the previous tree could not be removed.
    OldOutputLeft {
        /// The output folder as named.
        out: PathBuf,
        /// Where the previous tree is.
        old: PathBuf,
        /// Why it could not be removed.
        source: std::io::Error,
    },
    #[error(
        "refusing to write to `{out}`: it overlaps the registry `{registry}` (an output goes outside the registry, or below `{registry}/dist`); choose another --out"
    )]
    /// `--out` and the registry overlap.
    OverlapsRegistry {
        /// The output folder as named.
        out: PathBuf,
        /// The registry as named.
        registry: PathBuf,
    },
    #[error("`{0}` exists and is not a folder; choose another --out")]
    /// `--out` names something other than a folder.
    NotAFolder(PathBuf),
    #[error("refusing to publish {file}: {message}; the icon rules stay on for published icons whatever acp-registry.jsonc says, so fix the icon")]
    /// An icon fails the icon safety rules.
    UnsafeIcon {
        /// The icon, with line and column.
        file: String,
        /// The finding and its code.
        message: String,
    },
    #[error("--base-url {problem}; pass the https URL the registry's files are published under")]
    /// `--base-url` is not a usable https URL.
    BaseUrl {
        /// What is wrong with it.
        problem: String,
    },
    #[error("refusing to publish the skill {path}: {reason}; run `acp-registry validate`")]
    /// A skill that no skills index can list (the check reports why).
    Skill {
        /// The skill's folder or file, as findings show it.
        path: String,
        /// What is wrong.
        reason: String,
    },
    #[error(transparent)]
    /// The site could not be rendered.
    Site(#[from] site::SiteError),
}

/// The [`BuildError::Io`] of a failure at `path`, for `map_err`.
pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
    move |source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}
