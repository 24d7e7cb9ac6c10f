//! `acp-collab`: the Agent Collaboration Protocol command line. Argument
//! parsing only; the protocol lives in `acp_registry::collab`.

use std::io::Write;
use std::process::ExitCode;

use acp_registry::collab::{
    self, model, AppendOptions, CollabError, InitOptions, Invocation, WaitOptions, WaitOutcome,
};
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
enum Command {
    /// Create a collaboration folder (alias: init_collaboration)
    #[command(aliases = ["init_collaboration", "init_collaboration.py"], args_override_self = true)]
    Init(InitArgs),
    /// Append one event to events.jsonl (alias: append_event)
    #[command(aliases = ["append_event", "append_event.py"], args_override_self = true)]
    Append(AppendArgs),
    /// Print the next action for a participant (alias: next_action)
    #[command(aliases = ["next_action", "next_action.py"], args_override_self = true)]
    Next(ParticipantArgs),
    /// Wait until it is a participant's turn (alias: wait_for_turn)
    #[command(aliases = ["wait_for_turn", "wait_for_turn.py"], args_override_self = true)]
    Wait(WaitArgs),
    /// Validate a collaboration folder (alias: validate_collaboration)
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
    /// Install the collaboration skill for an agent
    #[command(subcommand)]
    Skill(SkillCommand),
    /// Speak ACP (Agent Client Protocol) on stdio, for editors
    Acp,
}

#[derive(Subcommand)]
enum SkillCommand {
    /// Copy the skill where an agent reads skills, its scripts running this acp-collab
    Install(SkillInstallArgs),
}

