//! `skill install`, `skill uninstall` and `skill list` (the `skill` group's implementation):
//! skills fetched and verified by the client library (`acp_registry_client::skills`) or read
//! from a registry folder and checked by the registry's skill rules (`skill_registry`), then
//! installed by the core's one installer (`acp_registry_core::skill_install`, which
//! `acp-collab skill` uses too). Nothing is written until every file of every chosen skill is
//! fetched and verified. Everything printed is escaped for the terminal.

use std::io::Write;
use std::path::{Path, PathBuf};

use acp_registry_client::skills::{fetch_skills, FetchOptions, FetchedSkill, Selection};
use acp_registry_client::{Client, NetConfig};
use acp_registry_core::cli::SkillTarget;
use acp_registry_core::escape;
use acp_registry_core::skill_install::{
    self as installer, Found, Outcome, Removal, Roots, Skill, Target,
};
use serde_json::{json, Value};

use super::error::CommandError;
use super::exit::{self, Exit};
use super::skill_registry;
use crate::flags::{Loopback, NetworkFlags};

/// The command group the installer's messages name.
const TOOL: &str = "acp-registry skill";

/// `skill install`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[allow(clippy::struct_excessive_bools)] // Independent switches, as the flags are.
pub struct InstallOptions {
    /// A site (https URL or folder) serving a well-known skills index, a Claude Code
    /// marketplace (URL or folder), or a registry folder
    #[arg(value_name = "SOURCE", required_unless_present_any = ["registry", "list"])]
    pub source: Option<String>,
    /// The skills to install [default: the only one the source offers]
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Install every skill the source offers
    #[arg(long)]
    pub all: bool,
    /// Install from this registry folder (its skills/<name>/ and <id>/skill/<name>/ folders,
    /// checked by the registry's skill rules first); SOURCE is then the first NAME
    #[arg(long, value_name = "DIR")]
    pub registry: Option<PathBuf>,
    /// Take a 0.1.0 index's or a local marketplace's files although the source has no
    /// SHA256SUMS to verify them against
    #[arg(long)]
    pub allow_unverified: bool,
    /// Sites on private addresses, a proxy, extra certificate authorities
    #[command(flatten)]
    pub network: NetworkFlags,
    /// List the known agents and their skill folders
    #[arg(long)]
    pub list: bool,
    /// Which agent's folders, where, and `--force`.
    #[command(flatten)]
    pub target: SkillTarget,
    /// The loopback switch (tests only).
    #[command(flatten)]
    pub loopback: Loopback,
}

/// `skill uninstall`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
pub struct UninstallOptions {
    /// The skill's name
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Which agent's folders, where, and `--force`.
    #[command(flatten)]
    pub target: SkillTarget,
}

