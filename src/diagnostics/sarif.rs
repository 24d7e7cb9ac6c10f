//! `--format sarif`: SARIF 2.1.0 for code scanning.
//!
//! Locations are relative to `SRCROOT`, the root of the repository code scanning annotates
//! (the caller relocates the report there); message text is escaped with
//! [`escape::sarif_text`] because GitHub renders it.

use serde_json::{json, Value};

use acp_registry_core::escape;

use super::code::Code;
use super::report::Report;
use super::severity::Severity;

/// The artifact location of a finding's file: relative to `SRCROOT`, or a `file:` URI when
/// the path is absolute (a registry outside the repository and the working directory).
fn artifact_location(file: &str) -> Value {
    let drive = file.as_bytes().get(1) == Some(&b':');
    if file.starts_with('/') {
        json!({"uri": format!("file://{}", escape::uri_path(file))})
    } else if drive {
        json!({"uri": format!("file:///{}", escape::uri_path(file))})
    } else {
        json!({"uri": escape::uri_path(file), "uriBaseId": "SRCROOT"})
    }
}

fn sarif_level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// The SARIF document of `report`, with every code of the catalogue as a rule.
pub(crate) fn render_sarif(report: &Report, tool_version: &str) -> String {
    let results: Vec<Value> = report
        .diagnostics
        .iter()
        .map(|d| {
            let mut region = json!({});
            if let Some(l) = &d.location {
                region = json!({
                    "startLine": l.start.line,
                    "startColumn": l.start.column,
                    "endLine": l.end.line,
                    "endColumn": l.end.column,
                });
            }
            let mut physical = json!({"artifactLocation": artifact_location(&d.file)});
            if d.location.is_some() {
                physical["region"] = region;
            }
            let mut text = d.message.clone();
            if let Some(help) = &d.help {
                text.push_str("\nhelp: ");
                text.push_str(help);
            }
            let mut result = json!({
                "ruleId": d.code.as_str(),
                "level": sarif_level(d.severity),
                "message": {"text": escape::sarif_text(&text)},
                "locations": [{"physicalLocation": physical}],
                // The rule table is `Code::ALL`, in declaration order.
                "ruleIndex": d.code as usize,
            });
            if let Some(pointer) = &d.pointer {
                result["properties"] = json!({"pointer": pointer});
            }
            result
        })
        .collect();
    let rules: Vec<Value> = Code::ALL
        .iter()
        .map(|code| {
            json!({
                "id": code.as_str(),
                "name": code.as_str(),
                "shortDescription": {"text": code.summary()},
                "fullDescription": {"text": code.explanation()},
                "help": {"text": code.explanation()},
                "defaultConfiguration": {"level": sarif_level(code.default_severity())},
            })
        })
        .collect();
    let document = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "acp-registry",
                "version": tool_version,
                "informationUri": "https://github.com/agentclientprotocol/acp-registry",
                "rules": rules,
            }},
            "originalUriBaseIds": {"SRCROOT": {"description": {
                "text": "The root of the git repository holding the registry (the working directory outside git)."
            }}},
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&document).expect("SARIF serialises");
    text.push('\n');
    text
}
