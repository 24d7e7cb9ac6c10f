//! The policy sections of the configuration: `severity`, `exemptions`, `required_os` and
//! `require_sha256`, read into the [`Policy`] the rules apply.

use crate::diagnostics::Severity;
use crate::manifest::fields::Fields;
use crate::manifest::Node;
use crate::rules::{is_enforced, Code, Level, Policy, RequireSha256, DEFAULT_REQUIRED_OS};
use acp_registry_core::source::Span;

/// The OS families `required_os` may name.
const OS_FAMILIES: [&str; 3] = ["darwin", "linux", "windows"];

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

/// `"severity": {"<code>": "error" | "warning" | "note" | "off"}`.
pub(super) fn read_severity(fields: &mut Fields, node: &Node, policy: &mut Policy) {
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

/// `"exemptions": {"<id>": ["<code>", …]}`: each id is also kept in `named_ids`, checked
/// against the registry later.
pub(super) fn read_exemptions(
    fields: &mut Fields,
    node: &Node,
    policy: &mut Policy,
    named_ids: &mut Vec<(String, Span)>,
) {
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
        named_ids.push((member.key.clone(), member.key_span));
        let names = fields.strings(
            items,
            "a rule code must be a string",
            "write the code in quotes",
        );
        let codes = policy.exemptions.entry(member.key.clone()).or_default();
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

/// `"require_sha256": "off" | "changed" | "all"`.
pub(super) fn read_require_sha256(fields: &mut Fields, node: &Node, policy: &mut Policy) {
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

/// `"required_os": ["darwin", "linux", "windows"]`: the OS families binaries must cover.
pub(super) fn read_required_os(fields: &mut Fields, node: &Node, policy: &mut Policy) {
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
