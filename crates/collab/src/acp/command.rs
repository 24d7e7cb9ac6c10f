//! The slash commands of the ACP mode. Words are split like a POSIX shell (quotes and
//! backslashes), so objectives and summaries can hold spaces; flags are those of the
//! `acp-collab` subcommands, and choices are checked against the same `spec` lists. `init` and
//! `append` are parsed into the same `InitOptions` and `AppendOptions` the command line fills.

use std::collections::BTreeMap;

use crate::append::AppendOptions;
use crate::init::InitOptions;
use crate::spec::{DELIVERABLE_TYPES, EVENTS};

/// One parsed prompt. The folder is the session's, never a flag.
#[derive(Debug, Clone)]
pub(crate) enum SlashCommand {
    /// `/status`.
    Status,
    /// `/next <participant>`.
    Next(String),
    /// `/validate`.
    Validate,
    /// `/init …`, with its parsed flags.
    Init(InitOptions),
    /// `/append …`, with its parsed flags.
    Append(AppendOptions),
    /// `/log`.
    Log,
    /// `/help`, or an unknown command.
    Help,
}

/// The commands announced in `available_commands_update`: name, description, input hint.
pub(crate) const COMMANDS: [(&str, &str, Option<&str>); 7] = [
    ("status", "Where the collaboration stands: phase, owner, waiting for", None),
    ("next", "The next action for a participant", Some("<participant>")),
    ("validate", "Validate the collaboration folder", None),
    (
        "init",
        "Create the collaboration folder (flags of `acp-collab init`, without --folder)",
        Some("--participant A --participant B --objective \"…\" --completion \"…\" --primary-deliverable-type T"),
    ),
    (
        "append",
        "Append one event (flags of `acp-collab append`, without --folder)",
        Some("--participant P --event E --summary \"…\" [--doc D] [--reply-to N] [--role R] [--sha256 H]"),
    ),
    ("log", "The event log, one line per event", None),
    ("help", "What this agent understands", None),
];

/// The answer to plain text and to `/help`.
pub(crate) fn help_text() -> String {
    let mut text = String::from(
        "This agent runs an Agent Collaboration Protocol folder (the session's working \
         directory, or the folder named by `_meta.collaborationFolder`). Commands:\n",
    );
    for (name, description, hint) in COMMANDS {
        let hint = hint.map(|h| format!(" {h}")).unwrap_or_default();
        text.push_str(&format!("/{name}{hint}: {description}\n"));
    }
    text
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    One,
    Many,
    Switch,
}

