//! `acp-registry.jsonc`: the optional configuration at the registry root.
//!
//! ```jsonc
//! {
//!   "base_url": "https://cdn.example.com/registry/v1/latest",
//!   "severity": { "license-url-missing": "error", "sha256-missing": "off" },
//!   "exemptions": { "old-agent": ["license-url-missing"] },
//!   "required_os": ["darwin", "linux", "windows"],
//!   "publish_quarantined": true,
//!   "online": { "npm_registry": "https://registry.npmjs.org", "pypi": "https://pypi.org" },
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

use std::collections::BTreeSet;
use std::path::Path;

use super::variants::{Channel, Output, Patch};
use crate::diagnostics::{Diagnostic, Severity};
use crate::manifest::names::file_name_problem;
use crate::manifest::{self, Node};
use crate::online::EndpointOverrides;
use crate::rules::{is_enforced, nearest, read_failure, Code, Level, Policy, DEFAULT_REQUIRED_OS};
use crate::source::{SourceFile, Span};

pub const CONFIG_FILE: &str = "acp-registry.jsonc";
/// Size limit of the configuration file (room for thousands of exemptions).
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
pub const DEFAULT_BASE_URL: &str = "https://cdn.agentclientprotocol.com/registry/v1/latest";
const KEYS: [&str; 9] = [
    "$schema",
    "online",
    "verify",
    "base_url",
    "severity",
    "exemptions",
    "required_os",
    "publish_quarantined",
    "outputs",
];
const OUTPUT_KEYS: [&str; 6] = [
    "file",
    "include",
    "exclude",
    "channel",
    "patches",
    "embed_icons",
];
const PATCH_KEYS: [&str; 3] = ["id", "append_args", "set"];
/// Fields a patch may not set: they identify the agent or are chosen by `channel`.
const PATCH_FORBIDDEN: [&str; 5] = ["id", "version", "distribution", "preview", "$schema"];
/// Names in `dist/` that outputs may not take (compared ignoring case).
const RESERVED_FILES: [&str; 3] = ["agent.schema.json", "registry.schema.json", "SHA256SUMS"];
const OS_FAMILIES: [&str; 3] = ["darwin", "linux", "windows"];

