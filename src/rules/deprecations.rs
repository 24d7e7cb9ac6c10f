//! `deprecations.json`: entries retired by the registry's maintainers, as Homebrew's
//! `deprecate!`/`disable!` and the MCP registry's statuses do it: `deprecated` (still
//! published, with a notice) or `disabled` (left out of `registry.json`, still listed in the
//! lifecycle document so clients can say why and what to use instead), each with a reason, the
//! date of the decision and an optional replacement entry.
//!
//! Read once per run beside `quarantine.json`, through the same typed reader; the checks that
//! need the whole registry (a replacement is an entry, a changed entry is retired) are here
//! too, so a finding about the file is written in one place.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::entry::EntryReport;
use super::sink::Sink;
use crate::diagnostics::{Code, Diagnostic};
use crate::manifest::fields::{Fields, Keys};
use crate::manifest::jsonc::{self, Member, Node};
use crate::manifest::MAX_MANIFEST_BYTES;
use acp_registry_core::source::{SourceFile, Span};

/// The file, at the registry root.
pub(crate) const DEPRECATIONS_FILE: &str = "deprecations.json";
/// The longest reason, in characters (a notice, not an essay).
const MAX_REASON_CHARS: usize = 500;

/// Where an entry is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Status {
    /// Published and meant to be used.
    Active,
    /// Published with a notice: users are told to move on.
    Deprecated,
    /// Left out of the registry documents; listed in the lifecycle document only.
    Disabled,
}

impl Status {
    /// The name the files use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Deprecated => "deprecated",
            Status::Disabled => "disabled",
        }
    }
}

/// One retired entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Retirement {
    /// `deprecated` or `disabled`.
    pub(crate) status: Status,
    /// Why, one line.
    pub(crate) reason: String,
    /// The date of the decision, `YYYY-MM-DD`.
    pub(crate) since: String,
    /// The entry to use instead.
    pub(crate) replacement: Option<String>,
    /// Where the member and its replacement are written (for findings).
    key_span: Span,
    replacement_span: Option<Span>,
}

impl Retirement {
    /// The date of the decision in seconds since the Unix epoch (midnight UTC).
    pub(crate) fn since_secs(&self) -> i64 {
        date_secs(&self.since).unwrap_or(0)
    }
}

/// Parsed `deprecations.json`: id → retirement.
#[derive(Debug, Clone, Default)]
pub(crate) struct Deprecations {
    /// The file, when there is one (findings point into it).
    pub(crate) source: Option<SourceFile>,
    /// Retired id → what and why.
    pub(crate) ids: BTreeMap<String, Retirement>,
}

impl Deprecations {
    /// Read `deprecations.json` from the registry root, if present; each problem is a
    /// `deprecation-format` finding and the member is left out.
    pub(crate) fn load(root: &Path, sink: &mut Sink) -> Deprecations {
        // Only absence means "none": a link or a special file is reported by reading.
        if matches!(
            acp_registry_core::fs::kind(&root.join(DEPRECATIONS_FILE)),
            Ok(None)
        ) {
            return Deprecations::default();
        }
        let Some(text) = super::read::read_text(
            root,
            DEPRECATIONS_FILE,
            DEPRECATIONS_FILE,
            MAX_MANIFEST_BYTES,
            sink,
        ) else {
            return Deprecations::default();
        };
        let source = SourceFile::new(DEPRECATIONS_FILE, text);
        let mut deprecations = Deprecations {
            source: Some(source.clone()),
            ids: BTreeMap::new(),
        };
        let tree = match jsonc::parse(&source.text) {
            Ok(tree) => tree,
            Err(e) => {
                let message = format!("{DEPRECATIONS_FILE} is not valid JSONC: {}", e.message);
                sink.push(Diagnostic::new(Code::DeprecationFormat, message).at(&source, e.span));
                return deprecations;
            }
        };
        let mut fields = Fields::new(&source, Code::DeprecationFormat);
        let members = fields.object(
            &tree,
            format!("{DEPRECATIONS_FILE} must be an object of id to retirement"),
            "write `{\"<id>\": {\"status\": \"deprecated\", \"reason\": \"…\", \"since\": \"2026-11-01\"}}`",
        );
        for member in members.unwrap_or_default() {
            if let Some(retirement) = read_member(&mut fields, member) {
                deprecations.ids.insert(member.key.clone(), retirement);
            }
        }
        for finding in fields.findings {
            sink.push(finding);
        }
        deprecations
    }

    /// The status of `id` (active unless the file retires it).
    pub(crate) fn status(&self, id: &str) -> Status {
        self.ids.get(id).map_or(Status::Active, |r| r.status)
    }

