//! JSON Schema validation of manifests against `schemas/agent.schema.json`, each violation
//! mapped back to the span of the offending key or value.
//!
//! Compiled once per schema (the `jsonschema` crate, draft-07, formats checked). A violation's
//! instance path is a JSON pointer into the span tree every rule reports through, so a schema
//! error lands on the `file:line:col` of its key or value, as taplo does. The schema runs after
//! the specific rules and drops a violation at a pointer where one of them already reported an
//! *error* (for `uniqueItems`, at one of the items): one precise finding instead of two. A
//! specific *warning* never hides a schema error. The manifest's top level is open: an unknown
//! key is an `unknown-field` warning, and both schemas accept it.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::Validator;
use serde_json::Value;

use super::entry::ManifestDoc;
use super::sink::Sink;
use crate::diagnostics::{nearest, Code, Diagnostic};
use crate::manifest::{escape_pointer, PLATFORMS};

/// The bundled manifest schema, as published in every output.
pub(crate) const AGENT_SCHEMA: &str = include_str!("../../schemas/agent.schema.json");
/// The bundled schema of a published registry file.
pub(crate) const REGISTRY_SCHEMA: &str = include_str!("../../schemas/registry.schema.json");

/// A bundled schema as JSON.
fn bundled(text: &str) -> Value {
    serde_json::from_str(text).expect("bundled schema is JSON")
}

/// The one way every bundled schema is compiled: draft-07, formats checked.
fn compile(schema: &Value) -> Validator {
    jsonschema::draft7::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("bundled schema compiles")
}

/// `agent.schema.json`, compiled once: what `validate` checks every manifest against.
pub(crate) fn agent_validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| compile(&bundled(AGENT_SCHEMA)))
}

/// `registry.schema.json`, compiled once: the shape of a whole published registry file.
pub fn registry_validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| compile(&bundled(REGISTRY_SCHEMA)))
}

/// One published agent: `registry.schema.json`'s agent definition, as `build` applies it to
/// every agent of every output and `validate` to every entry.
pub(crate) fn published_agent_validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let definitions = bundled(REGISTRY_SCHEMA)["definitions"].take();
        compile(&serde_json::json!({"$ref": "#/definitions/agent", "definitions": definitions}))
    })
}

/// One schema violation, ready to become a finding: `at` is where it points (the key when
/// `at_key`), `pointer` the JSON pointer it reports.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Violation {
    /// JSON pointer the finding is placed at.
    pub at: String,
    /// Place it at the key rather than the value.
    pub at_key: bool,
    /// JSON pointer the finding reports.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
    /// What to change, when known.
    pub help: Option<String>,
}

impl Violation {
    /// The finding (code `schema`) at this violation's place in `doc`.
    pub(crate) fn finding(&self, doc: &ManifestDoc) -> Diagnostic {
        let d = if self.at_key {
            doc.at_key(Code::Schema, &self.at, self.message.clone())
        } else {
            doc.at(Code::Schema, &self.at, self.message.clone())
        };
        let d = d.pointer(self.pointer.clone());
        match &self.help {
            Some(help) => d.help(help.clone()),
            None => d,
        }
    }
}

/// Validate `instance` (the manifest as clients read it, with the legacy distribution form
/// already normalised). `reported` holds pointers where a more specific rule already reported
/// an error: the schema does not repeat those. Unknown top-level fields are `unknown-field`
/// warnings (the format's top level is open).
pub(crate) fn check(
    doc: &ManifestDoc,
    instance: &Value,
    reported: &BTreeSet<String>,
    sink: &mut Sink,
) {
    check_unknown_fields(doc, sink);
    for violation in violations(
        agent_validator(),
        instance,
        reported,
        Owned::UnknownPlatforms,
    ) {
        sink.push(violation.finding(doc));
    }
}

/// Which violations a more specific rule owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owned {
    /// Unknown platform keys are platform-unknown's (the manifest's own check).
    UnknownPlatforms,
    /// Only what `reported` holds: the published form, where an unknown platform key that
    /// platform-unknown did not report (turned off) still makes the output invalid.
    Reported,
}

