//! The front matter of an Agent Skill's `SKILL.md`: the YAML block between the `---` lines,
//! read with a YAML 1.2 parser (saphyr), every key and value with its byte span in the file.
//!
//! One reader for the rules (`rules::skills`), `pack` (the folder the archive names) and the
//! collaboration engine's install (the name it installs under), and the specification's
//! limits in one place.

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use saphyr_parser::{Event, Parser};

use acp_registry_core::source::Span;

/// Longest `name` the Agent Skills specification allows, in characters.
pub(crate) const NAME_MAX: usize = 64;
/// Longest `description`, in characters.
pub(crate) const DESCRIPTION_MAX: usize = 1024;
/// Longest `compatibility`, in characters.
pub(crate) const COMPATIBILITY_MAX: usize = 500;
/// The specification recommends a `SKILL.md` body under this many lines.
pub(crate) const BODY_LINES_MAX: usize = 500;

/// The front-matter keys of the Agent Skills specification, the only ones its reference
/// validator (`agentskills validate`) accepts.
pub(crate) const SPEC_KEYS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// Keys Claude Code defines on top of the specification (its skills documentation); other
/// clients ignore them and the reference validator rejects them.
pub(crate) const CLAUDE_CODE_KEYS: [&str; 13] = [
    "agent",
    "argument-hint",
    "arguments",
    "context",
    "disable-model-invocation",
    "disallowed-tools",
    "effort",
    "hooks",
    "model",
    "paths",
    "shell",
    "user-invocable",
    "when_to_use",
];

/// A value of the front matter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A string (plain, quoted or block scalar), as YAML reads it.
    Str(String),
    /// A mapping with string keys, in document order.
    Map(Vec<Field>),
    /// Anything else, by kind: `a number`, `a boolean`, `null`, `a list`, `a mapping with
    /// keys that are not strings`.
    Other(&'static str),
}

/// One `key: value` of a mapping.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    /// The key.
    pub key: String,
    /// The key's bytes in the file.
    pub key_span: Span,
    /// The value.
    pub value: Value,
    /// The value's first line in the file (a block scalar: its indicator line).
    pub value_span: Span,
}

/// A parsed front matter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FrontMatter {
    /// The top-level keys, in document order.
    pub fields: Vec<Field>,
    /// The YAML constructs the reference validator's strict YAML reader refuses (flow
    /// collections, anchors, aliases, tags, a `---` inside the block), each with its place.
    pub refused: Vec<(&'static str, Span)>,
    /// Where the Markdown body starts (after the closing `---` line).
    pub body_start: usize,
}

impl FrontMatter {
    /// The top-level field `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.key == key)
    }
}

/// Why there is no front matter to read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FrontMatterError {
    /// The file does not start with a `---` line.
    #[error("SKILL.md does not start with a `---` front matter block")]
    NoBlock,
    /// No closing `---` line.
    #[error("the front matter block opened by `---` is never closed by a `---` line")]
    Unclosed,
    /// The YAML does not parse.
    #[error("the front matter is not valid YAML: {message}")]
    Yaml {
        /// The parser's words.
        message: String,
        /// Where it stopped.
        at: usize,
    },
    /// The YAML is not a mapping (a list, a string, nothing at all).
    #[error("the front matter is not a mapping of `key: value` lines")]
    NotMapping,
}

impl FrontMatterError {
    /// Where in the file the problem is.
    pub(crate) fn span(&self, text: &str) -> Span {
        match self {
            FrontMatterError::Yaml { at, .. } => Span::new(*at, *at),
            _ => Span::new(0, text.len().min(3)),
        }
    }
}

/// The YAML block: (its byte range, where the body starts).
fn block(text: &str) -> Result<(usize, usize, usize), FrontMatterError> {
    let rest = text.strip_prefix("---").ok_or(FrontMatterError::NoBlock)?;
    let rest = rest
        .trim_start_matches([' ', '\t'])
        .strip_prefix("\r\n")
        .or_else(|| rest.trim_start_matches([' ', '\t']).strip_prefix('\n'))
        .ok_or(FrontMatterError::NoBlock)?;
    let start = text.len() - rest.len();
    let mut offset = start;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Ok((start, offset, offset + line.len()));
        }
        offset += line.len();
    }
    Err(FrontMatterError::Unclosed)
}

/// Byte offsets of the YAML parser's character indices, relative to `base`.
struct Offsets {
    base: usize,
    bytes: Vec<usize>,
}

impl Offsets {
    fn new(base: usize, yaml: &str) -> Self {
        let mut bytes: Vec<usize> = yaml.char_indices().map(|(i, _)| i).collect();
        bytes.push(yaml.len());
        Self { base, bytes }
    }

