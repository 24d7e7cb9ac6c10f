//! One async check per target, each turning network answers into findings.

use std::sync::{Arc, Mutex};

use tokio::task::JoinSet;

use super::digest::{self, ArchiveDigest, DigestSource, GitHubApi};
use super::packages::{self, Verdict};
use super::{
    pin_established, retag_reason, ArchiveTarget, Cache, Options, PackageTarget, Progress, Target,
};
use crate::diagnostics::{Diagnostic, Fix, FixEdit};
use crate::net::{Client, NetError, Probed};
use crate::rules::{Code, ManifestDoc};

pub(super) struct Context {
    pub client: Client,
    pub cache: Mutex<Cache>,
    pub options: Options,
}

impl Context {
    fn cached(&self, key: &str) -> Option<super::cache::Entry> {
        self.cache.lock().expect("cache").fresh(key).cloned()
    }

    fn remember(&self, key: String, sha256: Option<String>, validator: Option<String>) {
        self.cache
            .lock()
            .expect("cache")
            .put(key, sha256, validator);
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
            let findings = match &target {
                Target::Archive(target) => archive(&context, &doc, target).await,
                Target::Package(target) => package(&context, &doc, target).await,
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

/// Text from a server, made safe to quote in a finding: one line, no control characters,
/// at most 200 characters.
fn quote_remote(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let clean = clean.split_whitespace().collect::<Vec<_>>().join(" ");
    match clean.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &clean[..i]),
        None => clean,
    }
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
            Err(error) => vec![unreachable(doc, &at, url, &error)],
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
    let ArchiveTarget {
        platform,
        pointer,
        url,
        sha256,
    } = target;
    let pin = sha256.as_deref().unwrap_or_default();
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

/// The digest to pin for an archive without one: GitHub's published digest, else the
/// download's (cached by validator).
async fn unpinned_digest(
    context: &Context,
    url: &str,
    probed: &Probed,
) -> Result<ArchiveDigest, NetError> {
    let github = GitHubApi {
        api: context.options.endpoints.github_api.clone(),
        token: context.options.github_token.clone(),
    };
    if let Some(sha256) = digest::published_digest(&context.client, &github, url).await {
        return Ok(ArchiveDigest {
            sha256,
            source: DigestSource::Published,
        });
    }
    let sha256 = downloaded_digest(context, url, probed).await?;
    Ok(ArchiveDigest {
        sha256,
        source: DigestSource::Downloaded,
    })
}

/// The sha256 of the archive as served: from the cache while the server still announces the
/// validator it had, else downloaded (under the cap) and remembered.
async fn downloaded_digest(
    context: &Context,
    url: &str,
    probed: &Probed,
) -> Result<String, NetError> {
    let digest_key = format!("sha256 {url}");
    let cached = context
        .cached(&digest_key)
        .filter(|e| e.validator.is_some() && e.validator == probed.validator)
        .and_then(|e| e.sha256);
    if let Some(digest) = cached {
        return Ok(digest);
    }
    let download = context
        .client
        .download(url, context.options.archive_cap)
        .await?;
    if download.validator.is_some() {
        context.remember(
            digest_key,
            Some(download.sha256.clone()),
            download.validator,
        );
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

async fn package(context: &Context, doc: &ManifestDoc, target: &PackageTarget) -> Vec<Diagnostic> {
    let PackageTarget {
        npm,
        pointer,
        name,
        version,
    } = target;
    let endpoints = &context.options.endpoints;
    let (service, url) = if *npm {
        ("npm", packages::npm_url(&endpoints.npm, name))
    } else {
        ("PyPI", packages::pypi_url(&endpoints.pypi, name))
    };
    let key = format!("{service} {url}#{}", version.as_deref().unwrap_or(""));
    if context.cached(&key).is_some() {
        return Vec::new();
    }
    let client = &context.client;
    let verdict = if *npm {
        client
            .document::<packages::NpmAnswer>(&url)
            .await
            .map(|doc| packages::npm_verdict(doc.as_deref(), version.as_deref()))
    } else {
        client
            .document::<packages::PypiAnswer>(&url)
            .await
            .map(|doc| packages::pypi_verdict(doc.as_deref(), version.as_deref()))
    };
    let verdict = match verdict {
        Ok(verdict) => verdict,
        Err(error) => {
            return vec![doc
                .at(
                    Code::PackageUnreachable,
                    pointer,
                    format!("cannot ask {service} about `{name}` (`{url}`): {error}"),
                )
                .help("run again later, or check the configured registry base URL")]
        }
    };
    let finding = package_finding(doc, pointer, *npm, name, version.as_deref(), verdict);
    if finding.is_none() {
        context.remember(key, None, None);
    }
    finding.into_iter().collect()
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
