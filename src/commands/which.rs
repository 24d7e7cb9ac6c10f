//! `acp-registry which <ID>`: what `run` would start for an agent (the exact command line and
//! environment when it is installed; what would be installed when not), and why other kinds
//! were passed over. Asks the network only for the registry, never installs.

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use super::client::{ClientFlags, Installed, OutputFormat, Session};
use super::client_text::{shell_line, t};
use super::error::CommandError;
use super::exit::{self, Exit};

/// `which`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(mut_arg("allow_loopback_for_tests", |arg| arg.help(
    "TEST ONLY: allow loopback addresses, over plain http too (see `validate`)"
)))]
pub struct Options {
    /// The agent's id in the registry.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: OutputFormat,
    /// The registry, the cache and what to choose.
    #[command(flatten)]
    pub client: ClientFlags,
}

/// The `--format json` document.
#[derive(Serialize)]
struct Which {
    version: u32,
    id: String,
    name: String,
    agent_version: String,
    kind: String,
    platform: String,
    installed: bool,
    dir: Option<String>,
    command: Option<Vec<String>>,
    env: BTreeMap<String, String>,
    source: String,
    sha256: Option<String>,
    passed_over: Vec<PassedOver>,
}

#[derive(Serialize)]
struct PassedOver {
    kind: String,
    reason: String,
}

/// Prints what `run` would start; notes go to `err`.
///
/// # Errors
/// An unknown id, a version that cannot be used, a registry that cannot be read.
pub fn run(
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    let session = Session::open(&options.client)?;
    let registry = session.registry(err)?;
    let choice = session.choose(&registry, &options.id, err)?;
    let r = &choice.resolution;
    let mut which = match &choice.installed {
        Some(installed) => of_installed(installed),
        None => Which {
            version: 1,
            id: r.entry.id.clone(),
            name: String::new(),
            agent_version: r.entry.version.clone(),
            kind: r.kind.to_string(),
            platform: r.platform.clone(),
            installed: false,
            dir: None,
            command: None,
            env: r.env.clone(),
            source: match (&r.target, &r.package) {
                (Some(target), _) => target.archive.clone(),
                (None, Some(package)) => package.package.clone(),
                (None, None) => String::new(),
            },
            sha256: r.target.as_ref().and_then(|target| target.sha256.clone()),
            passed_over: Vec::new(),
        },
    };
    which.name.clone_from(&r.entry.name);
    which.passed_over = r
        .passed_over
        .iter()
        .map(|(kind, reason)| PassedOver {
            kind: kind.to_string(),
            reason: reason.clone(),
        })
        .collect();
    match options.format {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &which)?;
            writeln!(out)?;
        }
        OutputFormat::Human => human(&which, &r.args, out)?,
    }
    Ok(exit::OK)
}

/// The facts of an install: its command line and environment as `run` sets them.
fn of_installed(installed: &Installed) -> Which {
    let command = installed.command(&[]);
    let mut line = vec![command.get_program().to_string_lossy().into_owned()];
    line.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
    let env = command
        .get_envs()
        .filter_map(|(k, v)| {
            Some((
                k.to_string_lossy().into_owned(),
                v?.to_string_lossy().into_owned(),
            ))
        })
        .collect();
    Which {
        version: 1,
        id: installed.id.clone(),
        name: String::new(),
        agent_version: installed.version.clone(),
        kind: installed.kind.to_string(),
        platform: installed.platform.clone(),
        installed: true,
        dir: Some(installed.dir.display().to_string()),
        command: Some(line),
        env,
        source: installed.source.clone(),
        sha256: installed.sha256.clone(),
        passed_over: Vec::new(),
    }
}

fn human(which: &Which, args: &[String], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{} {} ({}, {})",
        t(&which.id),
        t(&which.agent_version),
        which.kind,
        t(&which.platform)
    )?;
    if let (Some(command), Some(dir)) = (&which.command, &which.dir) {
        writeln!(out, "installed in {}", t(dir))?;
        writeln!(
            out,
            "command: {}",
            shell_line(command.iter().map(String::as_str))
        )?;
    } else {
        writeln!(
            out,
            "not installed (`acp-registry install {}` installs it from {})",
            t(&which.id),
            t(&which.source)
        )?;
        if !args.is_empty() {
            writeln!(
                out,
                "arguments: {}",
                shell_line(args.iter().map(String::as_str))
            )?;
        }
    }
    for (name, value) in &which.env {
        writeln!(out, "env: {}={}", t(name), t(value))?;
    }
    for passed in &which.passed_over {
        writeln!(out, "passed over: {}: {}", passed.kind, t(&passed.reason))?;
    }
    Ok(())
}