    /// Whether `id` is disabled.
    pub(crate) fn is_disabled(&self, id: &str) -> bool {
        self.status(id) == Status::Disabled
    }
}

/// One member, or `None` (with findings) when it cannot be read whole.
fn read_member(fields: &mut Fields, member: &Member) -> Option<Retirement> {
    let id = &member.key;
    let object = fields.object(
        &member.value,
        format!("the retirement of `{id}` is not an object"),
        "write `{\"status\": \"deprecated\", \"reason\": \"…\", \"since\": \"2026-11-01\"}`",
    )?;
    let mut keys = Keys::new(object);
    let status = required_string(fields, &mut keys, &member.value, id, "status")
        .and_then(|(text, span)| status(fields, id, text, span));
    let reason = required_string(fields, &mut keys, &member.value, id, "reason")
        .and_then(|(text, span)| reason(fields, id, text, span));
    let since = required_string(fields, &mut keys, &member.value, id, "since")
        .and_then(|(text, span)| since(fields, id, text, span));
    let mut replacement = None;
    for m in keys.get("replacement") {
        let message = format!("the replacement of `{id}` is not a string");
        if let Some(text) = fields.string(&m.value, message, "give the id of another entry") {
            replacement = Some((text.to_string(), m.value.span));
        }
    }
    keys.finish(fields);
    Some(Retirement {
        status: status?,
        reason: reason?,
        since: since?,
        replacement_span: replacement.as_ref().map(|(_, span)| *span),
        replacement: replacement.map(|(text, _)| text),
        key_span: member.key_span,
    })
}

/// The string member `key`, or a finding when it is missing or not a string.
fn required_string<'n>(
    fields: &mut Fields,
    keys: &mut Keys<'n>,
    object: &'n Node,
    id: &str,
    key: &'static str,
) -> Option<(&'n str, Span)> {
    let _ = keys.get(key).count();
    let node = fields.required(
        object,
        key,
        format!("the retirement of `{id}` has no `{key}`"),
        format!("add `\"{key}\"`: `status`, `reason` and `since` are required"),
    )?;
    let text = fields.string(
        node,
        format!("`{key}` of `{id}` is not a string"),
        "write it as a string",
    )?;
    Some((text, node.span))
}

fn status(fields: &mut Fields, id: &str, text: &str, span: Span) -> Option<Status> {
    match text {
        "deprecated" => Some(Status::Deprecated),
        "disabled" => Some(Status::Disabled),
        _ => {
            fields.problem(
                span,
                format!("the status of `{id}` is `{text}`"),
                "write `deprecated` (still published, with a notice) or `disabled` (left out of registry.json); an active entry is not listed",
            );
            None
        }
    }
}

fn reason(fields: &mut Fields, id: &str, text: &str, span: Span) -> Option<String> {
    let trimmed = text.trim();
    let chars = trimmed.chars().count();
    if chars == 0 || chars > MAX_REASON_CHARS || trimmed.contains(['\n', '\r']) {
        fields.problem(
            span,
            format!("the reason of `{id}` is empty, longer than {MAX_REASON_CHARS} characters or more than one line"),
            "write one line users can act on, such as `renamed to new-agent`",
        );
        return None;
    }
    Some(trimmed.to_string())
}

fn since(fields: &mut Fields, id: &str, text: &str, span: Span) -> Option<String> {
    if date_secs(text).is_none() {
        fields.problem(
            span,
            format!("`since` of `{id}` is `{text}`, not a date"),
            "write the date of the decision as YYYY-MM-DD",
        );
        return None;
    }
    Some(text.to_string())
}

/// `YYYY-MM-DD` as seconds since the Unix epoch, `None` for anything else.
fn date_secs(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let shape = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
    if !shape {
        return None;
    }
    acp_registry_core::time::parse_iso_utc_seconds(&format!("{text}T00:00:00Z"))
}

/// The registry-wide checks of the file: ids no entry declares, replacements that are not
/// usable entries, and (with `--changed-since`) changed entries that are retired.
pub(crate) fn check_deprecations(
    deprecations: &Deprecations,
    entries: &[EntryReport],
    sink: &mut Sink,
) {
    let Some(source) = &deprecations.source else {
        return;
    };
    let known: BTreeSet<&str> = entries.iter().map(EntryReport::id).collect();
    for (id, retirement) in &deprecations.ids {
        if !known.contains(id.as_str()) {
            sink.push(
                Diagnostic::new(
                    Code::DeprecationUnknownId,
                    format!("retired id `{id}` is not in the registry"),
                )
                .at(source, retirement.key_span)
                .help("remove the member: an entry whose folder is gone needs no retirement"),
            );
        }
        if let Some(finding) = replacement_problem(deprecations, &known, id, retirement, source) {
            sink.push(finding);
        }
    }
}

