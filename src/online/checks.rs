//! One async check per target, each turning network answers into findings.

use std::sync::{Arc, Mutex};

use tokio::task::JoinSet;

use super::cache::{Cache, Entry};
use super::digest::{self, ArchiveDigest, GitHubApi, PinError};
use super::options::{Options, Progress};
use super::packages::{self, Verdict};
use super::provenance::{self, Facts, Spec};
use super::quote::quote_remote;
use super::target::{pin_established, retag_reason, ArchiveTarget, PackageTarget, Target};
use crate::diagnostics::{Diagnostic, Fix, FixEdit};
use crate::manifest::repository::{normalise, Repository};
use crate::net::{Client, NetError, Probed};
use crate::rules::{Code, ManifestDoc};

pub(super) struct Context {
    pub client: Client,
    pub cache: Mutex<Cache>,
    pub options: Options,
}

impl Context {
    fn cached(&self, key: &str) -> Option<Entry> {
        self.cache.lock().expect("cache").fresh(key).cloned()
    }

    fn remember(&self, key: String, sha256: Option<String>, validator: Option<String>) {
        self.cache
            .lock()
            .expect("cache")
            .put(key, sha256, validator);
    }

    fn cached_facts(&self, key: &str) -> Option<Facts> {
        self.cached(key).and_then(|entry| entry.facts)
    }

    /// Remember `facts`, unless part of them could not be read (asked again next run).
    fn remember_facts(&self, key: String, facts: &Facts) {
        if facts
            .attested
            .as_ref()
            .is_some_and(|a| a.unreadable.is_some())
        {
            return;
        }
        self.cache
            .lock()
            .expect("cache")
            .put_facts(key, facts.clone());
    }
}

type Job = (String, Arc<ManifestDoc>, Target);

/// Run every job concurrently (the client enforces the limits); results come back sorted
/// by entry so nothing depends on completion order.
pub(super) async fn run_all(
    context: Arc<Context>,
    jobs: Vec<Job>,
    progress: Arc<dyn Progress>,
) -> Vec<(String, Vec<Diagnostic>)> {
    let mut set = JoinSet::new();
    for (index, (entry, doc, target)) in jobs.into_iter().enumerate() {
        let (context, progress) = (context.clone(), progress.clone());
        set.spawn(async move {
            progress.working(&target.host(&context.options.endpoints));
            let accepted = accepted_repositories(&context, &entry, &doc);
            let findings = match &target {
                Target::Archive(target) => {
                    let hosts = context.options.endpoints.github_hosts();
                    let origin = provenance::archive_finding(
                        &doc,
                        &target.pointer,
                        &target.url,
                        &accepted,
                        &hosts,
                    );
                    let mut findings: Vec<Diagnostic> = origin.into_iter().collect();
                    findings.extend(archive(&context, &doc, target).await);
                    findings
                }
                Target::Package(target) => package(&context, &doc, target, &accepted).await,
            };
            progress.done();
            (index, entry, findings)
        });
    }
    let mut results = Vec::new();
    while let Some(joined) = set.join_next().await {
        // A panicking check loses its findings, never the run.
        if let Ok(result) = joined {
            results.push(result);
        }
    }
    results.sort_by_key(|(index, _, _)| *index);
    results
        .into_iter()
        .map(|(_, entry, f)| (entry, f))
        .collect()
}

/// The repositories entry `entry` may ship from: its manifest's `repository` (none when it
/// names none), then those `provenance.release_repositories` declares for it.
fn accepted_repositories(context: &Context, entry: &str, doc: &ManifestDoc) -> Vec<Repository> {
    let Some(own) = doc.root.get_str("repository").and_then(normalise) else {
        return Vec::new();
    };
    context.options.provenance.accepted(entry, Some(&own))
}

