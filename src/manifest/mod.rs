//! The manifest (`agent.json`): the general JSONC parser with spans (`jsonc`), typed reading
//! of its tree (`fields`), the typed agent view every reader shares (`agent`, `distribution`),
//! and the constants of the format.
//!
//! A shared service: imports only the ground floor (`source`, and `diagnostics` for findings).

pub mod agent;
pub mod distribution;
pub mod edit;
pub mod fields;
pub mod jsonc;
pub mod names;
pub mod order;
pub mod repository;
pub mod skill;
pub mod svg;

/// `parse` is [`jsonc::parse`]: any JSONC file, not only manifests.
pub use jsonc::{escape_pointer, parse, Member, Node, NodeValue, SyntaxError};

/// Size limits, enforced before any parsing (docs/format.md#reading-files, `file-too-large`).
pub const MAX_MANIFEST_BYTES: u64 = 64 * 1024;
/// Size limit of each icon file.
pub const MAX_ICON_BYTES: u64 = 32 * 1024;
/// Size limit of `README.md`.
pub const MAX_README_BYTES: u64 = 64 * 1024;

/// The six platform keys of `distribution.binary`.
pub const PLATFORMS: [&str; 6] = [
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
];

/// Distribution kinds, in output order.
pub const DISTRIBUTION_KINDS: [&str; 3] = ["binary", "npx", "uvx"];

/// Manifest fields in canonical order (docs/format.md#build-outputs); unknown keys sort after.
pub const FIELD_ORDER: [&str; 20] = [
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
pub const SCHEMA_VERSION: &str = "1.0.0";
