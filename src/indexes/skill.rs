//! A listed skill judged once its files are laid out in scratch (`<dir>/<name>/`): the skill
//! rules of `rules::skills`, their findings' files mapped back to the URLs or paths the index
//! names, and the index's `name` and `description` compared with the SKILL.md served.

use std::path::Path;

use acp_registry_core::source::Span;

use super::context::Ctx;
use super::document::Doc;
use crate::diagnostics::{Code, Severity};
use crate::manifest::skill::{self, Value};
use crate::rules::{check_skill_folder, MAX_SKILL_BYTES};

/// What the index says about a skill, with the spans to point at.
pub(crate) struct Listed<'d> {
    /// The index (or marketplace) the skill is listed in.
    pub(crate) doc: &'d Doc,
    /// The listed name.
    pub(crate) name: (&'d str, Span),
    /// The listed description, when valid.
    pub(crate) description: Option<(&'d str, Span)>,
}

/// Judge the skill at `<dir>/<name>/`; `shown(rel)` names the file `rel` of the skill as the
/// index serves it.
pub(crate) fn judge(
    ctx: &mut Ctx,
    dir: &Path,
    listed: &Listed<'_>,
    shown: &dyn Fn(&str) -> String,
) {
    let name = listed.name.0;
    run_rules(ctx, dir, name, shown);
    compare(ctx, dir, listed);
}

/// The skill rules on `<dir>/<name>/`, findings and excerpts renamed by `shown`.
pub(crate) fn run_rules(ctx: &mut Ctx, dir: &Path, name: &str, shown: &dyn Fn(&str) -> String) {
    let rename = |file: &str| {
        let rel = file
            .strip_prefix(name)
            .map_or(file, |rest| rest.trim_start_matches('/'));
        shown(if rel.is_empty() { "." } else { rel })
    };
    let policy = ctx.policy.clone();
    let (findings, sources) = check_skill_folder(dir, name, &policy);
    for mut finding in findings {
        finding.file = rename(&finding.file);
        ctx.push(finding);
    }
    for mut source in sources {
        source.path = rename(&source.path);
        ctx.keep(source);
    }
}

/// The index's `name` and `description` against the front matter of the SKILL.md served.
fn compare(ctx: &mut Ctx, dir: &Path, listed: &Listed<'_>) {
    let (name, name_span) = listed.name;
    let Ok(bytes) = acp_registry_core::fs::read_capped(
        dir,
        Path::new(&format!("{name}/SKILL.md")),
        MAX_SKILL_BYTES,
    ) else {
        return; // The skill rules report a missing or unreadable SKILL.md.
    };
    let Ok(front) = std::str::from_utf8(&bytes)
        .map_err(drop)
        .and_then(|t| skill::parse(t).map_err(drop))
    else {
        return; // skill-frontmatter reports it.
    };
    let text = |key: &str| match front.get(key).map(|f| &f.value) {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    };
    if let Some(declared) = text("name") {
        if declared != name {
            ctx.push(
                listed
                    .doc
                    .at(Code::IndexSkillMismatch, name_span, format!("the index lists `{name}`, its SKILL.md is named `{declared}`"))
                    .help("regenerate the index from the skill, or fix the skill's `name`: clients install it as the index's name"),
            );
        }
    }
    if let (Some(declared), Some((listed_text, span))) = (text("description"), listed.description) {
        if declared.trim() != listed_text.trim() {
            let mut finding = listed
                .doc
                .at(
                    Code::IndexSkillMismatch,
                    span,
                    format!("the description differs from the one in `{name}`'s SKILL.md"),
                )
                .help("regenerate the index from the skill, so it advertises what the skill says");
            finding.severity = Severity::Warning;
            ctx.push(finding);
        }
    }
}