#[derive(Debug, Clone)]
pub struct Config {
    pub policy: Policy,
    pub base_url: String,
    pub publish_quarantined: bool,
    /// Registry files `build` writes (default: one `registry.json`).
    pub outputs: Vec<Output>,
    /// The file, when one exists (findings point into it).
    pub source: Option<SourceFile>,
    /// Ids named in the file, with their spans, checked against the registry later.
    pub named_ids: Vec<(String, Span)>,
    /// `online`: base URLs of npm, PyPI and the GitHub API (flags override them).
    pub online: EndpointOverrides,
    /// `verify.auth_types`: auth types an agent must offer one of (`None`: the default).
    pub verify_auth_types: Option<Vec<String>>,
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
            Diagnostic::new(Code::ConfigInvalid, message)
                .at(self.source, span)
                .help(help),
        );
    }

    /// `code` is enforced by `build`: the override is refused (and ignored).
    fn enforced(&mut self, code: Code, span: Span, what: &str) {
        self.invalid(
            span,
            format!("`{code}` cannot be {what}: `build` refuses what it reports whatever the configuration says"),
            "remove this setting and fix the findings instead; `acp-registry explain config-invalid` lists the codes that stay errors",
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
                    Diagnostic::new(
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
        // Only absence means defaults: a link or a special file is reported by reading.
        if matches!(crate::fs::kind(&root.join(CONFIG_FILE)), Ok(None)) {
            return (Config::default(), Vec::new());
        }
        let bytes = crate::fs::read_capped(root, Path::new(CONFIG_FILE), MAX_CONFIG_BYTES);
        let text = match bytes.map(String::from_utf8) {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => {
                return (
                    Config::default(),
                    vec![Diagnostic::new(
                        Code::ConfigSyntax,
                        format!("{CONFIG_FILE} is not valid UTF-8"),
                    )
                    .in_file(CONFIG_FILE)
                    .help("re-save it as UTF-8")],
                )
            }
            Err(e) => return (Config::default(), vec![read_failure(&e, CONFIG_FILE)]),
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
                let d =
                    Diagnostic::new(Code::ConfigSyntax, format!("invalid JSONC: {}", e.message))
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
                    Some(url) => match base_url_problem(url) {
                        None => config.base_url = url.trim_end_matches('/').to_string(),
                        Some(problem) => reader.invalid(
                            value.span,
                            format!("base_url {problem}"),
                            "use the https URL the registry's files are published under, e.g. \"https://cdn.example.com/registry/v1/latest\"",
                        ),
                    },
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
                "online" => config.online = read_online(&mut reader, value),
                "verify" => config.verify_auth_types = read_verify(&mut reader, value),
                "outputs" => {
                    let (outputs, ids) = read_outputs(&mut reader, value);
                    config.outputs = outputs;
                    config.named_ids.extend(ids);
                }
                other => unknown_key(&mut reader, other, member.key_span, &KEYS),
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
                let mut d = Diagnostic::new(
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

/// `"online": {"npm_registry": URL, "pypi": URL, "github_api": URL}`. Plain http is accepted
/// here (local mirrors); the network layer still refuses it outside tests.
fn read_online(reader: &mut Reader, node: &Node) -> EndpointOverrides {
    let mut out = EndpointOverrides::default();
    let Some(members) = node.as_object() else {
        reader.invalid(
            node.span,
            "online must be an object",
            "write `{\"npm_registry\": \"https://…\", \"pypi\": \"https://…\", \"github_api\": \"https://…\"}`",
        );
        return out;
    };
    for member in members {
        let slot = match member.key.as_str() {
            "npm_registry" => &mut out.npm,
            "pypi" => &mut out.pypi,
            "github_api" => &mut out.github_api,
            other => {
                unknown_key(
                    reader,
                    other,
                    member.key_span,
                    &["npm_registry", "pypi", "github_api"],
                );
                continue;
            }
        };
        match member.value.as_str().filter(|u| is_base_url(u)) {
            Some(url) => *slot = Some(url.trim_end_matches('/').to_string()),
            None => reader.invalid(
                member.value.span,
                format!("online.{} must be an absolute http(s) URL", member.key),
                "write the service's base URL, e.g. `https://registry.npmjs.org`",
            ),
        }
    }
    out
}

/// `"verify": {"auth_types": ["agent", "terminal"]}` (an empty list accepts any answer).
fn read_verify(reader: &mut Reader, node: &Node) -> Option<Vec<String>> {
    const TYPES: [&str; 3] = ["agent", "terminal", "env_var"];
    let help =
        "write `{\"auth_types\": [\"agent\", \"terminal\"]}` (types: agent, terminal, env_var)";
    let Some(members) = node.as_object() else {
        reader.invalid(node.span, "verify must be an object", help);
        return None;
    };
    let mut out = None;
    for member in members {
        if member.key != "auth_types" {
            unknown_key(reader, &member.key, member.key_span, &["auth_types"]);
            continue;
        }
        let items = member.value.as_array().unwrap_or_default();
        let valid: Vec<String> = items
            .iter()
            .filter_map(|i| i.as_str())
            .filter(|t| TYPES.contains(t))
            .map(str::to_string)
            .collect();
        if member.value.as_array().is_none() || valid.len() != items.len() {
            reader.invalid(
                member.value.span,
                "verify.auth_types must be a list of auth types",
                help,
            );
            continue;
        }
        out = Some(valid);
    }
    out
}

fn is_base_url(text: &str) -> bool {
    url::Url::parse(text).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https") && u.host().is_some() && u.username().is_empty()
    })
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
        if is_enforced(code) && level != Level::On(Severity::Error) {
            reader.enforced(code, member.value.span, "lowered");
            continue;
        }
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
                Some(name) => match reader.code(name, item.span) {
                    Some(code) if is_enforced(code) => reader.enforced(code, item.span, "exempted"),
                    Some(code) => {
                        codes.insert(code);
                    }
                    None => {}
                },
                None => reader.invalid(
                    item.span,
                    "a rule code must be a string",
                    "write the code in quotes",
                ),
            }
        }
    }
}

