//! What `build` and `site` say they did: the text summary on stderr, and with `--format json`
//! the `build` object added to the findings document (every file written, with its size and
//! sha256, taken as the files go by: [`Recorded`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Mutex;

use serde_json::{json, Value};

use crate::diagnostics::escape;
use crate::publish::build::{BuildSummary, OutputSummary, QuarantineSummary};
use crate::publish::error::BuildError;
use crate::publish::last_good::HeldBack;
use crate::publish::output::{FileSink, Tree};

/// Why `output` leaves out what it leaves out, in words: `excluded by its settings: a;
/// disabled: b; quarantined: c` (each id under one reason: its include/exclude lists first,
/// then `deprecations.json`, then quarantine with `publish_quarantined: false`).
fn left_out(summary: &BuildSummary, output: &OutputSummary) -> Vec<(&'static str, Vec<String>)> {
    let disabled = |id: &String| summary.disabled.iter().any(|(d, _)| d == id);
    let rest = || {
        output
            .excluded
            .iter()
            .filter(|id| !output.by_settings.contains(id))
    };
    let reasons = [
        ("excluded by its settings", output.by_settings.clone()),
        (
            "disabled",
            rest().filter(|id| disabled(id)).cloned().collect(),
        ),
        (
            "quarantined",
            rest().filter(|id| !disabled(id)).cloned().collect(),
        ),
    ];
    reasons
        .into_iter()
        .filter(|(_, ids)| !ids.is_empty())
        .collect()
}

/// Where a quarantined entry is: never published without `publish_quarantined`; with it,
/// in every output that does not leave it out for another reason (each output's line says
/// which).
fn quarantine_state(summary: &BuildSummary, q: &QuarantineSummary) -> String {
    if !q.published {
        return "not published".into();
    }
    let without: Vec<&str> = summary
        .outputs
        .iter()
        .filter(|o| o.excluded.contains(&q.id))
        .map(|o| o.file.as_str())
        .collect();
    match without.len() {
        0 => "published".into(),
        n if n == summary.outputs.len() => "in no output: each leaves it out, see above".into(),
        _ => format!("published; left out of {}, see above", without.join(", ")),
    }
}

/// The text summary: what was built (or checked) where, in how long, and what each output
/// lists and leaves out; escaped (ids, exclusions and reasons come from the registry).
pub(super) fn summary_text(summary: &BuildSummary, out: &str, seconds: f64, check: bool) -> String {
    let mut text = String::new();
    let verb = if check { "checked" } else { "built" };
    text.push_str(&format!(
        "{verb} {out} in {seconds:.2} s: {} files\n",
        summary.files
    ));
    for output in &summary.outputs {
        let reasons: Vec<String> = left_out(summary, output)
            .into_iter()
            .map(|(why, ids)| format!("{why}: {}", ids.join(", ")))
            .collect();
        let reasons = match reasons.is_empty() {
            true => String::new(),
            false => format!(" ({})", reasons.join("; ")),
        };
        text.push_str(&format!(
            "  {}: {} agents{reasons}\n",
            output.file, output.agents
        ));
    }
    if summary.site_pages > 0 {
        text.push_str(&format!("  site/: {} pages\n", summary.site_pages));
    }
    if summary.quarantined.is_empty() {
        text.push_str("  quarantined: none\n");
    }
    for q in &summary.quarantined {
        let state = quarantine_state(summary, q);
        text.push_str(&format!(
            "  quarantined: {} ({state}): {}\n",
            q.id, q.reason
        ));
    }
    for (id, reason) in &summary.disabled {
        text.push_str(&format!("  disabled: {id} (not published): {reason}\n"));
    }
    escape::terminal(&text).into_owned()
}

/// The summary's lines about entries held back by `--last-good`, escaped.
pub(super) fn held_text(held: Option<&HeldBack>) -> String {
    let Some(held) = held else {
        return String::new();
    };
    let failing = held.entries.len();
    let mut text = format!(
        "  held back: {failing} failing {}, {} served in their previous form, {} left out\n",
        if failing == 1 { "entry" } else { "entries" },
        held.kept(),
        failing - held.kept()
    );
    for entry in &held.entries {
        let codes: Vec<&str> = entry.codes.iter().map(|c| c.as_str()).collect();
        let served = if entry.kept_in.is_empty() {
            "left out".to_string()
        } else {
            let version = entry.version.as_deref().unwrap_or("?");
            format!("previous {version} kept in {}", entry.kept_in.join(", "))
        };
        text.push_str(&format!(
            "  held back: {} ({served}; failing: {})\n",
            entry.id,
            codes.join(", ")
        ));
    }
    // Ids come from the registry.
    escape::terminal(&text).into_owned()
}

/// One file a build wrote (or, with `--check`, compared): size in bytes and sha256.
type Written = BTreeMap<String, (u64, String)>;

/// A [`Tree`] that records the size and digest of every file it hands over.
pub(super) struct Recorded<'t, T> {
    tree: &'t T,
    files: Mutex<Written>,
}

impl<'t, T: Tree> Recorded<'t, T> {
    pub(super) fn new(tree: &'t T) -> Self {
        Recorded {
            tree,
            files: Mutex::new(BTreeMap::new()),
        }
    }

