//! The registry's identity: `"registry": {"name", "description", "home", "logo", "footer",
//! "public"}`, what the site (title, header, `<h1>`, meta description, logo, home link,
//! footer) and the outputs that name a registry show; and `base-url-public`, the warning for
//! a registry that would publish under the public ACP registry's URL.
//!
//! Every text is one line of plain text (the site escapes it); `home` is an https URL without
//! credentials; `logo` names an SVG file inside the registry root, read when the
//! configuration is loaded (bounded, no links followed) and held to the safety rules of the
//! agents' icons.

use std::path::Path;

use super::outputs::base_url_problem;
use super::skills::{MarketplaceConfig, SkillsConfig};
use crate::diagnostics::{Diagnostic, Severity};
use crate::manifest::fields::{Fields, Keys};
use crate::manifest::{jsonc, Node, MAX_ICON_BYTES};
use crate::rules::{check_icon, read_failure, Code};
use acp_registry_core::source::{SourceFile, Span};

/// The name shown when the configuration sets none (the public registry's).
pub(crate) const DEFAULT_NAME: &str = "ACP Agent Registry";
/// The host the public ACP registry publishes under.
pub(crate) const PUBLIC_HOST: &str = "cdn.agentclientprotocol.com";
/// The most characters of `registry.name`.
pub(crate) const MAX_NAME_CHARS: usize = 80;
/// The most characters of `registry.description`.
const MAX_DESCRIPTION_CHARS: usize = 300;
/// The most characters of `registry.footer`.
const MAX_FOOTER_CHARS: usize = 500;

/// `"registry"`: who runs this registry, as the site and the outputs name it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// `name`: the site's title, header and `<h1>` (default [`DEFAULT_NAME`]).
    pub name: Option<String>,
    /// `description`: the site's lead paragraph and meta description.
    pub description: Option<String>,
    /// `home`: an https link to the organisation running the registry.
    pub home: Option<String>,
    /// `logo`: the path of an SVG inside the registry root, as written.
    pub logo: Option<String>,
    /// The logo's bytes, read by [`super::Config::load`] when they pass the icon safety rules.
    pub logo_svg: Option<Vec<u8>>,
    /// `footer`: one line of plain text at the foot of every page.
    pub footer: Option<String>,
    /// `public`: this is the public ACP registry itself (silences `base-url-public`).
    pub public: bool,
}

impl Identity {
    /// The registry's name: the configured one, else [`DEFAULT_NAME`].
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(DEFAULT_NAME)
    }
}

/// Why `name` cannot name a registry, or `None`: what `registry.name` and `init --name`
/// accept (one line, 1 to [`MAX_NAME_CHARS`] characters, no control character).
pub(crate) fn name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        Some("is empty".into())
    } else if name.chars().count() > MAX_NAME_CHARS {
        Some(format!(
            "is {} characters long, over the limit of {MAX_NAME_CHARS}",
            name.chars().count()
        ))
    } else if name.chars().any(char::is_control) {
        Some("holds a control character (a line break, a tab, an escape)".into())
    } else {
        None
    }
}

/// Whether `url` is on the public ACP registry's host (any case, any path, any trailing `/`).
pub(crate) fn is_public_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| {
        u.host_str()
            .is_some_and(|h| h.trim_end_matches('.').eq_ignore_ascii_case(PUBLIC_HOST))
    })
}

/// `"registry": {…}`: every key optional.
pub(super) fn read_identity(fields: &mut Fields, node: &Node, identity: &mut Identity) {
    let help = "write `{\"name\": \"Acme Agent Registry\", \"description\": \"…\", \"home\": \"https://acme.example\", \"logo\": \"logo.svg\", \"footer\": \"…\"}`";
    let Some(members) = fields.object(node, "registry must be an object", help) else {
        return;
    };
    let mut keys = Keys::new(members);
    for m in keys.get("name") {
        identity.name = text(fields, &m.value, "name", MAX_NAME_CHARS);
    }
    for m in keys.get("description") {
        identity.description = text(fields, &m.value, "description", MAX_DESCRIPTION_CHARS);
    }
    for m in keys.get("home") {
        identity.home = read_home(fields, &m.value);
    }
    for m in keys.get("logo") {
        identity.logo = read_logo_path(fields, &m.value);
    }
    for m in keys.get("footer") {
        identity.footer = text(fields, &m.value, "footer", MAX_FOOTER_CHARS);
    }
    for m in keys.get("public") {
        let message = "registry.public must be true or false";
        let help = "only the public ACP registry sets `true`; leave it out otherwise";
        if let Some(b) = fields.bool(&m.value, message, help) {
            identity.public = b;
        }
    }
    keys.finish(fields);
}

/// The skills marketplace names the registry: its owner and description default to the
/// registry's name and description when the configuration gives the marketplace neither.
pub(super) fn name_marketplace(identity: &Identity, skills: &mut SkillsConfig) {
    let Some(marketplace) = skills.marketplace.as_mut() else {
        return;
    };
    let defaults = MarketplaceConfig::default();
    if let Some(name) = &identity.name {
        if marketplace.owner_name == defaults.owner_name {
            marketplace.owner_name.clone_from(name);
        }
    }
    if let Some(description) = &identity.description {
        if marketplace.description == defaults.description {
            marketplace.description.clone_from(description);
        }
    }
}

