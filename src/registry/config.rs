//! `acp-registry.jsonc`: the optional configuration at the registry root.
//!
//! ```jsonc
//! {
//!   "base_url": "https://cdn.example.com/registry/v1/latest",
//!   "severity": { "license-url-missing": "error", "sha256-missing": "off" },
//!   "exemptions": { "old-agent": ["license-url-missing"] },
//!   "required_os": ["darwin", "linux", "windows"],
//!   "require_sha256": "changed",
//!   "publish_quarantined": true,
//!   "online": { "npm_registry": "https://registry.npmjs.org", "pypi": "https://pypi.org" },
//!   "update": { "min_age_days": 7 },
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

use std::collections::BTreeSet;
use std::path::Path;

use super::variants::{Channel, Output, Patch};
use crate::diagnostics::{Diagnostic, Severity};
use crate::manifest::fields::{Fields, Keys};
use crate::manifest::names::file_name_problem;
use crate::manifest::repository;
use crate::manifest::{jsonc, Member, Node, NodeValue, DISTRIBUTION_KINDS};
use crate::online::{EndpointOverrides, ProvenanceConfig};
use crate::rules::{
    did_you_mean, is_enforced, read_failure, Code, Level, Policy, RequireSha256,
    DEFAULT_REQUIRED_OS,
};
use crate::source::{SourceFile, Span};

/// The configuration file name at the registry root.
pub(crate) const CONFIG_FILE: &str = "acp-registry.jsonc";
/// Size limit of the configuration file (room for thousands of exemptions).
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// Where published files live when `base_url` is not set.
pub(crate) const DEFAULT_BASE_URL: &str = "https://cdn.agentclientprotocol.com/registry/v1/latest";
/// Fields a patch may not set: they identify the agent or are chosen by `channel`.
const PATCH_FORBIDDEN: [&str; 5] = ["id", "version", "distribution", "preview", "$schema"];
/// Names in `dist/` that outputs may not take (compared ignoring case).
const RESERVED_FILES: [&str; 5] = [
    "agent.schema.json",
    "registry.schema.json",
    "SHA256SUMS",
    super::evidence::VERIFICATION_FILE,
    super::evidence::VERIFICATION_SCHEMA_FILE,
];
const OS_FAMILIES: [&str; 3] = ["darwin", "linux", "windows"];
/// The longest release-age cooldown `update.min_age_days` (and `update --min-age`) takes.
pub const MAX_MIN_AGE_DAYS: u32 = 365;

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
    /// `provenance`: repositories accepted besides each manifest's `repository`.
    pub provenance: ProvenanceConfig,
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
            verify_max_age_days: super::evidence::DEFAULT_MAX_AGE_DAYS,
            update_min_age_days: 0,
            provenance: ProvenanceConfig::default(),
        }
    }
}

/// `code` is enforced by `build`: the override is refused (and ignored).
fn refuse_enforced(fields: &mut Fields, code: Code, span: Span, what: &str) {
    fields.problem(
        span,
        format!("`{code}` cannot be {what}: `build` refuses what it reports whatever the configuration says"),
        "remove this setting and fix the findings instead; `acp-registry explain config-invalid` lists the codes that stay errors",
    );
}

