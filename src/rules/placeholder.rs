//! `placeholder`: the strings `acp-registry new` writes for a person to replace. They are
//! defined here once; `new` fills its templates from [`PLACEHOLDERS`] and [`SCAFFOLD_ICON`],
//! and this rule finds them, so an unedited scaffold never reaches `registry.json` or the site.

use super::entry::{display_path, EntryDir, ManifestDoc};
use super::sink::Sink;
use crate::diagnostics::{pin_digests_command, Code, Diagnostic};
use crate::manifest::{escape_pointer, Node, NodeValue};
use acp_registry_core::source::{SourceFile, Span};

/// The file of a new entry a placeholder is written into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scaffolded {
    /// A string of `agent.json`.
    Manifest,
    /// The text of `README.md`.
    Readme,
}

/// One string `new` writes that a person must replace.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placeholder {
    /// How the templates of `templates/new/` name it: `{{<token>}}`.
    pub token: &'static str,
    /// The text written, found again by the rule.
    pub text: &'static str,
    /// Where `new` writes it, and so where the rule looks for it.
    pub file: Scaffolded,
    /// What to write instead.
    pub help: &'static str,
}

/// Every placeholder of the scaffold. Matched case-sensitively and only as whole words (white
/// space of any kind between them), so "your organisation" or `your-orgs` in an honest
/// sentence is not one.
pub(crate) const PLACEHOLDERS: [Placeholder; 5] = [
    Placeholder {
        token: "org",
        text: "your-org",
        file: Scaffolded::Manifest,
        help: "write the owner of the agent's repository (the `example` of `https://github.com/example/my-agent`), or the whole URL where it lives elsewhere",
    },
    Placeholder {
        token: "author",
        text: "Your Name",
        file: Scaffolded::Manifest,
        help: "list the people or the organisation behind the agent",
    },
    Placeholder {
        token: "description",
        text: "One sentence on what the agent does for a developer.",
        file: Scaffolded::Manifest,
        help: "say in one sentence what the agent does for a developer; editors and the site show it in their agent lists",
    },
    Placeholder {
        token: "readme-intro",
        text: "What the agent does, in a few paragraphs: what it is good at, which models or services it\nuses, and what a developer needs before the first session (an account, an API key, a local\ntool).",
        file: Scaffolded::Readme,
        help: "describe the agent in a few paragraphs; the site shows README.md on the agent's page",
    },
    Placeholder {
        token: "readme-sign-in",
        text: "How to sign in, and which environment variables the agent reads.",
        file: Scaffolded::Readme,
        help: "say how a developer signs in (a login command, an API key variable), or that no sign-in is needed",
    },
];

/// The icon `new` writes: valid, so the icon rules pass, but nobody's logo.
pub(crate) const SCAFFOLD_ICON: &str = include_str!("../../templates/new/icon.svg");

/// Help for a placeholder inside a binary archive URL, which is replaced as a whole.
const ARCHIVE_HELP: &str = concat!(
    "write the URL your release serves this platform's archive at, then pin its `sha256` (`",
    pin_digests_command!(),
    "` downloads it and writes it)"
);

/// Report every placeholder of the manifest, `README.md` and the icons of one entry. `files`
/// are the entry's files the other rules read (icons, README).
pub(crate) fn check(
    doc: Option<&ManifestDoc>,
    entry: &EntryDir,
    files: &[SourceFile],
    sink: &mut Sink,
) {
    if !sink.keeps(Code::Placeholder) {
        return;
    }
    if let Some(doc) = doc {
        check_strings(doc, &doc.root, &mut Vec::new(), sink);
    }
    let readme = display_path(entry, "README.md");
    let icons = super::icons::ICON_FILES.map(|name| display_path(entry, name));
    for source in files {
        if source.path == readme {
            check_readme(source, sink);
        } else if icons.contains(&source.path) && is_scaffold_icon(&source.text) {
            sink.push(
                Diagnostic::new(
                    Code::Placeholder,
                    "this is the placeholder icon `acp-registry new` wrote; the site would publish it",
                )
                .in_file(source.path.clone())
                .help("draw the agent's own 16x16 icon (its logo, simplified) in `currentColor`"),
            );
        }
    }
}

/// The scaffold icon, whatever line endings a checkout gave it.
fn is_scaffold_icon(text: &str) -> bool {
    let scaffold = SCAFFOLD_ICON.trim_end();
    // Most icons differ in length already; only a near match is normalised and compared.
    let near = (scaffold.len()..=scaffold.len() + scaffold.lines().count() + 2)
        .contains(&text.trim_end().len());
    near && text.replace("\r\n", "\n").trim_end() == scaffold
}

/// One step from the manifest's root to a value: a member's key or an item's index.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The JSON pointer of `path`, built only for a value that holds a placeholder: most values
/// hold none, and a pointer for each would cost more than the search.
fn pointer_of(path: &[Step]) -> String {
    let mut pointer = String::new();
    for step in path {
        pointer.push('/');
        match step {
            Step::Key(key) => pointer.push_str(&escape_pointer(key)),
            Step::Index(i) => pointer.push_str(&i.to_string()),
        }
    }
    pointer
}