/// `skill list`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
pub struct ListOptions {
    /// The project folder to look in besides the home folder (default: the current folder)
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

fn t(text: &str) -> String {
    escape::terminal(text).into_owned()
}

fn shown(path: &Path) -> String {
    t(&path.display().to_string())
}

fn target(flags: &SkillTarget) -> Result<Target, CommandError> {
    Ok(flags.target(TOOL)?)
}

fn failed(error: impl std::error::Error + Send + Sync + 'static) -> CommandError {
    CommandError::Failed(Box::new(error))
}

/// `skill install`: every chosen skill fetched and verified, then each installed for the
/// agent; each folder printed with the clients that read it, shadowing warnings on `err`.
///
/// # Errors
/// A source that cannot be read or verified, a folder in the way, or a failed write.
pub(crate) fn install(
    opts: &InstallOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    if opts.list {
        let name = opts.names.first().map_or("<name>", String::as_str);
        write!(out, "{}", installer::agents_table(&t(name)))?;
        return Ok(exit::OK);
    }
    let mut names = opts.names.clone();
    let selection = |names: Vec<String>| {
        if opts.all {
            Selection::All
        } else {
            Selection::Names(names)
        }
    };
    let skills = match (&opts.registry, &opts.source) {
        (Some(dir), first) => {
            names.splice(0..0, first.clone());
            skill_registry::skills(dir, &selection(names))?
        }
        (None, Some(source)) if skill_registry::is_registry(Path::new(source)) => {
            skill_registry::skills(Path::new(source), &selection(names))?
        }
        (None, Some(source)) => fetch(opts, source, &selection(names))?,
        (None, None) => {
            return Err(CommandError::Usage(
                "name a SOURCE or --registry DIR".into(),
            ))
        }
    };
    let target = target(&opts.target)?;
    // Every skill is fetched and verified above; now each is installed (each checks all its
    // folders before writing any).
    for fetched in &skills {
        let mut skill = Skill::new(&fetched.name, fetched.files.clone());
        let mut source = serde_json::Map::new();
        source.insert("from".into(), json!(fetched.source));
        if let Some(digest) = &fetched.digest {
            source.insert("digest".into(), json!(digest));
        }
        source.insert("verified_by".into(), json!(fetched.verified_by));
        skill.about.insert("source".into(), Value::Object(source));
        skill.about.insert(
            "installed_by".into(),
            json!(format!("acp-registry {}", env!("CARGO_PKG_VERSION"))),
        );
        let report = installer::install(&skill, &target).map_err(failed)?;
        for placed in &report.placed {
            let verb = match placed.outcome {
                Outcome::Installed => "installed",
                Outcome::Updated => "updated",
                Outcome::Unchanged => "already installed",
                Outcome::Replaced => "replaced",
            };
            writeln!(
                out,
                "{verb}: {} (from {}, verified against {})\n  seen by: {}",
                shown(&placed.dir),
                t(&fetched.source),
                t(&fetched.verified_by),
                join_or(&placed.seen_by)
            )?;
        }
        for warning in &report.warnings {
            writeln!(err, "warning: {}", t(warning))?;
        }
    }
    Ok(exit::OK)
}

/// The skills of a site or marketplace, through `net`.
fn fetch(
    opts: &InstallOptions,
    source: &str,
    selection: &Selection,
) -> Result<Vec<FetchedSkill>, CommandError> {
    let mut config = NetConfig {
        allow_loopback: opts.loopback.allow_loopback_for_tests,
        ..NetConfig::default()
    };
    opts.network
        .apply(&mut config, &[], false)
        .map_err(CommandError::Usage)?;
    let client = Client::new(config)?;
    let runtime = crate::net::runtime()?;
    let fetch_opts = FetchOptions {
        allow_unverified: opts.allow_unverified,
        ..FetchOptions::default()
    };
    runtime
        .block_on(fetch_skills(&client, source, selection, &fetch_opts))
        .map_err(failed)
}

fn join_or(items: &[&str]) -> String {
    if items.is_empty() {
        "no known client".to_owned()
    } else {
        items.join(", ")
    }
}

/// `skill uninstall`: removes what `skill install` wrote of the skill for the agent.
///
/// # Errors
/// A folder no install wrote, an edited install without `--force`, a link, a failed removal.
pub(crate) fn uninstall(
    opts: &UninstallOptions,
    out: &mut dyn Write,
) -> Result<Exit, CommandError> {
    for (dir, removal) in
        installer::uninstall(&opts.name, &target(&opts.target)?).map_err(failed)?
    {
        match removal {
            Removal::Removed => writeln!(out, "removed: {}", shown(&dir))?,
            Removal::NotInstalled => writeln!(out, "not installed: {}", shown(&dir))?,
            Removal::Kept(files) => writeln!(
                out,
                "removed the installed files of {}; kept what the install did not write: {}",
                shown(&dir),
                t(&files.join(", "))
            )?,
        }
    }
    Ok(exit::OK)
}

/// `skill list`: every skill folder an install wrote in a folder a known client scans.
///
/// # Errors
/// A folder that cannot be read.
pub(crate) fn list(opts: &ListOptions, out: &mut dyn Write) -> Result<Exit, CommandError> {
    let roots = Roots::from_env(opts.project.clone())?;
    let found = installer::list(&roots, None).map_err(failed)?;
    if found.is_empty() {
        writeln!(
            out,
            "no skill installed by skill install in a folder a known client scans (below {} and {})",
            roots.home.as_deref().map_or("(HOME is not set)".to_owned(), shown),
            shown(&roots.project)
        )?;
    }
    for item in &found {
        let state = match &item.found {
            Found::Ours { record, .. } => {
                let from = record.pointer("/source/from").and_then(Value::as_str);
                let engine = record.pointer("/engine/version").and_then(Value::as_str);
                match (from, engine) {
                    (Some(from), _) => format!("installed from {}", t(from)),
                    (None, Some(version)) => format!("installed by acp-collab {}", t(version)),
                    (None, None) => "installed".to_owned(),
                }
            }
            Found::Modified => {
                "edited since it was installed (`skill install --force` replaces it)".to_owned()
            }
            _ => "not written by skill install".to_owned(),
        };
        writeln!(
            out,
            "{}\n  state: {state}\n  seen by: {}",
            shown(&item.dir),
            join_or(&item.seen_by)
        )?;
    }
    Ok(exit::OK)
}
