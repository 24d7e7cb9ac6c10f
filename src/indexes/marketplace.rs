//! Claude Code plugin marketplaces (`.claude-plugin/marketplace.json`) and plugin folders
//! (`.claude-plugin/plugin.json`, skills under `skills/<name>/` and in the folders an
//! entry's `skills` lists): the fields Claude Code reads, each `source` form, relative
//! sources and listed skill folders that stay inside their root (no `..`, no link on the
//! way), and each local plugin's skills judged by the skill rules.

use std::collections::BTreeMap;
use std::path::Path;

use acp_registry_client::skill_index::{
    is_safe_listed_path, is_skill_name, PLUGIN_DIR, PLUGIN_FILE,
};
use acp_registry_core::fs::Kind;
use acp_registry_core::source::Span;

use super::context::Ctx;
use super::document::{self, Doc};
use super::limits::MAX_SKILLS;
use super::origin::Place;
use super::skill;
use crate::diagnostics::{Code, Diagnostic, Severity};
use crate::manifest::Node;

/// Check the marketplace at `place`.
pub(crate) fn check(ctx: &mut Ctx, place: &Place) {
    let Some(doc) = document::read(ctx, place, Code::MarketplaceFormat) else {
        return;
    };
    let Some(plugins) = top_level(ctx, &doc) else {
        return;
    };
    let root = root_of(place);
    let mut names = BTreeMap::new();
    for plugin in plugins.iter().take(MAX_SKILLS) {
        ctx.counted();
        if plugin.as_object().is_none() {
            ctx.push(
                doc.at(
                    Code::MarketplaceFormat,
                    plugin.span,
                    "a plugin entry is not an object",
                )
                .help("write `{\"name\", \"source\", \"description\"}`"),
            );
            continue;
        }
        let name = plugin_name(ctx, &doc, plugin, &mut names);
        match plugin.get("source") {
            None => ctx.push(
                doc.at(
                    Code::MarketplaceSource,
                    plugin.span,
                    "the plugin has no `source`",
                )
                .help("add `\"source\": \"./plugins/<name>\"` or a source object"),
            ),
            Some(source) => match &source.value {
                crate::manifest::NodeValue::String(path) => {
                    if let Some(folder) = relative_source(ctx, &doc, &root, path, source.span, name)
                    {
                        listed_skills(ctx, &doc, plugin.get("skills"), &folder);
                    }
                }
                _ => object_source(ctx, &doc, source),
            },
        }
    }
}

/// The marketplace root: above `.claude-plugin/`, else the file's folder.
fn root_of(place: &Place) -> Place {
    let folder = place.parent();
    let in_plugin_dir = match &folder {
        Place::Local { rel, .. } => rel.rsplit('/').next() == Some(PLUGIN_DIR),
        Place::Remote(url) => url.path().trim_end_matches('/').ends_with(PLUGIN_DIR),
    };
    if !in_plugin_dir {
        return folder;
    }
    match folder {
        Place::Local { base, rel } => {
            Place::local(&base, rel.rsplit_once('/').map_or("", |(up, _)| up))
        }
        Place::Remote(url) => Place::Remote(url.join("../").unwrap_or(url)),
    }
}

/// The marketplace's `name`, `owner`, description and `plugins`.
fn top_level<'d>(ctx: &mut Ctx, doc: &'d Doc) -> Option<&'d [Node]> {
    let root = &doc.root;
    let start = Span::new(root.span.start, root.span.start + 1);
    if root.as_object().is_none() {
        ctx.push(
            doc.at(
                Code::MarketplaceFormat,
                root.span,
                "the marketplace is not a JSON object",
            )
            .help("write `{\"name\", \"owner\", \"plugins\"}`"),
        );
        return None;
    }
    name_and_owner(ctx, doc, start);
    let described = document::string(root, "description").is_ok()
        || root
            .get("metadata")
            .is_some_and(|m| document::string(m, "description").is_ok());
    if !described {
        let mut finding = doc.at(Code::MarketplaceFormat, start, "the marketplace has no description").help("add `\"metadata\": {\"description\": \"…\"}` (`claude plugin validate` warns without it)");
        finding.severity = Severity::Warning;
        ctx.push(finding);
    }
    match root.get("plugins").map(|p| (p, p.as_array())) {
        Some((_, Some(items))) => Some(items),
        Some((node, None)) => {
            ctx.push(
                doc.at(
                    Code::MarketplaceFormat,
                    node.span,
                    "`plugins` is not an array",
                )
                .help("write `\"plugins\": [...]`"),
            );
            None
        }
        None => {
            ctx.push(
                doc.at(
                    Code::MarketplaceFormat,
                    start,
                    "the marketplace has no `plugins`",
                )
                .help("add `\"plugins\": [...]`"),
            );
            None
        }
    }
}