    fn at(&self, index: usize) -> usize {
        self.base
            + self
                .bytes
                .get(index)
                .copied()
                .unwrap_or(*self.bytes.last().unwrap_or(&0))
    }

    fn span(&self, yaml: &str, span: saphyr_parser::Span) -> Span {
        let start = self.at(span.start.index());
        let end = self.at(span.end.index()).max(start);
        // A value's span may run on over a comment and the following lines: keep its first line.
        let local = &yaml[start - self.base..end - self.base];
        let first = local.split('\n').next().unwrap_or(local);
        let first = match (first.chars().next(), first.find(" #")) {
            (Some(quote @ ('"' | '\'')), _) => match first.rfind(quote) {
                Some(close) if close > 0 => &first[..=close],
                _ => first,
            },
            (_, Some(comment)) => &first[..comment],
            _ => first,
        };
        Span::new(start, start + first.trim_end().len())
    }
}

/// Reads the front matter of `text` (a whole `SKILL.md`).
pub(crate) fn parse(text: &str) -> Result<FrontMatter, FrontMatterError> {
    let (start, end, body_start) = block(text)?;
    let yaml = &text[start..end];
    let offsets = Offsets::new(start, yaml);
    let docs = MarkedYaml::load_from_str(yaml).map_err(|e| FrontMatterError::Yaml {
        message: e.info().to_owned(),
        at: offsets.at(e.marker().index()),
    })?;
    let Some(YamlData::Mapping(map)) = docs.first().map(|d| &d.data) else {
        return Err(FrontMatterError::NotMapping);
    };
    let fields = mapping(map, yaml, &offsets).ok_or(FrontMatterError::NotMapping)?;
    Ok(FrontMatter {
        fields,
        refused: refused(yaml, &offsets),
        body_start,
    })
}

/// The fields of a mapping whose keys are all strings.
fn mapping(
    map: &saphyr::AnnotatedMapping<'_, MarkedYaml<'_>>,
    yaml: &str,
    offsets: &Offsets,
) -> Option<Vec<Field>> {
    map.iter()
        .map(|(key, value)| {
            let YamlData::Value(Scalar::String(k)) = &key.data else {
                return None;
            };
            Some(Field {
                key: k.to_string(),
                key_span: offsets.span(yaml, key.span),
                value: value_of(value, yaml, offsets),
                value_span: offsets.span(yaml, value.span),
            })
        })
        .collect()
}

fn value_of(node: &MarkedYaml<'_>, yaml: &str, offsets: &Offsets) -> Value {
    match &node.data {
        YamlData::Value(Scalar::String(s)) => Value::Str(s.to_string()),
        YamlData::Value(Scalar::Null) => Value::Other("null"),
        YamlData::Value(Scalar::Boolean(_)) => Value::Other("a boolean"),
        YamlData::Value(Scalar::Integer(_) | Scalar::FloatingPoint(_)) => Value::Other("a number"),
        YamlData::Mapping(map) => mapping(map, yaml, offsets).map_or(
            Value::Other("a mapping with keys that are not strings"),
            Value::Map,
        ),
        YamlData::Sequence(_) => Value::Other("a list"),
        _ => Value::Other("a tagged or unreadable value"),
    }
}

/// What the reference validator's strict YAML reader (strictyaml) refuses, and the `---` at
/// which it ends the block (it splits the file at the first `---` anywhere).
fn refused(yaml: &str, offsets: &Offsets) -> Vec<(&'static str, Span)> {
    let mut found = Vec::new();
    for (event, span) in Parser::new_from_str(yaml).flatten() {
        let at = Span::new(offsets.at(span.start.index()), offsets.at(span.end.index()));
        let flow = || yaml[at.start - offsets.base..].starts_with(['{', '[']);
        let what = match event {
            Event::Alias(_) => Some("an alias (`*name`)"),
            Event::Scalar(_, _, anchor, tag) | Event::MappingStart(anchor, tag)
                if tag.is_some() || anchor != 0 =>
            {
                Some(if tag.is_some() {
                    "a tag (`!…`)"
                } else {
                    "an anchor (`&name`)"
                })
            }
            Event::SequenceStart(anchor, tag) if tag.is_some() || anchor != 0 => {
                Some(if tag.is_some() {
                    "a tag (`!…`)"
                } else {
                    "an anchor (`&name`)"
                })
            }
            Event::MappingStart(..) | Event::SequenceStart(..) if flow() => {
                Some("a flow collection (`{…}` or `[…]`)")
            }
            _ => None,
        };
        if let Some(what) = what {
            found.push((what, Span::new(at.start, at.start + 1)));
        }
    }
    if let Some(dashes) = yaml.find("---") {
        found.push((
            "`---` inside the block",
            Span::new(offsets.base + dashes, offsets.base + dashes + 3),
        ));
    }
    found
}

