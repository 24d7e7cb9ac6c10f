//! Metadata: license, URLs, icon field, RFD fields (capabilities, auth, tags,
//! `protocol_version`, homepage).

use std::collections::BTreeMap;

use super::entry::ManifestDoc;
use super::sink::Sink;
use crate::diagnostics::{did_you_mean, nearest, Code, Fix, FixEdit, Severity};
use crate::manifest::agent::{AgentView, PROTOCOL_VERSION_POINTER};

/// ACP methods an agent or client can implement: the method names of the
/// `agent-client-protocol-schema` crate, so the catalogue follows the protocol.
fn known_capabilities() -> &'static [String] {
    static KNOWN: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    KNOWN.get_or_init(acp_registry_core::acp::methods::all_methods)
}

/// Highest ACP protocol major version known today.
pub(crate) const LATEST_PROTOCOL_VERSION: u64 = 1;

pub(crate) const URL_FIELDS: [&str; 4] = ["repository", "website", "homepage", "license_url"];

pub(crate) fn check(doc: &ManifestDoc, view: &AgentView, sink: &mut Sink) {
    super::license::check(doc, sink);
    for field in URL_FIELDS {
        if let Some(url) = doc.root.get_str(field) {
            check_url(doc, &format!("/{field}"), url, sink);
        }
    }
    if doc.root.get("icon").is_some() {
        sink.push(
            doc.at_key(
                Code::IconFieldIgnored,
                "/icon",
                "`icon` is set by the build; this value is ignored",
            )
            .help("remove the field; put the icon in icon.svg next to agent.json")
            .fix(Fix::new("/icon", FixEdit::Remove)),
        );
    }
    if let (Some(website), Some(homepage)) =
        (doc.root.get_str("website"), doc.root.get_str("homepage"))
    {
        if website.trim_end_matches('/') != homepage.trim_end_matches('/') {
            sink.push(
                doc.at_key(
                    Code::HomepageConflict,
                    "/homepage",
                    format!("`homepage` ({homepage}) differs from `website` ({website})"),
                )
                .help("they are synonyms: keep `website` only"),
            );
        }
    }
    check_capabilities(doc, view, sink);
    check_auth(doc, view, sink);
    check_tags(doc, sink);
    check_protocol_version(doc, view, sink);
}

/// Why `url` is not an acceptable registry URL, if it is not.
pub(crate) fn url_problem(url: &str) -> Option<String> {
    match url::Url::parse(url) {
        Err(e) => Some(format!("`{url}` is not an absolute URL ({e})")),
        Ok(u) if u.scheme() != "https" => Some(format!(
            "`{url}` uses `{}`; only https is allowed",
            u.scheme()
        )),
        Ok(u) if u.host_str().is_none_or(str::is_empty) => Some(format!("`{url}` has no host")),
        Ok(u) if !u.username().is_empty() || u.password().is_some() => {
            Some(format!("`{url}` embeds credentials"))
        }
        Ok(_) => None,
    }
}

pub(crate) fn check_url(doc: &ManifestDoc, pointer: &str, url: &str, sink: &mut Sink) {
    if let Some(problem) = url_problem(url) {
        let mut d = doc.at(Code::UrlFormat, pointer, problem);
        d = match url.strip_prefix("http://") {
            Some(rest) => {
                let https = format!("https://{rest}");
                let fix = url_problem(&https)
                    .is_none()
                    .then(|| Fix::new(pointer, FixEdit::SetString(https.clone())));
                let d = d.help(format!("use `{https}`"));
                match fix {
                    Some(fix) => d.fix(fix),
                    None => d,
                }
            }
            None => d.help("use an absolute https URL without user name or password"),
        };
        sink.push(d);
    }
}

/// Each declared name by the catalogue's class: stable (nothing to say), unstable (a note),
/// unknown (a warning with the nearest known name).
fn check_capabilities(doc: &ManifestDoc, view: &AgentView, sink: &mut Sink) {
    use acp_registry_core::acp::methods::{stability, Stability};
    for capability in &view.capabilities {
        let (name, pointer) = (capability.name.as_str(), &capability.pointer);
        match stability(name) {
            Some(Stability::Stable) => {}
            Some(Stability::Unstable) => sink.push(
                doc.at(
                    Code::CapabilityUnstable,
                    pointer,
                    format!("`{name}` is an unstable ACP method: it may still change"),
                )
                .help("keep it if the agent implements it; clients may not call it yet"),
            ),
            None => {
                let mut d = doc.at(
                    Code::CapabilityUnknown,
                    pointer,
                    format!("`{name}` is not a known ACP method"),
                );
                let known = known_capabilities().iter().map(String::as_str);
                if let Some(help) = did_you_mean(name, known) {
                    d = d.help(help);
                }
                sink.push(d);
            }
        }
    }
}

