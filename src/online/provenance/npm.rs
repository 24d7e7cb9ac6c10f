//! npm: the version document of a pinned package (`repository`, `dist.attestations`) and its
//! attestations, the SLSA provenance statement among them read for the source it names.

use base64::Engine as _;
use serde::Deserialize;

use super::facts::{unreadable, Asked, Attested, Facts, VersionDoc, MAX_ATTESTATIONS, MAX_URL_LEN};
use crate::net::json::{deserialize_leniently, Lenient, List, Obj, Text};
use crate::online::packages::encode;

/// The longest DSSE payload decoded (a provenance statement is a few KiB).
const MAX_PAYLOAD_LEN: usize = 256 * 1024;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct NpmVersionDoc {
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
pub(super) struct NpmAttestations {
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

/// npm's version document of `name@version` (the scope's `/` stays a path separator: the
/// registry refuses version documents of `@scope%2fname`).
pub(super) fn npm_version_url(base: &str, name: &str, version: &str) -> String {
    let name: Vec<String> = name.split('/').map(encode).collect();
    format!(
        "{}/{}/{}",
        base.trim_end_matches('/'),
        name.join("/"),
        encode(version)
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::repository::normalise;
    use serde_json::json;

    #[test]
    fn a_version_document_keeps_the_scope_as_a_path() {
        assert_eq!(
            npm_version_url("https://r.example/", "@acme/agent", "1.0.0"),
            "https://r.example/@acme/agent/1.0.0"
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
