//! `acp-registry.jsonc`: the optional configuration at the registry root.
//!
//! ```jsonc
//! {
//!   "base_url": "https://cdn.example.com/registry/v1/latest",
//!   "severity": { "license-url-missing": "error", "sha256-missing": "off" },
//!   "exemptions": { "old-agent": ["license-url-missing"] },
//!   "required_os": ["darwin", "linux", "windows"],
//!   "publish_quarantined": true
//! }
//! ```
//!
//! Every problem is a `config-*` finding pointing into the file; a broken configuration never
//! silently falls back to defaults for the keys that were readable.

use std::collections::BTreeSet;
use std::path::Path;

use crate::diagnostics::{Diagnostic, Severity};
use crate::manifest::{self, Node};
use crate::rules::{finding, nearest, Code, Level, Policy, DEFAULT_REQUIRED_OS};
use crate::source::{SourceFile, Span};

pub const CONFIG_FILE: &str = "acp-registry.jsonc";
pub const DEFAULT_BASE_URL: &str = "https://cdn.agentclientprotocol.com/registry/v1/latest";
const KEYS: [&str; 6] = [
    "$schema",
    "base_url",
    "severity",
    "exemptions",
    "required_os",
    "publish_quarantined",
];
const OS_FAMILIES: [&str; 3] = ["darwin", "linux", "windows"];

#[derive(Debug, Clone)]
pub struct Config {
    pub policy: Policy,
    pub base_url: String,
    pub publish_quarantined: bool,
    /// The file, when one exists (findings point into it).
    pub source: Option<SourceFile>,
    /// Ids named in the file, with their spans, checked against the registry later.
    pub named_ids: Vec<(String, Span)>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            policy: Policy::default(),
            base_url: DEFAULT_BASE_URL.into(),
            publish_quarantined: true,
            source: None,
            named_ids: Vec::new(),
        }
    }
}

struct Reader<'a> {
    source: &'a SourceFile,
    diagnostics: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn invalid(&mut self, span: Span, message: impl Into<String>, help: impl Into<String>) {
        self.diagnostics.push(
            finding(Code::ConfigInvalid, message)
                .at(self.source, span)
                .help(help),
        );
    }

    fn code(&mut self, name: &str, span: Span) -> Option<Code> {
        match name.parse::<Code>() {
            Ok(code) => Some(code),
            Err(e) => {
                let help = match e.nearest {
                    Some(n) => format!(
                        "did you mean `{n}`? `acp-registry explain --list` prints every code"
                    ),
                    None => "`acp-registry explain --list` prints every code".into(),
                };
                self.diagnostics.push(
                    finding(
                        Code::ConfigUnknownCode,
                        format!("unknown rule code `{name}`"),
                    )
                    .at(self.source, span)
                    .help(help),
                );
                None
            }
        }
    }
}

impl Config {
    /// Read the configuration of the registry at `root`. Missing file: defaults, no findings.
    pub fn load(root: &Path) -> (Config, Vec<Diagnostic>) {
        let path = root.join(CONFIG_FILE);
        // A dangling symlink is reported as unreadable, not silently ignored.
        if std::fs::symlink_metadata(&path).is_err() {
            return (Config::default(), Vec::new());
        }
        let text = match std::fs::read(&path).map(String::from_utf8) {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => {
                return (
                    Config::default(),
                    vec![finding(
                        Code::ConfigSyntax,
                        format!("{CONFIG_FILE} is not valid UTF-8"),
                    )
                    .in_file(CONFIG_FILE)
                    .help("re-save it as UTF-8")],
                )
            }
            Err(e) => {
                return (
                    Config::default(),
                    vec![finding(
                        Code::FileUnreadable,
                        format!("cannot read {CONFIG_FILE}: {e}"),
                    )
                    .in_file(CONFIG_FILE)],
                )
            }
        };
        Self::parse(SourceFile::new(CONFIG_FILE, text))
    }

