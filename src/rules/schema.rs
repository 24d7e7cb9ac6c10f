//! JSON Schema validation of manifests against `schemas/agent.schema.json`, each violation
//! mapped back to the span of the offending key or value.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::Validator;
use serde_json::Value;

use super::{nearest, Code, ManifestDoc, Sink};
use crate::diagnostics::Severity;
use crate::manifest::{escape_pointer, PLATFORMS};

pub const AGENT_SCHEMA: &str = include_str!("../../schemas/agent.schema.json");
pub const REGISTRY_SCHEMA: &str = include_str!("../../schemas/registry.schema.json");

fn compile(text: &str) -> Validator {
    let schema: Value = serde_json::from_str(text).expect("bundled schema is JSON");
    jsonschema::draft7::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("bundled schema compiles")
}

pub fn agent_validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| compile(AGENT_SCHEMA))
}

pub fn registry_validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| compile(REGISTRY_SCHEMA))
}

/// Validate `instance` (the manifest as clients read it, with the legacy distribution form
/// already normalised). `reported` holds pointers where a more specific rule already reported
/// an error: the schema does not repeat those. A `uniqueItems` violation is also covered by an
/// error on one of the array's items (tags-format points at the repeated tag).
pub fn check(
    doc: &ManifestDoc,
    instance: &Value,
    reported: &BTreeSet<String>,
    newer_minor_format: bool,
    sink: &mut Sink,
) {
    let known_fields = known_fields(instance_root_schema());
    for error in agent_validator().iter_errors(instance) {
        let path = error.instance_path().as_str().to_string();
        let covered = |pointer: &str, kind: &ValidationErrorKind| {
            reported.contains(pointer)
                || (matches!(kind, ValidationErrorKind::UniqueItems)
                    && reported
                        .iter()
                        .any(|r| r.starts_with(pointer) && r[pointer.len()..].starts_with('/')))
        };
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for key in unexpected {
                    let pointer = format!("{path}/{}", escape_pointer(key));
                    if reported.contains(&pointer) {
                        continue;
                    }
                    let in_binary = path.ends_with("/binary");
                    if in_binary && !PLATFORMS.contains(&key.as_str()) {
                        // platform-unknown owns unknown platform keys.
                        continue;
                    }
                    let mut d =
                        doc.at_key(Code::Schema, &pointer, format!("unknown field `{key}`"));
                    let candidates: Vec<&str> = if path.is_empty() {
                        known_fields.iter().map(String::as_str).collect()
                    } else {
                        Vec::new()
                    };
                    d = match nearest(key, candidates) {
                        Some(n) => d.help(format!("did you mean `{n}`?")),
                        None => {
                            d.help("remove it; fields not in the manifest format are not published")
                        }
                    };
                    if path.is_empty() && newer_minor_format {
                        d.severity = Severity::Warning;
                        d.message.push_str(
                            " (allowed by the newer schema_version? this tool does not know it)",
                        );
                    }
                    sink.push(d);
                }
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                let pointer = format!("{path}/{}", escape_pointer(name));
                let mut d = doc.at(
                    Code::Schema,
                    &path,
                    format!("missing required field `{name}`"),
                );
                d.pointer = Some(pointer);
                sink.push(d.help(format!("add `\"{name}\"` to this object")));
            }
            kind => {
                if covered(&path, kind) {
                    continue;
                }
                let message = describe(kind, &path, error.instance());
                sink.push(doc.at(Code::Schema, &path, message));
            }
        }
    }
}

fn instance_root_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| serde_json::from_str(AGENT_SCHEMA).expect("bundled schema is JSON"))
}

fn known_fields(schema: &Value) -> Vec<String> {
    schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
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
        ValidationErrorKind::MinLength { .. } => format!("{field} must not be empty"),
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
        ValidationErrorKind::MinProperties { .. } => format!("{field} must not be empty"),
        ValidationErrorKind::MinItems { .. } => format!("{field} must not be empty"),
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
    }
}
