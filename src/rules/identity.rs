//! Identity and versions: id format and folder, version format, schema_version.

use super::versions::{PreviewVersion, Version};
use super::{Code, ManifestDoc, Sink};
use crate::diagnostics::Severity;
use crate::manifest::SCHEMA_VERSION;

pub use crate::manifest::names::is_valid_id;

/// A lowercase slug suggestion for an invalid id.
fn slugify(id: &str) -> String {
    let mut slug = String::new();
    for c in id.trim().chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug
        .trim_matches('-')
        .trim_start_matches(|c: char| c.is_ascii_digit());
    slug.trim_start_matches('-').to_string()
}

pub fn check(doc: &ManifestDoc, folder: &str, sink: &mut Sink) {
    if let Some(id) = doc.root.get_str("id") {
        if !is_valid_id(id) {
            let mut d = doc.at(
                Code::IdFormat,
                "/id",
                format!("id `{id}` is not a lowercase slug (`^[a-z][a-z0-9-]*$`)"),
            );
            let slug = slugify(id);
            if is_valid_id(&slug) {
                d = d.help(format!("use `{slug}` (and rename the folder to match)"));
            }
            sink.push(d);
        }
        if id != folder {
            sink.push(
                doc.at(
                    Code::IdMismatch,
                    "/id",
                    format!("id `{id}` differs from its folder name `{folder}`"),
                )
                .help(format!(
                    "set `\"id\": \"{folder}\"` or rename the folder to `{id}`"
                )),
            );
        }
    }
    if let Some(version) = doc.root.get_str("version") {
        check_version(doc, version, sink);
    }
    if let Some(node) = doc.root.get("schema_version") {
        if let Some(text) = node.as_str() {
            check_schema_version(doc, text, sink);
        }
    }
}

fn check_version(doc: &ManifestDoc, version: &str, sink: &mut Sink) {
    if Version::parse(version).is_some() {
        return;
    }
    let help = match PreviewVersion::parse(version) {
        Some(p) if p.preview.is_some() => format!(
            "pre-releases go in the `preview` block; set `version` to the last stable release and `preview.version` to `{version}`"
        ),
        _ => match version.strip_prefix('v').and_then(Version::parse) {
            Some(_) => format!("drop the `v`: `{}`", &version[1..]),
            None => "use three dot-separated numbers, e.g. `1.4.0`".into(),
        },
    };
    sink.push(
        doc.at(
            Code::VersionFormat,
            "/version",
            format!("version `{version}` is not `X.Y.Z` (digits only)"),
        )
        .help(help),
    );
}

/// Newer-minor manifests are checked with unknown root fields as warnings.
pub fn declares_newer_minor(doc: &ManifestDoc) -> bool {
    let supported = semver::Version::parse(SCHEMA_VERSION).expect("valid");
    doc.root
        .get_str("schema_version")
        .and_then(|v| semver::Version::parse(v).ok())
        .is_some_and(|v| v.major == supported.major && v.minor > supported.minor)
}

fn check_schema_version(doc: &ManifestDoc, text: &str, sink: &mut Sink) {
    let supported = semver::Version::parse(SCHEMA_VERSION).expect("valid");
    match semver::Version::parse(text) {
        Err(_) => sink.push(
            doc.at(
                Code::SchemaVersion,
                "/schema_version",
                format!("schema_version `{text}` is not a semantic version"),
            )
            .help(format!("use `{SCHEMA_VERSION}`, the format this manifest follows")),
        ),
        Ok(v) if v.major > supported.major => sink.push(
            doc.at(
                Code::SchemaVersion,
                "/schema_version",
                format!("schema_version {v} is a newer major version than this tool supports ({SCHEMA_VERSION})"),
            )
            .help("upgrade acp-registry"),
        ),
        Ok(v) if v.major == supported.major && v.minor > supported.minor => {
            let mut d = doc
                .at(
                    Code::SchemaVersion,
                    "/schema_version",
                    format!("schema_version {v} is newer than this tool's {SCHEMA_VERSION}; fields it does not know are not checked"),
                )
                .help("upgrade acp-registry for full validation");
            d.severity = Severity::Warning;
            sink.push(d);
        }
        Ok(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugify_suggests_valid_ids() {
        assert_eq!(slugify("My_Agent 2"), "my-agent-2");
        assert_eq!(slugify("9lives"), "lives");
    }
}