fn unknown_key(reader: &mut Reader, key: &str, span: Span, known: &[&str]) {
    let help = match nearest(key, known.iter().copied()) {
        Some(n) => format!("did you mean `{n}`?"),
        None => format!("known keys: {}", known.join(", ")),
    };
    reader.invalid(span, format!("unknown key `{key}`"), help);
}

fn string_set(
    reader: &mut Reader,
    node: &Node,
    what: &str,
    ids: &mut Vec<(String, Span)>,
) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    let Some(items) = node.as_array() else {
        reader.invalid(
            node.span,
            format!("{what} must be a list of ids"),
            "write `[\"<id>\", …]`",
        );
        return set;
    };
    for item in items {
        match item.as_str() {
            Some(id) => {
                ids.push((id.to_string(), item.span));
                set.insert(id.to_string());
            }
            None => reader.invalid(
                item.span,
                "an id must be a string",
                "write the id in quotes",
            ),
        }
    }
    set
}

/// `outputs`: returns the outputs and the ids they name (checked against the registry later).
fn read_outputs(reader: &mut Reader, node: &Node) -> (Vec<Output>, Vec<(String, Span)>) {
    let mut ids = Vec::new();
    let Some(items) = node.as_array() else {
        reader.invalid(
            node.span,
            "outputs must be a list of objects",
            "write `[{\"file\": \"registry.json\"}, …]`",
        );
        return (Output::default_outputs(), ids);
    };
    let mut outputs: Vec<Output> = Vec::new();
    for item in items {
        let Some(members) = item.as_object() else {
            reader.invalid(
                item.span,
                "an output must be an object",
                "write `{\"file\": \"registry.json\"}`",
            );
            continue;
        };
        let mut output = Output::default();
        for member in members {
            let value = &member.value;
            match member.key.as_str() {
                "file" => match value.as_str() {
                    Some(name) => match output_name_problem(name) {
                        None => output.file = name.to_string(),
                        Some(problem) => reader.invalid(
                            value.span,
                            format!("output file `{}` {problem}", name.escape_debug()),
                            format!(
                                "use a plain file name ending in .json, e.g. \"registry.json\"; not a path, and not one of {}",
                                RESERVED_FILES.join(", ")
                            ),
                        ),
                    },
                    None => reader.invalid(
                        value.span,
                        "file must be a string",
                        "write the file name in quotes, e.g. \"registry.json\"",
                    ),
                },
                "include" => output.include = Some(string_set(reader, value, "include", &mut ids)),
                "exclude" => output.exclude = string_set(reader, value, "exclude", &mut ids),
                "channel" => match value.as_str() {
                    Some("stable") => output.channel = Channel::Stable,
                    Some("preview") => output.channel = Channel::Preview,
                    _ => reader.invalid(
                        value.span,
                        "channel must be \"stable\" or \"preview\"",
                        "write \"stable\" or \"preview\"",
                    ),
                },
                "patches" => output.patches = read_patches(reader, value, &mut ids),
                "embed_icons" => match value.value {
                    manifest::NodeValue::Bool(embed) => output.embed_icons = embed,
                    _ => reader.invalid(
                        value.span,
                        "embed_icons must be true or false",
                        "write `\"embed_icons\": true` to add each icon as a data URI",
                    ),
                },
                other => unknown_key(reader, other, member.key_span, &OUTPUT_KEYS),
            }
        }
        if output.file.is_empty() {
            if item.get("file").is_none() {
                reader.invalid(
                    item.span,
                    "this output has no `file`",
                    "add `\"file\": \"registry.json\"`",
                );
            }
            continue;
        }
        // Windows and macOS file systems ignore case: those names would be one file.
        if let Some(other) = outputs
            .iter()
            .find(|o| o.file.eq_ignore_ascii_case(&output.file))
        {
            let span = item.get("file").map_or(item.span, |f| f.span);
            let message = if other.file == output.file {
                format!("two outputs write `{}`", output.file)
            } else {
                format!(
                    "outputs `{}` and `{}` differ only in case, so they are one file on Windows and macOS",
                    other.file, output.file
                )
            };
            reader.invalid(span, message, "give each output its own file name");
            continue;
        }
        outputs.push(output);
    }
    (outputs, ids)
}

