//! The Markdown rules (`docs/collab-protocol.md#markdown-rules`): readiness markers and gates,
//! the conclusion, deliverable content, `decisions.md` and `review.md`
//! headings. The regexes mirror the published ones, including their
//! quirks (e.g. `\s` spanning a newline after a marker).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::spec::{CONCLUSION_HEADINGS, OUTCOMES, SNAPSHOT_HEADING, SNAPSHOT_LABEL};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("static regex")
}

static MARKER: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*-\s*\[([A-Za-z_]+)\]\s*(.*)$"));
static READY: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*-\s*\[[xX]\]\s*Ready to implement"));
static OUTCOME: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*-\s*\[([A-Za-z_]+)\]\s+(.+)$"));
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(?:TBD|TODO|unresolved|待定)\b"));
static STATUS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^Status:\s*(Draft|In Review|Frozen)\s*$"));
static H2_START: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^##\s"));
static H3: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^###\s+(.+)$"));
static H3_START: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^###\s"));
static DECISION_ID: LazyLock<Regex> = LazyLock::new(|| re(r"^(D\d+)\.\s+.+"));
static REVIEW_HEADING: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^##\s+.+?\s+-\s+(.+?)\s+-\s+seq\s+(\d+)\s*$"));

/// The classification state of `readiness.md`.
#[derive(Debug, Default, Clone)]
pub struct Readiness {
    /// A `[blocking]` item.
    pub blocking: bool,
    /// An `[unresolved]` item, or `TBD` in a classified one.
    pub unresolved: bool,
    /// A `[deferred_nonblocking]` item without `Reason:`.
    pub deferred_missing_reason: bool,
    /// `- [x] Ready to implement` is ticked.
    pub ready: bool,
}

impl Readiness {
    /// Scans the text of `readiness.md`.
    pub fn scan(text: &str) -> Self {
        let mut out = Readiness {
            ready: READY.is_match(text),
            ..Readiness::default()
        };
        for caps in MARKER.captures_iter(text) {
            let item = classify(&caps[1], &caps[2]);
            out.blocking |= item.blocking;
            out.unresolved |= item.unresolved;
            out.deferred_missing_reason |= item.deferred_missing_reason;
        }
        out
    }

    /// The marker items that keep readiness open (blocking, unresolved or a deferral
    /// without a reason), as `- [label] body`, in file order.
    pub fn open_items(text: &str) -> Vec<String> {
        MARKER
            .captures_iter(text)
            .filter(|caps| classify(&caps[1], &caps[2]).has_open_items())
            .map(|caps| format!("- [{}] {}", &caps[1], caps[2].trim_end()))
            .collect()
    }

    /// True when any blocking, unresolved or reasonless item exists.
    pub fn has_open_items(&self) -> bool {
        self.blocking || self.unresolved || self.deferred_missing_reason
    }

    /// The messages, of `[blocking, unresolved, reasonless deferral]`, of the open items
    /// found, in that order: each gate words them its own way.
    pub fn gate_problems<'m>(&self, messages: [&'m str; 3]) -> Vec<&'m str> {
        let found = [self.blocking, self.unresolved, self.deferred_missing_reason];
        messages
            .into_iter()
            .zip(found)
            .filter_map(|(message, open)| open.then_some(message))
            .collect()
    }
}

/// What one marker item contributes to the readiness state.
fn classify(label: &str, body: &str) -> Readiness {
    Readiness {
        blocking: label == "blocking",
        unresolved: label == "unresolved"
            || (matches!(label, "resolved" | "deferred_nonblocking" | "blocking")
                && body.contains("TBD")),
        deferred_missing_reason: label == "deferred_nonblocking"
            && !body.to_lowercase().contains("reason:"),
        ready: false,
    }
}

/// The completion gates that have no ticked `- [x] «gate»` line.
pub(crate) fn unchecked_gates(readiness: &str, gates: &[String]) -> Vec<String> {
    gates
        .iter()
        .filter(|gate| !is_ticked(readiness, gate))
        .cloned()
        .collect()
}

/// The published `(?m)^\s*-\s*\[[xX]\]\s*«gate»\s*$` (`\s` spans newlines). A gate with no
/// whitespace at either end is matched by hand, with the same result: compiling one regex
/// per gate was most of a small log's validation time.
fn is_ticked(text: &str, gate: &str) -> bool {
    if !is_trimmed(gate) {
        let pattern = format!(r"(?m)^\s*-\s*\[[xX]\]\s*{}\s*$", regex::escape(gate));
        return Regex::new(&pattern).is_ok_and(|r| r.is_match(text));
    }
    text.match_indices('-').any(|(dash, _)| {
        let before = text[..dash].trim_end_matches(char::is_whitespace);
        let line_start = before.is_empty() || text[before.len()..dash].contains('\n');
        let rest = text[dash + 1..].trim_start_matches(char::is_whitespace);
        let rest = ["[x]", "[X]"]
            .iter()
            .find_map(|tick| rest.strip_prefix(tick));
        line_start
            && rest
                .map(|r| r.trim_start_matches(char::is_whitespace))
                .and_then(|r| r.strip_prefix(gate))
                .is_some_and(|after| line_end_after(text, after).is_some())
    })
}

