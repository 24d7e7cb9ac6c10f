//! GitHub: whether a binary target's release archive belongs to a repository the entry may
//! ship from (the archive URL's own `owner/repo`, nothing asked of the network).

use crate::diagnostics::Diagnostic;
use crate::manifest::repository::{release_asset_repository, Repository};
use crate::rules::{Code, ManifestDoc};

/// `archive-repository-mismatch` for a binary target's GitHub release archive `url` that
/// belongs to none of the `accepted` repositories.
pub(crate) fn archive_finding(
    doc: &ManifestDoc,
    pointer: &str,
    url: &str,
    accepted: &[Repository],
    github_hosts: &[String],
) -> Option<Diagnostic> {
    let manifest = accepted.first()?;
    let hosts: Vec<&str> = github_hosts.iter().map(String::as_str).collect();
    let origin = release_asset_repository(url, &hosts)?;
    if accepted.contains(&origin) {
        return None;
    }
    let finding = doc.at(
        Code::ArchiveRepositoryMismatch,
        &format!("{pointer}/archive"),
        format!("archive `{url}` is a release asset of `{origin}`, not of the manifest's repository `{manifest}`"),
    );
    Some(finding.help(format!(
        "if `{}` is where this agent publishes its binaries, declare it in acp-registry.jsonc: `\"provenance\": {{\"release_repositories\": {{\"{}\": [\"{}\"]}}}}`; otherwise point the archive at a release of `{manifest}`",
        origin,
        doc.root.get_str("id").unwrap_or("<id>"),
        origin.path()
    )))
}
