//! The exact follow-up for a `next` report (docs/collab-protocol.md#next): the seq the
//! participant's next event gets, what to write first, and the commands to run, with
//! `--reply-to` filled in. Printed after `next action:`, only when it is the participant's
//! turn, so a waiting participant's report stays the published five lines.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::events::Event;
use crate::markdown::deliverable_content_errors;
use crate::paths;
use crate::protocol::Protocol;
use crate::pyfmt::as_int;
use crate::spec as text;
use crate::validate::schema::sections_for;
use acp_registry_core::time::utc_now;

/// How the printed commands start: `acp-collab <command>`, or the skill's Python launchers
/// (`python3 <scripts>/append_event.py`) when those ran `acp-collab`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Invocation {
    #[default]
    /// `acp-collab …` commands.
    Binary,
    /// The launchers' folder (they set `ACP_COLLAB_SCRIPTS`).
    Scripts(PathBuf),
}

impl Invocation {
    /// The form this process was started in: the skill's launchers set `ACP_COLLAB_SCRIPTS`
    /// to their folder, so an agent that runs them is shown launcher commands.
    pub fn from_env() -> Invocation {
        match std::env::var_os("ACP_COLLAB_SCRIPTS") {
            Some(dir) if !dir.is_empty() => Invocation::Scripts(dir.into()),
            _ => Invocation::Binary,
        }
    }

    /// The program part of a command line: `acp-collab «command»` or the launcher `«script».py`.
    pub(crate) fn program(&self, command: &str, script: &str) -> String {
        match self {
            Invocation::Binary => format!("acp-collab {command}"),
            Invocation::Scripts(dir) => {
                let path = dir.join(format!("{script}.py"));
                format!("python3 {}", quote(&path.display().to_string()))
            }
        }
    }
}

/// `--folder «folder» --participant «participant»`, quoted.
pub(crate) fn folder_args(folder: &Path, participant: &str) -> String {
    format!(
        "--folder {} --participant {}",
        quote(&folder.display().to_string()),
        quote(participant)
    )
}

/// The `wait` command for `participant`, in the invocation's form.
pub(crate) fn wait_command(invocation: &Invocation, folder: &Path, participant: &str) -> String {
    format!(
        "{} {}",
        invocation.program("wait", "wait_for_turn"),
        folder_args(folder, participant)
    )
}

/// The `next` command for `participant`, in the invocation's form.
pub(crate) fn next_command(invocation: &Invocation, folder: &Path, participant: &str) -> String {
    format!(
        "{} {}",
        invocation.program("next", "next_action"),
        folder_args(folder, participant)
    )
}

/// The one command `participant` runs once the collaboration stands at `phase`, awaiting
/// `waiting` (what `init` and `append` print last): its `next` when it is awaited (its turn:
/// `next` prints the exact events), `validate` once the collaboration is `completed` or
/// `blocked`, else its `wait`, which returns when its turn comes.
pub(crate) fn turn_command(
    invocation: &Invocation,
    folder: &Path,
    participant: &str,
    phase: Option<&str>,
    waiting: &[String],
) -> String {
    match phase {
        Some("completed" | "blocked") => validate_command(invocation, folder),
        _ if waiting.iter().any(|w| w == participant) => {
            next_command(invocation, folder, participant)
        }
        _ => wait_command(invocation, folder, participant),
    }
}

/// The `validate` command, in the invocation's form.
pub(crate) fn validate_command(invocation: &Invocation, folder: &Path) -> String {
    format!(
        "{} --folder {}",
        invocation.program("validate", "validate_collaboration"),
        quote(&folder.display().to_string())
    )
}

pub(crate) use acp_registry_core::escape::shell_word as quote;

/// One event to append.
struct Step {
    event: &'static str,
    reply_to: i64,
    /// `--role primary --doc …` and the like.
    extra: Vec<(&'static str, String)>,
    note: &'static str,
}

/// What the folder and the log say, for composing commands.
pub(crate) struct Context<'a> {
    /// The loaded `protocol.json`.
    pub protocol: &'a Protocol,
    /// The whole log.
    pub events: &'a [Event],
    /// Who is asking.
    pub participant: &'a str,
    /// How follow-up commands are printed.
    pub invocation: &'a Invocation,
}

