//! The front matter of `SKILL.md` by the Agent Skills specification: every limit one finding
//! at the key (or its value) with the change that fixes it.

use super::skill_dir::SkillDir;
use crate::diagnostics::{nearest, Code, Diagnostic};
use crate::manifest::skill::{
    self, Field, FrontMatter, Value, CLAUDE_CODE_KEYS, COMPATIBILITY_MAX, DESCRIPTION_MAX,
    SPEC_KEYS,
};
use crate::rules::sink::Sink;
use acp_registry_core::source::{SourceFile, Span};

/// Checks the front matter; the front matter when it could be read.
pub(super) fn check(
    source: &SourceFile,
    skill: &SkillDir<'_>,
    sink: &mut Sink,
) -> Option<FrontMatter> {
    let front = match skill::parse(&source.text) {
        Ok(front) => front,
        Err(e) => {
            let help = match e {
                skill::FrontMatterError::Yaml { .. } => {
                    "fix the YAML; quote values holding `: ` or starting with a special character, \
                     and write long text as a `>-` block scalar"
                        .to_owned()
                }
                _ => format!(
                    "start the file with `---`, `name: {}`, `description: …`, `---`",
                    expected_name(skill)
                ),
            };
            sink.push(
                Diagnostic::new(Code::SkillFrontmatter, e.to_string())
                    .at(source, e.span(&source.text))
                    .help(help),
            );
            return None;
        }
    };
    for (what, span) in &front.refused {
        sink.push(
            Diagnostic::new(
                Code::SkillFrontmatter,
                format!("the front matter uses {what}, which `agentskills validate` refuses"),
            )
            .at(source, *span)
            .help(refused_help(what)),
        );
    }
    check_name(source, &front, skill, sink);
    check_description(source, &front, sink);
    check_optional(source, &front, sink);
    check_unknown(source, &front, sink);
    Some(front)
}

fn refused_help(what: &str) -> &'static str {
    if what.starts_with("`---`") {
        "the reference validator ends the front matter at the first `---`: reword the value \
         or quote it differently so it holds no `---`"
    } else if what.starts_with("a flow") {
        "write the mapping or list in block style, one `key: value` or `- item` per line"
    } else {
        "write the value out where it is used; strict YAML has no anchors, aliases or tags"
    }
}

/// The name the skill should have: its folder's, else the entry id.
fn expected_name<'a>(skill: &'a SkillDir<'_>) -> &'a str {
    skill.folder.as_deref().unwrap_or(&skill.entry.name)
}

fn block_start() -> Span {
    Span::new(0, 3)
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Str(_) => "a string",
        Value::Map(_) => "a mapping",
        Value::Other(kind) => kind,
    }
}

fn check_name(source: &SourceFile, front: &FrontMatter, skill: &SkillDir<'_>, sink: &mut Sink) {
    let expected = expected_name(skill);
    let Some(field) = front.get("name") else {
        sink.push(
            Diagnostic::new(Code::SkillName, "the front matter has no `name`")
                .at(source, block_start())
                .help(format!("add `name: {expected}`")),
        );
        return;
    };
    let Value::Str(name) = &field.value else {
        sink.push(
            Diagnostic::new(
                Code::SkillName,
                format!("`name` is {}, not a string", kind_of(&field.value)),
            )
            .at(source, place(field))
            .help(format!("set `name: {expected}`")),
        );
        return;
    };
    if let Some(problem) = skill::name_problem(name) {
        let help = match skill::suggested_name(name) {
            Some(fixed) => format!(
                "use `name: {fixed}` (and name the folder {}): lowercase letters, \
                 digits and single hyphens, at most 64 characters",
                skill.folder_for(&fixed)
            ),
            None => format!("use `name: {expected}`"),
        };
        sink.push(
            Diagnostic::new(
                Code::SkillName,
                format!("skill name `{name}` is not valid: {problem}"),
            )
            .at(source, place(field))
            .help(help),
        );
        return;
    }
    if let Some(folder) = &skill.folder {
        if folder != name {
            sink.push(
                Diagnostic::new(
                    Code::SkillName,
                    format!(
                        "skill name `{name}` differs from its folder {}; clients \
                         and `agentskills validate` need them equal",
                        skill.folder_for(folder)
                    ),
                )
                .at(source, field.value_span)
                .help(format!(
                    "rename the folder to {}, or set `name: {folder}`",
                    skill.folder_for(name)
                )),
            );
        }
    }
    check_device_name(source, field, name, sink);
    let id = &skill.entry.name;
    if !skill.standalone && name != id {
        sink.push(
            Diagnostic::new(
                Code::SkillNameId,
                format!(
                    "skill name `{name}` differs from the entry id `{id}`: agents list and \
                     invoke the skill as `{name}` (`/{name}` in Claude Code), the registry \
                     lists the agent as `{id}`"
                ),
            )
            .at(source, field.value_span)
            .help(format!(
                "keep it if that is intended; else set `name: {id}` and rename the folder to skill/{id}/"
            )),
        );
    }
}

/// A Windows device name (`con`, `aux`…): the skill becomes a folder of its name everywhere.
fn check_device_name(source: &SourceFile, field: &Field, name: &str, sink: &mut Sink) {
    if let Some(device) = skill::device_name(name) {
        sink.push(
            Diagnostic::new(
                Code::SkillName,
                format!(
                    "skill name `{name}` is the Windows device name `{device}`: the skill \
                     is installed as a folder of that name, which Windows cannot create"
                ),
            )
            .at(source, field.value_span)
            .help(format!(
                "choose another name, e.g. with a word added (`{name}-tool`)"
            )),
        );
    }
}

