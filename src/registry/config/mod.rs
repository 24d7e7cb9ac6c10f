//! `acp-registry.jsonc`: the optional configuration at the registry root.
//!
//! ```jsonc
//! {
//!   "base_url": "https://cdn.example.com/registry/v1/latest",
//!   "registry": { "name": "Acme Agent Registry", "home": "https://acme.example", "logo": "logo.svg" },
//!   "severity": { "license-url-missing": "error", "sha256-missing": "off" },
//!   "exemptions": { "old-agent": ["license-url-missing"] },
//!   "required_os": ["darwin", "linux", "windows"],
//!   "require_sha256": "changed",
//!   "publish_quarantined": true,
//!   "online": { "npm_registry": "https://registry.npmjs.org", "pypi": "https://pypi.org" },
//!   "update": { "min_age_days": 7 },
//!   "feeds": { "opencode": { "url": "https://…", "format": "json", "version": "/version", "assets": {…} } },
//!   "provenance": { "release_repositories": { "closed-agent": ["acme/closed-agent-releases"] } },
//!   "outputs": [
//!     { "file": "registry.json", "exclude": ["internal-agent"], "embed_icons": true },
//!     { "file": "registry-preview.json", "channel": "preview",
//!       "patches": [{ "id": "x", "append_args": { "npx": ["--flag"] }, "set": { "bundled": true } }] }
//!   ]
//! }
//! ```
//!
//! Every problem is a `config-*` finding pointing into the file; a broken configuration never
//! silently falls back to defaults for the keys that were readable.
//!
//! This file holds [`Config`] and the top level (which key goes to which reader); each
//! section has its own file: `policy` (`severity`, `exemptions`, `required_os`,
//! `require_sha256`), `outputs` (`base_url`, `outputs` and their patches), `online`
//! (`online`, `provenance`), `network` (`network`), `verify` (`verify`, `update`), `feeds`
//! (release feeds of `update`), `skills` (the skills indexes and marketplace) and `identity`
//! (`registry`: name, description, home, logo, footer, and the `base-url-public` warning);
//! `limits` bounds what the file
//! can make `build` write (URL lengths, outputs, bytes added per agent). A section's reader takes the
//! fields it fills, never the whole [`Config`].

mod feeds;
mod identity;
mod limits;
mod network;
mod online;
mod outputs;
mod policy;
mod skills;
mod verify;

use std::collections::BTreeSet;
use std::path::Path;

use crate::diagnostics::{Diagnostic, Severity};
use crate::manifest::fields::{Fields, Keys};
use crate::manifest::{jsonc, Member};
use crate::online::{EndpointOverrides, ProvenanceConfig};
use crate::published::Output;
use crate::rules::{did_you_mean, read_failure, Code, Policy};
use acp_registry_core::source::{SourceFile, Span};
#[cfg(test)]
pub(crate) use feeds::AssetPointers;
pub(crate) use feeds::{FeedConfig, FeedFormat};
pub(crate) use identity::Identity;
pub(crate) use identity::{is_public_url, name_problem, MAX_NAME_CHARS};
pub(crate) use network::NetworkConfig;
use online::{read_online, read_provenance};
pub(crate) use outputs::base_url_problem;
use outputs::{read_base_url, read_outputs};
use policy::{read_exemptions, read_require_sha256, read_required_os, read_severity};
pub(crate) use skills::{Grouping, MarketplaceConfig, SkillsConfig};
pub use verify::MAX_MIN_AGE_DAYS;
use verify::{read_update, read_verify, DEFAULT_MAX_AGE_DAYS};

/// The configuration file name at the registry root.
pub(crate) const CONFIG_FILE: &str = "acp-registry.jsonc";
/// Size limit of the configuration file (room for thousands of exemptions).
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// Where published files live when `base_url` is not set.
pub(crate) const DEFAULT_BASE_URL: &str = "https://cdn.agentclientprotocol.com/registry/v1/latest";