async fn archive(context: &Context, doc: &ManifestDoc, target: &ArchiveTarget) -> Vec<Diagnostic> {
    let ArchiveTarget {
        platform,
        pointer,
        url,
        sha256,
    } = target;
    let at = format!("{pointer}/archive");
    let probe_key = format!("probe {url}");
    let verify = context.options.verify_archives;
    if !verify && context.cached(&probe_key).is_some() {
        return Vec::new();
    }
    let probed = match context.client.probe(url).await {
        Ok(probed) => probed,
        Err(error) => return vec![unreachable(doc, &at, url, &error)],
    };
    context.remember(probe_key, None, None);
    if !verify {
        return Vec::new();
    }
    let Some(pin) = sha256 else {
        return match unpinned_digest(context, url, &probed).await {
            Ok(digest) => vec![doc
                .at(
                    Code::ArchiveDigest,
                    &at,
                    format!(
                        "`{platform}` archive has sha256 {} ({})",
                        digest.sha256,
                        digest.source.describe()
                    ),
                )
                .help(format!("pin it: `\"sha256\": \"{}\"`", digest.sha256))
                .fix(Fix::new(
                    format!("{pointer}/sha256"),
                    FixEdit::SetString(digest.sha256),
                ))],
            Err(PinError::Net(error)) => vec![unreachable(doc, &at, url, &error)],
            Err(error @ PinError::Mismatch { .. }) => vec![doc
                .at(Code::Sha256Mismatch, &at, format!("`{platform}` archive `{url}`: {error}"))
                .help("do not pin it before the agent's maintainers confirm which bytes they released")],
        };
    };
    let actual = match downloaded_digest(context, url, &probed).await {
        Ok(actual) => actual,
        Err(error) => return vec![unreachable(doc, &at, url, &error)],
    };
    if *pin == actual {
        return Vec::new();
    }
    let established = context.options.baseline.as_ref().and_then(|baseline| {
        let base = tokio::task::block_in_place(|| baseline.manifest_at_base(&doc.source.path))?;
        pin_established(doc, target, &base).then(|| baseline.revision().to_string())
    });
    vec![match established {
        Some(revision) => retagged(doc, target, &actual, &revision),
        None => doc
            .at(
                Code::Sha256Mismatch,
                &format!("{pointer}/sha256"),
                format!("`{platform}` pins sha256 {pin}, but `{url}` serves {actual}"),
            )
            .help(format!(
                "if the release was re-uploaded on purpose, pin `\"sha256\": \"{actual}\"`"
            )),
    }]
}

/// The `archive-retagged` finding: the pin is the one `revision` had, at the same version.
fn retagged(doc: &ManifestDoc, target: &ArchiveTarget, actual: &str, revision: &str) -> Diagnostic {
    let (platform, pointer, url) = (&target.platform, &target.pointer, &target.url);
    let pin = target.sha256.as_deref().unwrap_or_default();
    let version = doc.root.get_str("version").unwrap_or_default();
    let id = doc.root.get_str("id").unwrap_or_default();
    let member = serde_json::json!({ id: retag_reason(version) }).to_string();
    let member = member.trim_start_matches('{').trim_end_matches('}');
    doc.at(
        Code::ArchiveRetagged,
        &format!("{pointer}/sha256"),
        format!(
            "`{platform}` archive of {version} changed after it was pinned: `{url}` serves {actual}, the pin (unchanged since {revision}) is {pin}"
        ),
    )
    .help(format!(
        "possible compromise: do not re-pin before the agent's maintainers confirm the re-upload; quarantine the entry meanwhile, add {member} to quarantine.json (`--quarantine-retagged` does)"
    ))
}

/// The digest to pin for an archive without one: the download's (cached by validator),
/// checked against GitHub's published digest when there is one.
async fn unpinned_digest(
    context: &Context,
    url: &str,
    probed: &Probed,
) -> Result<ArchiveDigest, PinError> {
    let github = GitHubApi {
        api: context.options.endpoints.github_api.clone(),
        token: context
            .options
            .github_token
            .for_api(&context.options.endpoints.github_api),
    };
    let published = digest::published_digest(&context.client, &github, url).await;
    let downloaded = downloaded_digest(context, url, probed).await?;
    digest::checked_pin(&digest::asset_name(url), published.as_deref(), downloaded)
}