/// The rule code `name`, or a `config-unknown-code` finding suggesting the nearest.
fn rule_code(fields: &mut Fields, name: &str, span: Span) -> Option<Code> {
    let e = match name.parse::<Code>() {
        Ok(code) => return Some(code),
        Err(e) => e,
    };
    let help = match e.nearest {
        Some(n) => format!("did you mean `{n}`? `acp-registry explain --list` prints every code"),
        None => "`acp-registry explain --list` prints every code".into(),
    };
    let finding = fields.at(
        Code::ConfigUnknownCode,
        span,
        format!("unknown rule code `{name}`"),
    );
    fields.findings.push(finding.help(help));
    None
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
                let finding = Diagnostic::new(
                    Code::ConfigSyntax,
                    format!("{CONFIG_FILE} is not valid UTF-8"),
                );
                let finding = finding.in_file(CONFIG_FILE).help("re-save it as UTF-8");
                return (Config::default(), vec![finding]);
            }
            Err(e) => return (Config::default(), vec![read_failure(&e, CONFIG_FILE)]),
        };
        Self::parse(SourceFile::new(CONFIG_FILE, text))
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
        for m in keys.get("provenance") {
            self.provenance = read_provenance(fields, &m.value, &mut self.named_ids);
        }
        for m in keys.get("verify") {
            read_verify(fields, &m.value, self);
        }
        for m in keys.get("update") {
            read_update(fields, &m.value, &mut self.update_min_age_days);
        }
        for m in keys.get("base_url") {
            read_base_url(fields, &m.value, &mut self.base_url);
        }
        for m in keys.get("severity") {
            read_severity(fields, &m.value, &mut self.policy);
        }
        for m in keys.get("exemptions") {
            read_exemptions(fields, &m.value, self);
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
        for m in keys.get("outputs") {
            let (outputs, ids) = read_outputs(fields, &m.value);
            self.outputs = outputs;
            self.named_ids.extend(ids);
        }
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

fn read_base_url(fields: &mut Fields, value: &Node, base_url: &mut String) {
    let Some(url) = fields.string(value, "base_url must be a string", "use an https URL") else {
        return;
    };
    match base_url_problem(url) {
        None => *base_url = url.trim_end_matches('/').to_string(),
        Some(problem) => fields.problem(
            value.span,
            format!("base_url {problem}"),
            "use the https URL the registry's files are published under, e.g. \"https://cdn.example.com/registry/v1/latest\"",
        ),
    }
}

/// `"online": {"npm_registry": URL, "pypi": URL, "github_api": URL}`. Plain http is accepted
/// here (local mirrors); the network layer still refuses it outside tests.
fn read_online(fields: &mut Fields, node: &Node) -> EndpointOverrides {
    let mut out = EndpointOverrides::default();
    let Some(members) = fields.object(
        node,
        "online must be an object",
        "write `{\"npm_registry\": \"https://…\", \"pypi\": \"https://…\", \"github_api\": \"https://…\"}`",
    ) else {
        return out;
    };
    let mut keys = Keys::new(members);
    let slots = [
        ("npm_registry", &mut out.npm),
        ("pypi", &mut out.pypi),
        ("github_api", &mut out.github_api),
    ];
    for (key, slot) in slots {
        for member in keys.get(key) {
            match member.value.as_str().filter(|u| is_base_url(u)) {
                Some(url) => *slot = Some(url.trim_end_matches('/').to_string()),
                None => fields.problem(
                    member.value.span,
                    format!("online.{key} must be an absolute http(s) URL"),
                    "write the service's base URL, e.g. `https://registry.npmjs.org`",
                ),
            }
        }
    }
    keys.finish(fields);
    out
}

/// `"provenance": {"release_repositories": {"<id>": ["owner/repo", "https://…", …]}}`: each
/// id is checked against the registry later; each repository must name one.
fn read_provenance(
    fields: &mut Fields,
    node: &Node,
    ids: &mut Vec<(String, Span)>,
) -> ProvenanceConfig {
    let help = "write `{\"release_repositories\": {\"<id>\": [\"owner/releases\"]}}`";
    let mut out = ProvenanceConfig::default();
    let Some(members) = fields.object(node, "provenance must be an object", help) else {
        return out;
    };
    let mut keys = Keys::new(members);
    for member in keys.get("release_repositories") {
        let message = "provenance.release_repositories must be an object of id to repositories";
        let Some(entries) = fields.object(&member.value, message, help) else {
            continue;
        };
        for entry in entries {
            ids.push((entry.key.clone(), entry.key_span));
            let repositories = read_repositories(fields, entry);
            out.release_repositories
                .entry(entry.key.clone())
                .or_default()
                .extend(repositories);
        }
    }
    keys.finish(fields);
    out
}

/// One id's list of repositories, each normalised; what names none is reported.
fn read_repositories(fields: &mut Fields, entry: &Member) -> Vec<repository::Repository> {
    let message = format!(
        "release repositories of `{}` must be a list of repositories",
        entry.key
    );
    let help = "write `[\"owner/releases\"]` or `[\"https://github.com/owner/releases\"]`";
    let Some(items) = fields.array(&entry.value, message, help) else {
        return Vec::new();
    };
    let named = fields.strings(items, "a repository must be a string", help);
    let mut out = Vec::new();
    for (text, span) in named {
        match repository::normalise(text) {
            Some(repository) => out.push(repository),
            None => fields.problem(
                span,
                format!("`{}` is not a repository", text.escape_debug()),
                "write `owner/repo` (on GitHub) or the repository's https URL, e.g. `https://gitlab.com/group/project`",
            ),
        }
    }
    out
}

/// `"verify": {"auth_types": ["agent", "terminal"], "max_age_days": 30}` (an empty
/// `auth_types` accepts any answer).
fn read_verify(fields: &mut Fields, node: &Node, config: &mut Config) {
    let help = "write `{\"auth_types\": [\"agent\", \"terminal\"], \"max_age_days\": 30}`";
    let Some(members) = fields.object(node, "verify must be an object", help) else {
        return;
    };
    let mut keys = Keys::new(members);
    for member in keys.get("auth_types") {
        if let Some(types) = read_auth_types(fields, &member.value) {
            config.verify_auth_types = Some(types);
        }
    }
    for member in keys.get("max_age_days") {
        if let Some(days) = read_days(fields, &member.value, "verify.max_age_days", 1) {
            config.verify_max_age_days = days;
        }
    }
    keys.finish(fields);
}

/// `verify.auth_types`: a list of auth types.
fn read_auth_types(fields: &mut Fields, value: &Node) -> Option<Vec<String>> {
    const TYPES: [&str; 3] = ["agent", "terminal", "env_var"];
    let items = value.as_array().unwrap_or_default();
    let valid: Vec<String> = items
        .iter()
        .filter_map(Node::as_str)
        .filter(|t| TYPES.contains(t))
        .map(str::to_string)
        .collect();
    if value.as_array().is_none() || valid.len() != items.len() {
        fields.problem(
            value.span,
            "verify.auth_types must be a list of auth types",
            "write `{\"auth_types\": [\"agent\", \"terminal\"]}` (types: agent, terminal, env_var)",
        );
        return None;
    }
    Some(valid)
}

/// A whole number of days from `min` to [`MAX_MIN_AGE_DAYS`] (`key` names it in the finding).
fn read_days(fields: &mut Fields, value: &Node, key: &str, min: u32) -> Option<u32> {
    let days = match &value.value {
        NodeValue::Number(raw) => raw.parse::<u32>().ok(),
        _ => None,
    };
    let days = days.filter(|d| (min..=MAX_MIN_AGE_DAYS).contains(d));
    if days.is_none() {
        fields.problem(
            value.span,
            format!("{key} must be a whole number of days"),
            format!("write a whole number of days from {min} to {MAX_MIN_AGE_DAYS}"),
        );
    }
    days
}

/// `"update": {"min_age_days": N}`: a whole number of days, 0 to [`MAX_MIN_AGE_DAYS`].
fn read_update(fields: &mut Fields, node: &Node, min_age_days: &mut u32) {
    let help = "write `{\"min_age_days\": 7}`";
    let Some(members) = fields.object(node, "update must be an object", help) else {
        return;
    };
    let mut keys = Keys::new(members);
    for member in keys.get("min_age_days") {
        if let Some(days) = read_days(fields, &member.value, "update.min_age_days", 0) {
            *min_age_days = days;
        }
    }
    keys.finish(fields);
}

fn is_base_url(text: &str) -> bool {
    url::Url::parse(text).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https") && u.host().is_some() && u.username().is_empty()
    })
}