    /// Every file handed over, by path (sorted), with its size and sha256.
    pub(super) fn into_files(self) -> Written {
        self.files
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<T: Tree> Tree for Recorded<'_, T> {
    fn paths(&self) -> Vec<&str> {
        self.tree.paths()
    }

    fn produce(&self, sink: &dyn FileSink) -> Result<(), BuildError> {
        self.tree.produce(&Recording {
            sink,
            files: &self.files,
        })
    }
}

struct Recording<'a> {
    sink: &'a dyn FileSink,
    files: &'a Mutex<Written>,
}

/// A writer that counts the bytes that go through it.
struct Counting<'w> {
    inner: &'w mut dyn Write,
    bytes: u64,
}

impl Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl FileSink for Recording<'_> {
    fn file(
        &self,
        path: &str,
        content: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<String, BuildError> {
        let mut size = 0;
        let digest = self.sink.file(path, &mut |out| {
            let mut counting = Counting {
                inner: out,
                bytes: 0,
            };
            let done = content(&mut counting);
            size = counting.bytes;
            done
        })?;
        self.files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(path.to_string(), (size, digest.clone()));
        Ok(digest)
    }
}

/// What `build --format json` adds to the findings document as `build`: the output folder,
/// whether it was written (`false` with `--check`, which adds `up_to_date` and the
/// `differences`), the counts the text summary prints, and every file with its size and
/// sha256, sorted by path relative to `--out`.
pub(super) fn json_section(
    summary: &BuildSummary,
    out: &str,
    check: Option<&[String]>,
    held: Option<&HeldBack>,
    files: &Written,
) -> Value {
    let outputs: Vec<Value> = summary
        .outputs
        .iter()
        .map(|o| {
            let mut reasons = serde_json::Map::new();
            for (why, ids) in left_out(summary, o) {
                reasons.insert(why.replace(' ', "_"), json!(ids));
            }
            json!({"file": o.file, "agents": o.agents, "excluded": o.excluded, "left_out": reasons})
        })
        .collect();
    let quarantined: Vec<Value> = summary
        .quarantined
        .iter()
        .map(|q| json!({"id": q.id, "reason": q.reason, "published": q.published, "state": quarantine_state(summary, q)}))
        .collect();
    let disabled: Vec<Value> = summary
        .disabled
        .iter()
        .map(|(id, reason)| json!({"id": id, "reason": reason}))
        .collect();
    let listed: Vec<Value> = files
        .iter()
        .map(|(path, (size, sha256))| json!({"path": path, "size": size, "sha256": sha256}))
        .collect();
    let mut section = json!({
        "out": out,
        "written": check.is_none(),
        "file_count": summary.files,
        "outputs": outputs,
        "site_pages": summary.site_pages,
        "quarantined": quarantined,
        "disabled": disabled,
        "files": listed,
    });
    if let Some(differences) = check {
        section["up_to_date"] = json!(differences.is_empty());
        section["differences"] = json!(differences);
    }
    if let Some(held) = held {
        section["held_back"] = held
            .entries
            .iter()
            .map(|e| {
                let codes: Vec<&str> = e.codes.iter().map(|c| c.as_str()).collect();
                json!({"id": e.id, "version": e.version, "kept_in": e.kept_in, "codes": codes})
            })
            .collect();
    }
    section
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(file: &str, by_settings: &[&str], excluded: &[&str]) -> OutputSummary {
        let list = |ids: &[&str]| ids.iter().map(|id| (*id).to_string()).collect();
        OutputSummary {
            file: file.into(),
            agents: 1,
            excluded: list(excluded),
            by_settings: list(by_settings),
        }
    }

    fn quarantined(id: &str, published: bool) -> QuarantineSummary {
        QuarantineSummary {
            id: id.into(),
            reason: "why".into(),
            published,
        }
    }

    #[test]
    fn the_summary_says_why_each_output_leaves_an_entry_out_and_where_a_quarantined_one_is() {
        let summary = BuildSummary {
            outputs: vec![
                output("registry.json", &["junie"], &["junie", "old"]),
                output("registry-for-jetbrains.json", &[], &["old"]),
            ],
            quarantined: vec![quarantined("junie", true), quarantined("old", true)],
            disabled: vec![("old".into(), "gone".into())],
            files: 3,
            site_pages: 0,
        };
        let text = summary_text(&summary, "dist", 0.5, false);
        assert_eq!(
            text,
            "built dist in 0.50 s: 3 files\n\
             \x20 registry.json: 1 agents (excluded by its settings: junie; disabled: old)\n\
             \x20 registry-for-jetbrains.json: 1 agents (disabled: old)\n\
             \x20 quarantined: junie (published; left out of registry.json, see above): why\n\
             \x20 quarantined: old (in no output: each leaves it out, see above): why\n\
             \x20 disabled: old (not published): gone\n"
        );
        let everywhere = BuildSummary {
            outputs: vec![output("registry.json", &[], &[])],
            quarantined: vec![quarantined("junie", true)],
            ..BuildSummary::default()
        };
        assert!(summary_text(&everywhere, "dist", 0.0, true)
            .contains("  quarantined: junie (published): why\n"));
        let withheld = BuildSummary {
            outputs: vec![output("registry.json", &[], &["junie"])],
            quarantined: vec![quarantined("junie", false)],
            ..BuildSummary::default()
        };
        let text = summary_text(&withheld, "dist", 0.0, true);
        assert!(
            text.contains("  registry.json: 1 agents (quarantined: junie)\n"),
            "{text}"
        );
        assert!(
            text.contains("  quarantined: junie (not published): why\n"),
            "{text}"
        );
    }
}