/// The sha256 of the archive as served: from the cache while the server still identifies
/// the same bytes ([`Probed::identity`]: strong `ETag`, `Last-Modified`, length and the URL
/// that answered all unchanged), else downloaded (under the cap) and remembered with the
/// download's identity. A server that identifies nothing (a weak `ETag`, no `ETag`, no length)
/// is downloaded every run.
async fn downloaded_digest(
    context: &Context,
    url: &str,
    probed: &Probed,
) -> Result<String, NetError> {
    let digest_key = format!("sha256 {url}");
    let cached = context
        .cached(&digest_key)
        .filter(|e| e.validator.is_some() && e.validator == probed.identity)
        .and_then(|e| e.sha256);
    if let Some(digest) = cached {
        return Ok(digest);
    }
    let download = context
        .client
        .download(url, context.options.archive_cap)
        .await?;
    if download.identity.is_some() {
        context.remember(digest_key, Some(download.sha256.clone()), download.identity);
    }
    Ok(download.sha256)
}

/// The finding for an archive URL that could not be checked.
fn unreachable(doc: &ManifestDoc, at: &str, url: &str, error: &NetError) -> Diagnostic {
    match error {
        e if e.is_refused() => doc
            .at(
                Code::UrlRefused,
                at,
                format!("archive `{url}` is refused: {e}"),
            )
            .help("archive URLs and every redirect must stay on public https hosts"),
        NetError::TooLarge { cap } => doc
            .at(
                Code::ArchiveTooLarge,
                at,
                format!(
                    "archive `{url}` is larger than the {} MiB download cap",
                    cap >> 20
                ),
            )
            .help("raise --archive-cap (MiB) if the archive really is that large"),
        e @ (NetError::TooSlow { .. } | NetError::Deadline(_)) => doc
            .at(
                Code::ArchiveUnreachable,
                at,
                format!("archive `{url}` could not be downloaded: {e}"),
            )
            .help("the server sends too slowly; run again later, or check the URL"),
        e => doc
            .at(
                Code::ArchiveUnreachable,
                at,
                format!("archive `{url}` does not answer 200: {e}"),
            )
            .help("check that the release asset exists and is public at this URL"),
    }
}

async fn package(
    context: &Context,
    doc: &ManifestDoc,
    target: &PackageTarget,
    accepted: &[Repository],
) -> Vec<Diagnostic> {
    let (mut findings, listed) = package_verdict(context, doc, target).await;
    if let (Some(pin), Some(listed)) = (&target.version, listed) {
        findings.extend(package_provenance(context, doc, target, pin, &listed, accepted).await);
    }
    findings
}

/// The service's name and the package document's URL.
fn package_url(context: &Context, target: &PackageTarget) -> (&'static str, String) {
    let endpoints = &context.options.endpoints;
    if target.npm {
        ("npm", packages::npm_url(&endpoints.npm, &target.name))
    } else {
        ("PyPI", packages::pypi_url(&endpoints.pypi, &target.name))
    }
}

/// The cache key of a pinned version's provenance facts.
fn facts_key(context: &Context, target: &PackageTarget, pin: &str) -> String {
    format!("provenance {}#{pin}", package_url(context, target).1)
}

/// The package's own findings, and the key its document lists the pinned version under
/// (the pin itself when the run is answered from the cache).
async fn package_verdict(
    context: &Context,
    doc: &ManifestDoc,
    target: &PackageTarget,
) -> (Vec<Diagnostic>, Option<String>) {
    let PackageTarget {
        npm,
        pointer,
        name,
        version,
    } = target;
    let (service, url) = package_url(context, target);
    let key = format!("{service} {url}#{}", version.as_deref().unwrap_or(""));
    let facts_cached = version.as_deref().is_none_or(|pin| {
        context
            .cached_facts(&facts_key(context, target, pin))
            .is_some()
    });
    if context.cached(&key).is_some() && facts_cached {
        return (Vec::new(), version.clone());
    }
    let client = &context.client;
    let pin = version.as_deref();
    let verdict = if *npm {
        verdict_of(
            client,
            &url,
            pin,
            packages::npm_verdict,
            packages::npm_version_key,
        )
        .await
    } else {
        verdict_of(
            client,
            &url,
            pin,
            packages::pypi_verdict,
            packages::pypi_version_key,
        )
        .await
    };
    let (verdict, listed) = match verdict {
        Ok(verdict) => verdict,
        Err(error) => {
            let message = format!("cannot ask {service} about `{name}` (`{url}`): {error}");
            let finding = doc.at(Code::PackageUnreachable, pointer, message);
            return (vec![finding.help(UNREACHABLE_HELP)], None);
        }
    };
    let finding = package_finding(doc, pointer, *npm, name, pin, verdict);
    if finding.is_none() {
        context.remember(key, None, None);
    }
    (finding.into_iter().collect(), listed)
}

