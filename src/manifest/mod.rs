//! The manifest (`agent.json`): the general JSONC parser with spans (`jsonc`), typed reading
//! of its tree (`fields`), the typed agent view every reader shares (`agent`, `distribution`),
//! and the constants of the format.
//!
//! A shared service: imports only the ground floor (`source`, and `diagnostics` for findings).

pub(crate) mod agent;
pub(crate) mod distribution;
pub(crate) mod edit;
pub(crate) mod fields;
pub(crate) mod jsonc;
pub(crate) mod names;
pub(crate) mod order;
pub(crate) mod repository;
pub(crate) mod skill;
pub(crate) mod svg;

pub(crate) use jsonc::Member;
/// `parse` is [`jsonc::parse`]: any JSONC file, not only manifests.
pub use jsonc::{escape_pointer, parse, Node, NodeValue};

/// Size limits, enforced before any parsing (docs/format.md#reading-files, `file-too-large`).
pub(crate) const MAX_MANIFEST_BYTES: u64 = 64 * 1024;
/// Size limit of each icon file.
pub(crate) const MAX_ICON_BYTES: u64 = 32 * 1024;
/// Size limit of `README.md`.
pub(crate) const MAX_README_BYTES: u64 = 64 * 1024;

/// The six platform keys of `distribution.binary`.
pub(crate) use acp_registry_client::platform::PLATFORMS;

/// Distribution kinds, in output order.
pub(crate) const DISTRIBUTION_KINDS: [&str; 3] = ["binary", "npx", "uvx"];

/// Manifest fields in canonical order (docs/format.md#build-outputs); unknown keys sort after.
pub(crate) const FIELD_ORDER: [&str; 20] = [
    "$schema",
    "schema_version",
    "id",
    "name",
    "version",
    "description",
    "repository",
    "website",
    "homepage",
    "authors",
    "license",
    "license_url",
    "icon",
    "capabilities",
    "auth",
    "tags",
    "protocol_version",
    "distribution",
    "preview",
    "bundled",
];

/// The manifest format version this tool implements (`schema_version`).
pub(crate) const SCHEMA_VERSION: &str = "1.0.0";
