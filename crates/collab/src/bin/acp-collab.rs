//! `acp-collab`: the Agent Collaboration Protocol command line. Argument
//! parsing only; the protocol lives in `acp_collab`.

use std::process::ExitCode;

use acp_collab::cli::{self, Console};
use acp_collab::{spec, AppendOptions, CollabError, InitOptions, Invocation, WaitOptions};
use acp_registry_core::cli::{failure_line, manual};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "acp-collab",
    version,
    about = "Run an Agent Collaboration Protocol (ACP schema v2) collaboration folder"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
// The scripts' snake_case aliases are in the help texts, so those are attributes: as doc
// comments they would have to be backticked, which would change `--help`.
enum Command {
    #[command(about = "Create a collaboration folder (alias: init_collaboration)")]
    #[command(aliases = ["init_collaboration", "init_collaboration.py"], args_override_self = true)]
    Init(InitArgs),
    #[command(about = "Append one event to events.jsonl (alias: append_event)")]
    #[command(aliases = ["append_event", "append_event.py"], args_override_self = true)]
    Append(AppendArgs),
    #[command(about = "Print the next action for a participant (alias: next_action)")]
    #[command(aliases = ["next_action", "next_action.py"], args_override_self = true)]
    Next(ParticipantArgs),
    #[command(about = "Wait until it is a participant's turn (alias: wait_for_turn)")]
    #[command(aliases = ["wait_for_turn", "wait_for_turn.py"], args_override_self = true)]
    Wait(WaitArgs),
    #[command(about = "Validate a collaboration folder (alias: validate_collaboration)")]
    #[command(
        aliases = ["validate_collaboration", "validate_collaboration.py"],
        args_override_self = true
    )]
    Validate(ValidateArgs),
    /// Show where a collaboration stands: phase, owner, who is awaited, the last events and
    /// open readiness questions
    #[command(args_override_self = true)]
    Status(ValidateArgs),
    /// Print the event log, optionally only the events after a seq
    #[command(args_override_self = true)]
    Log(LogArgs),
    /// Install, list or remove the collaboration skill
    #[command(subcommand)]
    Skill(SkillCommand),
    /// Speak ACP (Agent Client Protocol) on stdio, for editors
    Acp,
    /// Print a shell completion script (bash, zsh, fish, elvish or PowerShell)
    Completions(CompletionsArgs),
    /// Print the manual page (roff), e.g. `acp-collab man | man -l -`
    Man,
}

#[derive(Args)]
struct CompletionsArgs {
    /// The shell to complete for
    shell: clap_complete::Shell,
}

/// The manual page's text beyond the argument definitions.
const MANUAL: manual::ManualText = manual::ManualText {
    exit_status: &[
        ("0", "Success: created, appended, printed, ready (wait), passed (validate), installed."),
        ("1", "validate passed with warnings only; wait timed out; next found the phase invalid or missing."),
        ("2", "A usage error, a refused event or a failure, with one error line; validate found errors."),
    ],
    environment: &[
        ("ACP_COLLAB_SCRIPTS", "Set by the skill's launchers: follow-up commands are printed as launcher commands."),
        ("HOME", "skill install: where user-level skill folders are."),
    ],
    examples: &[
        ("acp-collab skill install", "Install the collaboration skill where every known client reads skills (.agents/skills and .claude/skills)."),
        ("acp-collab init --folder collab --participant alice --participant bob --objective 'Ship the spec' --completion 'Spec frozen' --primary-deliverable-type design-spec", "Start a collaboration."),
        ("acp-collab next --folder collab --participant bob", "What bob does next, with the command to run."),
        ("acp-collab validate --folder collab", "Check the folder and its event log."),
    ],
    see_also: &["acp-registry(1)"],
};

#[derive(Subcommand)]
enum SkillCommand {
    /// Copy the skill where agents read skills, its scripts running this acp-collab
    Install(SkillInstallArgs),
    /// Remove what skill install wrote (never a folder it did not write)
    Uninstall(SkillTargetArgs),
    /// Show where the skill is installed, the engine its scripts run and whether it is outdated
    List(SkillListArgs),
}

#[derive(Args)]
struct SkillInstallArgs {
    #[command(flatten)]
    target: SkillTargetArgs,
    /// List the known agents and their skill folders
    #[arg(long)]
    list: bool,
}

#[derive(Args)]
struct SkillTargetArgs {
    /// The agent (see skill install --list); universal writes .agents/skills and .claude/skills
    #[arg(long, default_value = "universal")]
    agent: String,
    /// For the user, below the home folder (the default)
    #[arg(long, conflicts_with = "project")]
    global: bool,
    /// In this project folder instead
    #[arg(long, value_name = "DIR")]
    project: Option<std::path::PathBuf>,
    /// Install: replace a hand-edited install or another skill of the same name. Uninstall:
    /// remove a hand-edited install's recorded files
    #[arg(long)]
    force: bool,
}

#[derive(Args)]
struct SkillListArgs {
    /// The project folder to look in besides the home folder (default: the current folder)
    #[arg(long, value_name = "DIR")]
    project: Option<std::path::PathBuf>,
}

