//! `releases.json`: what each entry's sources said about their releases at the last
//! `update --apply` (docs/format.md, "Release history"), so `build` can tell clients publish
//! times while staying offline and deterministic.
//!
//! The file is input like any other (it arrives with pull requests), so it is read bounded:
//! through the core's `fs` at most [`MAX_RELEASES_BYTES`], its values counted
//! ([`MAX_VALUES`]) before the span-carrying tree is built, every kept string at most
//! [`MAX_TEXT_LEN`] bytes and every source at most [`MAX_SOURCE_RELEASES`] releases. Each
//! problem is one `releases-format` finding at the value, and the file is marked
//! [`Releases::malformed`]: `update --apply` then refuses to run rather than overwrite what it
//! could not read (the members it dropped would be lost).
//!
//! Writing is the other half of the format, kept here so the two cannot drift: the text is a
//! function of the members only (ids sorted, versions highest first in the registry's version
//! order, no time of its own), so recording what is already recorded leaves the bytes as they
//! are, and [`Releases::write`] then does not touch the file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::diagnostics::Code;
use crate::manifest::fields::{Fields, Keys};
use crate::manifest::jsonc::{self, Member, Node, NodeValue};
use crate::rules::{read_text, PreviewVersion, Sink};
use acp_registry_core::fs::{self, ReadError, ValueBudget};
use acp_registry_core::source::{offset_of, SourceFile, Span};
use acp_registry_core::time::{format_utc, parse_iso_utc_seconds};

/// The file, at the registry root.
pub(crate) const RELEASES_FILE: &str = "releases.json";
/// The largest file read: a thousand entries of three sources of a dozen releases each take
/// about 1.5 MiB.
pub(crate) const MAX_RELEASES_BYTES: u64 = 4 << 20;
/// JSON values counted before a tree is built: a tree of tiny values costs far more than
/// their text, and the file a pull request brings is untrusted.
pub(crate) const MAX_VALUES: u64 = 500_000;
/// The longest string kept (ids, names, versions, digests, messages).
pub(crate) const MAX_TEXT_LEN: usize = 1024;
/// Releases one source may list in the file (what `update` writes is at most
/// [`RECORDED`] plus the pins).
pub(crate) const MAX_SOURCE_RELEASES: usize = 64;
/// The highest releases `update` records per source, besides the entry's pins.
pub(crate) const RECORDED: usize = 10;
/// The format's `version`.
const FORMAT_VERSION: &str = "1";

/// The release history of every entry, as read from `releases.json` (empty without one).
#[derive(Debug, Clone, Default)]
pub(crate) struct Releases {
    /// By entry id, every member the file has (ids no entry declares included).
    pub(crate) agents: BTreeMap<String, AgentReleases>,
    /// The file as read, when there is one (findings point into it; [`Releases::write`]
    /// compares with it).
    pub(crate) source: Option<SourceFile>,
    /// The file exists but could not be read whole: a finding says why, and it must not be
    /// overwritten.
    pub(crate) malformed: bool,
}

/// One entry's sources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AgentReleases {
    pub(crate) npm: Option<SourceReleases>,
    pub(crate) pypi: Option<SourceReleases>,
    pub(crate) github: Option<SourceReleases>,
    /// A release feed declared in the configuration (`feeds`).
    pub(crate) feed: Option<SourceReleases>,
}

/// One source's releases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceReleases {
    /// The npm or `PyPI` package, `owner/repo` for GitHub, the feed's URL for a feed.
    pub(crate) name: String,
    /// Highest first, one per version.
    pub(crate) versions: Vec<Release>,
}

/// What a source said about one release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Release {
    /// `X.Y.Z` or `X.Y.Z-preview.N`, canonical (`PyPI`'s `X.Y.ZrcN` as a preview).
    pub(crate) version: String,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) published: Option<String>,
    /// npm's `dist.integrity` (`sha512-…`), or `sha256:<hex>` of a `PyPI` release's only file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) digest: Option<String>,
    /// `PyPI`: every file of the release is yanked.
    #[serde(skip_serializing_if = "is_false")]
    pub(crate) yanked: bool,
    /// npm's deprecation message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) deprecated: Option<String>,
    /// The version is a `-preview.N`.
    #[serde(skip_serializing_if = "is_false")]
    pub(crate) preview: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_false(b: &bool) -> bool {
    !*b
}