    pub fn parse(source: SourceFile) -> (Config, Vec<Diagnostic>) {
        let mut config = Config {
            source: Some(source.clone()),
            ..Config::default()
        };
        let root = match manifest::parse(&source.text) {
            Ok(root) => root,
            Err(e) => {
                let d = finding(Code::ConfigSyntax, format!("invalid JSONC: {}", e.message))
                    .at(&source, e.span);
                return (config, vec![d]);
            }
        };
        let mut reader = Reader {
            source: &source,
            diagnostics: Vec::new(),
        };
        let Some(members) = root.as_object() else {
            reader.invalid(
                root.span,
                "the configuration must be an object",
                "write `{ … }` with the keys documented in the README",
            );
            return (config, reader.diagnostics);
        };
        for dup in root.duplicate_keys() {
            reader.invalid(
                dup.span,
                format!("key `{}` appears more than once", dup.key),
                "remove one of them",
            );
        }
        for member in members {
            let value = &member.value;
            match member.key.as_str() {
                "$schema" => {}
                "base_url" => match value.as_str() {
                    Some(url) if crate::rules::url_problem(url).is_none() => {
                        config.base_url = url.trim_end_matches('/').to_string();
                    }
                    Some(url) => reader.invalid(
                        value.span,
                        format!("base_url `{url}` is not an absolute https URL"),
                        "use the https URL the registry's files are published under",
                    ),
                    None => {
                        reader.invalid(value.span, "base_url must be a string", "use an https URL")
                    }
                },
                "publish_quarantined" => match value.value {
                    manifest::NodeValue::Bool(b) => config.publish_quarantined = b,
                    _ => reader.invalid(
                        value.span,
                        "publish_quarantined must be true or false",
                        "write `true` or `false`",
                    ),
                },
                "severity" => read_severity(&mut reader, value, &mut config.policy),
                "exemptions" => read_exemptions(&mut reader, value, &mut config),
                "required_os" => read_required_os(&mut reader, value, &mut config.policy),
                other => {
                    let help = match nearest(other, KEYS) {
                        Some(n) => format!("did you mean `{n}`?"),
                        None => format!("known keys: {}", KEYS.join(", ")),
                    };
                    reader.invalid(member.key_span, format!("unknown key `{other}`"), help);
                }
            }
        }
        (config, reader.diagnostics)
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
                let mut d = finding(
                    Code::ConfigUnknownId,
                    format!("`{id}` is not an entry of this registry"),
                )
                .at(source, *span);
                if let Some(n) = nearest(id, known.iter().copied()) {
                    d = d.help(format!("did you mean `{n}`?"));
                }
                d
            })
            .collect()
    }
}

fn read_severity(reader: &mut Reader, node: &Node, policy: &mut Policy) {
    let Some(members) = node.as_object() else {
        reader.invalid(
            node.span,
            "severity must be an object of rule code to level",
            "write `{\"<code>\": \"error\" | \"warning\" | \"note\" | \"off\"}`",
        );
        return;
    };
    for member in members {
        let Some(code) = reader.code(&member.key, member.key_span) else {
            continue;
        };
        let level = match member.value.as_str() {
            Some("error") => Level::On(Severity::Error),
            Some("warning") => Level::On(Severity::Warning),
            Some("note") => Level::On(Severity::Note),
            Some("off") => Level::Off,
            _ => {
                reader.invalid(
                    member.value.span,
                    format!("invalid level for `{code}`"),
                    "use \"error\", \"warning\", \"note\" or \"off\"",
                );
                continue;
            }
        };
        policy.severity.insert(code, level);
    }
}

fn read_exemptions(reader: &mut Reader, node: &Node, config: &mut Config) {
    let Some(members) = node.as_object() else {
        reader.invalid(
            node.span,
            "exemptions must be an object of id to rule codes",
            "write `{\"<id>\": [\"<code>\", …]}`",
        );
        return;
    };
    for member in members {
        let Some(items) = member.value.as_array() else {
            reader.invalid(
                member.value.span,
                format!(
                    "exemptions for `{}` must be a list of rule codes",
                    member.key
                ),
                "write `[\"<code>\", …]`",
            );
            continue;
        };
        config.named_ids.push((member.key.clone(), member.key_span));
        let codes = config
            .policy
            .exemptions
            .entry(member.key.clone())
            .or_default();
        for item in items {
            match item.as_str() {
                Some(name) => {
                    if let Some(code) = reader.code(name, item.span) {
                        codes.insert(code);
                    }
                }
                None => reader.invalid(
                    item.span,
                    "a rule code must be a string",
                    "write the code in quotes",
                ),
            }
        }
    }
}

fn read_required_os(reader: &mut Reader, node: &Node, policy: &mut Policy) {
    let Some(items) = node.as_array() else {
        reader.invalid(
            node.span,
            "required_os must be a list",
            format!("e.g. {:?}", DEFAULT_REQUIRED_OS),
        );
        return;
    };
    let mut families = Vec::new();
    for item in items {
        match item.as_str() {
            Some(os) if OS_FAMILIES.contains(&os) => families.push(os.to_string()),
            _ => reader.invalid(
                item.span,
                "unknown OS family",
                "use \"darwin\", \"linux\" or \"windows\"",
            ),
        }
    }
    policy.required_os = families;
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn every_problem_is_a_config_finding() {
        let (_, diags) = Config::parse(SourceFile::new(
            CONFIG_FILE,
            r#"{"severty": {}, "severity": {"icon-colour": "error", "schema": "loud"}, "required_os": ["beos"]}"#,
        ));
        let codes: Vec<&str> = diags.iter().map(|d| d.code).collect();
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
}