/// A flag's spelling, kind, allowed values (empty: any) and whether it is required.
type FlagSpec = (&'static str, Kind, &'static [&'static str], bool);

const INIT_FLAGS: [FlagSpec; 10] = [
    ("participant", Kind::Many, &[], true),
    ("objective", Kind::One, &[], true),
    ("completion", Kind::Many, &[], true),
    (
        "primary-deliverable-type",
        Kind::One,
        &DELIVERABLE_TYPES,
        true,
    ),
    ("primary-deliverable-file", Kind::One, &[], false),
    ("primary-deliverable-check", Kind::Many, &[], false),
    (
        "deliverables-mode",
        Kind::One,
        &["internal", "external"],
        false,
    ),
    ("deliverables-dir", Kind::One, &[], false),
    ("repo-root", Kind::One, &[], false),
    ("resume", Kind::Switch, &[], false),
];

const APPEND_FLAGS: [FlagSpec; 7] = [
    ("participant", Kind::One, &[], true),
    ("event", Kind::One, &EVENTS, true),
    ("summary", Kind::One, &[], true),
    ("doc", Kind::One, &[], false),
    ("reply-to", Kind::One, &[], false),
    ("role", Kind::One, &["primary", "supporting"], false),
    ("sha256", Kind::One, &[], false),
];

/// Parses a prompt that starts with `/`; `Err` is the message to show the user.
pub(crate) fn parse(text: &str, folder: &str) -> Result<SlashCommand, String> {
    let words = shlex::split(text.trim()).ok_or("unbalanced quotes in the command")?;
    let Some((name, args)) = words.split_first() else {
        return Ok(SlashCommand::Help);
    };
    let bare = |command: SlashCommand| match args {
        [] => Ok(command),
        _ => Err(format!("{name} takes no arguments")),
    };
    match name.as_str() {
        "/status" => bare(SlashCommand::Status),
        "/validate" => bare(SlashCommand::Validate),
        "/log" => bare(SlashCommand::Log),
        "/help" => bare(SlashCommand::Help),
        "/next" => match args {
            [participant] => Ok(SlashCommand::Next(participant.clone())),
            _ => Err("usage: /next <participant>".into()),
        },
        "/init" => Ok(SlashCommand::Init(init(
            &read_flags("/init", args, &INIT_FLAGS)?,
            folder,
        ))),
        "/append" => {
            append(&read_flags("/append", args, &APPEND_FLAGS)?, folder).map(SlashCommand::Append)
        }
        _ => Err(format!("unknown command {name}; try /help")),
    }
}

type Flags = BTreeMap<&'static str, Vec<String>>;

/// Reads `--flag value`, `--flag=value` and switches, checking kinds, choices and presence.
fn read_flags(command: &str, args: &[String], specs: &[FlagSpec]) -> Result<Flags, String> {
    let mut flags = Flags::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let (key, inline) = match word.strip_prefix("--") {
            Some(rest) => match rest.split_once('=') {
                Some((k, v)) => (k, Some(v.to_string())),
                None => (rest, None),
            },
            None => return Err(format!("{command}: unexpected argument {word:?}")),
        };
        let Some(&(name, kind, choices, _)) = specs.iter().find(|s| s.0 == key) else {
            return Err(format!("{command}: unknown flag --{key}"));
        };
        let value = match (kind, inline) {
            (Kind::Switch, None) => String::new(),
            (Kind::Switch, Some(_)) => return Err(format!("{command}: --{name} takes no value")),
            (_, Some(v)) => v,
            (_, None) => words
                .next()
                .cloned()
                .ok_or_else(|| format!("{command}: --{name} expects a value"))?,
        };
        if !choices.is_empty() && !choices.contains(&value.as_str()) {
            return Err(format!(
                "{command}: --{name} {value:?} is not one of {}",
                choices.join(", ")
            ));
        }
        let values = flags.entry(name).or_default();
        if kind != Kind::Many {
            values.clear();
        }
        values.push(value);
    }
    let missing: Vec<String> = specs
        .iter()
        .filter(|s| s.3 && !flags.contains_key(s.0))
        .map(|s| format!("--{}", s.0))
        .collect();
    if !missing.is_empty() {
        return Err(format!("{command}: missing {}", missing.join(", ")));
    }
    Ok(flags)
}

fn one(flags: &Flags, name: &str) -> Option<String> {
    flags.get(name).and_then(|v| v.last().cloned())
}

fn many(flags: &Flags, name: &str) -> Vec<String> {
    flags.get(name).cloned().unwrap_or_default()
}

fn init(flags: &Flags, folder: &str) -> InitOptions {
    InitOptions {
        folder: folder.to_string(),
        participants: many(flags, "participant"),
        objective: one(flags, "objective").unwrap_or_default(),
        completion: many(flags, "completion"),
        primary_type: one(flags, "primary-deliverable-type").unwrap_or_default(),
        primary_file: one(flags, "primary-deliverable-file"),
        primary_checks: many(flags, "primary-deliverable-check"),
        deliverables_mode: one(flags, "deliverables-mode").unwrap_or_else(|| "internal".into()),
        deliverables_dir: one(flags, "deliverables-dir").unwrap_or_else(|| "deliverables".into()),
        repo_root: one(flags, "repo-root"),
        resume: flags.contains_key("resume"),
    }
}

fn append(flags: &Flags, folder: &str) -> Result<AppendOptions, String> {
    let reply_to = match one(flags, "reply-to") {
        Some(raw) => Some(
            raw.parse::<i64>()
                .map_err(|_| format!("/append: --reply-to {raw:?} is not an integer"))?,
        ),
        None => None,
    };
    Ok(AppendOptions {
        folder: folder.to_string(),
        participant: one(flags, "participant").unwrap_or_default(),
        event: one(flags, "event").unwrap_or_default(),
        summary: one(flags, "summary").unwrap_or_default(),
        doc: one(flags, "doc"),
        reply_to,
        role: one(flags, "role"),
        sha256: one(flags, "sha256"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_reads_quoted_repeated_flags_and_fills_the_defaults() {
        let cmd = parse(
            r#"/init --participant alice --participant=bob --objective "Ship it, well" --completion 'gate one' --primary-deliverable-type design-spec --resume"#,
            "/w/collab",
        )
        .unwrap();
        let SlashCommand::Init(opts) = cmd else {
            panic!("not init: {cmd:?}")
        };
        assert_eq!(opts.folder, "/w/collab");
        assert_eq!(opts.participants, ["alice", "bob"]);
        assert_eq!(opts.objective, "Ship it, well");
        assert_eq!(opts.completion, ["gate one"]);
        assert_eq!(opts.primary_type, "design-spec");
        assert_eq!(opts.deliverables_mode, "internal");
        assert_eq!(opts.deliverables_dir, "deliverables");
        assert!(opts.resume);
    }

    #[test]
    fn append_reads_reply_to_as_an_integer_and_keeps_the_last_single_value() {
        let cmd = parse(
            "/append --participant a --participant bob --event proposal_submitted --summary \"x y\" --reply-to 3",
            "f",
        )
        .unwrap();
        let SlashCommand::Append(opts) = cmd else {
            panic!("not append: {cmd:?}")
        };
        assert_eq!(
            (opts.participant.as_str(), opts.summary.as_str()),
            ("bob", "x y")
        );
        assert_eq!(opts.reply_to, Some(3));
        let err = parse(
            "/append --participant a --event blocked --summary s --reply-to x",
            "f",
        );
        assert_eq!(
            err.unwrap_err(),
            "/append: --reply-to \"x\" is not an integer"
        );
    }

    #[test]
    fn bad_commands_say_what_to_change() {
        let cases = [
            ("/frobnicate", "unknown command /frobnicate; try /help"),
            ("/next", "usage: /next <participant>"),
            ("/status now", "/status takes no arguments"),
            (
                "/init --objective \"open",
                "unbalanced quotes in the command",
            ),
            (
                "/append --participant a --event nope --summary s",
                "/append: --event \"nope\" is not one of",
            ),
            (
                "/append --participant a --summary",
                "/append: --summary expects a value",
            ),
            (
                "/append --participant a --colour red",
                "/append: unknown flag --colour",
            ),
            (
                "/init --participant a",
                "/init: missing --objective, --completion, --primary-deliverable-type",
            ),
            ("/init --resume=yes", "/init: --resume takes no value"),
        ];
        for (text, want) in cases {
            let got = parse(text, "f").unwrap_err();
            assert!(got.starts_with(want), "{text}: {got}");
        }
    }

    #[test]
    fn simple_commands_parse_and_help_lists_every_announced_command() {
        assert!(matches!(parse("/status", "f"), Ok(SlashCommand::Status)));
        assert!(matches!(parse("  /log ", "f"), Ok(SlashCommand::Log)));
        assert!(matches!(
            parse("/validate", "f"),
            Ok(SlashCommand::Validate)
        ));
        assert!(matches!(parse("/next bob", "f"), Ok(SlashCommand::Next(p)) if p == "bob"));
        let help = help_text();
        for (name, _, _) in COMMANDS {
            assert!(
                help.contains(&format!("\n/{name}")),
                "{name} missing from help"
            );
        }
    }
}