/// The value's place, or the key's when the value is empty (`name:`).
fn place(field: &Field) -> Span {
    if field.value_span.start == field.value_span.end {
        field.key_span
    } else {
        field.value_span
    }
}

fn check_description(source: &SourceFile, front: &FrontMatter, sink: &mut Sink) {
    let what = "say what the skill does and when an agent should use it";
    let Some(field) = front.get("description") else {
        sink.push(
            Diagnostic::new(
                Code::SkillDescription,
                "the front matter has no `description`",
            )
            .at(source, block_start())
            .help(format!("add `description: …`: {what}")),
        );
        return;
    };
    let problem = match &field.value {
        Value::Str(d) if d.trim().is_empty() => "the skill description is empty".to_owned(),
        Value::Str(d) if d.chars().count() > DESCRIPTION_MAX => format!(
            "the skill description has {} characters, over the {DESCRIPTION_MAX} allowed",
            d.chars().count()
        ),
        Value::Str(_) => return,
        other => format!("`description` is {}, not a string", kind_of(other)),
    };
    let help = if problem.contains("over the") {
        format!("shorten it to at most {DESCRIPTION_MAX} characters; move details into the body")
    } else {
        format!("set `description: …` to a sentence or two: {what}")
    };
    sink.push(
        Diagnostic::new(Code::SkillDescription, problem)
            .at(source, place(field))
            .help(help),
    );
}

fn invalid(source: &SourceFile, span: Span, message: String, help: String) -> Diagnostic {
    Diagnostic::new(Code::SkillFieldInvalid, message)
        .at(source, span)
        .help(help)
}

fn check_optional(source: &SourceFile, front: &FrontMatter, sink: &mut Sink) {
    for field in &front.fields {
        let span = place(field);
        let key = field.key.as_str();
        let finding = match (key, &field.value) {
            ("license" | "compatibility" | "allowed-tools", Value::Str(s)) if s.trim().is_empty() => {
                Some(invalid(source, span, format!("`{key}` is empty"), format!("give `{key}` a value or remove the line")))
            }
            ("compatibility", Value::Str(s)) if s.chars().count() > COMPATIBILITY_MAX => Some(invalid(
                source,
                span,
                format!(
                    "`compatibility` has {} characters, over the {COMPATIBILITY_MAX} allowed",
                    s.chars().count()
                ),
                format!("shorten it to at most {COMPATIBILITY_MAX} characters: the products, system packages or network access the skill needs"),
            )),
            ("license" | "compatibility" | "allowed-tools", Value::Str(_)) => None,
            ("license" | "compatibility" | "allowed-tools", other) => Some(invalid(
                source,
                span,
                format!("`{key}` is {}, not a string", kind_of(other)),
                string_help(key),
            )),
            ("metadata", Value::Map(entries)) => {
                check_metadata(source, entries, sink);
                None
            }
            ("metadata", other) => Some(invalid(
                source,
                span,
                format!("`metadata` is {}, not a mapping of strings", kind_of(other)),
                "write `metadata:` followed by indented `key: \"value\"` lines".to_owned(),
            )),
            _ => None,
        };
        if let Some(finding) = finding {
            sink.push(finding);
        }
    }
}

fn string_help(key: &str) -> String {
    match key {
        "allowed-tools" => "write the tools as one space-separated string: `allowed-tools: Read Grep Bash(git:*)`".to_owned(),
        "license" => "write the licence as a string: an SPDX expression (`license: Apache-2.0`) or the name of a bundled licence file".to_owned(),
        _ => format!("write `{key}` as one string (quote it when it holds `: `)"),
    }
}

fn check_metadata(source: &SourceFile, entries: &[Field], sink: &mut Sink) {
    for entry in entries {
        if let Value::Str(_) = entry.value {
            continue;
        }
        let raw = &source.text[entry.value_span.start..entry.value_span.end];
        let help = match entry.value {
            Value::Other("a number" | "a boolean" | "null") => {
                format!("quote the value: `{}: \"{}\"`", entry.key, raw.replace('"', "\\\""))
            }
            _ => format!(
                "metadata maps names to strings: write `{}` as one string, or flatten it into keys such as `{}-…`",
                entry.key, entry.key
            ),
        };
        sink.push(invalid(
            source,
            place(entry),
            format!(
                "metadata `{}` is {}, not a string",
                entry.key,
                kind_of(&entry.value)
            ),
            help,
        ));
    }
}

fn check_unknown(source: &SourceFile, front: &FrontMatter, sink: &mut Sink) {
    for field in &front.fields {
        let key = field.key.as_str();
        if SPEC_KEYS.contains(&key) {
            continue;
        }
        let (message, help) = if CLAUDE_CODE_KEYS.contains(&key) {
            (
                format!(
                    "`{key}` is a Claude Code key, not an Agent Skills one: Claude Code reads \
                     it, other clients ignore it and `agentskills validate` rejects it"
                ),
                "keep it if the skill is meant for Claude Code; a skill for every client \
                 works without it"
                    .to_owned(),
            )
        } else {
            let known = SPEC_KEYS.iter().chain(CLAUDE_CODE_KEYS.iter()).copied();
            let help = match nearest(key, known) {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!(
                    "move it under `metadata:` (an indented `{key}: \"…\"` line) or remove it"
                ),
            };
            (
                format!(
                    "`{key}` is not an Agent Skills key: no client we know reads it and \
                     `agentskills validate` rejects it"
                ),
                help,
            )
        };
        sink.push(
            Diagnostic::new(Code::SkillFieldUnknown, message)
                .at(source, field.key_span)
                .help(help),
        );
    }
}