#[derive(Debug, Clone)]
/// The registry's configuration, defaults for what the file does not set.
pub struct Config {
    /// Severity overrides, exemptions and required OS families.
    pub policy: Policy,
    /// The URL published files are served under, without a trailing `/`.
    pub base_url: String,
    /// Whether quarantined entries are still published.
    pub publish_quarantined: bool,
    /// Registry files `build` writes (default: one `registry.json`).
    pub outputs: Vec<Output>,
    /// The file, when one exists (findings point into it).
    pub source: Option<SourceFile>,
    /// Ids named in the file, with their spans, checked against the registry later.
    pub named_ids: Vec<(String, Span)>,
    /// `online`: base URLs of npm, `PyPI` and the GitHub API (flags override them).
    pub online: EndpointOverrides,
    /// `verify.auth_types`: auth types an agent must offer one of (`None`: the default).
    pub verify_auth_types: Option<Vec<String>>,
    /// `verify.max_age_days`: `build --matrix` marks older evidence expired
    /// (`build --max-age` wins).
    pub verify_max_age_days: u32,
    /// `update.min_age_days`: the release-age cooldown of `update` (`--min-age` wins).
    pub update_min_age_days: u32,
    /// `feeds`: the release feed `update` reads for an entry, by entry id.
    pub(crate) feeds: std::collections::BTreeMap<String, FeedConfig>,
    /// `provenance`: repositories accepted besides each manifest's `repository`.
    pub provenance: ProvenanceConfig,
    /// `skills`: the skills indexes and marketplace `build` publishes.
    pub(crate) skills: SkillsConfig,
    /// `registry`: the registry's name, description, home link, logo and footer.
    pub identity: Identity,
    /// `network`: private hosts and the proxy switch (flags add to them).
    pub(crate) network: NetworkConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            policy: Policy::default(),
            base_url: DEFAULT_BASE_URL.into(),
            publish_quarantined: true,
            outputs: Output::default_outputs(),
            source: None,
            named_ids: Vec::new(),
            online: EndpointOverrides::default(),
            verify_auth_types: None,
            verify_max_age_days: DEFAULT_MAX_AGE_DAYS,
            update_min_age_days: 0,
            feeds: std::collections::BTreeMap::new(),
            provenance: ProvenanceConfig::default(),
            skills: SkillsConfig::default(),
            identity: Identity::default(),
            network: NetworkConfig::default(),
        }
    }
}

impl Config {
    /// Read the configuration of the registry at `root`. Missing file: defaults, no findings.
    pub fn load(root: &Path) -> (Config, Vec<Diagnostic>) {
        // Only absence means defaults: a link or a special file is reported by reading.
        if matches!(
            acp_registry_core::fs::kind(&root.join(CONFIG_FILE)),
            Ok(None)
        ) {
            return (Config::default(), Vec::new());
        }
        let bytes =
            acp_registry_core::fs::read_capped(root, Path::new(CONFIG_FILE), MAX_CONFIG_BYTES);
        let text = match bytes.map(String::from_utf8) {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => {
                let finding = Diagnostic::new(
                    Code::ConfigSyntax,
                    format!("{CONFIG_FILE} is not valid UTF-8"),
                );
                let finding = finding.in_file(CONFIG_FILE).help("re-save it as UTF-8");
                return (Config::default(), vec![finding]);
            }
            Err(e) => return (Config::default(), vec![read_failure(&e, CONFIG_FILE)]),
        };
        let (mut config, mut findings) = Self::parse(SourceFile::new(CONFIG_FILE, text));
        findings.extend(identity::load_logo(root, &mut config.identity));
        if let Some(source) = &config.source {
            let identity = &config.identity;
            findings.extend(identity::public_base_url_finding(
                source,
                &config.base_url,
                identity,
            ));
        }
        (config, findings)
    }

    /// Read the configuration in `source`: every readable key, and a finding per problem.
    pub fn parse(source: SourceFile) -> (Config, Vec<Diagnostic>) {
        let mut config = Config::default();
        let findings = config.read(&source);
        config.source = Some(source);
        (config, findings)
    }

    /// Read every member of `source` into the configuration, returning the problems.
    fn read(&mut self, source: &SourceFile) -> Vec<Diagnostic> {
        let root = match jsonc::parse(&source.text) {
            Ok(root) => root,
            Err(e) => {
                let message = format!("invalid JSONC: {}", e.message);
                return vec![Diagnostic::new(Code::ConfigSyntax, message).at(source, e.span)];
            }
        };
        let mut fields = Fields::new(source, Code::ConfigInvalid);
        let Some(members) = fields.object(
            &root,
            "the configuration must be an object",
            "write `{ … }` with the keys documented in the README",
        ) else {
            return fields.findings;
        };
        for dup in root.duplicate_keys() {
            let message = format!("key `{}` appears more than once", dup.key);
            fields.problem(dup.span, message, "remove one of them");
        }
        self.read_members(&mut fields, members);
        self.check_sha256_settings(&mut fields, members);
        limits::check_urls(&mut fields, &root, "");
        // Keys are read in the table's order, not the file's: put findings back in document
        // order, the order reports show them in.
        let mut findings = fields.findings;
        findings.sort_by_key(|d| (d.line(), d.column()));
        findings
    }

