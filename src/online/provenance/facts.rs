//! What the package indexes said of one pinned version ([`Facts`], [`Attested`]), kept in the
//! online cache, and the shape every index's version document has ([`VersionDoc`]).

use serde::{Deserialize, Serialize};

use crate::net::Client;

/// The longest URL or repository text kept from an answer.
pub(super) const MAX_URL_LEN: usize = 2048;
/// Attestations (npm) or attestation bundles (`PyPI`) read per answer.
pub(super) const MAX_ATTESTATIONS: usize = 16;

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

/// A package index's document of one version: where it lives and what it claims.
pub(super) trait VersionDoc: serde::de::DeserializeOwned + Send + Sync + 'static {
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
pub(super) struct Asked<'a> {
    pub(super) client: &'a Client,
    pub(super) base: &'a str,
    pub(super) name: &'a str,
    pub(super) version: &'a str,
}

/// An attestation that could not be read, and why.
pub(super) fn unreadable(what: &str, why: String) -> Attested {
    Attested {
        what: what.into(),
        unreadable: Some(why),
        ..Attested::default()
    }
}