/// Where an entry's release history comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SourceKind {
    Npm,
    Pypi,
    GitHub,
    /// A release feed of the configuration's `feeds`.
    Feed,
}

impl SourceKind {
    const ALL: [SourceKind; 4] = [
        SourceKind::Npm,
        SourceKind::Pypi,
        SourceKind::GitHub,
        SourceKind::Feed,
    ];

    /// The member of an entry's object.
    pub(crate) fn key(self) -> &'static str {
        match self {
            SourceKind::Npm => "npm",
            SourceKind::Pypi => "pypi",
            SourceKind::GitHub => "github",
            SourceKind::Feed => "feed",
        }
    }

    /// The member naming the source: a package, or a repository.
    fn name_key(self) -> &'static str {
        match self {
            SourceKind::GitHub => "repository",
            SourceKind::Feed => "url",
            SourceKind::Npm | SourceKind::Pypi => "package",
        }
    }
}

/// Why `releases.json` could not be written; the file is as it was.
#[derive(Debug, thiserror::Error)]
pub enum ReleasesError {
    /// The file could not be read whole; overwriting it would lose what it holds.
    #[error(
        "{RELEASES_FILE} is malformed, and update never overwrites a file it cannot read: fix it \
         (`acp-registry validate` says where), or restore it from git, or delete it to record \
         the history again, then run again"
    )]
    Malformed,
    /// Writing failed.
    #[error("cannot write {RELEASES_FILE}: {0}")]
    Io(ReadError),
}

impl Release {
    /// A release of `version` the source said nothing more about.
    pub(crate) fn new(version: PreviewVersion) -> Release {
        Release {
            version: version.to_string(),
            published: None,
            digest: None,
            yanked: false,
            deprecated: None,
            preview: version.preview.is_some(),
        }
    }

    /// The version in the registry's order (`None` only for text that never came from the
    /// file or a source).
    pub(crate) fn order(&self) -> Option<PreviewVersion> {
        PreviewVersion::parse(&self.version)
    }
}

impl SourceReleases {
    /// What `update` records of a source offering `all`: its [`RECORDED`] highest releases,
    /// plus those of `pins` (the entry's stable and preview versions) that are older, highest
    /// first; a pin the source does not list is not invented.
    pub(crate) fn recorded(
        name: String,
        mut all: Vec<Release>,
        pins: &[PreviewVersion],
    ) -> SourceReleases {
        sort_highest_first(&mut all);
        all.dedup_by(|a, b| a.order() == b.order());
        let mut kept = 0;
        all.retain(|release| {
            kept += 1;
            kept <= RECORDED || release.order().is_some_and(|v| pins.contains(&v))
        });
        SourceReleases {
            name,
            versions: all,
        }
    }
}

fn sort_highest_first(releases: &mut [Release]) {
    releases.sort_by_key(|r| std::cmp::Reverse(r.order()));
}

impl AgentReleases {
    /// The source of `kind`, if recorded.
    pub(crate) fn get(&self, kind: SourceKind) -> Option<&SourceReleases> {
        match kind {
            SourceKind::Npm => self.npm.as_ref(),
            SourceKind::Pypi => self.pypi.as_ref(),
            SourceKind::GitHub => self.github.as_ref(),
            SourceKind::Feed => self.feed.as_ref(),
        }
    }

    fn slot(&mut self, kind: SourceKind) -> &mut Option<SourceReleases> {
        match kind {
            SourceKind::Npm => &mut self.npm,
            SourceKind::Pypi => &mut self.pypi,
            SourceKind::GitHub => &mut self.github,
            SourceKind::Feed => &mut self.feed,
        }
    }

    fn is_empty(&self) -> bool {
        SourceKind::ALL.iter().all(|k| self.get(*k).is_none())
    }
}