fn read_severity(fields: &mut Fields, node: &Node, policy: &mut Policy) {
    let Some(members) = fields.object(
        node,
        "severity must be an object of rule code to level",
        "write `{\"<code>\": \"error\" | \"warning\" | \"note\" | \"off\"}`",
    ) else {
        return;
    };
    for member in members {
        let Some(code) = rule_code(fields, &member.key, member.key_span) else {
            continue;
        };
        let level = match member.value.as_str() {
            Some("error") => Level::On(Severity::Error),
            Some("warning") => Level::On(Severity::Warning),
            Some("note") => Level::On(Severity::Note),
            Some("off") => Level::Off,
            _ => {
                fields.problem(
                    member.value.span,
                    format!("invalid level for `{code}`"),
                    "use \"error\", \"warning\", \"note\" or \"off\"",
                );
                continue;
            }
        };
        if is_enforced(code) && level != Level::On(Severity::Error) {
            refuse_enforced(fields, code, member.value.span, "lowered");
            continue;
        }
        policy.severity.insert(code, level);
    }
}

fn read_exemptions(fields: &mut Fields, node: &Node, config: &mut Config) {
    let Some(members) = fields.object(
        node,
        "exemptions must be an object of id to rule codes",
        "write `{\"<id>\": [\"<code>\", …]}`",
    ) else {
        return;
    };
    for member in members {
        let Some(items) = fields.array(
            &member.value,
            format!(
                "exemptions for `{}` must be a list of rule codes",
                member.key
            ),
            "write `[\"<code>\", …]`",
        ) else {
            continue;
        };
        config.named_ids.push((member.key.clone(), member.key_span));
        let names = fields.strings(
            items,
            "a rule code must be a string",
            "write the code in quotes",
        );
        let codes = config
            .policy
            .exemptions
            .entry(member.key.clone())
            .or_default();
        for (name, span) in names {
            match rule_code(fields, name, span) {
                Some(code) if is_enforced(code) => refuse_enforced(fields, code, span, "exempted"),
                Some(code) => {
                    codes.insert(code);
                }
                None => {}
            }
        }
    }
}