#[derive(Args)]
struct LogArgs {
    /// The collaboration folder
    #[arg(long)]
    folder: String,
    /// Only events with a seq above N
    #[arg(long, value_name = "N")]
    since: Option<i64>,
    /// Output format (json: one JSON object per line)
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Args)]
struct InitArgs {
    /// The collaboration folder (created if missing)
    #[arg(long)]
    folder: String,
    /// A participant id; the first one is the proposal owner (repeatable)
    #[arg(long, required = true)]
    participant: Vec<String>,
    /// The objective
    #[arg(long)]
    objective: String,
    /// An objective completion gate (repeatable)
    #[arg(long, required = true)]
    completion: Vec<String>,
    /// The primary deliverable type
    #[arg(long, value_parser = spec::DELIVERABLE_TYPES)]
    primary_deliverable_type: String,
    /// The primary deliverable file, relative to the deliverables directory
    #[arg(long)]
    primary_deliverable_file: Option<String>,
    /// A required section of a custom deliverable (repeatable)
    #[arg(long)]
    primary_deliverable_check: Vec<String>,
    /// Where deliverables live
    #[arg(long, default_value = "internal", value_parser = ["internal", "external"])]
    deliverables_mode: String,
    /// The deliverables directory
    #[arg(long, default_value = "deliverables")]
    deliverables_dir: String,
    /// The repository root, relative to the folder (external mode only)
    #[arg(long)]
    repo_root: Option<String>,
    /// Accept an existing collaboration folder without changing it
    #[arg(long)]
    resume: bool,
}

#[derive(Args)]
struct AppendArgs {
    /// The collaboration folder
    #[arg(long)]
    folder: String,
    /// The sender
    #[arg(long)]
    participant: String,
    /// The event to record
    #[arg(long, value_parser = spec::EVENTS)]
    event: String,
    /// One line saying what this event is about
    #[arg(long)]
    summary: String,
    /// The document the event concerns (a collaboration file or a deliverable path)
    #[arg(long)]
    doc: Option<String>,
    /// The seq of an earlier event this one answers
    #[arg(long)]
    reply_to: Option<i64>,
    /// Which deliverable a deliverable event is about
    #[arg(long, value_parser = ["primary", "supporting"])]
    role: Option<String>,
    #[arg(
        long,
        help = "SHA-256 of the deliverable being frozen (required by deliverable_frozen)"
    )]
    sha256: Option<String>,
}

#[derive(Args)]
struct ParticipantArgs {
    /// The collaboration folder
    #[arg(long)]
    folder: String,
    /// The participant asking
    #[arg(long)]
    participant: String,
}

#[derive(Args)]
struct WaitArgs {
    /// The collaboration folder
    #[arg(long)]
    folder: String,
    /// The participant waiting for its turn
    #[arg(long)]
    participant: String,
    /// Seconds between checks (at least 0.1)
    #[arg(long, default_value_t = 2.0)]
    interval: f64,
    /// Seconds before giving up; 0 waits forever
    #[arg(long, default_value_t = 0.0)]
    timeout: f64,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// The published scripts' report
    Text,
    /// One JSON document, for tools
    Json,
}

#[derive(Args)]
struct ValidateArgs {
    /// The collaboration folder
    #[arg(long)]
    folder: String,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let command = match cli.command {
        Command::Completions(args) => {
            return documentation(|out| {
                manual::completions(args.shell, &mut Cli::command(), "acp-collab", out)
            })
        }
        Command::Man => return documentation(|out| manual::man_page(Cli::command(), &MANUAL, out)),
        command => command,
    };
    match run(library_command(command)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("{}", failure_line(anyhow::Error::new(e).chain()));
            ExitCode::from(2)
        }
    }
}

/// Prints a completion script or the manual page to stdout.
fn documentation(write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) -> ExitCode {
    match write(&mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", failure_line([e]));
            ExitCode::from(2)
        }
    }
}

fn run(command: cli::Command) -> Result<u8, CollabError> {
    let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
    let mut console = Console {
        out: &mut out,
        err: &mut err,
        usage: &subcommand_usage,
    };
    cli::run(command, &mut console)
}

