//! The `acp-collab` commands as the binary runs them: their arguments, what each prints, on
//! which stream, and its exit code (docs/collab-protocol.md#conventions). [`Command`] and the
//! options it holds are the binary's clap definitions themselves (no mirror to keep in step):
//! the binary parses the command line into a [`Command`] and calls [`run`].
//!
//! Text for people passes through [`escape::terminal`]: names, titles and event fields come
//! from a shared folder, so a hostile one must not reach the terminal with control characters
//! or ANSI sequences. That holds for every human-readable line, on stdout and on stderr
//! (failures and notes included); clean text comes out unchanged. JSON output is left to serde,
//! which escapes control characters itself.
//!
//! The library's commands (`init`, `append_with`, `next_action_with`, `validate`, `status`,
//! `log`, …) return `Result<T, CollabError>`. `execute` turns each result into a `Shown` (text
//! or JSON, and an exit code); [`run`] prints it, or prints the failure (every `CollabError`
//! exits 2, see `error`), and returns the exit code as `io::Result<u8>`. Its only error is a
//! failure of the console itself (`CollabError::Console`), which the binary reports with
//! `anyhow` and the core's `failure_line`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};

use crate::append::{append_with, AppendOptions};
use crate::error::CollabError;
use crate::guide::{self, Invocation};
use crate::init::{init, InitOptions};
use crate::next::next_action_with;
use crate::skill;
use crate::status::{log, render_log_json, render_log_text, status};
use crate::validate::validate;
use crate::wait::{wait_for_turn, WaitOptions, WaitOutcome};
use acp_registry_core::escape;
use acp_registry_core::skill_install::{Outcome, Removal, Roots, Target};

/// The output format of `validate`, `status` and `log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The published scripts' report
    Text,
    /// One JSON document, for tools
    Json,
}

/// One parsed `acp-collab` command line: the binary's subcommands (but `completions` and
/// `man`, which are about the binary), and what [`run`] runs. The doc comments and `about`s
/// are the `--help` texts; the form of the printed follow-up commands ([`Invocation`]) is
/// not an argument but the environment's, read when the command line is parsed.
// The scripts' snake_case aliases are in the help texts, so those are `about` attributes: as
// doc comments they would have to be backticked, which would change `--help`.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// `init`, and the form of the first commands it prints.
    #[command(about = "Create a collaboration folder (alias: init_collaboration)")]
    #[command(aliases = ["init_collaboration", "init_collaboration.py"], args_override_self = true)]
    Init {
        /// The flags.
        #[command(flatten)]
        options: InitOptions,
        /// The form of the first commands it prints.
        #[arg(skip = Invocation::from_env())]
        invocation: Invocation,
    },
    /// `append`, and the form of the commands a refusal names.
    #[command(about = "Append one event to events.jsonl (alias: append_event)")]
    #[command(aliases = ["append_event", "append_event.py"], args_override_self = true)]
    Append {
        /// The flags.
        #[command(flatten)]
        options: AppendOptions,
        /// The form of the commands a refusal names.
        #[arg(skip = Invocation::from_env())]
        invocation: Invocation,
    },
    /// `next`.
    #[command(about = "Print the next action for a participant (alias: next_action)")]
    #[command(aliases = ["next_action", "next_action.py"], args_override_self = true)]
    Next(NextOptions),
    /// `wait`.
    #[command(about = "Wait until it is a participant's turn (alias: wait_for_turn)")]
    #[command(aliases = ["wait_for_turn", "wait_for_turn.py"], args_override_self = true)]
    Wait(WaitOptions),
    /// `validate`.
    #[command(about = "Validate a collaboration folder (alias: validate_collaboration)")]
    #[command(
        aliases = ["validate_collaboration", "validate_collaboration.py"],
        args_override_self = true
    )]
    Validate(ReportOptions),
    /// Show where a collaboration stands: phase, owner, who is awaited, the last events and
    /// open readiness questions
    #[command(args_override_self = true)]
    Status(ReportOptions),
    /// Print the event log, optionally only the events after a seq
    #[command(args_override_self = true)]
    Log(LogOptions),
    /// Install, list or remove the collaboration skill
    #[command(subcommand)]
    Skill(SkillCommand),
    /// Speak ACP (Agent Client Protocol) on stdio, for editors
    Acp,
}

/// The `next` flags.
#[derive(Debug, Clone, Args)]
pub struct NextOptions {
    /// The collaboration folder
    #[arg(long)]
    pub folder: String,
    /// The participant asking
    #[arg(long)]
    pub participant: String,
    /// The form of the follow-up commands: not an argument, the environment's when parsed.
    #[arg(skip = Invocation::from_env())]
    pub invocation: Invocation,
}