/// What is wrong with the replacement of `id`, if anything.
fn replacement_problem(
    deprecations: &Deprecations,
    known: &BTreeSet<&str>,
    id: &str,
    retirement: &Retirement,
    source: &SourceFile,
) -> Option<Diagnostic> {
    let replacement = retirement.replacement.as_deref()?;
    let span = retirement.replacement_span?;
    let problem = if replacement == id {
        format!("`{id}` names itself as its replacement")
    } else if !known.contains(replacement) {
        format!("the replacement of `{id}`, `{replacement}`, is not an entry of the registry")
    } else if deprecations.is_disabled(replacement) {
        format!("the replacement of `{id}`, `{replacement}`, is disabled itself")
    } else {
        return None;
    };
    let help = match crate::diagnostics::did_you_mean(replacement, known.iter().copied()) {
        Some(hint) if replacement != id => hint,
        _ => "name another entry's id users can install instead, or leave `replacement` out"
            .to_string(),
    };
    Some(
        Diagnostic::new(Code::DeprecationReplacement, problem)
            .at(source, span)
            .help(help),
    )
}

/// With `--changed-since`: each changed entry that is deprecated or disabled, at its id.
pub(crate) fn check_changed_retired(
    deprecations: &Deprecations,
    entries: &[EntryReport],
    changed: &BTreeSet<String>,
    sink: &mut Sink,
) {
    for entry in entries.iter().filter(|e| changed.contains(&e.entry.name)) {
        let Some(retirement) = deprecations.ids.get(entry.id()) else {
            continue;
        };
        let Some(doc) = entry.manifest_doc() else {
            continue;
        };
        let instead = retirement
            .replacement
            .as_ref()
            .map_or(String::new(), |r| format!("; its replacement is `{r}`"));
        sink.push(
            doc.at(
                Code::EntryDeprecated,
                "/id",
                format!(
                    "`{}` is {} since {} ({}){instead}",
                    entry.id(),
                    retirement.status.as_str(),
                    retirement.since,
                    retirement.reason
                ),
            )
            .help(format!(
                "this change updates an entry users are told to leave; if it is back in service, remove its member from {DEPRECATIONS_FILE}"
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::policy::Policy;
    use super::*;

    fn load(text: &str) -> (Deprecations, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(DEPRECATIONS_FILE), text).unwrap();
        let policy = Policy::default();
        let mut sink = Sink::new(&policy, None);
        let deprecations = Deprecations::load(dir.path(), &mut sink);
        let messages = sink.diagnostics.iter().map(|d| d.message.clone()).collect();
        (deprecations, messages)
    }

    #[test]
    fn a_whole_member_is_read_with_its_status_reason_date_and_replacement() {
        let (d, messages) = load(
            r#"{"old": {"status": "disabled", "reason": " renamed ", "since": "2026-11-01", "replacement": "new"}}"#,
        );
        assert!(messages.is_empty(), "{messages:?}");
        let r = &d.ids["old"];
        assert_eq!(
            (
                r.status,
                r.reason.as_str(),
                r.since.as_str(),
                r.replacement.as_deref()
            ),
            (Status::Disabled, "renamed", "2026-11-01", Some("new"))
        );
        assert_eq!(r.since_secs(), 1_793_491_200);
        assert!(d.is_disabled("old") && d.status("other") == Status::Active);
    }

    #[test]
    fn each_bad_field_is_one_finding_and_the_member_is_left_out() {
        let (d, messages) = load(
            r#"{"a": {"status": "gone", "reason": "x", "since": "2026-11-01"},
                "b": {"status": "deprecated", "reason": "", "since": "2026-11-01"},
                "c": {"status": "deprecated", "reason": "x", "since": "2026-13-01"},
                "d": {"status": "deprecated", "reason": "x"},
                "e": {"status": "deprecated", "reason": "x", "since": "2026-11-01", "when": 1},
                "f": "deprecated"}"#,
        );
        assert_eq!(
            messages,
            [
                "the status of `a` is `gone`",
                "the reason of `b` is empty, longer than 500 characters or more than one line",
                "`since` of `c` is `2026-13-01`, not a date",
                "the retirement of `d` has no `since`",
                "unknown key `when`",
                "the retirement of `f` is not an object",
            ]
        );
        assert_eq!(d.ids.keys().collect::<Vec<_>>(), ["e"]);
    }

    #[test]
    fn dates_are_checked_for_shape_and_calendar() {
        assert!(date_secs("2026-02-28").is_some());
        for bad in [
            "2026-2-28",
            "2026-02-30",
            "20260228",
            "2026-02-28T00:00:00Z",
            "",
        ] {
            assert_eq!(date_secs(bad), None, "{bad}");
        }
    }
}