impl Context<'_> {
    fn next_seq(&self) -> i64 {
        let max = self
            .events
            .iter()
            .filter_map(|e| e.get("seq").and_then(Value::as_i64))
            .max();
        max.unwrap_or(0) + 1
    }

    /// The seq of the latest event named one of `names`, else of the last event.
    fn reply_target(&self, names: &[&str]) -> i64 {
        let named = self.events.iter().rev().find(|e| {
            e.get("event")
                .and_then(Value::as_str)
                .is_some_and(|n| names.contains(&n))
        });
        named
            .or(self.events.last())
            .and_then(|e| as_int(e.get("seq")))
            .unwrap_or(1)
    }

    fn primary_ref(&self) -> String {
        self.protocol.primary_ref().unwrap_or_default()
    }

    fn folder_args(&self) -> String {
        folder_args(&self.protocol.folder, self.participant)
    }

    fn append(&self, step: &Step, seq: i64) -> String {
        let mut cmd = format!(
            "{} {} --event {} --reply-to {}",
            self.invocation.program("append", "append_event"),
            self.folder_args(),
            step.event,
            step.reply_to
        );
        for (flag, value) in &step.extra {
            cmd.push_str(&format!(" --{flag} {}", quote(value)));
        }
        cmd.push_str(" --summary '<one line: what you did>'");
        format!("run: {cmd}  # becomes seq {seq}{}", step.note)
    }

    fn validate(&self) -> String {
        let command = validate_command(self.invocation, &self.protocol.folder);
        format!("run: {command}  # fix every ERROR line first")
    }

    fn next(&self) -> String {
        let command = next_command(self.invocation, &self.protocol.folder, self.participant);
        format!("run: {command}  # after editing")
    }

    /// The last line of a report that asks for no event: wait for the turn, or (once the
    /// collaboration has ended or its phase is invalid) validate.
    fn closing(&self, advice: &str) -> String {
        let folder = &self.protocol.folder;
        match advice {
            text::STOP => format!(
                "run: {}  # the collaboration is complete; nothing else is to be done",
                validate_command(self.invocation, folder)
            ),
            text::RESOLVE_BLOCKER => format!(
                "run: {}  # the collaboration is blocked (events.jsonl says why); start a new one with init",
                validate_command(self.invocation, folder)
            ),
            text::INVALID_PHASE => format!("run: {}", validate_command(self.invocation, folder)),
            _ => format!(
                "run: {}  # returns when it is your turn, then prints what to do",
                wait_command(self.invocation, folder, self.participant)
            ),
        }
    }

    fn primary(&self) -> Vec<(&'static str, String)> {
        vec![("role", "primary".to_owned()), ("doc", self.primary_ref())]
    }
}

/// The lines printed after `next action: «advice»`, ending with the command to run: the
/// events to append, `next` after an edit, or `wait` when it is someone else's turn.
pub(crate) fn follow_up(cx: &Context, advice: &str, drafted: bool) -> Vec<String> {
    let seq = cx.next_seq();
    let (write, steps, validate_before) = plan(cx, advice, drafted);
    let mut lines = Vec::new();
    if write.is_empty() && steps.is_empty() {
        lines.push(cx.closing(advice));
        return lines;
    }
    lines.push(format!("next seq: {seq}"));
    if !write.is_empty() {
        lines.push(format!("write first: {write}"));
    }
    if validate_before {
        lines.push(cx.validate());
    }
    for (i, step) in steps.iter().enumerate() {
        let step_seq = seq + i as i64;
        // A later step answers the one before it.
        let step = Step {
            reply_to: if i == 0 { step.reply_to } else { step_seq - 1 },
            extra: step.extra.clone(),
            ..*step
        };
        lines.push(cx.append(&step, step_seq));
    }
    if steps.is_empty() {
        lines.push(cx.next());
    }
    lines
}

type Plan = (String, Vec<Step>, bool);

fn step(event: &'static str, reply_to: i64, extra: Vec<(&'static str, String)>) -> Step {
    Step {
        event,
        reply_to,
        extra,
        note: "",
    }
}