/// A list of entry ids (`include`, `exclude`), each also kept in `ids` with its span.
fn id_set(
    fields: &mut Fields,
    node: &Node,
    what: &str,
    ids: &mut Vec<(String, Span)>,
) -> BTreeSet<String> {
    let message = format!("{what} must be a list of ids");
    let Some(items) = fields.array(node, message, "write `[\"<id>\", …]`") else {
        return BTreeSet::new();
    };
    let named = fields.strings(items, "an id must be a string", "write the id in quotes");
    ids.extend(named.iter().map(|(id, span)| (id.to_string(), *span)));
    named.into_iter().map(|(id, _)| id.to_string()).collect()
}

/// `outputs`: returns the outputs and the ids they name (checked against the registry later).
fn read_outputs(fields: &mut Fields, node: &Node) -> (Vec<Output>, Vec<(String, Span)>) {
    let mut ids = Vec::new();
    let Some(items) = fields.array(
        node,
        "outputs must be a list of objects",
        "write `[{\"file\": \"registry.json\"}, …]`",
    ) else {
        return (Output::default_outputs(), ids);
    };
    let mut outputs: Vec<Output> = Vec::new();
    for item in items {
        let Some(output) = read_output(fields, item, &mut ids) else {
            continue;
        };
        match same_file(&outputs, &output) {
            Some(message) => {
                let span = item.get("file").map_or(item.span, |f| f.span);
                fields.problem(span, message, "give each output its own file name");
            }
            None => outputs.push(output),
        }
    }
    (outputs, ids)
}

/// One output, or `None` (reported) when it has no usable `file`.
fn read_output(fields: &mut Fields, item: &Node, ids: &mut Vec<(String, Span)>) -> Option<Output> {
    let members = fields.object(
        item,
        "an output must be an object",
        "write `{\"file\": \"registry.json\"}`",
    )?;
    let mut output = Output::default();
    let mut keys = Keys::new(members);
    for m in keys.get("file") {
        read_output_file(fields, &m.value, &mut output.file);
    }
    for m in keys.get("include") {
        output.include = Some(id_set(fields, &m.value, "include", ids));
    }
    for m in keys.get("exclude") {
        output.exclude = id_set(fields, &m.value, "exclude", ids);
    }
    for m in keys.get("channel") {
        match m.value.as_str() {
            Some("stable") => output.channel = Channel::Stable,
            Some("preview") => output.channel = Channel::Preview,
            _ => fields.problem(
                m.value.span,
                "channel must be \"stable\" or \"preview\"",
                "write \"stable\" or \"preview\"",
            ),
        }
    }
    for m in keys.get("patches") {
        output.patches = read_patches(fields, &m.value, ids);
    }
    for m in keys.get("embed_icons") {
        let message = "embed_icons must be true or false";
        let help = "write `\"embed_icons\": true` to add each icon as a data URI";
        if let Some(embed) = fields.bool(&m.value, message, help) {
            output.embed_icons = embed;
        }
    }
    keys.finish(fields);
    if output.file.is_empty() {
        // An unusable `file` is already reported; only a missing one is reported here.
        let help = "add `\"file\": \"registry.json\"`";
        fields.required(item, "file", "this output has no `file`", help);
        return None;
    }
    Some(output)
}

fn read_output_file(fields: &mut Fields, value: &Node, file: &mut String) {
    let Some(name) = fields.string(
        value,
        "file must be a string",
        "write the file name in quotes, e.g. \"registry.json\"",
    ) else {
        return;
    };
    match output_name_problem(name) {
        None => *file = name.to_string(),
        Some(problem) => fields.problem(
            value.span,
            format!("output file `{}` {problem}", name.escape_debug()),
            format!(
                "use a plain file name ending in .json, e.g. \"registry.json\"; not a path, and not one of {}",
                RESERVED_FILES.join(", ")
            ),
        ),
    }
}

