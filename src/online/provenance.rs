//! Where what a manifest ships says it comes from, next to the manifest's `repository`:
//! a GitHub release archive's `owner/repo`, the repository npm's and `PyPI`'s metadata of
//! the pinned version names, and the source repository its provenance attestations claim.
//!
//! Only the configured registries are asked (a URL an answer advertises is used only when it
//! lies under the configured base), every answer is read into a typed view under the caps of
//! [`crate::net::json`], and what is read is a claim: no Sigstore signature, certificate or
//! transparency-log entry is verified (docs/format.md#provenance says why).
//!
//! npm: `GET <npm>/<name>/<version>` (the version document: `repository`,
//! `dist.attestations`), then, when it advertises attestations,
//! `GET <npm>/-/npm/v1/attestations/<name>@<version>` (`{"attestations": [{"predicateType",
//! "bundle": {"dsseEnvelope": {"payload"}}}]}`, the payload a base64 in-toto statement).
//! `PyPI`: `GET <pypi>/pypi/<name>/<version>/json` (`info.project_urls`, `info.home_page`,
//! `urls[].filename`), then per file `GET <pypi>/integrity/<name>/<version>/<file>/provenance`
//! (`{"attestation_bundles": [{"publisher": {"kind", "repository", "workflow"}}]}`).

use std::collections::BTreeSet;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::packages::encode;
use crate::diagnostics::Diagnostic;
use crate::manifest::repository::{normalise, release_asset_repository, Repository};
use crate::net::json::{deserialize_leniently, Entries, Lenient, List, Obj, Text};
use crate::net::{Client, NetError};
use crate::rules::{Code, ManifestDoc};

/// The longest URL or repository text kept from an answer.
const MAX_URL_LEN: usize = 2048;
/// The longest DSSE payload decoded (a provenance statement is a few KiB).
const MAX_PAYLOAD_LEN: usize = 256 * 1024;
/// Attestations (npm) or attestation bundles (`PyPI`) read per answer.
const MAX_ATTESTATIONS: usize = 16;
/// `PyPI` files whose provenance is asked for, the first ones by name.
pub(crate) const MAX_PYPI_FILES: usize = 8;
/// `PyPI` project URLs read.
const MAX_PROJECT_URLS: usize = 64;
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

/// What the registry said about one pinned version, kept in the online cache so a cached
/// run reports the same findings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Facts {
    /// Repository claims of the version's metadata: label and URL as written.
    #[serde(default)]
    pub(crate) claims: Vec<(String, String)>,
    /// Its provenance attestations; `None` when it publishes none.
    #[serde(default)]
    pub(crate) attested: Option<Attested>,
}

/// What the attestations of a version claim.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Attested {
    /// What attests, e.g. `SLSA provenance v1` or `GitHub Trusted Publisher`.
    pub(crate) what: String,
    /// Source repositories named, as written, sorted.
    pub(crate) repositories: Vec<String>,
    /// CI workflows named, sorted.
    pub(crate) workflows: Vec<String>,
    /// `PyPI`: files with provenance, files asked, files in the release.
    pub(crate) files: Option<(usize, usize, usize)>,
    /// Why the attestation could not be read, when it could not.
    pub(crate) unreadable: Option<String>,
}

// ---- npm's answers -------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NpmVersionDoc {
    repository: NpmRepository,
    dist: Obj<NpmDist>,
}

/// `repository`: a string, or an object whose `url` is kept (`type` and `directory` are not).
#[derive(Debug, Default)]
struct NpmRepository(Option<String>);

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RepositoryObject {
    url: Text<MAX_URL_LEN>,
}

impl Lenient for NpmRepository {
    fn string(s: &str) -> Self {
        NpmRepository(Text::<MAX_URL_LEN>::string(s).0)
    }
    fn map<'de, A: serde::de::MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        let Obj(object) = Obj::<RepositoryObject>::map(map)?;
        Ok(NpmRepository(object.and_then(|o| o.url.0)))
    }
}