fn plan(cx: &Context, advice: &str, drafted: bool) -> Plan {
    let r = cx.primary_ref();
    let last = cx.reply_target(&[]);
    match advice {
        text::DRAFT => draft_plan(cx, last, drafted),
        text::REVIEW => review_plan(cx),
        text::REVISE => revise_plan(cx),
        text::CLASSIFY => {
            let reply = cx.reply_target(&["proposal_revised", "decision_proposed"]);
            let write = "readiness.md: mark every open question `- [resolved] …`, \
                         `- [deferred_nonblocking] … Reason: …` or `- [blocking] …`; no \
                         `[unresolved]` item or `TBD` may remain"
                .to_owned();
            (
                write,
                vec![step("question_classified", reply, vec![])],
                false,
            )
        }
        text::ACCEPT => {
            let reply = cx.reply_target(&["question_classified"]);
            (
                String::new(),
                vec![step("decision_accepted", reply, vec![])],
                false,
            )
        }
        text::FREEZE => freeze_plan(cx, last),
        text::PASS_READINESS => (
            String::new(),
            vec![step("readiness_passed", last, vec![])],
            true,
        ),
        text::COMPLETE => {
            let doc = vec![("doc", "conclusion.md".to_owned())];
            (String::new(), vec![step("completed", last, doc)], true)
        }
        text::CLEAR_READINESS | text::CHECKLIST => {
            let write = "readiness.md: clear `[blocking]` and `[unresolved]` items and `TBD`, \
                         give every `[deferred_nonblocking]` item a `Reason:`, and tick \
                         `- [x] Ready to implement`"
                .to_owned();
            (write, vec![], false)
        }
        text::WRITE_CONCLUSION => {
            let write = format!(
                "conclusion.md: keep its nine `##` sections, replace `- [blocked] …` with one \
                 of `- [proceed]`, `- [do_not_proceed]` or `- [defer]`, mention `{r}`, and \
                 leave no TBD, TODO or unresolved; tick every gate line in readiness.md"
            );
            (write, vec![], false)
        }
        _ => (String::new(), vec![], false),
    }
}

/// The owner drafts (unless already drafted) and submits the proposal.
fn draft_plan(cx: &Context, last: i64, drafted: bool) -> Plan {
    let r = cx.primary_ref();
    let mut steps = Vec::new();
    if !drafted {
        steps.push(step("deliverable_drafted", last, cx.primary()));
    }
    steps.push(step("proposal_submitted", last, vec![]));
    let write = format!("`{r}` (keep its `Status:` line and every `##` section) and proposal.md");
    (write, steps, false)
}

/// A reviewer writes the review under the heading its event's seq will match.
fn review_plan(cx: &Context) -> Plan {
    let r = cx.primary_ref();
    let heading = format!(
        "## {} - {} - seq {}",
        utc_now(),
        cx.participant,
        cx.next_seq()
    );
    let write = format!(
        "append your review to review.md under the heading `{heading}` (the seq your \
         event will get); mention `{r}`, a `Review Scope:` list with `Primary \
         deliverable completeness`, your position, concerns and required changes"
    );
    let reply = cx.reply_target(&["proposal_submitted"]);
    (write, vec![step("review_submitted", reply, vec![])], false)
}

/// The owner answers the reviews, revising the deliverable if it changed.
fn revise_plan(cx: &Context) -> Plan {
    let r = cx.primary_ref();
    let reply = cx.reply_target(&["review_submitted"]);
    let mut revised = step("deliverable_revised", reply, cx.primary());
    revised.note = " (only if the deliverable changed; then the next seq is one less)";
    let write = format!("address the reviews in proposal.md, decisions.md and `{r}`");
    (
        write,
        vec![revised, step("proposal_revised", reply, vec![])],
        false,
    )
}

/// The owner freezes the deliverable: first the edit to its final form (then `next` again),
/// and only once the file is final the freeze, with the SHA-256 of those bytes.
fn freeze_plan(cx: &Context, last: i64) -> Plan {
    let r = cx.primary_ref();
    let target = cx.protocol.resolve_doc("primary", &r).ok();
    let text = target
        .as_ref()
        .and_then(|t| paths::read_text(&t.base, &t.rel).ok().flatten());
    let sections = cx.protocol.primary().map(sections_for).unwrap_or_default();
    let problems = text.as_deref().map_or_else(
        || vec![format!("primary deliverable missing: {r}")],
        |text| deliverable_content_errors(text, &sections, true, None),
    );
    if !problems.is_empty() {
        let write = format!(
            "`{r}`: fill every section and set `Status: Frozen` (now: {}); the freeze \
             command, with the file's final SHA-256, comes after",
            problems.join("; ")
        );
        return (write, vec![], false);
    }
    let sha = target
        .and_then(|t| paths::sha256_file(&t.base, &t.rel).ok().flatten())
        .unwrap_or_else(|| "<sha256 of the file>".to_owned());
    let mut extra = cx.primary();
    extra.push(("sha256", sha));
    let mut frozen = step("deliverable_frozen", last, extra);
    frozen.note = " (the SHA-256 of the file as it is now: edit nothing before this)";
    (String::new(), vec![frozen], false)
}
