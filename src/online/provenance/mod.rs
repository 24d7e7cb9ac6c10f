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

mod facts;
mod findings;
mod github;
mod npm;
mod pypi;

use crate::net::json::Obj;
use crate::net::{Client, NetError};

pub(crate) use facts::Facts;
use facts::{Asked, VersionDoc};
pub(crate) use findings::{package_findings, Spec};
pub(crate) use github::archive_finding;
use npm::NpmVersionDoc;
use pypi::PypiVersionDoc;

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
