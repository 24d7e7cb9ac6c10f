//! The findings of one pinned package's [`Facts`]: its repository claims against the accepted
//! repositories (`package-repository-mismatch`, `-missing`) and what its attestations claim
//! (`package-provenance`, `-missing`).

use std::collections::BTreeSet;

use super::facts::{Attested, Facts};
use crate::diagnostics::Diagnostic;
use crate::manifest::repository::{normalise, Repository};
use crate::online::quote::quote_remote;
use crate::rules::{Code, ManifestDoc};

/// `PyPI` project URL labels that name where the source lives, normalised as PEP 753 does.
const SOURCE_LABELS: [&str; 8] = [
    "homepage",
    "home",
    "source",
    "sourcecode",
    "repository",
    "code",
    "github",
    "gitlab",
];
/// Hosts whose two-segment paths are repositories, for judging `PyPI` URLs.
const FORGES: [&str; 4] = ["github.com", "gitlab.com", "bitbucket.org", "codeberg.org"];

/// Text from a server, safe to quote: one line, no control characters, at most 200 chars.
fn quote(text: &str) -> String {
    quote_remote(text)
}

/// How a package is named in findings: `npm` `name@version` or `PyPI` `name==version`.
pub(crate) struct Spec<'a> {
    pub(crate) npm: bool,
    pub(crate) name: &'a str,
    pub(crate) version: &'a str,
}

impl Spec<'_> {
    fn service(&self) -> &'static str {
        if self.npm {
            "npm"
        } else {
            "PyPI"
        }
    }

    fn text(&self) -> String {
        let sep = if self.npm { "@" } else { "==" };
        format!("{}{sep}{}", self.name, self.version)
    }
}

/// The findings of one pinned version's `facts`: its repository claims against the
/// `accepted` repositories (the manifest's first; none when the manifest names none), and
/// its attestations.
pub(crate) fn package_findings(
    doc: &ManifestDoc,
    pointer: &str,
    spec: &Spec<'_>,
    facts: &Facts,
    accepted: &[Repository],
    github_hosts: &[String],
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(manifest) = accepted.first() {
        out.extend(
            claims_finding(facts, accepted, github_hosts, doc, pointer, spec)
                .map(|finding| finding.help(claims_help(spec, manifest))),
        );
    }
    out.push(attestation_finding(
        doc,
        pointer,
        spec,
        facts.attested.as_ref(),
        accepted.first(),
    ));
    out
}

fn claims_help(spec: &Spec<'_>, manifest: &Repository) -> String {
    if spec.npm {
        format!("if the package is this agent's, set `\"repository\": \"{manifest}\"` in its package.json for the next release; otherwise check `repository` in the manifest and the package name")
    } else {
        format!("if the package is this agent's, add `Source = \"{manifest}\"` under `[project.urls]` in its pyproject.toml for the next release; otherwise check `repository` in the manifest and the package name")
    }
}

/// `package-repository-mismatch` or `package-repository-missing`, or `None` when a claim
/// names an accepted repository.
fn claims_finding(
    facts: &Facts,
    accepted: &[Repository],
    github_hosts: &[String],
    doc: &ManifestDoc,
    pointer: &str,
    spec: &Spec<'_>,
) -> Option<Diagnostic> {
    let manifest = &accepted[0];
    let names_accepted = facts
        .claims
        .iter()
        .any(|(_, url)| normalise(url).is_some_and(|r| accepted.contains(&r)));
    if names_accepted {
        return None;
    }
    let others: BTreeSet<String> = facts
        .claims
        .iter()
        .filter(|(label, url)| spec.npm || names_a_source(label, url, manifest, github_hosts))
        .map(|(_, url)| format!("`{}`", quote(url)))
        .collect();
    let (service, text) = (spec.service(), spec.text());
    if others.is_empty() {
        let what = if spec.npm {
            "declares no `repository`"
        } else {
            "names no source repository among its project URLs"
        };
        let message = format!("{service} `{text}` {what}, so nothing ties it to `{manifest}`");
        return Some(doc.at(Code::PackageRepositoryMissing, pointer, message));
    }
    let named = others.into_iter().collect::<Vec<_>>().join(", ");
    let message = format!(
        "{service} `{text}` says it comes from {named}, not from the manifest's repository `{manifest}`"
    );
    Some(doc.at(Code::PackageRepositoryMismatch, pointer, message))
}

/// Whether a `PyPI` project URL claims where the source lives: a source-like label, and a
/// repository on a forge (or on the manifest repository's host).
fn names_a_source(label: &str, url: &str, manifest: &Repository, github_hosts: &[String]) -> bool {
    let label: String = label
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '-' | '_' | '.'))
        .flat_map(char::to_lowercase)
        .collect();
    let source_label =
        label == "homepage" || label == "home_page" || SOURCE_LABELS.contains(&label.as_str());
    source_label
        && normalise(url).is_some_and(|r| {
            FORGES.contains(&r.host())
                || r.host() == manifest.host()
                || github_hosts.iter().any(|h| h == r.host())
        })
}

/// `package-provenance` (what the attestations claim) or `package-provenance-missing`.
fn attestation_finding(
    doc: &ManifestDoc,
    pointer: &str,
    spec: &Spec<'_>,
    attested: Option<&Attested>,
    manifest: Option<&Repository>,
) -> Diagnostic {
    let (service, text) = (spec.service(), spec.text());
    let Some(attested) = attested else {
        let finding = doc.at(
            Code::PackageProvenanceMissing,
            pointer,
            format!("{service} publishes no provenance attestation for `{text}`"),
        );
        let help = if spec.npm {
            "publishing from CI with `npm publish --provenance` (or npm trusted publishing) lets users trace the package to its source"
        } else {
            "publishing from CI through a PyPI Trusted Publisher attaches attestations that name the source repository"
        };
        return finding.help(help);
    };
    let mut message = format!("{service} `{text}` has {}", quote(&attested.what));
    if let Some((with, asked, total)) = attested.files {
        let of = if total > asked {
            format!(" (the first {asked} of {total} files by name)")
        } else {
            String::new()
        };
        message.push_str(&format!(" for {with} of {asked} files{of}"));
    }
    match attested.repositories.as_slice() {
        [] => message.push_str(", naming no source repository"),
        repositories => {
            let named: Vec<String> = repositories
                .iter()
                .map(|r| format!("`{}`", quote(r)))
                .collect();
            message.push_str(&format!(", built from {}", named.join(", ")));
            if !attested.workflows.is_empty() {
                let workflows: Vec<String> = attested
                    .workflows
                    .iter()
                    .map(|w| format!("`{}`", quote(w)))
                    .collect();
                message.push_str(&format!(" by {}", workflows.join(", ")));
            }
            if let Some(manifest) = manifest {
                let ours = repositories
                    .iter()
                    .all(|r| normalise(r).as_ref() == Some(manifest));
                if ours {
                    message.push_str(": the manifest's repository");
                } else {
                    message.push_str(&format!(", not the manifest's repository `{manifest}`"));
                }
            }
        }
    }
    if let Some(why) = &attested.unreadable {
        message.push_str(&format!("; not all of it could be read: {}", quote(why)));
    }
    let verify = if spec.npm {
        "`npm audit signatures`"
    } else {
        "`pypi-attestations verify pypi`"
    };
    doc.at(Code::PackageProvenance, pointer, message)
        .help(format!(
        "this is the registry's claim, not verified here: {verify} checks the Sigstore signatures"
    ))
}