/// One line of plain text of at most `max` characters.
fn text(fields: &mut Fields, node: &Node, key: &str, max: usize) -> Option<String> {
    let help = format!("write one line of plain text, at most {max} characters");
    let value = fields.string(node, format!("registry.{key} must be a string"), &help)?;
    let problem = if value.trim().is_empty() {
        "is empty".to_string()
    } else if value.chars().count() > max {
        format!("is {} characters long", value.chars().count())
    } else if value.chars().any(char::is_control) {
        "holds a control character (a line break, a tab, an escape)".to_string()
    } else {
        return Some(value.trim().to_string());
    };
    fields.problem(node.span, format!("registry.{key} {problem}"), help);
    None
}

fn read_home(fields: &mut Fields, node: &Node) -> Option<String> {
    let help = "use the https URL of the organisation running the registry, e.g. \"https://acme.example/agents\"";
    let url = fields.string(node, "registry.home must be a string", help)?;
    let problem = base_url_problem(url).or_else(|| crate::rules::url_problem(url));
    match problem {
        None => Some(url.to_string()),
        Some(problem) => {
            fields.problem(node.span, format!("registry.home {problem}"), help);
            None
        }
    }
}

/// A relative path of plain names (letters, digits, `.`, `_`, `-`) ending in `.svg`.
fn read_logo_path(fields: &mut Fields, node: &Node) -> Option<String> {
    let help =
        "name an SVG file inside the registry root, e.g. \"logo.svg\" or \"assets/logo.svg\"";
    let path = fields.string(node, "registry.logo must be a string", help)?;
    let plain = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && !part.starts_with('-')
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    let problem = if !path.to_ascii_lowercase().ends_with(".svg") {
        "is not an `.svg` file"
    } else if !path.split('/').all(plain) {
        "is not a relative path of plain names inside the registry"
    } else {
        return Some(path.to_string());
    };
    let shown = path.escape_debug();
    fields.problem(
        node.span,
        format!("registry.logo `{shown}` {problem}"),
        help,
    );
    None
}

/// Read the logo below `root` (at most the icon size limit, no link followed) and keep it
/// when it passes the icons' safety rules; every problem is a finding naming the logo.
pub(super) fn load_logo(root: &Path, identity: &mut Identity) -> Vec<Diagnostic> {
    let Some(path) = identity.logo.clone() else {
        return Vec::new();
    };
    let bytes = match acp_registry_core::fs::read_capped(root, Path::new(&path), MAX_ICON_BYTES) {
        Ok(bytes) => bytes,
        Err(e) => {
            let finding = read_failure(&e, &path);
            let help = format!("`registry.logo` in acp-registry.jsonc names {path}");
            let help = finding.help.clone().unwrap_or(help);
            return vec![finding.help(help)];
        }
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        let finding = Diagnostic::new(Code::IconXml, "the registry's logo is not valid UTF-8");
        return vec![finding.in_file(&path).help("save the SVG as UTF-8")];
    };
    // What the site cannot show safely; size and colour rules are for agents' icons.
    let unsafe_findings: Vec<Diagnostic> = check_icon(&path, text)
        .into_iter()
        .filter(|d| matches!(d.code, Code::IconXml | Code::IconRoot | Code::IconUnsafe))
        .collect();
    if unsafe_findings.is_empty() {
        identity.logo_svg = Some(bytes);
    }
    unsafe_findings
}