impl Releases {
    /// Read `releases.json` from the registry root, if present; each problem is a finding.
    pub(crate) fn load(root: &Path, sink: &mut Sink) -> Releases {
        // Only absence means "no history": a link or a special file is reported by reading.
        if matches!(fs::kind(&root.join(RELEASES_FILE)), Ok(None)) {
            return Releases::default();
        }
        match read_text(root, RELEASES_FILE, RELEASES_FILE, MAX_RELEASES_BYTES, sink) {
            Some(text) => Releases::parse(SourceFile::new(RELEASES_FILE, text), sink),
            None => Releases {
                malformed: true,
                ..Releases::default()
            },
        }
    }

    /// The members of `source`'s text; a member with a problem is left out.
    pub(crate) fn parse(source: SourceFile, sink: &mut Sink) -> Releases {
        let mut fields = Fields::new(&source, Code::ReleasesFormat);
        let agents = read_document(&source, &mut fields);
        let malformed = !fields.findings.is_empty();
        for finding in fields.findings {
            sink.push(finding);
        }
        Releases {
            agents,
            source: Some(source),
            malformed,
        }
    }

    /// Record `releases` as the entry `id`'s source of `kind`, replacing what was there
    /// (versions put highest first, as the file keeps them).
    pub(crate) fn set(&mut self, id: &str, kind: SourceKind, mut releases: SourceReleases) {
        sort_highest_first(&mut releases.versions);
        let agent = self.agents.entry(id.to_string()).or_default();
        *agent.slot(kind) = Some(releases);
    }

    /// Drop the members of ids no entry declares.
    pub(crate) fn retain_ids(&mut self, ids: &BTreeSet<&str>) {
        self.agents.retain(|id, _| ids.contains(id.as_str()));
    }

    /// The file's text: pretty JSON, ids sorted, versions highest first, agents without a
    /// source left out.
    pub(crate) fn to_json(&self) -> String {
        let agents = self
            .agents
            .iter()
            .filter(|(_, agent)| !agent.is_empty())
            .map(|(id, agent)| (id.as_str(), AgentOut::of(agent)))
            .collect();
        let file = FileOut { version: 1, agents };
        // Serialising plain strings, numbers and maps cannot fail.
        let text = serde_json::to_string_pretty(&file).unwrap_or_default();
        text + "\n"
    }

    /// Write the file atomically when its text changed; whether it did. No file is created
    /// for an empty history.
    pub(crate) fn write(&self, root: &Path) -> Result<bool, ReleasesError> {
        if self.malformed {
            return Err(ReleasesError::Malformed);
        }
        let text = self.to_json();
        let unchanged = match &self.source {
            Some(source) => *source.text == *text,
            None => self.agents.values().all(AgentReleases::is_empty),
        };
        if unchanged {
            return Ok(false);
        }
        fs::write_below(root, Path::new(RELEASES_FILE), text.as_bytes())
            .map_err(ReleasesError::Io)?;
        Ok(true)
    }
}

#[derive(Serialize)]
struct FileOut<'a> {
    version: u32,
    agents: BTreeMap<&'a str, AgentOut<'a>>,
}

#[derive(Serialize)]
struct AgentOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    npm: Option<SourceOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pypi: Option<SourceOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    github: Option<SourceOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    feed: Option<SourceOut<'a>>,
}

#[derive(Serialize)]
struct SourceOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    package: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repository: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    versions: Vec<&'a Release>,
}

