//! The network sections of the configuration: `online` (the services' base URLs) and
//! `provenance` (release repositories accepted besides each manifest's `repository`).

use crate::manifest::fields::{Fields, Keys};
use crate::manifest::repository;
use crate::manifest::{Member, Node};
use crate::online::{EndpointOverrides, ProvenanceConfig};
use acp_registry_core::source::Span;

/// `"online": {"npm_registry": URL, "pypi": URL, "github_api": URL}`. Plain http is accepted
/// here (local mirrors); the network layer still refuses it outside tests.
pub(super) fn read_online(fields: &mut Fields, node: &Node) -> EndpointOverrides {
    let mut out = EndpointOverrides::default();
    let Some(members) = fields.object(
        node,
        "online must be an object",
        "write `{\"npm_registry\": \"https://…\", \"pypi\": \"https://…\", \"github_api\": \"https://…\"}`",
    ) else {
        return out;
    };
    let mut keys = Keys::new(members);
    let slots = [
        ("npm_registry", &mut out.npm),
        ("pypi", &mut out.pypi),
        ("github_api", &mut out.github_api),
    ];
    for (key, slot) in slots {
        for member in keys.get(key) {
            match member.value.as_str().filter(|u| is_base_url(u)) {
                Some(url) => *slot = Some(url.trim_end_matches('/').to_string()),
                None => fields.problem(
                    member.value.span,
                    format!("online.{key} must be an absolute http(s) URL"),
                    "write the service's base URL, e.g. `https://registry.npmjs.org`",
                ),
            }
        }
    }
    keys.finish(fields);
    out
}

/// `"provenance": {"release_repositories": {"<id>": ["owner/repo", "https://…", …]}}`: each
/// id is checked against the registry later; each repository must name one.
pub(super) fn read_provenance(
    fields: &mut Fields,
    node: &Node,
    ids: &mut Vec<(String, Span)>,
) -> ProvenanceConfig {
    let help = "write `{\"release_repositories\": {\"<id>\": [\"owner/releases\"]}}`";
    let mut out = ProvenanceConfig::default();
    let Some(members) = fields.object(node, "provenance must be an object", help) else {
        return out;
    };
    let mut keys = Keys::new(members);
    for member in keys.get("release_repositories") {
        let message = "provenance.release_repositories must be an object of id to repositories";
        let Some(entries) = fields.object(&member.value, message, help) else {
            continue;
        };
        for entry in entries {
            ids.push((entry.key.clone(), entry.key_span));
            let repositories = read_repositories(fields, entry);
            out.release_repositories
                .entry(entry.key.clone())
                .or_default()
                .extend(repositories);
        }
    }
    keys.finish(fields);
    out
}

/// One id's list of repositories, each normalised; what names none is reported.
fn read_repositories(fields: &mut Fields, entry: &Member) -> Vec<repository::Repository> {
    let message = format!(
        "release repositories of `{}` must be a list of repositories",
        entry.key
    );
    let help = "write `[\"owner/releases\"]` or `[\"https://github.com/owner/releases\"]`";
    let Some(items) = fields.array(&entry.value, message, help) else {
        return Vec::new();
    };
    let named = fields.strings(items, "a repository must be a string", help);
    let mut out = Vec::new();
    for (text, span) in named {
        match repository::normalise(text) {
            Some(repository) => out.push(repository),
            None => fields.problem(
                span,
                format!("`{}` is not a repository", text.escape_debug()),
                "write `owner/repo` (on GitHub) or the repository's https URL, e.g. `https://gitlab.com/group/project`",
            ),
        }
    }
    out
}

fn is_base_url(text: &str) -> bool {
    url::Url::parse(text).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https") && u.host().is_some() && u.username().is_empty()
    })
}