deserialize_leniently!(NpmRepository);

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NpmDist {
    attestations: Obj<NpmAttestationsRef>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NpmAttestationsRef {
    url: Text<MAX_URL_LEN>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NpmAttestations {
    attestations: List<Obj<NpmAttestation>, MAX_ATTESTATIONS>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NpmAttestation {
    #[serde(rename = "predicateType")]
    predicate_type: Text<MAX_URL_LEN>,
    bundle: Obj<Bundle>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Bundle {
    #[serde(rename = "dsseEnvelope")]
    envelope: Obj<Envelope>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Envelope {
    payload: Text<MAX_PAYLOAD_LEN>,
}

/// The in-toto statement of a SLSA provenance attestation: v1's
/// `buildDefinition.externalParameters.workflow`, v0.2's `invocation.configSource`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Statement {
    predicate: Obj<Predicate>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Predicate {
    #[serde(rename = "buildDefinition")]
    build_definition: Obj<BuildDefinition>,
    invocation: Obj<Invocation>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct BuildDefinition {
    #[serde(rename = "externalParameters")]
    external_parameters: Obj<ExternalParameters>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ExternalParameters {
    workflow: Obj<Workflow>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Workflow {
    repository: Text<MAX_URL_LEN>,
    path: Text<MAX_URL_LEN>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Invocation {
    #[serde(rename = "configSource")]
    config_source: Obj<ConfigSource>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ConfigSource {
    uri: Text<MAX_URL_LEN>,
    #[serde(rename = "entryPoint")]
    entry_point: Text<MAX_URL_LEN>,
}

// ---- PyPI's answers ------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PypiVersionDoc {
    info: Obj<PypiInfo>,
    urls: List<Obj<PypiFile>, MAX_PYPI_FILES>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PypiInfo {
    project_urls: Entries<Text<MAX_URL_LEN>, MAX_PROJECT_URLS>,
    home_page: Text<MAX_URL_LEN>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PypiFile {
    filename: Text<1024>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PypiProvenance {
    attestation_bundles: List<Obj<PypiBundle>, MAX_ATTESTATIONS>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PypiBundle {
    publisher: Obj<Publisher>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Publisher {
    kind: Text<64>,
    repository: Text<MAX_URL_LEN>,
    workflow: Text<MAX_URL_LEN>,
}

// ---- asking --------------------------------------------------------------------------

/// npm's version document of `name@version` (the scope's `/` stays a path separator: the
/// registry refuses version documents of `@scope%2fname`).
pub(crate) fn npm_version_url(base: &str, name: &str, version: &str) -> String {
    let name: Vec<String> = name.split('/').map(encode).collect();
    format!(
        "{}/{}/{}",
        base.trim_end_matches('/'),
        name.join("/"),
        encode(version)
    )
}

pub(crate) fn pypi_version_url(base: &str, name: &str, version: &str) -> String {
    format!(
        "{}/pypi/{}/{}/json",
        base.trim_end_matches('/'),
        encode(name),
        encode(version)
    )
}

/// A package index's document of one version: where it lives and what it claims.
trait VersionDoc: serde::de::DeserializeOwned + Send + Sync + 'static {
    /// The document's URL under the index's base.
    fn url(asked: &Asked<'_>) -> String;
    /// Adds to `facts` what the document, and the attestations it leads to, claim.
    fn add_facts(
        &self,
        asked: &Asked<'_>,
        facts: &mut Facts,
    ) -> impl std::future::Future<Output = ()> + Send;
}

/// What is asked of an index: `name` at `version`, of the index at `base`, through `client`.
struct Asked<'a> {
    client: &'a Client,
    base: &'a str,
    name: &'a str,
    version: &'a str,
}

/// What the index at `base` says of `name` at `version`: no facts when its document is not an
/// object, `None` when there is no document.
async fn facts_of<D: VersionDoc>(
    client: &Client,
    base: &str,
    name: &str,
    version: &str,
) -> Result<Option<Facts>, NetError> {
    let asked = Asked {
        client,
        base,
        name,
        version,
    };
    let Some(answer) = client.document::<Obj<D>>(&D::url(&asked)).await? else {
        return Ok(None);
    };
    let mut facts = Facts::default();
    if let Some(doc) = answer.0.as_ref() {
        doc.add_facts(&asked, &mut facts).await;
    }
    Ok(Some(facts))
}

/// What npm (`npm`) or `PyPI` at `base` says of `name` at `version`; `None` when it has no
/// version document for it.
pub(crate) async fn facts(
    client: &Client,
    npm: bool,
    base: &str,
    name: &str,
    version: &str,
) -> Result<Option<Facts>, NetError> {
    if npm {
        facts_of::<NpmVersionDoc>(client, base, name, version).await
    } else {
        facts_of::<PypiVersionDoc>(client, base, name, version).await
    }
}

impl VersionDoc for NpmVersionDoc {
    fn url(asked: &Asked<'_>) -> String {
        npm_version_url(asked.base, asked.name, asked.version)
    }

    async fn add_facts(&self, asked: &Asked<'_>, facts: &mut Facts) {
        if let Some(url) = &self.repository.0 {
            facts.claims.push(("repository".into(), url.clone()));
        }
        let advertised = self.dist.0.as_ref().and_then(|d| d.attestations.0.as_ref());
        if let Some(advertised) = advertised {
            let url = attestations_url(
                asked.base,
                asked.name,
                asked.version,
                advertised.url.0.as_deref(),
            );
            facts.attested = Some(match asked.client.document::<NpmAttestations>(&url).await {
                Ok(Some(answer)) => npm_attested(&answer),
                Ok(None) => unreadable("SLSA provenance", format!("`{url}` answers 404")),
                Err(error) => unreadable("SLSA provenance", format!("`{url}`: {error}")),
            });
        }
    }
}

/// The attestations URL npm advertises when it lies under the configured base (same origin,
/// below its path), else the one built from the base: no other host is ever asked.
fn attestations_url(base: &str, name: &str, version: &str, advertised: Option<&str>) -> String {
    let base = base.trim_end_matches('/');
    let under_base = |url: &str| {
        let (Ok(url), Ok(root)) = (url::Url::parse(url), url::Url::parse(base)) else {
            return false;
        };
        let path = root.path().trim_end_matches('/');
        url.origin() == root.origin()
            && url.username().is_empty()
            && url
                .path()
                .starts_with(&format!("{path}/-/npm/v1/attestations/"))
    };
    match advertised.filter(|url| under_base(url)) {
        Some(url) => url.to_string(),
        None => format!(
            "{base}/-/npm/v1/attestations/{}@{}",
            encode(name),
            encode(version)
        ),
    }
}

fn unreadable(what: &str, why: String) -> Attested {
    Attested {
        what: what.into(),
        unreadable: Some(why),
        ..Attested::default()
    }
}

/// The SLSA provenance among npm's attestations (the publish attestation names no source).
fn npm_attested(answer: &NpmAttestations) -> Attested {
    const SLSA: &str = "https://slsa.dev/provenance/";
    let slsa = answer.attestations.items.iter().find_map(|a| {
        let a = a.0.as_ref()?;
        let version = a.predicate_type.0.as_deref()?.strip_prefix(SLSA)?;
        Some((version.trim_end_matches('/'), a))
    });
    let Some((version, attestation)) = slsa else {
        return unreadable(
            "npm publish attestation",
            "no SLSA provenance among the attestations".into(),
        );
    };
    let what = format!("SLSA provenance {version}");
    let payload = attestation
        .bundle
        .0
        .as_ref()
        .and_then(|b| b.envelope.0.as_ref())
        .and_then(|e| e.payload.0.as_deref());
    let statement = payload
        .and_then(|p| base64::engine::general_purpose::STANDARD.decode(p).ok())
        .and_then(|bytes| serde_json::from_slice::<Statement>(&bytes).ok());
    let Some(predicate) = statement.and_then(|s| s.predicate.0) else {
        return unreadable(&what, "its statement is not readable".into());
    };
    let workflow = predicate
        .build_definition
        .0
        .and_then(|b| b.external_parameters.0)
        .and_then(|e| e.workflow.0);
    let (repository, path) = if let Some(w) = workflow {
        (w.repository.0, w.path.0)
    } else {
        let source = predicate.invocation.0.and_then(|i| i.config_source.0);
        let source = source.unwrap_or_default();
        (source.uri.0, source.entry_point.0)
    };
    Attested {
        what,
        repositories: repository.into_iter().collect(),
        workflows: path.into_iter().collect(),
        ..Attested::default()
    }
}

impl VersionDoc for PypiVersionDoc {
    fn url(asked: &Asked<'_>) -> String {
        pypi_version_url(asked.base, asked.name, asked.version)
    }

    async fn add_facts(&self, asked: &Asked<'_>, facts: &mut Facts) {
        if let Some(info) = &self.info.0 {
            for (label, url) in &info.project_urls.0 {
                if let Some(url) = &url.0 {
                    facts.claims.push((label.clone(), url.clone()));
                }
            }
            if let Some(home) = info.home_page.0.as_ref().filter(|h| !h.trim().is_empty()) {
                facts.claims.push(("home_page".into(), home.clone()));
            }
        }
        let files: Vec<&str> = self
            .urls
            .items
            .iter()
            .filter_map(|f| f.0.as_ref()?.filename.0.as_deref())
            .collect();
        facts.attested = pypi_attested(
            asked.client,
            asked.base,
            asked.name,
            asked.version,
            &files,
            self.urls.total,
        )
        .await;
    }
}

/// The Trusted Publishers that attest `files`; `None` when none of them has provenance.
async fn pypi_attested(
    client: &Client,
    base: &str,
    name: &str,
    version: &str,
    files: &[&str],
    total: usize,
) -> Option<Attested> {
    let mut attested = Attested::default();
    let (mut with, mut publishers) = (0, BTreeSet::new());
    for file in files {
        let url = format!(
            "{}/integrity/{}/{}/{}/provenance",
            base.trim_end_matches('/'),
            encode(name),
            encode(version),
            encode(file)
        );
        match client.document::<PypiProvenance>(&url).await {
            Ok(Some(provenance)) => {
                with += 1;
                let bundles = provenance.attestation_bundles.items.iter();
                for bundle in bundles.filter_map(|b| b.0.as_ref()) {
                    if let Some(publisher) = &bundle.publisher.0 {
                        publishers.insert(publisher_claim(publisher));
                    }
                }
            }
            Ok(None) => {}
            Err(error) => attested.unreadable = Some(format!("`{url}`: {error}")),
        }
    }
    if with == 0 && attested.unreadable.is_none() {
        return None;
    }
    let kinds: BTreeSet<&str> = publishers
        .iter()
        .map(|(kind, _, _)| kind.as_str())
        .collect();
    attested.what = match kinds.into_iter().collect::<Vec<_>>().as_slice() {
        [] => "PyPI attestations".into(),
        kinds => format!("{} Trusted Publisher", kinds.join(", ")),
    };
    for (_, repository, workflow) in publishers {
        attested.repositories.extend(repository);
        attested.workflows.extend(workflow);
    }
    attested.repositories.sort();
    attested.repositories.dedup();
    attested.workflows.sort();
    attested.workflows.dedup();
    attested.files = Some((with, files.len(), total));
    Some(attested)
}

/// A publisher's kind, its repository as a URL (GitHub and GitLab publishers name
/// `owner/repo` on their forge), and its workflow.
fn publisher_claim(publisher: &Publisher) -> (String, Option<String>, Option<String>) {
    let kind = publisher.kind.0.clone().unwrap_or_else(|| "unknown".into());
    let repository = publisher
        .repository
        .0
        .as_ref()
        .map(|r| match kind.as_str() {
            "GitHub" if !r.contains("://") => format!("https://github.com/{r}"),
            "GitLab" if !r.contains("://") => format!("https://gitlab.com/{r}"),
            _ => r.clone(),
        });
    (kind, repository, publisher.workflow.0.clone())
}

// ---- judging -------------------------------------------------------------------------

/// Text from a server, safe to quote: one line, no control characters, at most 200 chars.
fn quote(text: &str) -> String {
    super::checks::quote_remote(text)
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn version_documents_keep_the_scope_as_a_path() {
        assert_eq!(
            npm_version_url("https://r.example/", "@acme/agent", "1.0.0"),
            "https://r.example/@acme/agent/1.0.0"
        );
        assert_eq!(
            pypi_version_url("https://p.example", "acme-agent", "1.0"),
            "https://p.example/pypi/acme-agent/1.0/json"
        );
    }

    #[test]
    fn an_advertised_attestations_url_is_used_only_under_the_configured_base() {
        let base = "https://r.example/npm";
        let own = "https://r.example/npm/-/npm/v1/attestations/@acme%2fagent@1.0.0";
        assert_eq!(
            attestations_url(base, "@acme/agent", "1.0.0", Some(own)),
            own
        );
        for elsewhere in [
            "https://evil.example/npm/-/npm/v1/attestations/x@1",
            "https://r.example@evil.example/npm/-/npm/v1/attestations/x@1",
            "https://r.example/other/-/npm/v1/attestations/x@1",
            "http://r.example/npm/-/npm/v1/attestations/x@1",
        ] {
            assert_eq!(
                attestations_url(base, "@acme/agent", "1.0.0", Some(elsewhere)),
                own,
                "{elsewhere}"
            );
        }
    }

    fn statement(predicate: &serde_json::Value) -> String {
        let statement = json!({"_type": "https://in-toto.io/Statement/v1", "predicate": predicate});
        base64::engine::general_purpose::STANDARD.encode(statement.to_string())
    }

    fn answer(predicate_type: &str, payload: &str) -> NpmAttestations {
        serde_json::from_value(json!({"attestations": [
            {"predicateType": "https://github.com/npm/attestation/tree/main/specs/publish/v0.1",
             "bundle": {"dsseEnvelope": {"payload": "e30="}}},
            {"predicateType": predicate_type, "bundle": {"dsseEnvelope": {"payload": payload}}}
        ]}))
        .unwrap()
    }

    #[test]
    fn slsa_v1_and_v0_2_statements_name_their_source() {
        let v1 = statement(
            &json!({"buildDefinition": {"externalParameters": {"workflow": {
            "repository": "https://github.com/acme/agent", "path": ".github/workflows/release.yml"}}}}),
        );
        let attested = npm_attested(&answer("https://slsa.dev/provenance/v1", &v1));
        assert_eq!(attested.what, "SLSA provenance v1");
        assert_eq!(attested.repositories, ["https://github.com/acme/agent"]);
        assert_eq!(attested.workflows, [".github/workflows/release.yml"]);
        let v02 = statement(&json!({"invocation": {"configSource": {
            "uri": "git+https://gitlab.com/acme/agent@refs/heads/main", "entryPoint": "publish"}}}));
        let attested = npm_attested(&answer("https://slsa.dev/provenance/v0.2", &v02));
        assert_eq!(attested.what, "SLSA provenance v0.2");
        assert_eq!(
            normalise(&attested.repositories[0]).unwrap().to_string(),
            "https://gitlab.com/acme/agent"
        );
        let broken = npm_attested(&answer("https://slsa.dev/provenance/v1", "not base64!"));
        assert_eq!(
            broken.unreadable.as_deref(),
            Some("its statement is not readable")
        );
    }

    #[test]
    fn publishers_name_their_forge() {
        let publisher: Publisher = serde_json::from_value(
            json!({"kind": "GitHub", "repository": "acme/agent", "workflow": "release.yml"}),
        )
        .unwrap();
        assert_eq!(
            publisher_claim(&publisher),
            (
                "GitHub".into(),
                Some("https://github.com/acme/agent".into()),
                Some("release.yml".into())
            )
        );
    }

    #[test]
    fn npm_repository_is_a_string_or_an_object_with_a_url() {
        let doc: NpmVersionDoc = serde_json::from_value(json!({"repository": {
            "type": "git", "url": "git+https://github.com/acme/agent.git", "directory": "packages/cli"}}))
        .unwrap();
        assert_eq!(
            doc.repository.0.as_deref(),
            Some("git+https://github.com/acme/agent.git")
        );
        let doc: NpmVersionDoc =
            serde_json::from_value(json!({"repository": "github:acme/agent"})).unwrap();
        assert_eq!(doc.repository.0.as_deref(), Some("github:acme/agent"));
        let doc: NpmVersionDoc = serde_json::from_value(json!({"repository": ["x"]})).unwrap();
        assert_eq!(doc.repository.0, None);
    }
}
