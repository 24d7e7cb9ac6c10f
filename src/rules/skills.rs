//! Skills shipped with an entry (`<id>/skill/`): front matter, links and size.

use std::path::{Component, Path};
use std::sync::OnceLock;

use regex::Regex;

use super::files::Listing;
use super::{display_path, read_text, Code, EntryDir, Sink};
use crate::diagnostics::Diagnostic;
use crate::fs::Kind;
use crate::source::{SourceFile, Span};

/// Size limit of an entry's `skill/` folder, all files together.
pub const MAX_SKILL_BYTES: u64 = 1024 * 1024;

pub(crate) fn check(
    entry: &EntryDir,
    listing: &Listing,
    sink: &mut Sink,
    sources: &mut Vec<SourceFile>,
) {
    if !listing.dirs.contains("skill") {
        return;
    }
    let dir = entry.path.join("skill");
    let size = walk(entry, &dir, "skill", sink);
    if size > MAX_SKILL_BYTES {
        sink.push(
            Diagnostic::new(
                Code::SkillTooLarge,
                format!("skill/ holds {size} bytes, over the 1 MiB limit"),
            )
            .in_file(display_path(entry, "skill"))
            .help("move large assets out of the skill; it is bundled into every archive"),
        );
    }
    let display = display_path(entry, "skill/SKILL.md");
    // Only absence is "no SKILL.md": a link, a folder or an unreadable file is reported by reading.
    if matches!(crate::fs::kind(&dir.join("SKILL.md")), Ok(None)) {
        sink.push(
            Diagnostic::new(Code::SkillFrontmatter, "skill/ has no SKILL.md")
                .in_file(display)
                .help("add SKILL.md starting with `---`, `name: <id>`, `description: …`, `---`"),
        );
        return;
    }
    let Some(text) = read_text(
        &entry.path,
        "skill/SKILL.md",
        &display,
        MAX_SKILL_BYTES,
        sink,
    ) else {
        return;
    };
    let source = SourceFile::new(display, text);
    check_front_matter(&source, &entry.name, sink);
    // Every mentioned path is looked up on disk: not worth it when the findings are dropped.
    if sink.keeps(Code::SkillLink) {
        check_links(&source, &dir, sink);
    }
    sources.push(source);
}

/// The bytes of the regular files under `dir` (`rel` below the entry), reporting links,
/// special files and folders that cannot be listed; none of them is followed or counted.
fn walk(entry: &EntryDir, dir: &Path, rel: &str, sink: &mut Sink) -> u64 {
    let children = match crate::fs::list_dir(dir) {
        Ok(children) => children,
        Err(e) => {
            sink.push(super::unlistable(&display_path(entry, rel), &e));
            return 0;
        }
    };
    let mut size = 0;
    for child in children {
        let child_rel = format!("{rel}/{}", child.name());
        let path = dir.join(&child.name);
        match child.kind {
            Kind::Dir => size += walk(entry, &path, &child_rel, sink),
            Kind::File => size += std::fs::symlink_metadata(&path).map_or(0, |m| m.len()),
            kind => {
                if let Some(refused) = super::refused(kind, &display_path(entry, &child_rel)) {
                    sink.push(refused);
                }
            }
        }
    }
    size
}

/// The front matter block: (byte range of its body, its `key: value` lines with spans).
fn front_matter(text: &str) -> Option<Vec<(String, String, Span)>> {
    let rest = text.strip_prefix("---")?;
    let rest = rest
        .strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix('\n'))?;
    let start = text.len() - rest.len();
    let mut fields = Vec::new();
    let mut offset = start;
    for line in rest.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if content == "---" {
            return Some(fields);
        }
        if let Some((key, value)) = content.split_once(':') {
            if !key.starts_with([' ', '\t', '-', '#']) {
                let value = value.trim().trim_matches(['"', '\'']).to_string();
                fields.push((
                    key.trim().to_string(),
                    value,
                    Span::new(offset, offset + content.len()),
                ));
            }
        }
        offset += line.len();
    }
    None
}