/// Every violation of `validator` by `instance`, except those at a pointer in `reported` (for
/// `uniqueItems`, also an error on one of the array's items: tags-format points at the
/// repeated tag) and, with [`Owned::UnknownPlatforms`], unknown platform keys.
pub(crate) fn violations(
    validator: &Validator,
    instance: &Value,
    reported: &BTreeSet<String>,
    owned: Owned,
) -> Vec<Violation> {
    let covered = |pointer: &str, kind: &ValidationErrorKind| {
        reported.contains(pointer)
            || (matches!(kind, ValidationErrorKind::UniqueItems)
                && reported
                    .iter()
                    .any(|r| r.starts_with(pointer) && r[pointer.len()..].starts_with('/')))
    };
    // Most instances are valid: the boolean check is much cheaper than collecting errors.
    if validator.is_valid(instance) {
        return Vec::new();
    }
    let mut found = Vec::new();
    for error in validator.iter_errors(instance) {
        let path = error.instance_path().as_str().to_string();
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for key in unexpected {
                    let pointer = format!("{path}/{}", escape_pointer(key));
                    let unknown_platform = owned == Owned::UnknownPlatforms
                        && path.ends_with("/binary")
                        && !PLATFORMS.contains(&key.as_str());
                    if reported.contains(&pointer) || unknown_platform {
                        continue;
                    }
                    let help = if path.ends_with("/binary") {
                        format!("use a platform key clients know ({}); the published schema allows no other", PLATFORMS.join(", "))
                    } else {
                        "remove it; fields not in the manifest format are not published".into()
                    };
                    found.push(Violation {
                        at: pointer.clone(),
                        at_key: true,
                        pointer,
                        message: format!("unknown field `{key}`"),
                        help: Some(help),
                    });
                }
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                let pointer = format!("{path}/{}", escape_pointer(name));
                if reported.contains(&pointer) {
                    continue;
                }
                found.push(Violation {
                    at: path.clone(),
                    at_key: false,
                    pointer,
                    message: format!("missing required field `{name}`"),
                    help: Some(format!("add `\"{name}\"` to this object")),
                });
            }
            kind if covered(&path, kind) => {}
            kind => found.push(Violation {
                message: describe(kind, &path, error.instance()),
                at: path.clone(),
                at_key: false,
                pointer: path,
                help: None,
            }),
        }
    }
    found
}

/// `unknown-field` for every top-level key the manifest format does not define.
fn check_unknown_fields(doc: &ManifestDoc, sink: &mut Sink) {
    let known = known_fields();
    for member in doc.root.unique_members() {
        if known.contains(&member.key) {
            continue;
        }
        let pointer = format!("/{}", escape_pointer(&member.key));
        let published = "unknown fields are published as they are, after the known ones";
        let help = match nearest(&member.key, known.iter().map(String::as_str)) {
            Some(n) => format!("did you mean `{n}`? ({published})"),
            None => format!("{published}; remove it if clients should not see it"),
        };
        sink.push(
            doc.at_key(
                Code::UnknownField,
                &pointer,
                format!("unknown field `{}`", member.key),
            )
            .help(help),
        );
    }
}

/// The top-level fields of the manifest format (`agent.schema.json`'s properties).
fn known_fields() -> &'static [String] {
    static FIELDS: OnceLock<Vec<String>> = OnceLock::new();
    FIELDS.get_or_init(|| {
        let schema: Value = serde_json::from_str(AGENT_SCHEMA).expect("bundled schema is JSON");
        schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    })
}

fn field_name(path: &str) -> String {
    if path.is_empty() {
        "the manifest".into()
    } else {
        format!("`{}`", path.trim_start_matches('/').replace('/', "."))
    }
}

fn describe(kind: &ValidationErrorKind, path: &str, instance: &Value) -> String {
    let field = field_name(path);
    match kind {
        ValidationErrorKind::Type { kind } => {
            format!(
                "{field} must be of type {}, found {}",
                type_names(kind),
                json_type(instance)
            )
        }
        ValidationErrorKind::MinLength { .. }
        | ValidationErrorKind::MinProperties { .. }
        | ValidationErrorKind::MinItems { .. } => format!("{field} must not be empty"),
        ValidationErrorKind::MaxLength { limit } => {
            format!("{field} is longer than {limit} characters")
        }
        ValidationErrorKind::Not { .. } => format!("{field} must not be {instance}"),
        ValidationErrorKind::Pattern { pattern } => {
            format!("{field} does not match the pattern `{pattern}`")
        }
        ValidationErrorKind::Enum { options } => {
            format!("{field} must be one of {options}")
        }
        ValidationErrorKind::Format { format } => format!("{field} is not a valid {format}"),
        ValidationErrorKind::MaxItems { limit } => format!("{field} has more than {limit} items"),
        ValidationErrorKind::UniqueItems => format!("{field} has duplicate items"),
        ValidationErrorKind::Minimum { limit } => format!("{field} must be at least {limit}"),
        _ => format!("{field}: {}", kind_fallback(kind, instance)),
    }
}

fn kind_fallback(kind: &ValidationErrorKind, instance: &Value) -> String {
    format!(
        "violates the `{}` constraint (value {instance})",
        kind.keyword()
    )
}

fn type_names(kind: &jsonschema::error::TypeKind) -> String {
    match kind {
        jsonschema::error::TypeKind::Single(t) => t.to_string(),
        jsonschema::error::TypeKind::Multiple(ts) => {
            let names: Vec<String> = ts.iter().map(|t| t.to_string()).collect();
            names.join(" or ")
        }
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bundled_schemas_compile() {
        super::agent_validator();
        super::registry_validator();
        super::published_agent_validator();
    }
}