/// Why `name` is not a skill name (`^[a-z0-9]+(-[a-z0-9]+)*$`, 1–64 characters), in words.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    let count = name.chars().count();
    if name.is_empty() {
        return Some("it is empty".into());
    }
    if count > NAME_MAX {
        return Some(format!(
            "it has {count} characters, over the {NAME_MAX} allowed"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        let why = if c.is_uppercase() {
            "an uppercase letter"
        } else {
            "a character"
        };
        return Some(format!(
            "it has {why} `{}`; only a-z, 0-9 and `-` are allowed",
            c.escape_default()
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Some("it starts or ends with `-`".into());
    }
    name.contains("--")
        .then(|| "it has two hyphens in a row".into())
}

/// The Windows device name `name` is (`con`, `aux`, `com1`…, compared without case), which no
/// folder on Windows can be named: a skill becomes a folder of its name on every client.
pub(crate) fn device_name(name: &str) -> Option<&'static str> {
    const DEVICES: [&str; 22] = [
        "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
        "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
    ];
    let stem = name.split('.').next().unwrap_or(name);
    DEVICES
        .iter()
        .find(|d| d.eq_ignore_ascii_case(stem))
        .copied()
}

/// `name` made into a valid skill name: lowercase, runs of other characters as one `-`,
/// trimmed to 64 characters; `None` when nothing is left.
pub(crate) fn suggested_name(name: &str) -> Option<String> {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(NAME_MAX);
    let out = out.trim_end_matches('-').to_owned();
    (!out.is_empty()).then_some(out)
}

/// The `name` a `SKILL.md` declares, when it has a readable one.
pub(crate) fn declared_name(text: &str) -> Option<String> {
    match parse(text).ok()?.get("name")?.value {
        Value::Str(ref s) => Some(s.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn str_of<'a>(fm: &'a FrontMatter, key: &str) -> &'a str {
        match &fm.get(key).expect("key").value {
            Value::Str(s) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reads_the_yaml_forms_a_line_reader_gets_wrong() {
        let text = "---\n# a comment\nname: 'it''s' # trailing\ndescription: >-\n  Folded: with a colon\n  and \"quotes\".\nlicense: \"a \\\" quote: here\"\n---\nbody\n";
        let fm = parse(text).unwrap();
        assert_eq!(str_of(&fm, "name"), "it's");
        assert_eq!(
            str_of(&fm, "description"),
            "Folded: with a colon and \"quotes\"."
        );
        assert_eq!(str_of(&fm, "license"), "a \" quote: here");
        let name = fm.get("name").unwrap();
        assert_eq!(&text[name.key_span.start..name.key_span.end], "name");
        assert_eq!(&text[name.value_span.start..name.value_span.end], "'it''s'");
        assert_eq!(&text[fm.body_start..], "body\n");
        assert!(fm.refused.is_empty(), "{:?}", fm.refused);
    }

    #[test]
    fn spans_are_bytes_after_non_ascii_text() {
        let text = "---\ndescription: é ü\nname: x\n---\n";
        let fm = parse(text).unwrap();
        let name = fm.get("name").unwrap();
        assert_eq!(&text[name.key_span.start..name.key_span.end], "name");
    }

    #[test]
    fn reports_what_strict_yaml_refuses() {
        let text = "---\nname: &a x\nmetadata: {k: v}\nlicense: *a\ndescription: a---b\n---\n";
        let fm = parse(text).unwrap();
        let what: Vec<&str> = fm.refused.iter().map(|(w, _)| *w).collect();
        assert_eq!(
            what,
            [
                "an anchor (`&name`)",
                "a flow collection (`{…}` or `[…]`)",
                "an alias (`*name`)",
                "`---` inside the block"
            ]
        );
    }

    #[test]
    fn names_and_their_problems() {
        assert_eq!(name_problem("pdf-tools-2"), None);
        for bad in ["", "-a", "a-", "a--b", "Abc", "a_b", &"a".repeat(65)] {
            assert!(name_problem(bad).is_some(), "{bad}");
        }
        assert_eq!(
            suggested_name("My Skill__v2-").as_deref(),
            Some("my-skill-v2")
        );
        assert_eq!(suggested_name("__"), None);
    }

    #[test]
    fn a_block_needs_both_lines_and_a_mapping() {
        assert_eq!(parse("# x\n"), Err(FrontMatterError::NoBlock));
        assert_eq!(parse("---\nname: x\n"), Err(FrontMatterError::Unclosed));
        assert_eq!(parse("---\n- a\n---\n"), Err(FrontMatterError::NotMapping));
        assert_eq!(parse("---\n---\n"), Err(FrontMatterError::NotMapping));
        assert!(matches!(
            parse("---\nname: x\nname: y\n---\n"),
            Err(FrontMatterError::Yaml { .. })
        ));
    }
}