/// True for a non-empty literal with no whitespace at either end: then `\s*«literal»` and
/// `\s+«literal»` must take a whole run of whitespace, so a hand-written match is exact.
fn is_trimmed(literal: &str) -> bool {
    !literal.is_empty() && literal.trim() == literal
}

/// Where the published `\s*$` after a match ends when `after` (a suffix of `text`) follows
/// it: the greedy run of whitespace up to its last newline, or to the end of the text;
/// `None` when the run holds no newline and the text goes on.
fn line_end_after(text: &str, after: &str) -> Option<usize> {
    let start = text.len() - after.len();
    let rest = after.trim_start_matches(char::is_whitespace);
    if rest.is_empty() {
        return Some(text.len());
    }
    let run = &after[..after.len() - rest.len()];
    run.rfind('\n').map(|newline| start + newline)
}

fn has_h2(text: &str, heading: &str) -> bool {
    heading_match_end(text, heading).is_some()
}

/// The end of the first match of the published `(?m)^##\s+«heading»\s*$`; a heading with
/// no whitespace at either end is matched by hand (see [`is_ticked`]).
fn heading_match_end(text: &str, heading: &str) -> Option<usize> {
    if !is_trimmed(heading) {
        let pattern = format!(r"(?m)^##\s+{}\s*$", regex::escape(heading));
        return Regex::new(&pattern).ok()?.find(text).map(|m| m.end());
    }
    let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1));
    line_starts.into_iter().find_map(|start| {
        let rest = text[start..].strip_prefix("##")?;
        let after_marks = rest.trim_start_matches(char::is_whitespace);
        if after_marks.len() == rest.len() {
            return None;
        }
        line_end_after(text, after_marks.strip_prefix(heading)?)
    })
}

/// The conclusion errors, in the documented order.
pub(crate) fn conclusion_errors(text: &str, primary_ref: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let missing: Vec<&str> = CONCLUSION_HEADINGS
        .iter()
        .copied()
        .filter(|h| !has_h2(text, h))
        .collect();
    if !missing.is_empty() {
        errors.push(format!(
            "conclusion.md is missing required sections: {}",
            missing.join(", ")
        ));
    }
    let outcomes: Vec<String> = OUTCOME
        .captures_iter(text)
        .map(|c| c[1].to_owned())
        .filter(|label| OUTCOMES.contains(&label.as_str()))
        .collect();
    if outcomes.len() != 1 {
        errors.push("conclusion.md must declare exactly one final outcome".to_owned());
    } else if outcomes[0] == "blocked" {
        errors.push("conclusion.md outcome cannot be completed while blocked".to_owned());
    }
    if PLACEHOLDER.is_match(text) {
        errors.push(
            "conclusion.md must not contain unresolved placeholders before completed".to_owned(),
        );
    }
    if !text.contains(primary_ref) {
        errors.push("conclusion.md must reference the primary deliverable".to_owned());
    }
    errors
}

/// Messages for one deliverable's content (see the docs). `label` is how a message
/// names it: `None` for the primary, `Some(ref)` for a supporting item.
pub(crate) fn deliverable_content_errors(
    text: &str,
    sections: &[String],
    frozen_required: bool,
    label: Option<&str>,
) -> Vec<String> {
    let mut errors = Vec::new();
    let status = STATUS.captures(text).map(|c| c[1].to_owned());
    match (&status, label) {
        (None, None) => errors.push(
            "primary deliverable must include Status: Draft, In Review, or Frozen".to_owned(),
        ),
        (None, Some(r)) => errors.push(format!("supporting deliverable {r} must include Status")),
        _ => {}
    }
    if frozen_required && status.is_some_and(|s| s != "Frozen") {
        errors.push(match label {
            None => "primary deliverable status must be Frozen".to_owned(),
            Some(r) => format!("supporting deliverable {r} status must be Frozen"),
        });
    }
    for section in sections {
        match heading_match_end(text, section) {
            None => errors.push(match label {
                None => format!("primary deliverable missing required section: {section}"),
                Some(r) => {
                    format!("supporting deliverable {r} missing required section: {section}")
                }
            }),
            Some(end) if frozen_required => {
                let rest = &text[end..];
                let body = match H2_START.find(rest) {
                    Some(m) => &rest[..m.start()],
                    None => rest,
                };
                if body.trim().is_empty() {
                    errors.push(match label {
                        None => format!("primary deliverable section must not be empty when frozen: {section}"),
                        Some(r) => format!(
                            "supporting deliverable {r} section must not be empty when frozen: {section}"
                        ),
                    });
                }
            }
            Some(_) => {}
        }
    }
    errors
}