/// Why `output` may not be added to `outputs`: another one writes the same file, or one
/// differing only in case (Windows and macOS file systems ignore case).
fn same_file(outputs: &[Output], output: &Output) -> Option<String> {
    let other = outputs
        .iter()
        .find(|o| o.file.eq_ignore_ascii_case(&output.file))?;
    Some(if other.file == output.file {
        format!("two outputs write `{}`", output.file)
    } else {
        format!(
            "outputs `{}` and `{}` differ only in case, so they are one file on Windows and macOS",
            other.file, output.file
        )
    })
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
pub(crate) fn base_url_problem(url: &str) -> Option<String> {
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

fn read_patches(fields: &mut Fields, node: &Node, ids: &mut Vec<(String, Span)>) -> Vec<Patch> {
    let Some(items) = fields.array(
        node,
        "patches must be a list of objects",
        "write `[{\"id\": \"<id>\", \"set\": {…}}]`",
    ) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| read_patch(fields, item, ids))
        .collect()
}

/// One patch, or `None` (reported) when it names no usable `id`.
fn read_patch(fields: &mut Fields, item: &Node, ids: &mut Vec<(String, Span)>) -> Option<Patch> {
    let members = fields.object(
        item,
        "a patch must be an object",
        "write `{\"id\": \"<id>\", …}`",
    )?;
    let mut patch = Patch::default();
    let mut keys = Keys::new(members);
    for m in keys.get("id") {
        let value = &m.value;
        if let Some(id) = fields.string(value, "id must be a string", "write the id in quotes") {
            ids.push((id.to_string(), value.span));
            patch.id = id.to_string();
        }
    }
    for m in keys.get("append_args") {
        read_append_args(fields, &m.value, &mut patch);
    }
    for m in keys.get("set") {
        read_patch_set(fields, &m.value, &mut patch);
    }
    keys.finish(fields);
    if patch.id.is_empty() {
        // An `id` that is not a string is already reported; only a missing one is here.
        let help = "add `\"id\": \"<id>\"`";
        fields.required(item, "id", "this patch has no `id`", help);
        return None;
    }
    Some(patch)
}

/// `append_args`: per distribution kind, the arguments a patch appends.
fn read_append_args(fields: &mut Fields, value: &Node, patch: &mut Patch) {
    let Some(kinds) = fields.object(
        value,
        "append_args must be an object",
        "write `{\"npx\": [\"--flag\"]}`",
    ) else {
        return;
    };
    for kind in kinds {
        if !DISTRIBUTION_KINDS.contains(&kind.key.as_str()) {
            let message = format!("unknown distribution `{}`", kind.key);
            fields.problem(kind.key_span, message, "use binary, npx or uvx");
            continue;
        }
        let args: Option<Vec<String>> = kind
            .value
            .as_array()
            .and_then(|a| a.iter().map(|n| n.as_str().map(str::to_string)).collect());
        match args {
            Some(args) => {
                patch.append_args.insert(kind.key.clone(), args);
            }
            None => fields.problem(
                kind.value.span,
                "arguments must be a list of strings",
                "write `[\"--flag\"]`",
            ),
        }
    }
}

/// `set`: the fields a patch sets, except those that identify the agent.
fn read_patch_set(fields: &mut Fields, value: &Node, patch: &mut Patch) {
    let Some(members) = fields.object(
        value,
        "set must be an object of field to value",
        "write `{\"bundled\": true}`",
    ) else {
        return;
    };
    for field in members {
        if PATCH_FORBIDDEN.contains(&field.key.as_str()) {
            fields.problem(
                field.key_span,
                format!("a patch cannot set `{}`", field.key),
                "versions and distributions come from the manifest and the output's channel",
            );
            continue;
        }
        patch.set.insert(field.key.clone(), field.value.to_json());
    }
}

fn read_require_sha256(fields: &mut Fields, node: &Node, policy: &mut Policy) {
    let mode = node.as_str().and_then(RequireSha256::parse);
    match mode {
        Some(mode) => policy.require_sha256 = mode,
        None => fields.problem(
            node.span,
            "require_sha256 must be \"off\", \"changed\" or \"all\"",
            "write \"changed\" (the default: an error in entries a change touches), \"all\" or \"off\"",
        ),
    }
}

fn read_required_os(fields: &mut Fields, node: &Node, policy: &mut Policy) {
    let Some(items) = fields.array(
        node,
        "required_os must be a list",
        format!("e.g. {DEFAULT_REQUIRED_OS:?}"),
    ) else {
        return;
    };
    let mut families = Vec::new();
    for item in items {
        match item.as_str() {
            Some(os) if OS_FAMILIES.contains(&os) => families.push(os.to_string()),
            _ => fields.problem(
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