/// Why `name` cannot be an output file of `build`, or `None`: a portable file name (every
/// operating system can create it), a plain `*.json`, and not a file `build` writes itself.
fn output_name_problem(name: &str) -> Option<String> {
    if let Some(problem) = file_name_problem(name) {
        return Some(format!("is not a portable file name: {problem}"));
    }
    if !name.ends_with(".json") || name.len() <= ".json".len() {
        return Some("is not a `*.json` file name".into());
    }
    if name.starts_with('.') {
        return Some("is hidden (it starts with a dot)".into());
    }
    if RESERVED_FILES.iter().any(|r| r.eq_ignore_ascii_case(name)) {
        return Some("is a file that build writes itself".into());
    }
    None
}

/// Why `url` cannot be the `base_url` (or `--base-url`) the published files live under, or
/// `None`: an absolute https URL without credentials, query or fragment, since file names
/// are appended to it.
pub fn base_url_problem(url: &str) -> Option<String> {
    if let Some(problem) = crate::rules::url_problem(url) {
        return Some(problem);
    }
    let parsed = url::Url::parse(url).ok()?;
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Some(format!(
            "`{url}` has a query or fragment; file names are appended to it"
        ));
    }
    None
}

fn read_patches(reader: &mut Reader, node: &Node, ids: &mut Vec<(String, Span)>) -> Vec<Patch> {
    let mut patches = Vec::new();
    let Some(items) = node.as_array() else {
        reader.invalid(
            node.span,
            "patches must be a list of objects",
            "write `[{\"id\": \"<id>\", \"set\": {…}}]`",
        );
        return patches;
    };
    for item in items {
        let Some(members) = item.as_object() else {
            reader.invalid(
                item.span,
                "a patch must be an object",
                "write `{\"id\": \"<id>\", …}`",
            );
            continue;
        };
        let mut patch = Patch::default();
        for member in members {
            let value = &member.value;
            match member.key.as_str() {
                "id" => match value.as_str() {
                    Some(id) => {
                        ids.push((id.to_string(), value.span));
                        patch.id = id.to_string();
                    }
                    None => {
                        reader.invalid(value.span, "id must be a string", "write the id in quotes")
                    }
                },
                "append_args" => {
                    let Some(kinds) = value.as_object() else {
                        reader.invalid(
                            value.span,
                            "append_args must be an object",
                            "write `{\"npx\": [\"--flag\"]}`",
                        );
                        continue;
                    };
                    for kind in kinds {
                        if !crate::manifest::DISTRIBUTION_KINDS.contains(&kind.key.as_str()) {
                            reader.invalid(
                                kind.key_span,
                                format!("unknown distribution `{}`", kind.key),
                                "use binary, npx or uvx",
                            );
                            continue;
                        }
                        let args: Option<Vec<String>> = kind.value.as_array().and_then(|a| {
                            a.iter().map(|n| n.as_str().map(str::to_string)).collect()
                        });
                        match args {
                            Some(args) => {
                                patch.append_args.insert(kind.key.clone(), args);
                            }
                            None => reader.invalid(
                                kind.value.span,
                                "arguments must be a list of strings",
                                "write `[\"--flag\"]`",
                            ),
                        }
                    }
                }
                "set" => {
                    let Some(fields) = value.as_object() else {
                        reader.invalid(
                            value.span,
                            "set must be an object of field to value",
                            "write `{\"bundled\": true}`",
                        );
                        continue;
                    };
                    for field in fields {
                        if PATCH_FORBIDDEN.contains(&field.key.as_str()) {
                            reader.invalid(
                                field.key_span,
                                format!("a patch cannot set `{}`", field.key),
                                "versions and distributions come from the manifest and the output's channel",
                            );
                            continue;
                        }
                        patch.set.insert(field.key.clone(), field.value.to_json());
                    }
                }
                other => unknown_key(reader, other, member.key_span, &PATCH_KEYS),
            }
        }
        if patch.id.is_empty() {
            if item.get("id").is_none() {
                reader.invalid(
                    item.span,
                    "this patch has no `id`",
                    "add `\"id\": \"<id>\"`",
                );
            }
            continue;
        }
        patches.push(patch);
    }
    patches
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
}