/// The flags of `validate` and `status`.
#[derive(Debug, Clone, Args)]
pub struct ReportOptions {
    /// The collaboration folder
    #[arg(long)]
    pub folder: String,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// The `log` flags.
#[derive(Debug, Clone, Args)]
pub struct LogOptions {
    /// The collaboration folder
    #[arg(long)]
    pub folder: String,
    /// Only events with a seq above N
    #[arg(long, value_name = "N")]
    pub since: Option<i64>,
    /// Output format (json: one JSON object per line)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// `skill install`, `skill uninstall` and `skill list`.
#[derive(Debug, Clone, Subcommand)]
pub enum SkillCommand {
    /// Copy the skill where agents read skills, its scripts running this acp-collab
    Install(SkillInstallOptions),
    /// Remove what skill install wrote (never a folder it did not write)
    Uninstall(SkillTarget),
    /// Show where the skill is installed, the engine its scripts run and whether it is outdated
    List(SkillListOptions),
}

/// The `skill install` flags.
#[derive(Debug, Clone, Args)]
pub struct SkillInstallOptions {
    /// Which agent's folders, where, and `--force`.
    #[command(flatten)]
    pub target: SkillTarget,
    /// List the known agents and their skill folders
    #[arg(long)]
    pub list: bool,
}

/// Where `skill install` and `skill uninstall` act (shared with `acp-registry skill`).
pub use acp_registry_core::cli::SkillTarget;

/// The `skill list` flags.
#[derive(Debug, Clone, Args)]
pub struct SkillListOptions {
    /// The project folder to look in besides the home folder (default: the current folder)
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

impl Command {
    /// The subcommand's name, as argparse-style usage errors print it.
    fn name(&self) -> &'static str {
        match self {
            Command::Init { .. } => "init",
            Command::Append { .. } => "append",
            Command::Next(_) => "next",
            Command::Wait(_) => "wait",
            Command::Validate(_) => "validate",
            Command::Status(_) => "status",
            Command::Log(_) => "log",
            Command::Skill(_) => "skill",
            Command::Acp => "acp",
        }
    }
}

/// Where a command prints: standard output and error, and the usage line of a subcommand
/// (from the binary's argument parser) for usage errors.
pub struct Console<'a> {
    /// Standard output.
    pub out: &'a mut dyn Write,
    /// Standard error.
    pub err: &'a mut dyn Write,
    /// The `usage: …` line of the named subcommand.
    pub usage: &'a dyn Fn(&str) -> String,
}

impl Console<'_> {
    /// Prints text for people on standard output, escaped for the terminal.
    fn text(&mut self, text: &str) -> io::Result<()> {
        self.out.write_all(escape::terminal(text).as_bytes())
    }

    /// Prints one line on standard error, escaped for the terminal.
    fn note(&mut self, line: &str) -> io::Result<()> {
        writeln!(self.err, "{}", escape::terminal(line))
    }

    /// Prints an argparse-style usage error: the subcommand's usage, then
    /// `acp-collab «subcommand»: error: «message»`.
    pub fn usage_error(&mut self, subcommand: &str, message: &str) -> io::Result<()> {
        let usage = (self.usage)(subcommand);
        writeln!(
            self.err,
            "{}",
            usage.trim_end().replacen("Usage: ", "usage: ", 1)
        )?;
        self.note(&format!("acp-collab {subcommand}: error: {message}"))
    }

    /// Prints a library failure as docs/collab-protocol.md#conventions shapes it.
    fn failure(&mut self, e: &CollabError, subcommand: &str) -> io::Result<()> {
        match e {
            CollabError::Usage(msg) => self.usage_error(subcommand, msg),
            CollabError::Refused { message, hint } => {
                self.note(&format!("error: {message}"))?;
                self.note(&format!("  {hint}"))
            }
            CollabError::NoFolder { folder, closest } => {
                self.note(&format!("error: {e}"))?;
                let closest = closest
                    .as_ref()
                    .map(|s| (s.path.as_path(), s.collaboration));
                self.note(&format!("  {}", no_folder_hint(folder, closest)))
            }
            CollabError::NotACollaboration(folder) => {
                self.note(&format!("error: {e}"))?;
                self.note(&format!(
                    "  {} is not a collaboration folder (init writes protocol.json there): pass \
                     the folder init created, or make this one with: {}",
                    folder.display(),
                    init_command(folder)
                ))
            }
            CollabError::Flags(problems) => {
                self.note(&format!("error: {e}"))?;
                problems
                    .iter()
                    .try_for_each(|p| self.note(&format!("  --{}: {}", p.flag, p.hint)))
            }
            _ => self.note(&format!("error: {e}")),
        }
    }
}

