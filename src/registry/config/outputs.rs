//! The publishing sections of the configuration: `base_url` and `outputs` (each registry
//! file `build` writes: its name, its agents, its channel, its patches).

use std::collections::BTreeSet;

use super::limits::{url_length_problem, MAX_OUTPUTS};
use crate::manifest::fields::{Fields, Keys};
use crate::manifest::names::file_name_problem;
use crate::manifest::{Node, DISTRIBUTION_KINDS};
use crate::published::{Channel, Output, Patch, VERIFICATION_FILE, VERIFICATION_SCHEMA_FILE};
use acp_registry_core::source::Span;

/// Fields a patch may not set: they identify the agent or are chosen by `channel`.
const PATCH_FORBIDDEN: [&str; 5] = ["id", "version", "distribution", "preview", "$schema"];
/// Names in `dist/` that outputs may not take (compared ignoring case).
const RESERVED_FILES: [&str; 5] = [
    "agent.schema.json",
    "registry.schema.json",
    "SHA256SUMS",
    VERIFICATION_FILE,
    VERIFICATION_SCHEMA_FILE,
];

/// `"base_url"`: the https URL the published files live under.
pub(super) fn read_base_url(fields: &mut Fields, value: &Node, base_url: &mut String) {
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
pub(super) fn read_outputs(fields: &mut Fields, node: &Node) -> (Vec<Output>, Vec<(String, Span)>) {
    let mut ids = Vec::new();
    let Some(items) = fields.array(
        node,
        "outputs must be a list of objects",
        "write `[{\"file\": \"registry.json\"}, …]`",
    ) else {
        return (Output::default_outputs(), ids);
    };
    if items.len() > MAX_OUTPUTS {
        fields.problem(
            node.span,
            format!(
                "outputs lists {} outputs, over the limit of {MAX_OUTPUTS}",
                items.len()
            ),
            "each output writes every agent it lists again; keep the outputs clients need",
        );
        return (Output::default_outputs(), ids);
    }
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
    for m in keys.get("extensions") {
        let message = "extensions must be true or false";
        let help =
            "write `\"extensions\": false` to leave the empty `extensions` list out of this file";
        if let Some(write) = fields.bool(&m.value, message, help) {
            output.omit_extensions = !write;
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
    // First: every published agent carries it, in every output.
    if let Some(problem) = url_length_problem(url) {
        return Some(problem);
    }
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
