//! A registry file (`{"version", "agents", "extensions"}`) written one agent at a time, as
//! `to_string_pretty` would print the whole document: the agents each output publishes (the
//! check's text, or composed here from the entry's [`Form`]), merged in id order with the
//! previous objects `--last-good` serves.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, Write};

use serde_json::Value;

use crate::published::{indented, Form};
use crate::registry::Checked;
use crate::rules::EntryReport;

/// `version` of the published registry files.
pub(crate) const REGISTRY_FORMAT_VERSION: &str = "1.0.0";

/// One agent of a registry file: composed by this build, or a previous build's object kept
/// by `--last-good`, written as its bytes were.
pub(super) enum Published<'a> {
    /// The agent as [`indented`] prints it.
    Composed(Cow<'a, str>),
    /// A previous build's object, as it was written.
    Previous(&'a str),
}

/// `{"version": …, "agents": [...], "extensions": []}` (without `extensions` when
/// `omit_extensions`) exactly as `to_string_pretty` would print it, written one agent at a
/// time. A previous object is written at the same place, its bytes unchanged (a previous build
/// wrote them at this depth, so they read as the rest).
pub(super) fn write_document<'a>(
    out: &mut dyn Write,
    agents: impl Iterator<Item = Published<'a>>,
    omit_extensions: bool,
) -> io::Result<()> {
    write!(
        out,
        "{{\n  \"version\": \"{REGISTRY_FORMAT_VERSION}\",\n  \"agents\": "
    )?;
    let mut empty = true;
    for agent in agents {
        out.write_all(if empty { b"[\n" } else { b",\n" })?;
        match agent {
            Published::Composed(agent) => out.write_all(agent.as_bytes())?,
            Published::Previous(raw) => {
                out.write_all(b"    ")?;
                out.write_all(raw.as_bytes())?;
            }
        }
        empty = false;
    }
    out.write_all(if empty { b"[]" } else { b"\n  ]" })?;
    if omit_extensions {
        return out.write_all(b"\n}\n");
    }
    out.write_all(b",\n  \"extensions\": []\n}\n")
}

/// The agents the `index`th output publishes, in id order, as written: the check's own
/// composition when it was made under this base URL, else composed here.
pub(super) fn output_agents<'e>(
    checked: &'e Checked,
    entries: &'e [&EntryReport],
    base: &'e str,
    index: usize,
) -> impl Iterator<Item = (&'e str, Cow<'e, str>)> + 'e {
    let output = &checked.config.outputs[index];
    let checked_base = base == checked.config.base_url;
    entries
        .iter()
        .filter(move |entry| output.publishes(entry.id()))
        .filter_map(move |entry| {
            let kept = checked_base
                .then(|| {
                    checked
                        .published
                        .get(&entry.entry.name)?
                        .get(index)?
                        .as_deref()
                })
                .flatten();
            let text = if let Some(text) = kept {
                Cow::Borrowed(text)
            } else {
                let agent = Form::of(entry)?.agent(base, output);
                Cow::Owned(indented(&Value::Object(agent)))
            };
            Some((entry.id(), text))
        })
}

/// The composed agents and the previous objects together, in id order (both are sorted).
pub(super) fn merged<'a>(
    composed: impl Iterator<Item = (&'a str, Cow<'a, str>)>,
    previous: Option<&'a BTreeMap<String, String>>,
) -> impl Iterator<Item = Published<'a>> {
    let mut composed = composed.peekable();
    let mut previous = previous.into_iter().flatten().peekable();
    std::iter::from_fn(move || {
        let take_previous = match (composed.peek(), previous.peek()) {
            (Some((id, _)), Some((held, _))) => held.as_str() < *id,
            (None, Some(_)) => true,
            _ => false,
        };
        if take_previous {
            previous.next().map(|(_, raw)| Published::Previous(raw))
        } else {
            composed.next().map(|(_, agent)| Published::Composed(agent))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembled_document_equals_pretty_printing_the_whole_value_with_or_without_extensions() {
        let agents = [
            serde_json::json!({"id": "a", "args": [], "env": {}, "nested": {"x": [1, {"y": "é"}]}}),
            serde_json::json!({"id": "b"}),
        ];
        for omit_extensions in [false, true] {
            for count in 0..=agents.len() {
                let mut expected = serde_json::json!({
                    "version": REGISTRY_FORMAT_VERSION,
                    "agents": agents[..count],
                });
                if !omit_extensions {
                    expected["extensions"] = serde_json::json!([]);
                }
                let mut expected = serde_json::to_string_pretty(&expected).unwrap();
                expected.push('\n');
                let mut written = Vec::new();
                let composed = agents[..count]
                    .iter()
                    .map(|agent| Published::Composed(Cow::Owned(indented(agent))));
                write_document(&mut written, composed, omit_extensions).unwrap();
                assert_eq!(String::from_utf8(written).unwrap(), expected);
            }
        }
    }
}