/// `decisions.md` errors; `refs` are the declared deliverable refs.
pub(crate) fn decisions_errors(text: &str, refs: &[String]) -> Vec<String> {
    let mut errors = Vec::new();
    let headings: Vec<(String, usize)> = H3
        .captures_iter(text)
        .map(|c| (c[1].to_owned(), c.get(0).map_or(0, |m| m.end())))
        .collect();
    let mut seen = BTreeSet::new();
    for (i, (heading, _)) in headings.iter().enumerate() {
        let expected = format!("D{}", i + 1);
        let id = if let Some(c) = DECISION_ID.captures(heading) {
            c[1].to_owned()
        } else {
            errors.push("accepted decision headings must use D<number>".to_owned());
            expected.clone()
        };
        if !seen.insert(id.clone()) {
            errors.push(format!("duplicate accepted decision id {id}"));
        }
        if id != expected {
            errors.push("accepted decision ids must be sequential".to_owned());
        }
        // The block follows the first heading with this exact text.
        let start = headings
            .iter()
            .find(|(h, _)| h == heading)
            .map_or(0, |(_, end)| *end);
        let rest = &text[start..];
        let block = match H3_START.find(rest) {
            Some(m) => &rest[..m.start()],
            None => rest,
        };
        let has_decision = block.contains("- Decision:");
        let has_reflected = block.contains("- Reflected in:");
        if !has_decision {
            errors.push(format!("accepted decision {id} requires Decision"));
        }
        if !has_reflected {
            errors.push(format!("accepted decision {id} requires Reflected in"));
        }
        if has_decision && has_reflected && !refs.iter().any(|r| block.contains(r.as_str())) {
            errors.push(format!(
                "accepted decision {id} Reflected in must point to declared deliverable"
            ));
        }
    }
    errors
}

/// A `review.md` heading: the seq as written and the participant.
#[derive(Debug, Clone)]
pub(crate) struct ReviewHeading {
    /// The seq, when it fits an integer.
    pub seq: Option<i64>,
    /// The seq as Python's `int()` prints it (no leading zeros).
    pub seq_text: String,
    /// The participant the heading names.
    pub participant: String,
}

/// Review headings keyed by seq: first-appearance order, last one wins.
pub(crate) fn review_headings(text: &str) -> Vec<ReviewHeading> {
    let mut out: Vec<ReviewHeading> = Vec::new();
    for caps in REVIEW_HEADING.captures_iter(text) {
        let digits = &caps[2];
        let seq = digits.parse::<i64>().ok();
        let trimmed = digits.trim_start_matches('0');
        let seq_text = match seq {
            Some(n) => n.to_string(),
            None if trimmed.is_empty() => "0".to_owned(),
            None => trimmed.to_owned(),
        };
        let heading = ReviewHeading {
            seq,
            seq_text,
            participant: caps[1].to_owned(),
        };
        match out.iter_mut().find(|h| h.seq_text == heading.seq_text) {
            Some(existing) => *existing = heading,
            None => out.push(heading),
        }
    }
    out
}

/// The `- SHA-256:` line of `readiness.md`'s `## Deliverable Snapshot` section: `None` without
/// one, else its value, trimmed and without backticks (empty as `init` writes it).
pub(crate) fn snapshot(readiness: &str) -> Option<String> {
    let (section, _) = snapshot_section(readiness)?;
    section.iter().find_map(|line| snapshot_value(line))
}

/// `readiness.md` with its snapshot line holding `sha`: the line replaced where it is, else
/// added at the end of the section, else the section added at the end of the file.
pub(crate) fn with_snapshot(readiness: &str, sha: &str) -> String {
    let line = format!("{SNAPSHOT_LABEL} `{sha}`");
    let mut lines: Vec<&str> = readiness.split_inclusive('\n').collect();
    let Some((section, start)) = snapshot_section(readiness) else {
        let gap = if readiness.is_empty() || readiness.ends_with("\n\n") {
            ""
        } else if readiness.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        };
        return format!("{readiness}{gap}{SNAPSHOT_HEADING}\n\n{line}\n");
    };
    if let Some(i) = section.iter().position(|l| snapshot_value(l).is_some()) {
        let newline = if lines[start + i].ends_with('\n') {
            "\n"
        } else {
            ""
        };
        return splice(&mut lines, start + i, 1, &format!("{line}{newline}"));
    }
    // After the section's last non-blank line (the heading at worst).
    let last = (0..section.len())
        .rev()
        .find(|&i| !section[i].trim().is_empty())
        .unwrap_or(0);
    let at = start + last + 1;
    if lines[at - 1].ends_with('\n') {
        splice(&mut lines, at, 0, &format!("{line}\n"))
    } else {
        // The file's last line, without its newline.
        format!("{readiness}\n{line}\n")
    }
}

