//! Identity and versions: id format and folder, version format, `schema_version`.

use super::entry::ManifestDoc;
use super::sink::Sink;
use super::versions::{PreviewVersion, Version};
use crate::diagnostics::{Code, Diagnostic, Severity};
use crate::manifest::names::{matches_id_pattern, NameProblem, MAX_ID_LEN};
use crate::manifest::SCHEMA_VERSION;

pub(crate) use crate::manifest::names::is_valid_id;

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

pub(crate) fn check(doc: &ManifestDoc, folder: &str, sink: &mut Sink) {
    if let Some(id) = doc.root.get_str("id") {
        if !is_valid_id(id) {
            sink.push(id_format(doc, id));
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

/// Why `id` is refused: its length, then its characters, then a
/// Windows device name (ids become file and folder names on every platform).
fn id_format(doc: &ManifestDoc, id: &str) -> Diagnostic {
    let rename = "(and rename the folder to match)";
    if id.len() > MAX_ID_LEN {
        let d = doc.at(
            Code::IdFormat,
            "/id",
            format!(
                "id `{id}` is {} bytes long, over the {MAX_ID_LEN}-byte limit",
                id.len()
            ),
        );
        return d.help(format!(
            "shorten it to at most {MAX_ID_LEN} lowercase letters, digits and hyphens {rename}"
        ));
    }
    if !matches_id_pattern(id) {
        let d = doc.at(
            Code::IdFormat,
            "/id",
            format!("id `{id}` is not a lowercase slug (`^[a-z][a-z0-9-]*$`)"),
        );
        let slug = slugify(id);
        return if is_valid_id(&slug) {
            d.help(format!("use `{slug}` {rename}"))
        } else {
            d
        };
    }
    doc.at(
        Code::IdFormat,
        "/id",
        format!(
            "id `{id}` cannot be a file or folder name: {}",
            NameProblem::WindowsReserved
        ),
    )
    .help(format!("choose another id, e.g. `{id}-agent` {rename}"))
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

    fn id_findings(id: &str) -> Vec<crate::diagnostics::Diagnostic> {
        let text = format!("{{\"id\": \"{id}\"}}");
        let doc = ManifestDoc {
            root: crate::manifest::jsonc::parse(&text).unwrap(),
            source: acp_registry_core::source::SourceFile::new("x/agent.json", text),
        };
        let policy = crate::rules::policy::Policy::default();
        let mut sink = Sink::new(&policy, None);
        check(&doc, id, &mut sink);
        sink.diagnostics
    }

    #[test]
    fn reserved_and_too_long_ids_say_why_they_are_refused() {
        // The one finding about `id`: (message, help) must contain these.
        let only = |id: &str| {
            let found = id_findings(id);
            assert_eq!(found.len(), 1, "{found:?}");
            let d = found.into_iter().next().unwrap();
            (d.message, d.help.unwrap_or_default())
        };
        let (message, help) = only("con");
        assert!(
            message.contains("reserved device name on Windows"),
            "{message}"
        );
        assert!(help.contains("`con-agent`"), "{help}");
        let (message, _) = only(&"a".repeat(MAX_ID_LEN + 1));
        assert!(
            message.contains("65 bytes long, over the 64-byte limit"),
            "{message}"
        );
        assert!(id_findings(&"a".repeat(MAX_ID_LEN)).is_empty());
    }

    #[test]
    fn slugify_suggests_valid_ids() {
        assert_eq!(slugify("My_Agent 2"), "my-agent-2");
        assert_eq!(slugify("9lives"), "lives");
    }
}
