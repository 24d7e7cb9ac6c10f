//! The rules on one skill folder (an entry's or a stand-alone one): SKILL.md's front matter,
//! body and links, the paths of its files, and the skill as `build` publishes it.

use std::collections::BTreeMap;

use acp_registry_client::skill_index::is_safe_listed_path;

use super::checked::{CheckedSkill, SkillFile};
use super::skill_dir::{SkillDir, MAX_SKILL_BYTES};
use super::{frontmatter, links};
use crate::diagnostics::{Code, Diagnostic};
use crate::manifest::skill::{FrontMatter, Value, BODY_LINES_MAX};
use crate::rules::read::{decode_utf8, read_text};
use crate::rules::sink::Sink;
use acp_registry_core::source::{SourceFile, Span};

/// The rules on one skill folder; `paths`: every regular file's path (relative to the folder),
/// `files`: the files as read, `None` when they could not all be read (over the size limit,
/// a link, an unreadable file). Those bytes are used, not read again (a skill's build cost is
/// mostly its file opens). The skill as published when it can be.
pub(super) fn check_skill(
    skill: &SkillDir<'_>,
    paths: &[String],
    files: Option<BTreeMap<String, Vec<u8>>>,
    sink: &mut Sink,
    sources: &mut Vec<SourceFile>,
) -> Option<CheckedSkill> {
    check_paths(skill, paths, sink);
    let display = skill.display("SKILL.md");
    // Only absence is "no SKILL.md": a link, a folder or an unreadable file is reported by reading.
    let listed = paths.iter().any(|p| p == "SKILL.md");
    if !listed
        && matches!(
            acp_registry_core::fs::kind(&skill.path().join("SKILL.md")),
            Ok(None)
        )
    {
        sink.push(
            Diagnostic::new(
                Code::SkillFrontmatter,
                format!("{}/ has no SKILL.md", skill.shown_folder()),
            )
            .in_file(display)
            .help(format!(
                "add SKILL.md starting with `---`, `name: {}`, `description: …`, `---`",
                skill.folder.as_deref().unwrap_or(&skill.entry.name)
            )),
        );
        return None;
    }
    let text = match files.as_ref().and_then(|f| f.get("SKILL.md")) {
        Some(bytes) => decode_utf8(bytes.clone(), &display, sink)?,
        None => read_text(
            &skill.entry.path,
            &format!("{}/SKILL.md", skill.rel),
            &display,
            MAX_SKILL_BYTES,
            sink,
        )?,
    };
    let source = SourceFile::new(display, text);
    let front = frontmatter::check(&source, skill, sink);
    if let Some(front) = &front {
        check_body_length(&source, front.body_start, sink);
    }
    // Every mentioned path is looked up on disk: not worth it when the findings are dropped.
    if sink.keeps(Code::SkillLink) || sink.keeps(Code::SkillReferenceDepth) {
        let known = links::Known {
            paths,
            files: files.as_ref(),
        };
        links::check(&source, skill, &known, sink, sources);
    }
    let published = match (front, files) {
        (Some(front), Some(files)) => checked_skill(skill, &source, &front, files),
        _ => None,
    };
    sources.push(source);
    published
}

fn check_body_length(source: &SourceFile, body_start: usize, sink: &mut Sink) {
    let body = &source.text[body_start..];
    let lines = body.lines().count();
    if lines <= BODY_LINES_MAX {
        return;
    }
    // Point at the first line past the recommendation.
    let past: usize = body
        .split_inclusive('\n')
        .take(BODY_LINES_MAX)
        .map(str::len)
        .sum();
    let at = body_start + past;
    sink.push(
        Diagnostic::new(
            Code::SkillBodyLong,
            format!(
                "the body of SKILL.md has {lines} lines, over the {BODY_LINES_MAX} the Agent Skills specification recommends"
            ),
        )
        .at(source, Span::new(at, at))
        .help("move detailed sections into references/ files linked from SKILL.md; agents read those only when needed"),
    );
}

/// The published view of `skill`, when its front matter names it as its folder and has a
/// description; `files`: every file read below its folder (relative to it).
fn checked_skill(
    skill: &SkillDir<'_>,
    source: &SourceFile,
    front: &FrontMatter,
    files: BTreeMap<String, Vec<u8>>,
) -> Option<CheckedSkill> {
    let folder = skill.folder.as_ref()?;
    let name_field = front.get("name")?;
    let string = |key: &str| match front.get(key).map(|f| &f.value) {
        Some(Value::Str(s)) if !s.trim().is_empty() => Some(s.clone()),
        _ => None,
    };
    if string("name").as_ref() != Some(folder) {
        return None;
    }
    let version = match front.get("metadata").map(|f| &f.value) {
        Some(Value::Map(fields)) => fields.iter().find_map(|f| match &f.value {
            Value::Str(v) if f.key == "version" && !v.trim().is_empty() => Some(v.clone()),
            _ => None,
        }),
        _ => None,
    };
    // Sorted by path, as the map is.
    let files: Vec<SkillFile> = files
        .into_iter()
        .map(|(path, bytes)| SkillFile {
            executable: path.starts_with("scripts/"),
            path,
            bytes,
        })
        .collect();
    Some(CheckedSkill {
        name: folder.clone(),
        dir: skill.display("").trim_end_matches('/').to_owned(),
        skill_md: source.clone(),
        name_span: name_field.value_span,
        description: string("description")?,
        license: string("license"),
        compatibility: string("compatibility"),
        version,
        body_start: front.body_start,
        files,
    })
}

/// `skill-file-path`: a file whose path a skills index cannot list (the well-known index's
/// clients refuse the whole index, or skip the skill, for one such path).
fn check_paths(skill: &SkillDir<'_>, paths: &[String], sink: &mut Sink) {
    for path in paths {
        if is_safe_listed_path(path) {
            continue;
        }
        sink.push(
            Diagnostic::new(
                Code::SkillFilePath,
                format!(
                    "`{path}` cannot be listed in a skills index: a path there is printable \
                     ASCII, `/`-separated, without `..` or `\\`"
                ),
            )
            .in_file(skill.display(path))
            .help("rename the file with ASCII letters, digits, `-`, `_` and single dots"),
        );
    }
}