fn splice<'t>(lines: &mut Vec<&'t str>, at: usize, remove: usize, text: &'t str) -> String {
    lines.splice(at..at + remove, [text]);
    lines.concat()
}

/// The lines of the snapshot section, from its heading to the next heading, and the index of
/// the heading among all the lines.
fn snapshot_section(readiness: &str) -> Option<(Vec<&str>, usize)> {
    let lines: Vec<&str> = readiness.split_inclusive('\n').collect();
    let start = lines
        .iter()
        .position(|l| l.trim_end() == SNAPSHOT_HEADING)?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with('#'))
        .map_or(lines.len(), |i| start + 1 + i);
    Some((lines[start..end].to_vec(), start))
}

/// The value of a snapshot line (``- SHA-256: `x` ``), when `line` is one.
fn snapshot_value(line: &str) -> Option<String> {
    let value = line.trim_start().strip_prefix(SNAPSHOT_LABEL)?;
    Some(value.trim().trim_matches('`').trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_matchers_agree_with_the_published_regexes() {
        let texts = [
            "## Goals\n",
            "##Goals\n",
            "##\nGoals  \n\n  \nx",
            "## Goals  \t",
            "## Goals x\n## Goals\n",
            "### Goals\n",
            "text\n- [x] Gate A\n",
            "  \n  - [X]Gate A",
            "x - [x] Gate A\n",
            "-\n[x]\nGate A\n\nz",
            "- [x] Gate AB\n",
            "- [ ] Gate A\n- [x]  Gate A \u{a0}\n",
        ];
        for text in texts {
            for literal in ["Goals", "Gate A"] {
                let heading = Regex::new(&format!(r"(?m)^##\s+{}\s*$", regex::escape(literal)));
                let expected = heading.unwrap().find(text).map(|m| m.end());
                assert_eq!(
                    heading_match_end(text, literal),
                    expected,
                    "{text:?} {literal}"
                );
                let tick = format!(r"(?m)^\s*-\s*\[[xX]\]\s*{}\s*$", regex::escape(literal));
                let expected = Regex::new(&tick).unwrap().is_match(text);
                assert_eq!(is_ticked(text, literal), expected, "{text:?} {literal}");
            }
        }
    }

    #[test]
    fn empty_marker_body_absorbs_next_line() {
        let r = Readiness::scan("- [deferred_nonblocking]\nReason: later\n");
        assert!(!r.deferred_missing_reason);
        let r = Readiness::scan("- [deferred_nonblocking] later\nReason: x\n");
        assert!(r.deferred_missing_reason);
    }

    #[test]
    fn placeholder_words_are_whole_words() {
        assert!(PLACEHOLDER.is_match("No unresolved items."));
        assert!(!PLACEHOLDER.is_match("TODOs and unresolvedness"));
    }

    #[test]
    fn the_snapshot_line_is_read_and_filled_where_it_stands() {
        let sha = "ab".repeat(32);
        let template =
            "# R\n\n## Deliverable Snapshot\n\n- Primary: `d.md`\n- SHA-256:\n\n## Next\n";
        assert_eq!(snapshot(template).as_deref(), Some(""));
        let filled = with_snapshot(template, &sha);
        assert_eq!(
            filled,
            format!("# R\n\n## Deliverable Snapshot\n\n- Primary: `d.md`\n- SHA-256: `{sha}`\n\n## Next\n")
        );
        assert_eq!(snapshot(&filled), Some(sha.clone()));
        // A line that was removed comes back at the end of the section; a section too.
        let without = template.replace("- SHA-256:\n", "");
        assert_eq!(snapshot(&without), None);
        assert_eq!(snapshot(&with_snapshot(&without, &sha)), Some(sha.clone()));
        assert!(with_snapshot(&without, &sha)
            .contains(&format!("`d.md`\n- SHA-256: `{sha}`\n\n## Next")));
        let bare = "# R\n- [x] gate";
        assert_eq!(
            with_snapshot(bare, &sha),
            format!("# R\n- [x] gate\n\n## Deliverable Snapshot\n\n- SHA-256: `{sha}`\n")
        );
        // A `- SHA-256:` line of another section is not the snapshot.
        assert_eq!(snapshot("## Other\n- SHA-256: x\n"), None);
    }

    #[test]
    fn review_heading_regex_is_lazy_on_participant() {
        let h = review_headings("## a - b - c - seq 04  \n");
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].participant, "b - c");
        assert_eq!(h[0].seq, Some(4));
    }
}