/// What to do about a `--folder` that does not exist: the closest folder beside it (and whether
/// it is a collaboration folder), or how to create it.
fn no_folder_hint(folder: &Path, closest: Option<(&Path, bool)>) -> String {
    match closest {
        Some((path, true)) => format!(
            "did you mean --folder {}? (the closest collaboration folder beside it)",
            guide::quote(&path.display().to_string())
        ),
        Some((path, false)) => format!(
            "did you mean --folder {}? (it holds no protocol.json yet); or create the \
             collaboration with: {}",
            guide::quote(&path.display().to_string()),
            init_command(folder)
        ),
        None => format!(
            "no folder beside it has a close name; create the collaboration with: {}",
            init_command(folder)
        ),
    }
}

/// The `init` that creates a collaboration in `folder`, in the form this process was run in,
/// its values to fill in.
fn init_command(folder: &Path) -> String {
    format!(
        "{} --folder {} --participant <you> --participant <them> --objective <text> \
         --completion <gate> --primary-deliverable-type <type>",
        Invocation::from_env().program("init", "init_collaboration"),
        guide::quote(&folder.display().to_string())
    )
}

/// What a successful command prints on standard output, and its exit code.
enum Shown {
    /// Text for people, escaped on the way out.
    Text(String, u8),
    /// JSON, printed as it is.
    Json(String, u8),
    /// Already printed (by `wait`, which streams).
    Done(u8),
}

fn formatted(
    format: Format,
    text: impl FnOnce() -> String,
    json: impl FnOnce() -> String,
    code: u8,
) -> Shown {
    match format {
        Format::Text => Shown::Text(text(), code),
        Format::Json => Shown::Json(json(), code),
    }
}

/// Runs one command, printing its result or its failure on `console`; returns the exit code.
/// Every failure of the command is printed here (as docs/collab-protocol.md#conventions
/// shapes it) and exits 2; only a failure of the console itself, which cannot be printed
/// there, is returned for the caller to report.
pub fn run(command: Command, console: &mut Console) -> io::Result<u8> {
    let name = command.name();
    let code = match execute(command, console) {
        Ok(Shown::Text(text, code)) => console.text(&text).map(|()| code),
        Ok(Shown::Json(json, code)) => console.out.write_all(json.as_bytes()).map(|()| code),
        Ok(Shown::Done(code)) => Ok(code),
        Err(CollabError::Console(e)) => Err(e),
        Err(e) => console.failure(&e, name).map(|()| 2),
    }?;
    console.out.flush()?;
    Ok(code)
}

fn execute(command: Command, console: &mut Console) -> Result<Shown, CollabError> {
    Ok(match command {
        Command::Init {
            options,
            invocation,
        } => Shown::Text(init(&options)?.report(&invocation), 0),
        Command::Append {
            options,
            invocation,
        } => Shown::Text(append_with(&options, &invocation)?.report(), 0),
        Command::Next(o) => {
            let next = next_action_with(&o.folder, &o.participant, &o.invocation)?;
            Shown::Text(next.render(), exit_code(next.exit_code))
        }
        Command::Wait(options) => wait(&options, console)?,
        Command::Validate(o) => {
            let report = validate(&o.folder)?;
            let code = exit_code(report.exit_code());
            formatted(
                o.format,
                || report.render_text(),
                || report.render_json(),
                code,
            )
        }
        Command::Status(o) => {
            let status = status(&o.folder)?;
            formatted(
                o.format,
                || status.render_text(),
                || status.render_json(),
                0,
            )
        }
        Command::Log(o) => {
            let events = log(&o.folder, o.since)?;
            formatted(
                o.format,
                || render_log_text(&events),
                || render_log_json(&events),
                0,
            )
        }
        Command::Skill(SkillCommand::Install(o)) if o.list => Shown::Text(
            acp_registry_core::skill_install::agents_table(skill::folder_name()),
            0,
        ),
        Command::Skill(SkillCommand::Install(SkillInstallOptions { target, .. })) => {
            install_skill(&target, console)?
        }
        Command::Skill(SkillCommand::Uninstall(target)) => uninstall_skill(&target)?,
        Command::Skill(SkillCommand::List(o)) => list_skill(o.project)?,
        Command::Acp => {
            crate::acp::serve(io::stdin(), &mut *console.out).map_err(CollabError::Console)?;
            Shown::Done(0)
        }
    })
}

/// The library's exit codes are 0, 1 or 2.
fn exit_code(code: i32) -> u8 {
    u8::try_from(code).unwrap_or(2)
}