fn check_front_matter(source: &SourceFile, id: &str, sink: &mut Sink) {
    let Some(fields) = front_matter(&source.text) else {
        sink.push(
            Diagnostic::new(
                Code::SkillFrontmatter,
                "SKILL.md does not start with a `---` front matter block",
            )
            .at(source, Span::new(0, source.text.len().min(3)))
            .help(format!(
                "start the file with `---`, `name: {id}`, `description: …`, `---`"
            )),
        );
        return;
    };
    let get = |key: &str| fields.iter().find(|(k, _, _)| k == key);
    match get("name") {
        None => sink.push(
            Diagnostic::new(Code::SkillFrontmatter, "the front matter has no `name`")
                .at(source, Span::new(0, 3))
                .help(format!("add `name: {id}`")),
        ),
        Some((_, name, span)) if name != id => sink.push(
            Diagnostic::new(
                Code::SkillFrontmatter,
                format!("skill name `{name}` differs from the entry id `{id}`"),
            )
            .at(source, *span)
            .help(format!("set `name: {id}`")),
        ),
        Some(_) => {}
    }
    match get("description") {
        Some((_, d, _)) if !d.is_empty() => {}
        Some((_, _, span)) => sink.push(
            Diagnostic::new(Code::SkillFrontmatter, "the skill description is empty")
                .at(source, *span)
                .help("say in one or two sentences when an agent should use this skill"),
        ),
        None => sink.push(
            Diagnostic::new(
                Code::SkillFrontmatter,
                "the front matter has no `description`",
            )
            .at(source, Span::new(0, 3))
            .help("add `description: …`: when an agent should use this skill"),
        ),
    }
}

/// Relative Markdown link targets and `references/…`/`scripts/…` paths mentioned in the text.
fn mentioned_paths(text: &str) -> Vec<(String, Span)> {
    static LINK: OnceLock<Regex> = OnceLock::new();
    static MENTION: OnceLock<Regex> = OnceLock::new();
    let link = LINK
        .get_or_init(|| Regex::new(r"\]\(\s*<?([^)\s>]+)>?(?:\s+[^)]*)?\)").expect("valid regex"));
    let mention = MENTION.get_or_init(|| {
        Regex::new(
            r"(?:^|[\s`'(\[])((?:\./)?(?:references|scripts|assets)/[A-Za-z0-9._/-]*[A-Za-z0-9_-])",
        )
        .expect("valid regex")
    });
    let mut found = Vec::new();
    for c in link.captures_iter(text) {
        let target = c.get(1).expect("group");
        let value = target.as_str();
        if value.contains("://") || value.starts_with('#') || value.starts_with("mailto:") {
            continue;
        }
        let path = value.split('#').next().unwrap_or(value);
        if !path.is_empty() {
            found.push((path.to_string(), Span::new(target.start(), target.end())));
        }
    }
    for c in mention.captures_iter(text) {
        let target = c.get(1).expect("group");
        if !found
            .iter()
            .any(|(_, s)| s.start <= target.start() && target.end() <= s.end)
        {
            found.push((
                target.as_str().to_string(),
                Span::new(target.start(), target.end()),
            ));
        }
    }
    found
}

fn check_links(source: &SourceFile, dir: &Path, sink: &mut Sink) {
    for (path, span) in mentioned_paths(&source.text) {
        let relative = Path::new(&path);
        let escapes = relative.is_absolute()
            || relative
                .components()
                .try_fold(0i32, |depth, c| match c {
                    Component::ParentDir if depth == 0 => None,
                    Component::ParentDir => Some(depth - 1),
                    Component::Normal(_) => Some(depth + 1),
                    _ => Some(depth),
                })
                .is_none();
        if escapes {
            sink.push(
                Diagnostic::new(Code::SkillLink, format!("`{path}` points outside skill/"))
                    .at(source, span)
                    .help("a skill can only refer to files inside its own folder"),
            );
        } else if matches!(crate::fs::kind(&dir.join(relative)), Ok(None)) {
            sink.push(
                Diagnostic::new(
                    Code::SkillLink,
                    format!("`{path}` does not exist in skill/"),
                )
                .at(source, span)
                .help("add the file or fix the path"),
            );
        }
    }
}