/// The marketplace's `name` (kebab-case) and `owner` (an object with a `name`).
fn name_and_owner(ctx: &mut Ctx, doc: &Doc, start: Span) {
    let root = &doc.root;
    match document::string(root, "name") {
        Ok((name, _)) if is_skill_name(name) => {}
        Ok((name, span)) => ctx.push(
            doc.at(
                Code::MarketplaceFormat,
                span,
                format!("marketplace name `{name}` is not kebab-case"),
            )
            .help("use lowercase letters, digits and single hyphens: users type it after `@`"),
        ),
        Err(span) => ctx.push(
            doc.at(
                Code::MarketplaceFormat,
                span,
                "the marketplace has no string `name`",
            )
            .help("add `\"name\"`, kebab-case"),
        ),
    }
    match root.get("owner") {
        Some(owner) if owner.as_object().is_some() => {
            if let Err(span) = document::string(owner, "name") {
                ctx.push(
                    doc.at(
                        Code::MarketplaceFormat,
                        span,
                        "`owner` has no string `name`",
                    )
                    .help("add `\"name\"` to `owner`"),
                );
            }
        }
        Some(owner) => ctx.push(
            doc.at(
                Code::MarketplaceFormat,
                owner.span,
                "`owner` is not an object",
            )
            .help("write `\"owner\": {\"name\": \"…\"}`"),
        ),
        None => ctx.push(
            doc.at(
                Code::MarketplaceFormat,
                start,
                "the marketplace has no `owner`",
            )
            .help("add `\"owner\": {\"name\": \"…\"}`"),
        ),
    }
}

fn plugin_name<'d>(
    ctx: &mut Ctx,
    doc: &'d Doc,
    plugin: &'d Node,
    names: &mut BTreeMap<String, Span>,
) -> Option<(&'d str, Span)> {
    if document::string(plugin, "description").is_err() {
        let mut finding = doc
            .at(
                Code::MarketplaceFormat,
                plugin.span,
                "the plugin has no description",
            )
            .help("add `\"description\"`: users choose plugins by it");
        finding.severity = Severity::Warning;
        ctx.push(finding);
    }
    match document::string(plugin, "name") {
        Ok((name, span)) if is_skill_name(name) => {
            if let Some(first) = names.insert(name.to_string(), span) {
                let line = doc.source.range(first).0.line;
                ctx.push(
                    doc.at(
                        Code::MarketplaceFormat,
                        span,
                        format!("plugin `{name}` is listed twice (first on line {line})"),
                    )
                    .help("give each plugin its own name"),
                );
            }
            Some((name, span))
        }
        Ok((name, span)) => {
            ctx.push(
                doc.at(
                    Code::MarketplaceFormat,
                    span,
                    format!("plugin name `{name}` is not kebab-case"),
                )
                .help("use lowercase letters, digits and single hyphens"),
            );
            None
        }
        Err(span) => {
            ctx.push(
                doc.at(
                    Code::MarketplaceFormat,
                    span,
                    "the plugin has no string `name`",
                )
                .help("add `\"name\"`, kebab-case"),
            );
            None
        }
    }
}

