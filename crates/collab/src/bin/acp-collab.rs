//! `acp-collab`: the Agent Collaboration Protocol command line. Parsing (into the library's
//! `cli::Command`, which is the clap definition), argparse-style usage errors, the exit code,
//! completions and the manual page; the protocol lives in `acp_collab`.
//!
//! This file only uses clap: it parses the arguments into a `cli::Command` and calls
//! `cli::run`. Clap's own parse errors are reshaped into argparse's wording (the subcommand's
//! `usage: …` line, then `acp-collab «subcommand»: error: «message»`, exit 2), since agents
//! and the docs know the published scripts' messages. The scripts' names (`append_event`,
//! `append_event.py`, …) are subcommand aliases. It keeps the system allocator: its runs are
//! small and short-lived (only `acp-registry` sets mimalloc).

use std::process::ExitCode;

use acp_collab::cli::{self, Console};
use acp_registry_core::cli::{failure_line, manual};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory, Parser, Subcommand};

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

/// The library's commands (their arguments are the library's options), then two about the
/// binary itself.
#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Collab(Box<cli::Command>),
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
        Command::Collab(command) => *command,
    };
    match run(command) {
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

fn run(command: cli::Command) -> std::io::Result<u8> {
    let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
    let mut console = Console {
        out: &mut out,
        err: &mut err,
        usage: &subcommand_usage,
    };
    cli::run(command, &mut console)
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