impl<'a> AgentOut<'a> {
    fn of(agent: &'a AgentReleases) -> AgentOut<'a> {
        let source = |kind| agent.get(kind).map(|s| SourceOut::of(kind, s));
        AgentOut {
            npm: source(SourceKind::Npm),
            pypi: source(SourceKind::Pypi),
            github: source(SourceKind::GitHub),
            feed: source(SourceKind::Feed),
        }
    }
}

impl<'a> SourceOut<'a> {
    fn of(kind: SourceKind, source: &'a SourceReleases) -> SourceOut<'a> {
        let mut versions: Vec<&Release> = source.versions.iter().collect();
        versions.sort_by_key(|r| std::cmp::Reverse(r.order()));
        let name = Some(source.name.as_str());
        SourceOut {
            package: name.filter(|_| matches!(kind, SourceKind::Npm | SourceKind::Pypi)),
            repository: name.filter(|_| kind == SourceKind::GitHub),
            url: name.filter(|_| kind == SourceKind::Feed),
            versions,
        }
    }
}

/// The members of the whole document; problems go to `fields`.
fn read_document(source: &SourceFile, fields: &mut Fields) -> BTreeMap<String, AgentReleases> {
    let mut agents = BTreeMap::new();
    let Some(root) = tree(source, fields) else {
        return agents;
    };
    let help = "write `{\"version\": 1, \"agents\": {…}}`, as `acp-registry update --apply` does";
    let Some(members) = fields.object(&root, "releases.json must be an object", help) else {
        return agents;
    };
    let mut keys = Keys::new(members);
    match keys.get("version").next() {
        Some(m) if matches!(&m.value.value, NodeValue::Number(n) if n.as_str() == FORMAT_VERSION) =>
            {}
        Some(m) => fields.problem(
            m.value.span,
            "`version` must be 1",
            "this acp-registry reads version 1 of the file; a newer one was written by a newer \
             acp-registry",
        ),
        None => fields.problem(root.span, "`version` is missing", help),
    }
    match keys.get("agents").next() {
        Some(m) => read_agents(&m.value, fields, &mut agents),
        None => fields.problem(root.span, "`agents` is missing", help),
    }
    keys.finish(fields);
    agents
}

/// The span-carrying tree of the text, once its values are counted; `None` after a problem.
fn tree(source: &SourceFile, fields: &mut Fields) -> Option<Node> {
    let text = &*source.text;
    let help = "releases.json is JSON written by `acp-registry update --apply`; restore it from \
                git, or delete it and run `update --apply` again";
    if let Err(e) = ValueBudget::new(MAX_VALUES).spend(text) {
        let at = offset_of(text, e.line(), e.column());
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(&*message, |(m, _)| m);
        fields.problem(
            Span::new(at, (at + 1).min(text.len())),
            format!("releases.json is not valid JSON: {message}"),
            help,
        );
        return None;
    }
    match jsonc::parse(text) {
        Ok(root) => Some(root),
        Err(e) => {
            let message = format!("releases.json is not valid JSON: {}", e.message);
            fields.problem(e.span, message, help);
            None
        }
    }
}

fn read_agents(node: &Node, fields: &mut Fields, agents: &mut BTreeMap<String, AgentReleases>) {
    let help =
        "write `\"agents\": {\"<id>\": {\"npm\": …, \"pypi\": …, \"github\": …, \"feed\": …}}`";
    let Some(members) = fields.object(node, "`agents` must be an object of id to sources", help)
    else {
        return;
    };
    for member in members {
        if let Some(agent) = read_agent(member, fields) {
            agents.insert(member.key.clone(), agent);
        }
    }
}

fn read_agent(member: &Member, fields: &mut Fields) -> Option<AgentReleases> {
    let id = &member.key;
    if id.len() > MAX_TEXT_LEN {
        let message = format!("an id is longer than {MAX_TEXT_LEN} bytes");
        fields.problem(
            member.key_span,
            message,
            "ids are entry ids; remove the member",
        );
        return None;
    }
    let message = format!("the sources of `{id}` must be an object");
    let help = "write `{\"npm\": …, \"pypi\": …, \"github\": …, \"feed\": …}` (each optional)";
    let members = fields.object(&member.value, message, help)?;
    let mut keys = Keys::new(members);
    let mut agent = AgentReleases::default();
    let mut whole = true;
    for kind in SourceKind::ALL {
        for m in keys.get(kind.key()).take(1) {
            let source = read_source(&m.value, kind, fields);
            whole &= source.is_some();
            *agent.slot(kind) = source;
        }
    }
    keys.finish(fields);
    whole.then_some(agent)
}

fn read_source(node: &Node, kind: SourceKind, fields: &mut Fields) -> Option<SourceReleases> {
    let (key, name_key) = (kind.key(), kind.name_key());
    let help =
        format!("write `{{\"{name_key}\": \"…\", \"versions\": [{{\"version\": \"1.2.0\"}}]}}`");
    let members = fields.object(node, format!("`{key}` must be an object"), &help)?;
    let mut keys = Keys::new(members);
    let name = keys.get(name_key).next().map(|m| m.value.clone());
    let versions = keys.get("versions").next().map(|m| m.value.clone());
    keys.finish(fields);
    let message = format!("`{key}` has no `{name_key}`");
    let name = text(fields, name.as_ref(), node, &message, &help)?;
    let Some(list) = versions else {
        fields.problem(node.span, format!("`{key}` has no `versions`"), help);
        return None;
    };
    let versions = read_versions(&list, fields)?;
    Some(SourceReleases { name, versions })
}

/// A string of at most [`MAX_TEXT_LEN`] bytes at `node` (a problem at `parent` when absent).
fn text(
    fields: &mut Fields,
    node: Option<&Node>,
    parent: &Node,
    missing: &str,
    help: &str,
) -> Option<String> {
    let Some(node) = node else {
        fields.problem(parent.span, missing, help);
        return None;
    };
    let value = fields.string(node, "expected a string", help)?;
    if value.len() > MAX_TEXT_LEN {
        let message = format!("a string longer than {MAX_TEXT_LEN} bytes");
        fields.problem(node.span, message, "shorten it");
        return None;
    }
    Some(value.to_string())
}

fn read_versions(node: &Node, fields: &mut Fields) -> Option<Vec<Release>> {
    let help = "write a list of releases, `[{\"version\": \"1.2.0\", \"published\": \"…\"}]`";
    let items = fields.array(node, "`versions` must be a list", help)?;
    if items.len() > MAX_SOURCE_RELEASES {
        let message = format!("more than {MAX_SOURCE_RELEASES} releases for one source");
        fields.problem(
            node.span,
            message,
            "update records the 10 highest and the pins",
        );
        return None;
    }
    let mut seen = BTreeSet::new();
    let mut releases = Vec::new();
    for item in items {
        let release = read_release(item, fields)?;
        if !seen.insert(release.order()) {
            let message = format!("version `{}` is listed twice", release.version);
            fields.problem(item.span, message, "keep one of them");
            return None;
        }
        releases.push(release);
    }
    sort_highest_first(&mut releases);
    Some(releases)
}

fn read_release(node: &Node, fields: &mut Fields) -> Option<Release> {
    let help = "a release is `{\"version\", \"published\"?, \"digest\"?, \"yanked\"?, \
                \"deprecated\"?, \"preview\"?}`";
    let members = fields.object(node, "a release must be an object", help)?;
    let mut keys = Keys::new(members);
    let get = |keys: &mut Keys, key| keys.get(key).next().map(|m: &Member| m.value.clone());
    let (version, published) = (get(&mut keys, "version"), get(&mut keys, "published"));
    let (digest, deprecated) = (get(&mut keys, "digest"), get(&mut keys, "deprecated"));
    let (yanked, preview) = (get(&mut keys, "yanked"), get(&mut keys, "preview"));
    keys.finish(fields);
    let text_at = |fields: &mut Fields, n: Option<Node>| match n {
        Some(n) => text(fields, Some(&n), node, "", help).map(Some),
        None => Some(None),
    };
    let parsed = release_version(fields, version.as_ref(), node)?;
    let mut release = Release::new(parsed);
    release.published = published_time(fields, published.as_ref())?;
    release.digest = text_at(fields, digest)?;
    release.deprecated = text_at(fields, deprecated)?;
    release.yanked = flag(fields, yanked.as_ref(), "yanked")?;
    let marked = flag(fields, preview.as_ref(), "preview")?;
    if marked != release.preview {
        let at = preview.map_or(node.span, |n| n.span);
        let message = format!(
            "`preview` must be {} for `{}`",
            release.preview, release.version
        );
        fields.problem(
            at,
            message,
            "`preview` is true exactly for a -preview.N version",
        );
        return None;
    }
    Some(release)
}

fn release_version(
    fields: &mut Fields,
    node: Option<&Node>,
    parent: &Node,
) -> Option<PreviewVersion> {
    let help = "`version` is `X.Y.Z` or `X.Y.Z-preview.N`";
    let text = text(fields, node, parent, "a release has no `version`", help)?;
    let parsed = PreviewVersion::parse(&text);
    if let (None, Some(node)) = (parsed, node) {
        let message = format!("`{text}` is not a version of the registry's order");
        fields.problem(node.span, message, help);
    }
    parsed
}

/// `published`, which must be written as `update` writes it (UTC, whole seconds).
fn published_time(fields: &mut Fields, node: Option<&Node>) -> Option<Option<String>> {
    let Some(node) = node else {
        return Some(None);
    };
    let help = "write the time in UTC as `YYYY-MM-DDTHH:MM:SSZ`";
    let text = text(fields, Some(node), node, "", help)?;
    let canonical = parse_iso_utc_seconds(&text).map(format_utc);
    if canonical.as_deref() != Some(text.as_str()) {
        let message = format!("`published` `{text}` is not a UTC time `YYYY-MM-DDTHH:MM:SSZ`");
        fields.problem(node.span, message, help);
        return None;
    }
    Some(Some(text))
}

fn flag(fields: &mut Fields, node: Option<&Node>, key: &str) -> Option<bool> {
    match node {
        None => Some(false),
        Some(node) => {
            let message = format!("`{key}` must be `true` or `false`");
            fields.bool(
                node,
                message,
                format!("write `\"{key}\": true`, or leave it out"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Policy;

    fn v(text: &str) -> PreviewVersion {
        PreviewVersion::parse(text).unwrap()
    }

    fn releases(versions: &[&str]) -> Vec<Release> {
        versions.iter().map(|t| Release::new(v(t))).collect()
    }

    fn listed(source: &SourceReleases) -> Vec<&str> {
        source.versions.iter().map(|r| r.version.as_str()).collect()
    }

    fn parsed(text: &str) -> (Releases, Vec<String>) {
        let policy = Policy::default();
        let mut sink = Sink::new(&policy, None);
        let releases = Releases::parse(SourceFile::new(RELEASES_FILE, text), &mut sink);
        let findings = sink
            .diagnostics
            .iter()
            .map(|d| {
                let at = d.location.as_ref().map(|l| l.start);
                let (line, column) = at.map_or((0, 0), |p| (p.line, p.column));
                format!("{line}:{column} {}", d.message)
            })
            .collect();
        (releases, findings)
    }

    #[test]
    fn the_ten_highest_are_kept_with_older_pins_highest_first() {
        let all: Vec<String> = (1..=14).rev().map(|n| format!("1.{n}.0")).collect();
        let mut all: Vec<&str> = all.iter().map(String::as_str).collect();
        all.extend(["1.5.0-preview.2", "1.5.0-preview.10"]);
        let pins = [v("1.2.0"), v("1.5.0-preview.10"), v("0.9.0"), v("1.14.0")];
        let recorded = SourceReleases::recorded("a".into(), releases(&all), &pins);
        assert_eq!(
            listed(&recorded),
            [
                "1.14.0",
                "1.13.0",
                "1.12.0",
                "1.11.0",
                "1.10.0",
                "1.9.0",
                "1.8.0",
                "1.7.0",
                "1.6.0",
                "1.5.0",
                "1.5.0-preview.10",
                "1.2.0"
            ]
        );
        assert!(recorded.versions[10].preview);
        assert!(
            !listed(&recorded).contains(&"1.3.0"),
            "not a pin, below the ten"
        );
    }

    #[test]
    fn the_text_is_sorted_and_sparse_whatever_the_order_recorded() {
        let mut history = Releases::default();
        let mut npm = SourceReleases {
            name: "@s/b".into(),
            versions: releases(&["1.0.0", "1.10.0", "1.2.0-preview.1", "1.9.0"]),
        };
        npm.versions[1].published = Some("2026-01-02T03:04:05Z".into());
        npm.versions[1].digest = Some("sha512-x".into());
        npm.versions[0].deprecated = Some("old".into());
        history.set("b", SourceKind::Npm, npm);
        let gh = SourceReleases::recorded("o/r".into(), releases(&["2.0.0"]), &[]);
        history.set("a", SourceKind::GitHub, gh);
        history.set(
            "c",
            SourceKind::Pypi,
            SourceReleases::recorded("c".into(), vec![], &[]),
        );
        history.agents.insert("d".into(), AgentReleases::default());
        let text = history.to_json();
        let expected = serde_json::json!({"version": 1, "agents": {
            "a": {"github": {"repository": "o/r", "versions": [{"version": "2.0.0"}]}},
            "b": {"npm": {"package": "@s/b", "versions": [
                {"version": "1.10.0", "published": "2026-01-02T03:04:05Z", "digest": "sha512-x"},
                {"version": "1.9.0"},
                {"version": "1.2.0-preview.1", "preview": true},
                {"version": "1.0.0", "deprecated": "old"}]}},
            "c": {"pypi": {"package": "c", "versions": []}}
        }});
        assert_eq!(
            text,
            serde_json::to_string_pretty(&expected).unwrap() + "\n"
        );
        // What is written reads back to the same members and the same bytes.
        let (again, findings) = parsed(&text);
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!(again.to_json(), text);
        assert_eq!(again.agents["b"], history.agents["b"]);
        assert_eq!(
            listed(history.agents["b"].npm.as_ref().unwrap())[0],
            "1.10.0"
        );
    }

    #[test]
    fn each_problem_is_a_finding_at_its_value_and_the_file_is_malformed() {
        let text = "{\"version\": 1, \"agents\": {\n  \"a\": {\"npm\": {\"package\": \"a\", \
                    \"versions\": [{\"version\": \"1.0\"}]}},\n  \"b\": {\"pypi\": {\"package\": \
                    \"b\", \"versions\": [{\"version\": \"1.0.0\", \"published\": \"2026-01-01\"}]}},\n  \
                    \"c\": {\"npm\": {\"package\": \"c\", \"versions\": [{\"version\": \
                    \"1.0.0-preview.1\"}]}},\n  \"d\": {\"npm\": {\"package\": \"d\", \"versions\": []}}}}";
        let (releases, findings) = parsed(text);
        assert_eq!(
            findings,
            [
                "2:58 `1.0` is not a version of the registry's order",
                "3:81 `published` `2026-01-01` is not a UTC time `YYYY-MM-DDTHH:MM:SSZ`",
                "4:46 `preview` must be true for `1.0.0-preview.1`",
            ]
        );
        assert!(releases.malformed);
        assert_eq!(releases.agents.keys().collect::<Vec<_>>(), ["d"]);
        assert!(matches!(
            releases.write(Path::new("/nonexistent")),
            Err(ReleasesError::Malformed)
        ));
    }

    #[test]
    fn invalid_json_is_reported_at_its_line_and_column() {
        let (releases, findings) = parsed("{\"version\": 1,\n  \"agents\": {,}}\n");
        assert_eq!(
            findings,
            ["2:14 releases.json is not valid JSON: key must be a string"]
        );
        assert!(releases.malformed);
        let (_, findings) = parsed("{\"version\": 2, \"agents\": {}, \"extra\": 0}");
        assert_eq!(findings.len(), 2, "{findings:?}");
    }

    #[test]
    fn an_unchanged_history_is_not_rewritten_and_an_empty_one_not_created() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!Releases::default().write(dir.path()).unwrap());
        assert!(!dir.path().join(RELEASES_FILE).exists());
        let mut history = Releases::default();
        history.set(
            "a",
            SourceKind::Npm,
            SourceReleases::recorded("a".into(), releases(&["1.0.0"]), &[]),
        );
        assert!(history.write(dir.path()).unwrap());
        let text = std::fs::read_to_string(dir.path().join(RELEASES_FILE)).unwrap();
        let (again, _) = parsed(&text);
        assert!(!again.write(dir.path()).unwrap());
    }
}