fn check_strings<'a>(doc: &ManifestDoc, node: &'a Node, path: &mut Vec<Step<'a>>, sink: &mut Sink) {
    match &node.value {
        NodeValue::String(value) => check_string(doc, node.span, value, path, sink),
        NodeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                check_strings(doc, item, path, sink);
                path.pop();
            }
        }
        NodeValue::Object(members) => {
            for member in members {
                path.push(Step::Key(&member.key));
                check_strings(doc, &member.value, path, sink);
                path.pop();
            }
        }
        NodeValue::Null | NodeValue::Bool(_) | NodeValue::Number(_) => {}
    }
}

/// Each placeholder in one string value, at its own span when written without escapes (else
/// at the whole value).
fn check_string(doc: &ManifestDoc, span: Span, value: &str, path: &[Step], sink: &mut Sink) {
    for placeholder in PLACEHOLDERS
        .iter()
        .filter(|p| p.file == Scaffolded::Manifest)
    {
        if occurrences(value, placeholder.text).is_empty() {
            continue;
        }
        let raw = &doc.source.text[span.start..span.end];
        let mut spans: Vec<Span> = occurrences(raw, placeholder.text)
            .into_iter()
            .map(|(start, end)| Span::new(span.start + start, span.start + end))
            .collect();
        if spans.is_empty() {
            spans.push(span);
        }
        let help = if matches!(path.last(), Some(Step::Key("archive"))) {
            ARCHIVE_HELP
        } else {
            placeholder.help
        };
        let pointer = pointer_of(path);
        for span in spans {
            sink.push(
                Diagnostic::new(Code::Placeholder, message(placeholder))
                    .at(&doc.source, span)
                    .pointer(pointer.clone())
                    .help(help),
            );
        }
    }
}

fn check_readme(source: &SourceFile, sink: &mut Sink) {
    for placeholder in PLACEHOLDERS.iter().filter(|p| p.file == Scaffolded::Readme) {
        for (start, end) in occurrences(&source.text, placeholder.text) {
            sink.push(
                Diagnostic::new(Code::Placeholder, message(placeholder))
                    .at(source, Span::new(start, end))
                    .help(placeholder.help),
            );
        }
    }
}

fn message(placeholder: &Placeholder) -> String {
    let words: Vec<&str> = placeholder.text.split_whitespace().collect();
    let shown = match words.get(..4) {
        Some(first) if words.len() > 4 => format!("{} …", first.join(" ")),
        _ => placeholder.text.to_string(),
    };
    format!("`{shown}` is a placeholder `acp-registry new` wrote")
}

/// The byte ranges where `placeholder` occurs in `text` as whole words, any run of white
/// space matching any other (a reflowed paragraph, CRLF line ends).
fn occurrences(text: &str, placeholder: &str) -> Vec<(usize, usize)> {
    let part_of_name = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    let mut words = placeholder.split_whitespace();
    let Some(first) = words.next() else {
        return Vec::new();
    };
    // Almost every string holds no placeholder: one search, nothing allocated.
    if !text.contains(first) {
        return Vec::new();
    }
    let rest: Vec<&str> = words.collect();
    let matched_from = |start: usize| {
        let mut end = start + first.len();
        for word in &rest {
            let gap = text[end..].len() - text[end..].trim_start().len();
            if gap == 0 || !text[end + gap..].starts_with(word) {
                return None;
            }
            end += gap + word.len();
        }
        Some(end)
    };
    text.match_indices(first)
        .filter_map(|(start, _)| Some((start, matched_from(start)?)))
        .filter(|&(start, end)| {
            let before = text[..start].chars().next_back();
            let after = text[end..].chars().next();
            !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_match_only_as_whole_words() {
        let found = |text| occurrences(text, "your-org");
        assert_eq!(found("https://github.com/your-org/x"), [(19, 27)]);
        assert_eq!(found("your-org"), [(0, 8)]);
        assert!(found("your-orgs and my-your-org and your-org_x").is_empty());
        assert!(found("your organisation").is_empty());
    }

    #[test]
    fn a_sentence_matches_across_reflowed_lines_and_crlf() {
        let text = "x\r\nHow to sign\r\nin, and which environment variables the agent\n  reads.\n";
        let sign_in = PLACEHOLDERS
            .iter()
            .find(|p| p.token == "readme-sign-in")
            .unwrap();
        let found = occurrences(text, sign_in.text);
        assert_eq!(found, [(3, text.len() - 1)]);
        assert!(occurrences("How to sign in, and which environment", sign_in.text).is_empty());
    }

    #[test]
    fn placeholders_need_no_escaping_in_json_or_markdown() {
        for p in PLACEHOLDERS {
            assert!(
                !p.text.contains(['"', '\\', '{', '}', '*', '_', '`']),
                "{}",
                p.token
            );
            assert!(p.file == Scaffolded::Readme || !p.text.contains('\n'));
        }
    }

    #[test]
    fn the_icon_is_recognised_whatever_its_line_endings() {
        assert!(is_scaffold_icon(&SCAFFOLD_ICON.replace('\n', "\r\n")));
        assert!(!is_scaffold_icon(
            &SCAFFOLD_ICON.replace("r=\"2\"", "r=\"3\"")
        ));
    }
}