/// A `./…` source: inside the root, no link on the way, the folder there, its plugin checked;
/// the plugin's folder when it can be read.
fn relative_source(
    ctx: &mut Ctx,
    doc: &Doc,
    root: &Place,
    path: &str,
    span: Span,
    name: Option<(&str, Span)>,
) -> Option<Place> {
    let Some(plugin) = root.dot_child(path) else {
        ctx.push(
            doc.at(
                Code::MarketplaceSource,
                span,
                format!("source `{path}` is not a `./` path inside the marketplace root"),
            )
            .help("write `./plugins/<name>`: relative, forward slashes, no `..`"),
        );
        return None;
    };
    if let Place::Local { base, rel } = &plugin {
        if let Err(e) = acp_registry_core::fs::no_link_below(base, Path::new(rel)) {
            ctx.push(doc.at(Code::MarketplaceSource, span, format!("source `{path}` cannot be used: {e}")).help("keep the plugin a real folder inside the marketplace (links are never followed)"));
            return None;
        }
        if !matches!(
            acp_registry_core::fs::kind(&base.join(rel)),
            Ok(Some(Kind::Dir))
        ) {
            ctx.push(
                doc.at(
                    Code::MarketplaceSource,
                    span,
                    format!("source `{path}`: {} is not a folder", plugin.shown()),
                )
                .help("add the plugin folder, or fix `source`"),
            );
            return None;
        }
    } else {
        let mut finding = doc.at(Code::MarketplaceSource, span, format!("relative source `{path}` in a marketplace read by URL: Claude Code cannot install it from a marketplace added by URL")).help("tell users to add the repository (or a clone) as the marketplace, or use a `github`/`url` source");
        finding.severity = Severity::Warning;
        ctx.push(finding);
    }
    check_plugin(ctx, &plugin, name.map(|(n, _)| n));
    Some(plugin)
}

/// An entry's `skills`: `./` paths of folders inside the plugin, each (when local) a skill
/// folder holding `SKILL.md`, judged by the skill rules, or a folder of skill folders.
fn listed_skills(ctx: &mut Ctx, doc: &Doc, listed: Option<&Node>, plugin: &Place) {
    let Some(listed) = listed else {
        return;
    };
    let Some(paths) = listed.as_array() else {
        ctx.push(
            doc.at(
                Code::MarketplaceSource,
                listed.span,
                "`skills` is not an array",
            )
            .help("write `\"skills\": [\"./<folder>\"]`"),
        );
        return;
    };
    for node in paths.iter().take(MAX_SKILLS) {
        let path = node.as_str().unwrap_or_default();
        let Some(folder) = plugin.dot_child(path) else {
            ctx.push(
                doc.at(
                    Code::MarketplaceSource,
                    node.span,
                    format!("`skills` path `{path}` is not a `./` path inside the plugin"),
                )
                .help("write `./<folder>`: relative to `source`, forward slashes, no `..`"),
            );
            continue;
        };
        if let Place::Local { base, rel } = &folder {
            if let Err(reason) = listed_folder(base, rel) {
                ctx.push(
                    doc.at(
                        Code::MarketplaceSource,
                        node.span,
                        format!("`skills` path `{path}`: {} {reason}", folder.shown()),
                    )
                    .help("list real folders of the plugin (links are never followed)"),
                );
                continue;
            }
            listed_folder_skills(ctx, base, rel, &folder);
        }
    }
}

/// Why the listed folder `base/rel` cannot be read, if it cannot.
fn listed_folder(base: &Path, rel: &str) -> Result<(), String> {
    acp_registry_core::fs::no_link_below(base, Path::new(rel))
        .map_err(|e| format!("cannot be used: {e}"))?;
    match acp_registry_core::fs::kind(&base.join(rel)) {
        Ok(Some(Kind::Dir)) => Ok(()),
        Ok(None) => Err("does not exist".into()),
        _ => Err("is not a folder".into()),
    }
}

/// The skill a listed folder is (it holds `SKILL.md`), or the skill folders it holds.
fn listed_folder_skills(ctx: &mut Ctx, base: &Path, rel: &str, folder: &Place) {
    let dir = base.join(rel);
    if matches!(
        acp_registry_core::fs::kind(&dir.join("SKILL.md")),
        Ok(Some(_))
    ) {
        if let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) {
            skill_rules_at(ctx, parent, &name.to_string_lossy(), folder);
        }
        return;
    }
    let Ok(children) = acp_registry_core::fs::list_dir(&dir) else {
        return;
    };
    for child in children
        .iter()
        .filter(|c| c.kind == Kind::Dir)
        .take(MAX_SKILLS)
    {
        let name = child.name();
        let skill = Place::local(base, &format!("{rel}/{name}"));
        skill_rules_at(ctx, &dir, &name, &skill);
    }
}

