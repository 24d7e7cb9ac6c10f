//! `acp-registry fmt`: manifests in the canonical layout (docs/format.md#formatting), every
//! comment kept; `--check` writes nothing and lists what would change, `--diff` writes
//! nothing and prints the change as a unified diff.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::canonical::formatted;
use super::display::{display_root, join_display};
use super::error::CommandError;
use super::exit::{self, Exit};
use crate::diagnostics::escape;
use crate::flags::Registry;
use crate::manifest::MAX_MANIFEST_BYTES;
use crate::registry;
use acp_registry_core::fs::{self, Kind};

/// What `fmt` formats and whether it only checks; the field docs are its `--help`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Options {
    /// `--registry`.
    #[command(flatten)]
    pub registry: Registry,
    /// Write nothing: list the manifests that would change and exit 1 if any would.
    #[arg(long)]
    pub check: bool,
    /// Write nothing: print what would change as a unified diff (`--- a/PATH`, `+++ b/PATH`)
    /// on stdout and exit 1 if anything would.
    #[arg(long)]
    pub diff: bool,
    /// Entry folders or agent.json files [default: every entry of --registry].
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// `--quiet` (set by the binary): no "formatted" lines and no count line.
    #[arg(skip)]
    pub quiet: bool,
}

/// One manifest: read as `base/rel` (no link followed below `base`), shown as `display`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The folder the manifest is read below.
    pub base: PathBuf,
    /// The manifest's path below `base`.
    pub rel: PathBuf,
    /// The path shown to the user.
    pub display: String,
}

/// The manifests `fmt` works on, in order.
pub(crate) fn targets(options: &Options) -> Result<Vec<Target>, CommandError> {
    if options.paths.is_empty() {
        let root = display_root(&options.registry.root);
        let discovered = registry::discover(&options.registry.root)?;
        return Ok(discovered
            .entries
            .into_iter()
            .filter(|e| matches!(fs::kind(&e.path.join("agent.json")), Ok(Some(_))))
            .map(|e| Target {
                base: options.registry.root.clone(),
                rel: Path::new(&e.name).join("agent.json"),
                display: join_display(&root, &format!("{}/agent.json", e.name)),
            })
            .collect());
    }
    options.paths.iter().map(|path| target(path)).collect()
}

/// A named folder holds `agent.json`; anything else is the file itself. An absolute path is
/// trusted (the user chose it); a relative one is not followed through a link below the
/// current folder (a shell glob in a checkout names what the checkout holds); the file is read
/// without following a link.
fn target(path: &Path) -> Result<Target, CommandError> {
    let shown = super::display::slash_path(path);
    if path.is_relative() {
        if let Err(fs::ReadError::Link { rel }) = fs::no_link_below(Path::new("."), path) {
            return Err(CommandError::Usage(format!(
                "`{shown}`: `{}` is a symbolic link, and fmt never writes through a link below \
                 the current folder; pass the folder it points to instead",
                super::display::slash_path(&rel)
            )));
        }
    }
    let kind =
        fs::kind(path).map_err(|e| CommandError::Usage(format!("cannot read `{shown}`: {e}")))?;
    let Some(kind) = kind else {
        return Err(CommandError::Usage(format!(
            "`{shown}` does not exist; pass entry folders or agent.json files"
        )));
    };
    if kind == Kind::Dir {
        return Ok(Target {
            base: path.to_path_buf(),
            rel: PathBuf::from("agent.json"),
            display: join_display(&shown, "agent.json"),
        });
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(CommandError::Usage(format!(
            "`{}` names no file; pass entry folders or agent.json files",
            path.display()
        )));
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    Ok(Target {
        base: parent.to_path_buf(),
        rel: PathBuf::from(name),
        display: shown,
    })
}

/// What happened to one manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Already in the canonical layout.
    Unchanged,
    /// Reformatted (written, or without writing would be): the text before and after.
    Changed {
        /// The manifest as it was.
        before: String,
        /// Its canonical layout.
        after: String,
    },
    /// Could not be read or parsed; the message says why and what to do.
    Failed(String),
}

/// Format one manifest, writing it only when it changes and `write` is set.
pub(crate) fn format_one(target: &Target, write: bool) -> Outcome {
    let display = &target.display;
    let bytes = match fs::read_capped(&target.base, &target.rel, MAX_MANIFEST_BYTES) {
        Ok(bytes) => bytes,
        Err(error) => return Outcome::Failed(format!("cannot read {display}: {error}")),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Outcome::Failed(format!("{display} is not UTF-8; save it as UTF-8 first"));
    };
    let canonical = match formatted(&text, display) {
        Ok(canonical) => canonical,
        Err(message) => return Outcome::Failed(message),
    };
    if canonical == text {
        return Outcome::Unchanged;
    }
    if write {
        if let Err(error) = fs::replace_file(&target.base, &target.rel, canonical.as_bytes()) {
            return Outcome::Failed(format!("cannot write {display}: {error}"));
        }
    }
    Outcome::Changed {
        before: text,
        after: canonical,
    }
}

/// The unified diff (3 lines of context) from `before` to `after` of the manifest shown as
/// `display`, headed `--- a/<display>` and `+++ b/<display>`; every line escaped for the
/// terminal, since both the path and the text come from the registry. Manifests are capped
/// at `MAX_MANIFEST_BYTES`, which bounds the diff's work.
pub(crate) fn unified_diff(display: &str, before: &str, after: &str) -> String {
    let diff = similar::TextDiff::from_lines(before, after);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{display}"), &format!("b/{display}"))
        .to_string();
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        out.push_str(&escape::terminal(body));
        out.push_str(end);
    }
    out
}

/// Exit 0 when nothing needed formatting (or everything was written), 1 with `--check` or
/// `--diff` when a file would change, 2 when a file could not be read, parsed or written.
/// `--diff` keeps stdout a patch: its count line goes to stderr.
pub fn run(
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    let targets = targets(options)?;
    let dry = options.check || options.diff;
    let (mut changed, mut failed) = (0, 0);
    for target in &targets {
        let shown = escape::terminal(&target.display);
        match format_one(target, !dry) {
            Outcome::Unchanged => {}
            Outcome::Changed { before, after } => {
                changed += 1;
                if options.diff {
                    out.write_all(unified_diff(&target.display, &before, &after).as_bytes())?;
                }
                if options.check && !options.diff {
                    writeln!(out, "would reformat {shown}")?;
                } else if !dry && !options.quiet {
                    writeln!(out, "formatted {shown}")?;
                }
            }
            Outcome::Failed(message) => {
                failed += 1;
                writeln!(err, "error: {}", escape::terminal(&message))?;
            }
        }
    }
    let verb = if dry {
        "would be reformatted"
    } else {
        "reformatted"
    };
    if !options.quiet {
        let count: &mut dyn Write = if options.diff { err } else { out };
        writeln!(count, "{changed} of {} manifests {verb}", targets.len())?;
    }
    Ok(if failed > 0 {
        exit::FAILURE
    } else if dry && changed > 0 {
        exit::FINDINGS
    } else {
        exit::OK
    })
}