/// The parsed arguments as the library's command.
fn library_command(command: Command) -> cli::Command {
    match command {
        Command::Init(a) => cli::Command::Init(
            InitOptions {
                folder: a.folder,
                participants: a.participant,
                objective: a.objective,
                completion: a.completion,
                primary_type: a.primary_deliverable_type,
                primary_file: a.primary_deliverable_file,
                primary_checks: a.primary_deliverable_check,
                deliverables_mode: a.deliverables_mode,
                deliverables_dir: a.deliverables_dir,
                repo_root: a.repo_root,
                resume: a.resume,
            },
            invocation(),
        ),
        Command::Append(a) => cli::Command::Append(
            AppendOptions {
                folder: a.folder,
                participant: a.participant,
                event: a.event,
                summary: a.summary,
                doc: a.doc,
                reply_to: a.reply_to,
                role: a.role,
                sha256: a.sha256,
            },
            invocation(),
        ),
        Command::Next(a) => cli::Command::Next(a.folder, a.participant, invocation()),
        Command::Wait(a) => cli::Command::Wait(WaitOptions {
            folder: a.folder,
            participant: a.participant,
            interval: a.interval,
            timeout: a.timeout,
            invocation: invocation(),
        }),
        Command::Validate(a) => cli::Command::Validate(a.folder, a.format.into()),
        Command::Status(a) => cli::Command::Status(a.folder, a.format.into()),
        Command::Log(a) => cli::Command::Log(a.folder, a.since, a.format.into()),
        Command::Skill(SkillCommand::Install(a)) if a.list => cli::Command::SkillAgents,
        Command::Skill(SkillCommand::Install(SkillInstallArgs { target: t, .. })) => {
            cli::Command::SkillInstall(t.agent, t.project, t.force)
        }
        Command::Skill(SkillCommand::Uninstall(t)) => {
            cli::Command::SkillUninstall(t.agent, t.project, t.force)
        }
        Command::Skill(SkillCommand::List(a)) => cli::Command::SkillList(a.project),
        Command::Acp => cli::Command::Acp,
        Command::Completions(_) | Command::Man => unreachable!("answered by main"),
    }
}

impl From<Format> for cli::Format {
    fn from(format: Format) -> Self {
        match format {
            Format::Text => cli::Format::Text,
            Format::Json => cli::Format::Json,
        }
    }
}

/// How follow-up commands are printed: the skill's launchers set `ACP_COLLAB_SCRIPTS` to
/// their folder, so an agent that runs them is shown launcher commands.
fn invocation() -> Invocation {
    match std::env::var_os("ACP_COLLAB_SCRIPTS") {
        Some(dir) if !dir.is_empty() => Invocation::Scripts(dir.into()),
        _ => Invocation::Binary,
    }
}

/// The `Usage: …` line of a subcommand, from the clap definitions.
fn subcommand_usage(subcommand: &str) -> String {
    let mut cmd = Cli::command();
    // Building first makes subcommand usage include the binary name.
    cmd.build();
    cmd.find_subcommand_mut(subcommand)
        .map(|c| c.render_usage().to_string())
        .unwrap_or_default()
}

/// The subcommand named on the command line, resolved through aliases.
fn subcommand_from_args() -> Option<String> {
    let cmd = Cli::command();
    std::env::args().skip(1).find_map(|arg| {
        cmd.get_subcommands()
            .find(|s| s.get_name() == arg || s.get_all_aliases().any(|a| a == arg))
            .map(|s| s.get_name().to_owned())
    })
}

fn flag_name(e: &clap::Error) -> String {
    match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.split(' ').next().unwrap_or_default().to_owned(),
        _ => String::new(),
    }
}

/// Reshapes clap's parse errors into argparse's `«prog»: error: «message»`
/// (exit 2), since agents and docs know the published scripts' wording.
fn usage_error(e: &clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
        _ => {}
    }
    let Some(subcommand) = subcommand_from_args() else {
        e.exit()
    };
    let msg = match e.kind() {
        ErrorKind::MissingRequiredArgument => {
            let args: Vec<String> = match e.get(ContextKind::InvalidArg) {
                Some(ContextValue::Strings(list)) => list
                    .iter()
                    .map(|s| s.split(' ').next().unwrap_or_default().to_owned())
                    .collect(),
                _ => Vec::new(),
            };
            format!("the following arguments are required: {}", args.join(", "))
        }
        ErrorKind::InvalidValue => {
            let value = match e.get(ContextKind::InvalidValue) {
                Some(ContextValue::String(s)) => s.clone(),
                _ => String::new(),
            };
            let choices = match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(list)) => list
                    .iter()
                    .map(|c| format!("'{c}'"))
                    .collect::<Vec<_>>()
                    .join(", "),
                _ => String::new(),
            };
            if choices.is_empty() {
                format!("argument {}: expected one argument", flag_name(e))
            } else {
                format!(
                    "argument {}: invalid choice: '{value}' (choose from {choices})",
                    flag_name(e)
                )
            }
        }
        ErrorKind::ValueValidation => {
            let value = match e.get(ContextKind::InvalidValue) {
                Some(ContextValue::String(s)) => s.clone(),
                _ => String::new(),
            };
            let flag = flag_name(e);
            let kind = if flag == "--reply-to" { "int" } else { "float" };
            format!("argument {flag}: invalid {kind} value: '{value}'")
        }
        ErrorKind::UnknownArgument => {
            let arg = match e.get(ContextKind::InvalidArg) {
                Some(ContextValue::String(s)) => s.clone(),
                _ => String::new(),
            };
            format!("unrecognized arguments: {arg}")
        }
        _ => e
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .to_owned(),
    };
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr().lock());
    let mut console = Console {
        out: &mut out,
        err: &mut err,
        usage: &subcommand_usage,
    };
    let _ = console.usage_error(&subcommand, &msg);
    ExitCode::from(2)
}