/// The skill rules on `parent/name/`, findings named below `skill`, its place.
fn skill_rules_at(ctx: &mut Ctx, parent: &Path, name: &str, skill: &Place) {
    let shown_of = |file: &str| match file {
        "." => skill.shown(),
        file => skill
            .child(file)
            .map_or_else(|| format!("{}/{file}", skill.shown()), |p| p.shown()),
    };
    skill::run_rules(ctx, parent, name, &shown_of);
}

/// An object `source`: its shape by its `source` kind (not fetched).
fn object_source(ctx: &mut Ctx, doc: &Doc, source: &Node) {
    if source.as_object().is_none() {
        ctx.push(doc.at(Code::MarketplaceSource, source.span, "`source` is neither a `./` path nor an object").help("write `\"./plugins/<name>\"` or `{\"source\": \"github\", \"repo\": \"owner/repo\"}`"));
        return;
    }
    let required: &[&str] = match document::string(source, "source") {
        Ok(("github", _)) => &["repo"],
        Ok(("url", _)) => &["url"],
        Ok(("git-subdir", _)) => &["url", "path"],
        Ok(("npm", _)) => &["package"],
        Ok((kind, span)) => {
            ctx.push(
                doc.at(
                    Code::MarketplaceSource,
                    span,
                    format!("unknown source kind `{kind}`"),
                )
                .help("use `github`, `url`, `git-subdir` or `npm`"),
            );
            return;
        }
        Err(span) => {
            ctx.push(
                doc.at(
                    Code::MarketplaceSource,
                    span,
                    "the source object has no string `source` kind",
                )
                .help("add `\"source\": \"github\"` (or `url`, `git-subdir`, `npm`)"),
            );
            return;
        }
    };
    for key in required {
        match document::string(source, key) {
            Err(span) => ctx.push(
                doc.at(
                    Code::MarketplaceSource,
                    span,
                    format!("the source has no string `{key}`"),
                )
                .help(format!("add `\"{key}\"`")),
            ),
            Ok((value, span)) => {
                if let Some(problem) = value_problem(key, value) {
                    ctx.push(
                        doc.at(
                            Code::MarketplaceSource,
                            span,
                            format!("`{key}` `{value}` {problem}"),
                        )
                        .help("fix the value"),
                    );
                }
            }
        }
    }
}

fn value_problem(key: &str, value: &str) -> Option<&'static str> {
    let ok = match key {
        "repo" => {
            let parts: Vec<&str> = value.split('/').collect();
            parts.len() == 2
                && parts.iter().all(|p| {
                    !p.is_empty()
                        && p.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
                })
        }
        "url" => {
            value.starts_with("https://")
                || value.starts_with("git@")
                || value.starts_with("ssh://")
        }
        "path" => is_safe_listed_path(value.trim_end_matches('/')),
        _ => !value.trim().is_empty(),
    };
    (!ok).then_some(match key {
        "repo" => "is not `owner/repo`",
        "url" => "is not an https, ssh or git@ URL",
        "path" => "is not a relative path inside the repository",
        _ => "is empty",
    })
}

/// A plugin folder given on its own.
pub(crate) fn check_plugin_folder(ctx: &mut Ctx, place: &Place) {
    ctx.counted();
    check_plugin(ctx, place, None);
}

