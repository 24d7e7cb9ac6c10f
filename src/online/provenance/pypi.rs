//! `PyPI`: the version document of a pinned package (project URLs, home page, files) and each
//! file's provenance, whose Trusted Publishers name the source repository and workflow.

use std::collections::BTreeSet;

use serde::Deserialize;

use super::facts::{Asked, Attested, Facts, VersionDoc, MAX_ATTESTATIONS, MAX_URL_LEN};
use crate::net::json::{Entries, List, Obj, Text};
use crate::net::Client;
use crate::online::packages::encode;

/// `PyPI` files whose provenance is asked for, the first ones by name.
const MAX_PYPI_FILES: usize = 8;
/// `PyPI` project URLs read.
const MAX_PROJECT_URLS: usize = 64;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct PypiVersionDoc {
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

/// `PyPI`'s JSON document of `name` at `version`.
pub(super) fn pypi_version_url(base: &str, name: &str, version: &str) -> String {
    format!(
        "{}/pypi/{}/{}/json",
        base.trim_end_matches('/'),
        encode(name),
        encode(version)
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_version_document_is_under_the_json_api() {
        assert_eq!(
            pypi_version_url("https://p.example", "acme-agent", "1.0"),
            "https://p.example/pypi/acme-agent/1.0/json"
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
}