#[derive(Args)]
struct SkillInstallArgs {
    /// The agent (see --list)
    #[arg(long, default_value = "claude-code")]
    agent: String,
    /// Install for the user, below the home folder (the default)
    #[arg(long, conflicts_with = "project")]
    global: bool,
    /// Install into this project folder instead
    #[arg(long, value_name = "DIR")]
    project: Option<std::path::PathBuf>,
    /// Replace a different skill folder of the same name
    #[arg(long)]
    force: bool,
    /// List the known agents and their skill folders
    #[arg(long)]
    list: bool,
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
    #[arg(long, value_parser = model::DELIVERABLE_TYPES)]
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
    #[arg(long, value_parser = model::EVENTS)]
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
    /// SHA-256 of the deliverable being frozen (required by deliverable_frozen)
    #[arg(long)]
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
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    let code = match cli.command {
        Command::Init(a) => {
            let opts = InitOptions {
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
            };
            match collab::init(&opts) {
                Ok(outcome) => {
                    writeln!(stdout, "{}", outcome.message())?;
                    0
                }
                Err(e) => report(&e, "init"),
            }
        }
        Command::Append(a) => {
            let opts = AppendOptions {
                folder: a.folder,
                participant: a.participant,
                event: a.event,
                summary: a.summary,
                doc: a.doc,
                reply_to: a.reply_to,
                role: a.role,
                sha256: a.sha256,
            };
            match collab::append(&opts) {
                Ok(done) => {
                    writeln!(stdout, "{}", done.message())?;
                    0
                }
                Err(e) => report(&e, "append"),
            }
        }
        Command::Next(a) => {
            match collab::next_action_with(&a.folder, &a.participant, &invocation()) {
                Ok(next) => {
                    stdout.write_all(next.render().as_bytes())?;
                    next.exit_code as u8
                }
                Err(e) => report(&e, "next"),
            }
        }
        Command::Wait(a) => {
            let opts = WaitOptions {
                folder: a.folder,
                participant: a.participant,
                interval: a.interval,
                timeout: a.timeout,
                invocation: invocation(),
            };
            match collab::wait_for_turn(&opts, &mut stdout) {
                Ok(WaitOutcome::Ready { next_error, .. }) => {
                    if let Some(msg) = next_error {
                        eprintln!("error: {msg}");
                    }
                    0
                }
                Ok(WaitOutcome::TimedOut { reason }) => {
                    eprintln!("timeout: {reason}");
                    1
                }
                Err(e) => report(&e, "wait"),
            }
        }
        Command::Validate(a) => match collab::validate(&a.folder) {
            Ok(result) => {
                let text = match a.format {
                    Format::Text => result.render_text(),
                    Format::Json => result.render_json(),
                };
                stdout.write_all(text.as_bytes())?;
                result.exit_code() as u8
            }
            Err(e) => report(&e, "validate"),
        },
        Command::Status(a) => match collab::status(&a.folder) {
            Ok(status) => {
                stdout.write_all(
                    match a.format {
                        Format::Text => status.render_text(),
                        Format::Json => status.render_json(),
                    }
                    .as_bytes(),
                )?;
                0
            }
            Err(e) => report(&e, "status"),
        },
        Command::Skill(SkillCommand::Install(a)) => {
            if a.list {
                stdout.write_all(collab::skill::list().as_bytes())?;
                0
            } else {
                skill_install(a, &mut stdout)?
            }
        }
        Command::Log(a) => match collab::log(&a.folder, a.since) {
            Ok(events) => {
                stdout.write_all(
                    match a.format {
                        Format::Text => collab::status::render_log_text(&events),
                        Format::Json => collab::status::render_log_json(&events),
                    }
                    .as_bytes(),
                )?;
                0
            }
            Err(e) => report(&e, "log"),
        },
        Command::Acp => {
            drop(stdout);
            collab::acp::serve(std::io::stdin(), std::io::stdout().lock())?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    stdout.flush()?;
    Ok(ExitCode::from(code))
}

fn skill_install(a: SkillInstallArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    use collab::skill::{install, InstallOptions, Scope};
    let scope = match a.project {
        Some(dir) => Scope::Project(dir),
        None => {
            let home = std::env::var_os("HOME")
                .or_else(|| std::env::var_os("USERPROFILE"))
                .filter(|h| !h.is_empty())
                .ok_or_else(|| anyhow::anyhow!("HOME is not set; pass --project DIR"))?;
            Scope::Global(home.into())
        }
    };
    let binary = std::env::current_exe()?;
    let opts = InstallOptions {
        agent: a.agent,
        scope,
        binary: binary.canonicalize().unwrap_or(binary),
        force: a.force,
    };
    Ok(match install(&opts) {
        Ok(done) => {
            let verb = if done.changed {
                "installed"
            } else {
                "already installed"
            };
            writeln!(
                out,
                "{verb}: {} (scripts run {})",
                done.dir.display(),
                opts.binary.display()
            )?;
            0
        }
        Err(e) => report(&e, "skill"),
    })
}

/// How follow-up commands are printed: the skill's launchers set `ACP_COLLAB_SCRIPTS` to
/// their folder, so an agent that runs them is shown launcher commands.
fn invocation() -> Invocation {
    match std::env::var_os("ACP_COLLAB_SCRIPTS") {
        Some(dir) if !dir.is_empty() => Invocation::Scripts(dir.into()),
        _ => Invocation::Binary,
    }
}

/// Prints a library failure as docs/collab-protocol.md#conventions shapes it and returns exit 2.
fn report(e: &CollabError, subcommand: &str) -> u8 {
    match e {
        CollabError::Usage(msg) => print_usage_error(subcommand, msg),
        CollabError::Protocol(msg) => eprintln!("error: {msg}"),
        CollabError::Flags(problems) => {
            eprintln!("error: {e}");
            for p in problems {
                eprintln!("  --{}: {}", p.flag, p.hint);
            }
        }
    }
    2
}

fn print_usage_error(subcommand: &str, msg: &str) {
    let mut cmd = Cli::command();
    // Building first makes subcommand usage include the binary name.
    cmd.build();
    let usage = cmd
        .find_subcommand_mut(subcommand)
        .map(|c| c.render_usage().to_string())
        .unwrap_or_default();
    eprintln!("{}", usage.trim_end().replacen("Usage: ", "usage: ", 1));
    eprintln!("acp-collab {subcommand}: error: {msg}");
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
    print_usage_error(&subcommand, &msg);
    ExitCode::from(2)
}
