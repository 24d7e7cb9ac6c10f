//! Why the site could not be rendered ([`SiteError`]).

/// Why the site could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("agent id `{0}` cannot be used in site paths: expected ^[a-z][a-z0-9-]*$, at most {max} bytes, not a Windows device name", max = crate::manifest::names::MAX_ID_LEN)]
    /// An id that cannot be a path segment or class name.
    InvalidId(String),
    #[error("agent id `{0}` appears more than once")]
    /// Two agents with one id.
    DuplicateId(String),
    #[error("skill name `{0}` cannot be used in site paths: expected 1-64 lowercase letters, digits and single hyphens, not starting or ending with a hyphen")]
    /// A skill name that cannot be a path segment.
    InvalidSkillName(String),
    #[error("skill name `{0}` appears more than once")]
    /// Two skills with one name.
    DuplicateSkill(String),
    #[error("rendering `{page}` failed: {source}")]
    /// A template failed (a bug of the templates, not of the input).
    Template {
        /// The page being rendered.
        page: String,
        /// What `minijinja` reported.
        #[source]
        source: minijinja::Error,
    },
    #[error("encoding the search index failed: {0}")]
    /// `assets/search-index.js` could not be serialised.
    Json(#[from] serde_json::Error),
}