/// `base-url-public`: this registry publishes under the public ACP registry's URL (set, or
/// the default when `base_url` is absent) and does not say it is the public registry. At the
/// `base_url` value, else at the start of the file. Asked only of a configuration file that
/// exists ([`super::Config::load`]).
pub(super) fn public_base_url_finding(
    source: &SourceFile,
    base_url: &str,
    identity: &Identity,
) -> Option<Diagnostic> {
    if identity.public || !is_public_url(base_url) {
        return None;
    }
    let root = jsonc::parse(&source.text).ok()?;
    let member = root
        .as_object()
        .and_then(|members| members.iter().find(|m| m.key == "base_url"));
    let (span, message) = match member {
        Some(m) => (
            m.value.span,
            "base_url is the public ACP registry's URL: this registry's icon URLs and links would point where its files are never published",
        ),
        None => (
            Span::new(root.span.start, root.span.start + 1),
            "base_url is not set, so the public ACP registry's URL is used: this registry's icon URLs and links would point where its files are never published",
        ),
    };
    let mut finding = Diagnostic::new(Code::BaseUrlPublic, message)
        .at(source, span)
        .help("set `\"base_url\": \"https://<your host>/registry/v1/latest\"` in acp-registry.jsonc (the public URL `dist/` is served under), or run `acp-registry init --base-url URL` in a new registry; only the public ACP registry itself sets `\"registry\": {\"public\": true}`");
    finding.severity = Severity::Warning;
    Some(finding)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`read_identity`] and the top level make of a configuration: the identity, the
    /// `base_url` it sets (else the default) and the findings.
    struct Parsed {
        identity: Identity,
        base_url: String,
        source: SourceFile,
    }

    fn parse(text: &str) -> (Parsed, Vec<Diagnostic>) {
        let source = SourceFile::new("acp-registry.jsonc", text.to_string());
        let root = jsonc::parse(&source.text).unwrap();
        let mut fields = Fields::new(&source, Code::ConfigInvalid);
        let mut identity = Identity::default();
        let mut base_url = "https://cdn.agentclientprotocol.com/registry/v1/latest".to_string();
        for member in root.as_object().unwrap() {
            match member.key.as_str() {
                "registry" => read_identity(&mut fields, &member.value, &mut identity),
                "base_url" => base_url = member.value.as_str().unwrap().to_string(),
                _ => {}
            }
        }
        let findings = fields.findings;
        let parsed = Parsed {
            identity,
            base_url,
            source,
        };
        (parsed, findings)
    }

    #[test]
    fn every_identity_key_is_read() {
        let (config, findings) = parse(
            r#"{"base_url": "https://agents.acme.example/v1",
                "registry": {"name": " Acme Agents ", "description": "Approved agents.",
                "home": "https://acme.example", "logo": "assets/logo.svg",
                "footer": "Run by Acme IT: https://acme.example/help"}}"#,
        );
        assert!(findings.is_empty(), "{findings:?}");
        let identity = &config.identity;
        assert_eq!(identity.name(), "Acme Agents");
        assert_eq!(identity.description.as_deref(), Some("Approved agents."));
        assert_eq!(identity.home.as_deref(), Some("https://acme.example"));
        assert_eq!(identity.logo.as_deref(), Some("assets/logo.svg"));
        assert!(identity.footer.as_deref().unwrap().starts_with("Run by"));
        assert!(!identity.public);
        assert_eq!(Identity::default().name(), DEFAULT_NAME);
    }

    #[test]
    fn bad_identity_values_are_config_findings_at_their_value() {
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        let text = format!(
            r#"{{"base_url": "https://a.example",
"registry": {{"name": "{long}", "description": "a\u0007b", "home": "http://acme.example",
"logo": "../logo.svg", "footer": "", "public": "yes", "nme": 1}}}}"#
        );
        let (config, findings) = parse(&text);
        let found: Vec<(&str, usize, String)> = findings
            .iter()
            .map(|d| (d.code.as_str(), d.line(), d.message.clone()))
            .collect();
        let messages: Vec<&str> = found.iter().map(|f| f.2.as_str()).collect();
        assert!(
            found.iter().all(|f| f.0 == "config-invalid" && f.1 >= 2),
            "{found:?}"
        );
        assert!(
            messages[0].starts_with("registry.name is 81 characters"),
            "{messages:?}"
        );
        assert!(messages[1].contains("control character"), "{messages:?}");
        assert!(messages[2].contains("only https"), "{messages:?}");
        assert!(messages[3].contains("not a relative path"), "{messages:?}");
        assert_eq!(messages[4], "registry.footer is empty");
        assert_eq!(messages[5], "registry.public must be true or false");
        assert_eq!(messages[6], "unknown key `nme`");
        assert_eq!(config.identity, Identity::default());
    }

    #[test]
    fn base_url_public_fires_for_the_public_host_unless_the_registry_is_the_public_one() {
        let finding = |text: &str| {
            let (config, findings) = parse(text);
            assert!(findings.is_empty(), "{findings:?}");
            public_base_url_finding(&config.source, &config.base_url, &config.identity)
        };
        let codes = |text: &str| -> Vec<(String, usize, usize)> {
            finding(text)
                .iter()
                .map(|d| (d.code.as_str().to_string(), d.line(), d.column()))
                .collect()
        };
        let public = |c: &str| (c.to_string(), 1, 14);
        assert_eq!(
            codes(r#"{"base_url": "https://cdn.agentclientprotocol.com/registry/v1/latest"}"#),
            [public("base-url-public")]
        );
        assert_eq!(
            codes(r#"{"base_url": "https://CDN.AgentClientProtocol.com/registry/v1/latest/"}"#),
            [public("base-url-public")]
        );
        // Absent: the default is the public URL; reported at the file's start.
        assert_eq!(
            codes("{\"severity\": {}}"),
            [("base-url-public".to_string(), 1, 1)]
        );
        assert!(codes(r#"{"base_url": "https://agents.acme.example/registry"}"#).is_empty());
        assert!(codes(r#"{"registry": {"public": true}}"#).is_empty());
        let found = finding("{}").unwrap();
        assert_eq!(found.severity, Severity::Warning);
        assert!(found.help.as_deref().unwrap().contains("\"base_url\""));
    }

    #[test]
    fn names_are_bounded_single_lines() {
        assert_eq!(name_problem("Acme Agents"), None);
        assert!(name_problem(" ").is_some());
        assert!(name_problem("a\nb").is_some());
        assert!(name_problem(&"x".repeat(MAX_NAME_CHARS + 1)).is_some());
    }
}