/// The verdict on `pin` from the index's document at `url` (read as `A`), and the key the
/// document lists the pinned version under.
async fn verdict_of<A: serde::de::DeserializeOwned + Send + Sync + 'static>(
    client: &Client,
    url: &str,
    pin: Option<&str>,
    verdict: fn(Option<&A>, Option<&str>) -> Verdict,
    version_key: fn(&A, &str) -> Option<String>,
) -> Result<(Verdict, Option<String>), NetError> {
    let doc = client.document::<A>(url).await?;
    let listed = doc.as_deref().zip(pin).and_then(|(d, v)| version_key(d, v));
    Ok((verdict(doc.as_deref(), pin), listed))
}

const UNREACHABLE_HELP: &str = "run again later, or check the configured registry base URL";

/// The provenance findings of the pinned version (listed as `listed`), from the cache when
/// it has them.
async fn package_provenance(
    context: &Context,
    doc: &ManifestDoc,
    target: &PackageTarget,
    pin: &str,
    listed: &str,
    accepted: &[Repository],
) -> Vec<Diagnostic> {
    let key = facts_key(context, target, pin);
    let endpoints = &context.options.endpoints;
    let facts = if let Some(facts) = context.cached_facts(&key) {
        facts
    } else {
        let (client, name) = (&context.client, target.name.as_str());
        let base = if target.npm {
            &endpoints.npm
        } else {
            &endpoints.pypi
        };
        let fetched = provenance::facts(client, target.npm, base, name, listed).await;
        match fetched {
            Ok(Some(facts)) => {
                context.remember_facts(key, &facts);
                facts
            }
            // No version document: nothing is claimed, so nothing is reported.
            Ok(None) => return Vec::new(),
            Err(error) => {
                let service = package_url(context, target).0;
                let message = format!(
                    "cannot ask {service} about the provenance of `{name}` {listed}: {error}"
                );
                let finding = doc.at(Code::PackageUnreachable, &target.pointer, message);
                return vec![finding.help(UNREACHABLE_HELP)];
            }
        }
    };
    let spec = Spec {
        npm: target.npm,
        name: &target.name,
        version: pin,
    };
    let hosts = endpoints.github_hosts();
    provenance::package_findings(doc, &target.pointer, &spec, &facts, accepted, &hosts)
}

fn package_finding(
    doc: &ManifestDoc,
    pointer: &str,
    npm: bool,
    name: &str,
    version: Option<&str>,
    verdict: Verdict,
) -> Option<Diagnostic> {
    let (service, missing) = if npm {
        ("npm", Code::NpmMissing)
    } else {
        ("PyPI", Code::PypiMissing)
    };
    let version = version.unwrap_or_default();
    let finding = match verdict {
        Verdict::Ok => return None,
        Verdict::NoPackage => doc
            .at(
                missing,
                pointer,
                format!("{service} has no package `{name}`"),
            )
            .help("check the package name, or publish the package first"),
        Verdict::NoVersion { latest } => {
            let help = match latest {
                Some(latest) => format!(
                    "pin a published version; the latest is {}",
                    quote_remote(&latest)
                ),
                None => "pin a published version".to_string(),
            };
            doc.at(
                missing,
                pointer,
                format!("{service} package `{name}` has no version {version}"),
            )
            .help(help)
        }
        Verdict::NoFiles => doc
            .at(
                missing,
                pointer,
                format!("PyPI release `{name}=={version}` has no files to install"),
            )
            .help("upload the release's files, or pin a release that has them"),
        Verdict::Deprecated(message) => doc
            .at(
                Code::NpmDeprecated,
                pointer,
                format!(
                    "`{name}@{version}` is deprecated on npm: {}",
                    quote_remote(&message)
                ),
            )
            .help("pin a version that is not deprecated"),
        Verdict::Yanked(reason) => doc
            .at(
                Code::PypiYanked,
                pointer,
                match reason {
                    Some(reason) => format!(
                        "`{name}=={version}` is yanked on PyPI: {}",
                        quote_remote(&reason)
                    ),
                    None => format!("`{name}=={version}` is yanked on PyPI"),
                },
            )
            .help("pin a release that is not yanked"),
    };
    Some(finding)
}