/// A plugin's manifest and (local) skills; `expected` is its marketplace entry's name. A local
/// plugin without `.claude-plugin/plugin.json` is one Claude Code reads all the same (the
/// manifest is optional: the folder names the plugin, a `strict: false` entry describes it),
/// so only a manifest that is there is checked.
fn check_plugin(ctx: &mut Ctx, plugin: &Place, expected: Option<&str>) {
    let Some(manifest) = plugin.child(&format!("{PLUGIN_DIR}/{PLUGIN_FILE}")) else {
        return;
    };
    let absent = match &manifest {
        Place::Local { base, rel } => {
            matches!(acp_registry_core::fs::kind(&base.join(rel)), Ok(None))
        }
        _ => false,
    };
    if !absent {
        if let Some(doc) = document::read(ctx, &manifest, Code::PluginManifest) {
            plugin_fields(ctx, &doc, expected);
        }
    }
    if let Place::Local { base, rel } = plugin {
        plugin_skills(ctx, &base.join(rel), plugin);
    }
}

fn plugin_fields(ctx: &mut Ctx, doc: &Doc, expected: Option<&str>) {
    let root = &doc.root;
    if root.as_object().is_none() {
        ctx.push(
            doc.at(
                Code::PluginManifest,
                root.span,
                "plugin.json is not a JSON object",
            )
            .help("write `{\"name\", \"description\", \"version\"}`"),
        );
        return;
    }
    match (document::string(root, "name"), expected) {
        (Ok((name, span)), _) if !is_skill_name(name) => ctx.push(
            doc.at(
                Code::PluginManifest,
                span,
                format!("plugin name `{name}` is not kebab-case"),
            )
            .help("use lowercase letters, digits and single hyphens"),
        ),
        (Ok((name, span)), Some(expected)) if name != expected => ctx.push(
            doc.at(
                Code::PluginManifest,
                span,
                format!("plugin.json names `{name}`, the marketplace lists `{expected}`"),
            )
            .help("use one name in both"),
        ),
        (Ok(_), _) => {}
        (Err(span), _) => ctx.push(
            doc.at(
                Code::PluginManifest,
                span,
                "plugin.json has no string `name`",
            )
            .help("add `\"name\"`, kebab-case"),
        ),
    }
    if let Some(version) = root.get("version") {
        if version
            .as_str()
            .is_none_or(|v| semver::Version::parse(v).is_err())
        {
            ctx.push(
                doc.at(
                    Code::PluginManifest,
                    version.span,
                    "`version` is not a semantic version",
                )
                .help("write `\"version\": \"1.2.3\"`"),
            );
        }
    }
    if document::string(root, "description").is_err() {
        let mut finding = doc
            .at(
                Code::PluginManifest,
                Span::new(root.span.start, root.span.start + 1),
                "plugin.json has no description",
            )
            .help("add `\"description\"`");
        finding.severity = Severity::Warning;
        ctx.push(finding);
    }
}

/// The skills of a local plugin, `skills/<name>/`, each by the skill rules in place.
fn plugin_skills(ctx: &mut Ctx, dir: &Path, plugin: &Place) {
    let skills = dir.join("skills");
    match acp_registry_core::fs::kind(&skills) {
        Ok(Some(Kind::Dir)) => {}
        Ok(None) => return,
        _ => {
            let shown = plugin
                .child("skills")
                .map_or_else(|| "skills".into(), |p| p.shown());
            ctx.push(
                Diagnostic::new(
                    Code::PluginManifest,
                    format!("{shown} is not a folder (a link is never followed)"),
                )
                .in_file(shown)
                .help("keep skills/ a real folder of the plugin"),
            );
            return;
        }
    }
    let Ok(children) = acp_registry_core::fs::list_dir(&skills) else {
        return;
    };
    for child in children.iter().take(MAX_SKILLS) {
        let name = child.name();
        let shown_of = |rel: &str| {
            plugin
                .child(&format!("skills/{name}/{rel}"))
                .or_else(|| plugin.child(&format!("skills/{name}")))
                .map_or_else(|| format!("skills/{name}/{rel}"), |p| p.shown())
        };
        if child.kind != Kind::Dir {
            let shown = shown_of("");
            ctx.push(
                Diagnostic::new(
                    Code::PluginManifest,
                    format!(
                        "{shown} is not a skill folder (a file, or a link that is never followed)"
                    ),
                )
                .in_file(shown)
                .help("keep only skill folders, skills/<name>/SKILL.md, in skills/"),
            );
            continue;
        }
        skill::run_rules(ctx, &skills, &name, &shown_of);
    }
}