fn check_auth(doc: &ManifestDoc, view: &AgentView, sink: &mut Sink) {
    for method in &view.auth {
        let pointer = method.type_pointer();
        // A missing or non-string type reads as the default, and is the schema's to report.
        match method.kind() {
            "agent" | "terminal" => {}
            "env_var" => {
                let has_vars = method.vars.as_ref().is_some_and(|v| !v.is_empty());
                if !has_vars {
                    sink.push(
                        doc.at(
                            Code::AuthType,
                            &method.pointer,
                            "an `env_var` auth method lists no `vars`",
                        )
                        .help(
                            "add `\"vars\": [\"EXAMPLE_API_KEY\"]` naming the variables users set",
                        ),
                    );
                }
            }
            "api_key" => {
                let mut d = doc
                    .at(
                        Code::AuthType,
                        &pointer,
                        "`api_key` is the RFD's old name for `env_var`",
                    )
                    .help("use `\"type\": \"env_var\"`")
                    .fix(Fix::new(&pointer, FixEdit::SetString("env_var".into())));
                d.severity = Severity::Warning;
                sink.push(d);
            }
            other => {
                let mut d = doc.at(
                    Code::AuthType,
                    &pointer,
                    format!("unknown auth type `{other}`"),
                );
                d = match nearest(other, ["agent", "terminal", "env_var"]) {
                    Some(n) => d.help(format!(
                        "did you mean `{n}`? Types are agent, terminal and env_var"
                    )),
                    None => d.help("use `agent`, `terminal` or `env_var`"),
                };
                sink.push(d);
            }
        }
    }
}

fn is_slug(tag: &str) -> bool {
    let mut chars = tag.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn check_tags(doc: &ManifestDoc, sink: &mut Sink) {
    let Some(tags) = doc.root.get("tags").and_then(|n| n.as_array()) else {
        return;
    };
    if tags.len() > 10 {
        sink.push(
            doc.at(
                Code::TagsFormat,
                "/tags",
                format!("{} tags; at most 10 are allowed", tags.len()),
            )
            .help("keep the ten that describe the agent best"),
        );
    }
    let mut seen = BTreeMap::new();
    for (i, tag) in tags.iter().enumerate() {
        let Some(text) = tag.as_str() else { continue };
        let pointer = format!("/tags/{i}");
        if !is_slug(text) {
            let slug: String = text
                .to_lowercase()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            sink.push(
                doc.at(
                    Code::TagsFormat,
                    &pointer,
                    format!("tag `{text}` is not a lowercase slug"),
                )
                .help(format!("use `{}`", slug.trim_matches('-'))),
            );
        }
        if let Some(first) = seen.insert(text, i) {
            sink.push(
                doc.at(
                    Code::TagsFormat,
                    &pointer,
                    format!("tag `{text}` is repeated"),
                )
                .help(format!(
                    "it already appears at position {}; remove this one",
                    first + 1
                )),
            );
        }
    }
}

fn check_protocol_version(doc: &ManifestDoc, view: &AgentView, sink: &mut Sink) {
    // Absent or not a number (the schema reports the type): nothing to say.
    let Some(raw) = &view.protocol_version else {
        return;
    };
    match raw.parse::<u64>() {
        Ok(v) if (1..=LATEST_PROTOCOL_VERSION).contains(&v) => {}
        Ok(v) if v > LATEST_PROTOCOL_VERSION => sink.push(
            doc.at(
                Code::ProtocolVersion,
                PROTOCOL_VERSION_POINTER,
                format!("ACP protocol version {v} does not exist yet (latest is {LATEST_PROTOCOL_VERSION})"),
            )
            .help(format!("set `\"protocol_version\": {LATEST_PROTOCOL_VERSION}`")),
        ),
        _ => sink.push(
            doc.at(
                Code::ProtocolVersion,
                PROTOCOL_VERSION_POINTER,
                format!("`{raw}` is not an ACP protocol major version"),
            )
            .help(format!("use a positive integer; today `{LATEST_PROTOCOL_VERSION}`")),
        ),
    }
}