/// `wait` streams its `waiting:`/`ready:` lines (escaped) and reports how it ended on stderr.
fn wait(opts: &WaitOptions, console: &mut Console) -> Result<Shown, CollabError> {
    let mut out = Escaped {
        inner: &mut *console.out,
        pending: Vec::new(),
    };
    let outcome = wait_for_turn(opts, &mut out);
    out.flush().map_err(CollabError::Console)?;
    let outcome = outcome?;
    let note =
        |console: &mut Console, line: String| console.note(&line).map_err(CollabError::Console);
    Ok(match outcome {
        WaitOutcome::Ready { next_error, .. } => {
            if let Some(msg) = next_error {
                note(console, format!("error: {msg}"))?;
            }
            Shown::Done(0)
        }
        WaitOutcome::TimedOut { reason } => {
            note(console, format!("timeout: {reason}"))?;
            Shown::Done(1)
        }
    })
}

/// A writer that escapes what `wait` streams, a whole line at a time (a line written in
/// pieces is escaped as one), passing each complete line on at once.
struct Escaped<'a> {
    inner: &'a mut dyn Write,
    pending: Vec<u8>,
}

impl Escaped<'_> {
    fn pass_on(&mut self, end: usize) -> io::Result<()> {
        let chunk: Vec<u8> = self.pending.drain(..end).collect();
        let text = String::from_utf8_lossy(&chunk);
        self.inner.write_all(escape::terminal(&text).as_bytes())
    }
}

impl Write for Escaped<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if let Some(last) = self.pending.iter().rposition(|&b| b == b'\n') {
            self.pass_on(last + 1)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.pass_on(self.pending.len())?;
        self.inner.flush()
    }
}

/// Where the skill commands act, from their flags (`skill uninstall` takes no skill name: there
/// is one, the bundled skill).
fn skill_target(target: &SkillTarget) -> Result<Target, CollabError> {
    let mut target = target
        .target(skill::TOOL)
        .map_err(CollabError::CurrentFolder)?;
    target.uninstall_names_skill = false;
    Ok(target)
}

/// `skill install`: for the user (below `HOME`) unless a project folder is named. Prints
/// each folder and the clients that read it; other skills of the same name that those
/// clients also scan are warnings on stderr.
fn install_skill(target: &SkillTarget, console: &mut Console) -> Result<Shown, CollabError> {
    let binary = std::env::current_exe().map_err(CollabError::CurrentExe)?;
    let binary = binary.canonicalize().unwrap_or(binary);
    let report = skill::install(&binary, &skill_target(target)?)?;
    let mut text = String::new();
    for placed in &report.placed {
        let verb = match placed.outcome {
            Outcome::Installed => "installed",
            Outcome::Updated => "updated",
            Outcome::Unchanged => "already installed",
            Outcome::Replaced => "replaced",
        };
        text.push_str(&format!(
            "{verb}: {} (scripts run {})\n  seen by: {}\n",
            placed.dir.display(),
            binary.display(),
            join_or(&placed.seen_by, "no known client")
        ));
    }
    for warning in &report.warnings {
        console
            .note(&format!("warning: {warning}"))
            .map_err(CollabError::Console)?;
    }
    Ok(Shown::Text(text, 0))
}

fn join_or(items: &[&str], none: &str) -> String {
    if items.is_empty() {
        none.to_owned()
    } else {
        items.join(", ")
    }
}

/// `skill uninstall`: removes what `skill install` wrote for the agent.
fn uninstall_skill(target: &SkillTarget) -> Result<Shown, CollabError> {
    let mut text = String::new();
    for (dir, removal) in skill::uninstall(&skill_target(target)?)? {
        let line = match removal {
            Removal::Removed => format!("removed: {}", dir.display()),
            Removal::NotInstalled => format!("not installed: {}", dir.display()),
            Removal::Kept(files) => format!(
                "removed the installed files of {}; kept what the install did not write: {}",
                dir.display(),
                files.join(", ")
            ),
        };
        text.push_str(&line);
        text.push('\n');
    }
    Ok(Shown::Text(text, 0))
}

/// `skill list`: every copy of the skill in a folder a known client scans.
fn list_skill(project: Option<PathBuf>) -> Result<Shown, CollabError> {
    let roots = Roots::from_env(project).map_err(CollabError::CurrentFolder)?;
    let found = skill::list(&roots)?;
    if found.is_empty() {
        let home = roots
            .home
            .as_ref()
            .map_or("(HOME is not set)".to_owned(), |h| h.display().to_string());
        return Ok(Shown::Text(
            format!(
                "{} is not installed in a folder a known client scans (below {home} and {}); \
                 run acp-collab skill install\n",
                skill::folder_name(),
                roots.project.display()
            ),
            0,
        ));
    }
    let mut text = String::new();
    for item in &found {
        text.push_str(&format!(
            "{}\n  state: {}\n",
            item.dir.display(),
            skill::state(item)
        ));
        if let Some(engine) = skill::engine(item) {
            text.push_str(&format!("  engine: {engine}\n"));
        }
        text.push_str(&format!(
            "  seen by: {}\n",
            join_or(&item.seen_by, "no known client")
        ));
    }
    Ok(Shown::Text(text, 0))
}
