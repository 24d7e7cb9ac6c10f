//! The `acp-collab` commands as the binary runs them: what each prints, on which stream, and
//! its exit code (docs/collab-protocol.md#conventions). The binary parses arguments into a
//! [`Command`] and calls [`run`].
//!
//! Text for people passes through [`escape::terminal`]: names, titles and event fields come
//! from a shared folder, so a hostile one must not reach the terminal with control characters
//! or ANSI sequences. JSON output is left to serde, which escapes control characters itself.

use std::io::{self, Write};
use std::path::PathBuf;

use super::skill::{self, InstallOptions, Outcome, Removal, Roots, Scope, UninstallOptions};
use super::status::{render_log_json, render_log_text};
use super::wait::{wait_for_turn, WaitOptions, WaitOutcome};
use super::{AppendOptions, CollabError, InitOptions, Invocation};
use acp_registry_core::escape;

/// The output format of `validate`, `status` and `log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The published scripts' report, for people.
    Text,
    /// JSON, for tools.
    Json,
}

/// One parsed `acp-collab` command line.
#[derive(Debug, Clone)]
pub enum Command {
    /// `init`, and the form of the first commands it prints.
    Init(InitOptions, Invocation),
    /// `append`, and the form of the commands a refusal names.
    Append(AppendOptions, Invocation),
    /// `next`: the folder, the participant and the form of its follow-up commands.
    Next(String, String, Invocation),
    /// `wait`.
    Wait(WaitOptions),
    /// `validate`: the folder and the format.
    Validate(String, Format),
    /// `status`: the folder and the format.
    Status(String, Format),
    /// `log`: the folder, the seq to start after and the format.
    Log(String, Option<i64>, Format),
    /// `skill install --list`: the known agents and their folders.
    SkillAgents,
    /// `skill install`: the agent, the project folder (`None`: the home folder), `--force`.
    SkillInstall(String, Option<PathBuf>, bool),
    /// `skill uninstall`: the agent, the project folder (`None`: the home folder), `--force`.
    SkillUninstall(String, Option<PathBuf>, bool),
    /// `skill list`: the project folder to look in besides the home folder (`None`: the
    /// current folder).
    SkillList(Option<PathBuf>),
    /// `acp`: the engine as an ACP agent on standard input and output.
    Acp,
}

impl Command {
    /// The subcommand's name, as argparse-style usage errors print it.
    fn name(&self) -> &'static str {
        match self {
            Command::Init(..) => "init",
            Command::Append(..) => "append",
            Command::Next(..) => "next",
            Command::Wait(_) => "wait",
            Command::Validate(..) => "validate",
            Command::Status(..) => "status",
            Command::Log(..) => "log",
            Command::SkillAgents
            | Command::SkillInstall(..)
            | Command::SkillUninstall(..)
            | Command::SkillList(_) => "skill",
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

/// Runs one command, printing its result or its failure on `console`; returns the exit code
/// (failures exit 2). Only a failure of the console itself
/// ([`CollabError::Console`]) is left to the caller to print.
pub fn run(command: Command, console: &mut Console) -> Result<u8, CollabError> {
    let name = command.name();
    let printed = match execute(command, console) {
        Ok(Shown::Text(text, code)) => console.text(&text).map(|()| code),
        Ok(Shown::Json(json, code)) => console.out.write_all(json.as_bytes()).map(|()| code),
        Ok(Shown::Done(code)) => Ok(code),
        Err(e @ CollabError::Console(_)) => return Err(e),
        Err(e) => console.failure(&e, name).map(|()| 2),
    };
    let code = printed.map_err(CollabError::Console)?;
    console.out.flush().map_err(CollabError::Console)?;
    Ok(code)
}

fn execute(command: Command, console: &mut Console) -> Result<Shown, CollabError> {
    Ok(match command {
        Command::Init(opts, invocation) => Shown::Text(super::init(&opts)?.report(&invocation), 0),
        Command::Append(opts, invocation) => Shown::Text(
            format!("{}\n", super::append_with(&opts, &invocation)?.message()),
            0,
        ),
        Command::Next(folder, participant, invocation) => {
            let next = super::next_action_with(&folder, &participant, &invocation)?;
            Shown::Text(next.render(), exit_code(next.exit_code))
        }
        Command::Wait(opts) => wait(&opts, console)?,
        Command::Validate(folder, format) => {
            let report = super::validate(&folder)?;
            let code = exit_code(report.exit_code());
            formatted(
                format,
                || report.render_text(),
                || report.render_json(),
                code,
            )
        }
        Command::Status(folder, format) => {
            let status = super::status(&folder)?;
            formatted(format, || status.render_text(), || status.render_json(), 0)
        }
        Command::Log(folder, since, format) => {
            let events = super::log(&folder, since)?;
            formatted(
                format,
                || render_log_text(&events),
                || render_log_json(&events),
                0,
            )
        }
        Command::SkillAgents => Shown::Text(skill::agents_table(), 0),
        Command::SkillInstall(agent, project, force) => {
            install_skill(agent, project, force, console)?
        }
        Command::SkillUninstall(agent, project, force) => uninstall_skill(agent, project, force)?,
        Command::SkillList(project) => list_skill(project)?,
        Command::Acp => {
            super::acp::serve(io::stdin(), &mut *console.out).map_err(CollabError::Console)?;
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

/// The home folder and the project (`None`: the current folder) for the skill commands.
fn roots(project: Option<PathBuf>) -> Result<Roots, CollabError> {
    let project = match project {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(CollabError::CurrentFolder)?,
    };
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    Ok(Roots { home, project })
}

fn scope_of(project: Option<&PathBuf>) -> Scope {
    if project.is_some() {
        Scope::Project
    } else {
        Scope::User
    }
}

/// `skill install`: for the user (below `HOME`) unless a project folder is named. Prints
/// each folder and the clients that read it; other skills of the same name that those
/// clients also scan are warnings on stderr.
fn install_skill(
    agent: String,
    project: Option<PathBuf>,
    force: bool,
    console: &mut Console,
) -> Result<Shown, CollabError> {
    let binary = std::env::current_exe().map_err(CollabError::CurrentExe)?;
    let opts = InstallOptions {
        agent,
        scope: scope_of(project.as_ref()),
        roots: roots(project)?,
        binary: binary.canonicalize().unwrap_or(binary),
        force,
    };
    let report = skill::install(&opts)?;
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
            opts.binary.display(),
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
fn uninstall_skill(
    agent: String,
    project: Option<PathBuf>,
    force: bool,
) -> Result<Shown, CollabError> {
    let opts = UninstallOptions {
        agent,
        scope: scope_of(project.as_ref()),
        roots: roots(project)?,
        force,
    };
    let mut text = String::new();
    for (dir, removal) in skill::uninstall(&opts)? {
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
    let roots = roots(project)?;
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
            item.state()
        ));
        if let Some(engine) = item.engine() {
            text.push_str(&format!("  engine: {engine}\n"));
        }
        text.push_str(&format!(
            "  seen by: {}\n",
            join_or(&item.seen_by, "no known client")
        ));
    }
    Ok(Shown::Text(text, 0))
}
