//! `acp-registry explain`: a rule's documentation (with what the registry's configuration
//! does to it), the code list, or `docs/rules.md`.

use std::path::Path;

use crate::registry::config::CONFIG_FILE;
use crate::registry::Config;
use crate::rules::{explain, rules_markdown, Code, Level, UnknownCode};

pub enum Request {
    Code(String),
    List,
    Markdown,
}

/// `registry`: the registry whose `acp-registry.jsonc` may change the rule (ignored when it
/// has none; the Markdown catalogue always shows defaults).
pub fn run(request: Request, registry: &Path) -> Result<String, UnknownCode> {
    Ok(match request {
        Request::Code(name) => {
            let code = name.parse::<Code>()?;
            let mut text = explain(code);
            text.push_str(&configured(code, registry));
            text
        }
        Request::List => Code::ALL
            .iter()
            .map(|c| {
                format!(
                    "{:<24} {:<8} {}\n",
                    c.as_str(),
                    c.default_severity(),
                    c.summary()
                )
            })
            .collect(),
        Request::Markdown => rules_markdown(),
    })
}

/// What the registry's configuration does to `code`, if anything.
fn configured(code: Code, registry: &Path) -> String {
    if !registry.join(CONFIG_FILE).is_file() {
        return String::new();
    }
    let (config, _) = Config::load(registry);
    let mut lines = Vec::new();
    match config.policy.severity.get(&code) {
        Some(Level::Off) => lines.push("turned off".to_string()),
        Some(Level::On(severity)) => lines.push(format!("severity {severity}")),
        None => {}
    }
    let exempt: Vec<&str> = config
        .policy
        .exemptions
        .iter()
        .filter(|(_, codes)| codes.contains(&code))
        .map(|(id, _)| id.as_str())
        .collect();
    if !exempt.is_empty() {
        lines.push(format!("not reported for {}", exempt.join(", ")));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nIn {}: {} ({CONFIG_FILE}).\n",
        registry.display(),
        lines.join("; ")
    )
}