    /// `require_sha256` and a `severity` override of `sha256-missing` together: the override
    /// wins everywhere, so the other setting does nothing; a warning says so.
    fn check_sha256_settings(&self, fields: &mut Fields, members: &[Member]) {
        let overridden = self.policy.severity.contains_key(&Code::Sha256Missing);
        let required = members.iter().find(|m| m.key == "require_sha256");
        if let (true, Some(member)) = (overridden, required) {
            let mut finding = fields
                .at(
                    Code::ConfigInvalid,
                    member.key_span,
                    "`require_sha256` has no effect: `severity` sets `sha256-missing` for every entry",
                )
                .help("keep one of the two: `require_sha256` to make digests an error in changed entries, or the `severity` override");
            finding.severity = Severity::Warning;
            fields.findings.push(finding);
        }
    }

    /// Read the top-level members into the configuration; returns the keys it knows. The
    /// asking order is the order an unknown key's help lists them in.
    fn read_members(&mut self, fields: &mut Fields, members: &[Member]) -> Vec<&'static str> {
        let mut keys = Keys::new(members);
        keys.skip("$schema");
        for m in keys.get("online") {
            self.online = read_online(fields, &m.value);
        }
        for m in keys.get("network") {
            self.network = network::read_network(fields, &m.value);
        }
        for m in keys.get("provenance") {
            self.provenance = read_provenance(fields, &m.value, &mut self.named_ids);
        }
        for m in keys.get("verify") {
            let (auth_types, max_age) =
                (&mut self.verify_auth_types, &mut self.verify_max_age_days);
            read_verify(fields, &m.value, auth_types, max_age);
        }
        for m in keys.get("update") {
            read_update(fields, &m.value, &mut self.update_min_age_days);
        }
        for m in keys.get("feeds") {
            self.feeds = feeds::read_feeds(fields, &m.value, &mut self.named_ids);
        }
        for m in keys.get("base_url") {
            read_base_url(fields, &m.value, &mut self.base_url);
        }
        for m in keys.get("registry") {
            identity::read_identity(fields, &m.value, &mut self.identity);
        }
        for m in keys.get("severity") {
            read_severity(fields, &m.value, &mut self.policy);
        }
        for m in keys.get("exemptions") {
            read_exemptions(fields, &m.value, &mut self.policy, &mut self.named_ids);
        }
        for m in keys.get("required_os") {
            read_required_os(fields, &m.value, &mut self.policy);
        }
        for m in keys.get("require_sha256") {
            read_require_sha256(fields, &m.value, &mut self.policy);
        }
        for m in keys.get("publish_quarantined") {
            let message = "publish_quarantined must be true or false";
            if let Some(b) = fields.bool(&m.value, message, "write `true` or `false`") {
                self.publish_quarantined = b;
            }
        }
        for m in keys.get("skills") {
            skills::read_skills(fields, &m.value, &mut self.skills);
        }
        for m in keys.get("outputs") {
            let (outputs, ids) = read_outputs(fields, &m.value);
            self.outputs = outputs;
            self.named_ids.extend(ids);
            limits::check_added(fields, m, &self.base_url, &mut self.outputs);
        }
        identity::name_marketplace(&self.identity, &mut self.skills);
        let known = keys.known().to_vec();
        keys.finish(fields);
        known
    }

    /// The top-level keys the configuration knows, as its reader asks for them.
    #[cfg(test)]
    pub(crate) fn keys() -> Vec<&'static str> {
        let source = SourceFile::new(CONFIG_FILE, "{}");
        let mut fields = Fields::new(&source, Code::ConfigInvalid);
        Config::default().read_members(&mut fields, &[])
    }

    /// `config-unknown-id` for ids named in the file that no entry declares.
    pub fn check_ids(&self, known: &BTreeSet<&str>) -> Vec<Diagnostic> {
        let Some(source) = &self.source else {
            return Vec::new();
        };
        self.named_ids
            .iter()
            .filter(|(id, _)| !known.contains(id.as_str()))
            .map(|(id, span)| {
                let mut d = Diagnostic::new(
                    Code::ConfigUnknownId,
                    format!("`{id}` is not an entry of this registry"),
                )
                .at(source, *span);
                if let Some(help) = did_you_mean(id, known.iter().copied()) {
                    d = d.help(help);
                }
                d
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Level;

    #[test]
    fn overrides_exemptions_and_os_are_read() {
        let (config, diags) = Config::parse(SourceFile::new(
            CONFIG_FILE,
            r#"{ // comment
                "severity": {"license-url-missing": "error", "sha256-missing": "off"},
                "exemptions": {"old": ["license-url-missing"]},
                "required_os": ["linux"],
                "publish_quarantined": false,
            }"#,
        ));
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(
            config.policy.severity[&Code::LicenseUrlMissing],
            Level::On(Severity::Error)
        );
        assert_eq!(config.policy.severity[&Code::Sha256Missing], Level::Off);
        assert!(config.policy.exemptions["old"].contains(&Code::LicenseUrlMissing));
        assert_eq!(config.policy.required_os, ["linux"]);
        assert!(!config.publish_quarantined);
    }

    #[test]
    fn release_repositories_are_read_normalised_and_their_ids_checked() {
        let (config, diags) = Config::parse(SourceFile::new(
            CONFIG_FILE,
            r#"{"provenance": {"release_repositories": {
                "closed-agent": ["Acme/Closed-Releases", "https://gitlab.com/acme/mirror.git"],
                "typo-agent": ["https://example.com"], "bad": "acme/x"}}}"#,
        ));
        let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "`https://example.com` is not a repository",
                "release repositories of `bad` must be a list of repositories"
            ]
        );
        let accepted: Vec<String> = config.provenance.release_repositories["closed-agent"]
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            accepted,
            [
                "https://github.com/acme/closed-releases",
                "https://gitlab.com/acme/mirror"
            ]
        );
        let known = BTreeSet::from(["closed-agent"]);
        let unknown: Vec<String> = config
            .check_ids(&known)
            .iter()
            .map(|d| d.message.clone())
            .collect();
        assert_eq!(
            unknown,
            [
                "`typo-agent` is not an entry of this registry",
                "`bad` is not an entry of this registry"
            ]
        );
        let (_, diags) = Config::parse(SourceFile::new(
            CONFIG_FILE,
            r#"{"provenance": {"release_repos": {}}}"#,
        ));
        assert_eq!(diags[0].message, "unknown key `release_repos`");
    }

    #[test]
    fn an_unknown_key_at_any_depth_is_reported_once_in_document_order() {
        let (_, diags) = Config::parse(SourceFile::new(
            CONFIG_FILE,
            r#"{"outputs": [{"fle": "a.json", "patches": [{"id": "x", "st": {}}]}], "severty": {}}"#,
        ));
        let found: Vec<(&str, Option<&str>)> = diags
            .iter()
            .map(|d| (d.message.as_str(), d.help.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "this output has no `file`",
                    Some("add `\"file\": \"registry.json\"`")
                ),
                ("unknown key `fle`", Some("did you mean `file`?")),
                ("unknown key `st`", Some("did you mean `set`?")),
                ("unknown key `severty`", Some("did you mean `severity`?")),
            ]
        );
    }

    #[test]
    fn every_problem_is_a_config_finding() {
        let (_, diags) = Config::parse(SourceFile::new(
            CONFIG_FILE,
            r#"{"severty": {}, "severity": {"icon-colour": "error", "schema": "loud"}, "required_os": ["beos"]}"#,
        ));
        let codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "config-invalid",
                "config-unknown-code",
                "config-invalid",
                "config-invalid"
            ]
        );
    }

    #[test]
    fn verify_max_age_days_is_read_beside_auth_types_and_bad_values_are_findings() {
        let parse = |text: &str| Config::parse(SourceFile::new(CONFIG_FILE, text.to_string()));
        assert_eq!(Config::default().verify_max_age_days, 30);
        let (config, diags) = parse(r#"{"verify": {"auth_types": ["agent"], "max_age_days": 7}}"#);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(config.verify_max_age_days, 7);
        assert_eq!(config.verify_auth_types, Some(vec!["agent".to_string()]));
        for bad in ["0", "366", "1.5", "\"7\"", "-1"] {
            let (config, diags) = parse(&format!(r#"{{"verify": {{"max_age_days": {bad}}}}}"#));
            let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
            assert_eq!(
                messages,
                ["verify.max_age_days must be a whole number of days"],
                "{bad}"
            );
            assert_eq!(config.verify_max_age_days, 30);
        }
        let (_, diags) = parse(r#"{"verify": {"max_age": 7}}"#);
        assert_eq!(diags.len(), 1);
        assert!(diags[0].message.contains("max_age"), "{:?}", diags[0]);
    }

    #[test]
    fn update_min_age_days_is_read_and_bad_values_are_findings() {
        let parse = |text: &str| Config::parse(SourceFile::new(CONFIG_FILE, text.to_string()));
        let (config, diags) = parse(r#"{"update": {"min_age_days": 7}}"#);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(config.update_min_age_days, 7);
        assert_eq!(Config::default().update_min_age_days, 0);
        for bad in ["-1", "1.5", "\"7\"", "366", "null"] {
            let (config, diags) = parse(&format!(r#"{{"update": {{"min_age_days": {bad}}}}}"#));
            let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
            assert_eq!(
                messages,
                ["update.min_age_days must be a whole number of days"],
                "{bad}"
            );
            assert_eq!(config.update_min_age_days, 0);
        }
        let (_, diags) = parse(r#"{"update": {"min_age": 7}}"#);
        assert_eq!(diags[0].code, Code::ConfigInvalid);
    }
}
