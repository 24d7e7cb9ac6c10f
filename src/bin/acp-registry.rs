//! `acp-registry`: parse the command line into the library's options, run the command, exit
//! with its code or print its error. Each command's `Options` (its flags and their `--help`)
//! live with the command in `acp_registry::commands`.
//!
//! The library chooses no allocator; this binary sets mimalloc (see `ALLOCATOR`).

/// Registry runs allocate many small values (parsed trees, findings, JSON): mimalloc serves
/// them in about half the CPU of the system allocator (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::Write;
use std::process::ExitCode;

use acp_registry::commands::{
    build, cache, exit, explain, failure_line, fmt, init, install, list, manual, matrix, new, pack,
    run, skill, uninstall, update, validate, verify, which, CommandError, Exit, Stream,
};
use acp_registry::flags::Global;
use clap::{CommandFactory, Parser, Subcommand};

/// Validate, build and publish an ACP (Agent Client Protocol) agent registry.
#[derive(Parser)]
#[command(name = "acp-registry", version, about, max_term_width = 100)]
struct Cli {
    /// `--quiet` and `--color`, taken before or after the command's name.
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

// The doc comments are the `--help` text, pinned byte for byte by the snapshots.
#[derive(Subcommand)]
#[allow(clippy::doc_markdown)]
enum Command {
    /// Check every entry against the schema and the rule catalogue.
    Validate(validate::Options),
    /// Validate, then write registry files, icons, schemas, the site and SHA256SUMS.
    Build(build::Options),
    /// Render only the static catalogue site.
    Site(build::SiteOptions),
    /// Print the documentation of a rule code.
    Explain(explain::Options),
    /// Rewrite manifests in the canonical layout, keeping every comment.
    Fmt(fmt::Options),
    /// Start a registry repository: configuration, workflow, hooks and CONTRIBUTING.md.
    Init(init::Options),
    /// Scaffold a new entry: a commented agent.json, a placeholder icon and a README.
    New(new::Options),
    /// Move entries to the newest version npm, PyPI and GitHub releases serve (never down).
    Update(update::Options),
    /// Print a shell completion script (bash, zsh, fish, elvish or PowerShell).
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): every command and option, exit status, environment and
    /// examples, e.g. `acp-registry man | man -l -`.
    Man,
    /// Launch agents as an editor would and check their ACP `initialize` answer.
    Verify(verify::Options),
    /// Verify, then open a session and probe the session methods; write matrix.json and
    /// matrix.md.
    Matrix(matrix::Options),
    /// Build one platform's release archive of an entry and record it in its agent.json.
    Pack(pack::Options),
    /// Install an agent of a published registry.json into the cache: downloaded with checks,
    /// its sha256 verified, unpacked safely.
    Install(install::Options),
    /// Run an agent with its standard streams passed through (installing it first when
    /// needed): what an editor's agent-server setting can point at.
    Run(run::Options),
    /// List the agents installed in the cache and those the registry offers.
    List(list::Options),
    /// Print the command line and environment `run` uses for an agent.
    Which(which::Options),
    /// Remove an agent's installs from the cache.
    Uninstall(uninstall::Options),
    /// Manage the install cache: `cache gc` removes versions the registry no longer lists.
    Cache(cache::Options),
    /// Agent Skills: `skill check` checks someone's well-known skills index or plugin
    /// marketplace against the files it lists; `skill install` installs skills from a site, a
    /// marketplace or a registry where agents read them, every file verified first.
    Skill(skill::Options),
}

/// The manual page's text beyond the argument definitions.
const MANUAL: manual::ManualText = manual::ManualText {
    exit_status: &[
        ("0", "Success: no errors (validate, verify), everything written (build, site, fmt, new, init, pack, matrix), nothing to do (update), or --check found no difference."),
        ("1", "Findings: errors (or warnings with --deny-warnings; validate, skill check), a build refused because of them, differences found by --check, a failed launch (verify), updates not applied or an entry that failed (update). The report says which."),
        ("2", "Usage or I/O failure (the client commands too: an unknown agent, a refused download or archive, an agent that cannot start): a bad flag, a path that does not exist, an output the tool may not replace. One error line names the path or flag to change."),
        ("3", "build --last-good: published, with entries that fail validation held back in their previous form or left out; the findings name them."),
        ("any", "run: on Unix the agent replaces acp-registry, so the code is the agent's; elsewhere acp-registry exits with the agent's code."),
    ],
    environment: &[
        ("NO_COLOR", "Set to anything non-empty: no colour, even on a terminal (--color auto, the default)."),
        ("CLICOLOR_FORCE", "Set to anything non-empty but 0: colour even when piped, with --color auto (NO_COLOR wins)."),
        ("GITHUB_STEP_SUMMARY", "With --format github, the file the findings table is appended to."),
        ("GITHUB_TOKEN", "validate --online, new --binary, update: sent as a bearer token to the GitHub API only, and only when that API is api.github.com or named by --github-api or GITHUB_API_URL; an API named only by the registry's configuration (online.github_api, which a pull request can change) is asked without it, with a warning."),
        ("GITHUB_API_URL", "A GitHub API the token may be sent to (the Actions runner sets it); it does not choose the API asked."),
        ("SOURCE_DATE_EPOCH", "pack: the time stamp of archive entries (default 0). build --matrix: the time evidence ages are measured at, unless --as-of is given (default: now)."),
        ("XDG_CACHE_HOME", "validate --online, verify: where the cache folder goes (default ~/.cache, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows)."),
        ("ACP_REGISTRY_URL", "install, run, list, which, cache gc: the registry.json used when --registry is not given (default: the public registry)."),
        ("ACP_REGISTRY_CACHE_DIR", "install, run, list, which, uninstall, cache gc: the cache folder when --cache-dir is not given (default: $XDG_CACHE_HOME/acp-registry, else ~/.cache/acp-registry)."),
        ("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "Tests only: allow loopback addresses over plain http. Never set it on untrusted input."),
        ("ACP_REGISTRY_TEST_NOW", "Tests only: the time matrix stamps its rows with (ISO 8601) instead of now."),
        ("ACP_REGISTRY_TEST_UV_INDEX", "Tests only: verify and matrix install uvx packages from this package index on a loopback address (http://127.0.0.1:PORT/simple) instead of uv's default. Relaxes nothing else."),
    ],
    examples: &[
        ("acp-registry init", "Set up a registry repository: configuration, workflow, pre-commit hooks."),
        ("acp-registry new my-agent --npx @example/my-agent", "Scaffold an entry to fill in."),
        ("acp-registry validate registry/my-agent", "Check one entry (registry-wide rules still see every entry)."),
        ("acp-registry validate --changed-since origin/main --format github", "Check what a pull request changed, as annotations."),
        ("acp-registry fmt --check", "List manifests not in the canonical layout."),
        ("acp-registry build", "Validate, then write registry.json, icons, schemas and the site into dist/."),
        ("acp-registry verify --agent my-agent", "Launch the agent as an editor would and check its ACP answer."),
        ("acp-registry matrix --shard 2/4 --out part-2.json", "Probe the second quarter of the agents; `acp-registry matrix merge part-*.json` joins the parts."),
        ("acp-registry explain icon-color", "Explain a finding's code."),
        ("acp-registry run my-agent", "Install the agent of the public registry if needed and run it, stdio passed through (an editor's agent-server command)."),
        ("acp-registry list --format json", "The agents installed and available, as JSON."),
        ("acp-registry skill check https://example.com/docs", "Check a site's well-known skills indexes and plugin marketplace against the files they list."),
    ],
    see_also: &["acp-collab(1)"],
};

/// Runs one subcommand; its report goes to `out` (stdout) or stderr. Colour (from `--color`,
/// the terminal and the environment), `--quiet` and the time stamp of archive entries are
/// filled in here rather than parsed by each command.
fn run(command: Command, global: Global, out: &mut dyn Write) -> Result<Exit, CommandError> {
    let err = &mut std::io::stderr();
    let quiet = global.quiet;
    if quiet {
        Stream::hide_progress();
    }
    let stdout_color = Stream::Stdout.use_color(global.color);
    let stderr_color = Stream::Stderr.use_color(global.color);
    match command {
        Command::Validate(mut options) => {
            (options.color, options.quiet) = (stdout_color, quiet);
            validate::run(&options, out)
        }
        Command::Build(mut options) => {
            (options.color, options.quiet) = (stderr_color, quiet);
            build::run(&options, out, err)
        }
        Command::Site(mut options) => {
            (options.color, options.quiet) = (stderr_color, quiet);
            build::site(&options, out, err)
        }
        Command::Verify(mut options) => {
            options.color = stdout_color;
            verify::run(&options, out)
        }
        Command::Matrix(mut options) => {
            options.verify.color = stdout_color;
            matrix::run(&options, out, err)
        }
        Command::New(mut options) => {
            (options.color, options.quiet) = (stdout_color, quiet);
            new::run(&options, out)
        }
        Command::Pack(mut options) => {
            options.pack.mtime = pack::source_date_epoch();
            pack::run(&options, out)
        }
        Command::Fmt(mut options) => {
            options.quiet = quiet;
            fmt::run(&options, out, err)
        }
        Command::Install(options) => install::run(&options, out, err),
        Command::Run(options) => run::run(&options, out, err),
        Command::List(options) => list::run(&options, out, err),
        Command::Which(options) => which::run(&options, out, err),
        Command::Uninstall(options) => uninstall::run(&options, out),
        Command::Cache(options) => cache::run(&options, out, err),
        Command::Skill(mut options) => {
            options.set_color(stdout_color);
            skill::run(&options, out, err)
        }
        Command::Explain(options) => explain::run(&options, out),
        Command::Init(options) => init::run(&options, out),
        Command::Update(options) => update::run(&options, out),
        Command::Completions { shell } => {
            manual::completions(shell, &mut Cli::command(), "acp-registry", out)?;
            Ok(exit::OK)
        }
        Command::Man => {
            manual::man_page(Cli::command(), &MANUAL, out)?;
            Ok(exit::OK)
        }
    }
}

fn main() -> ExitCode {
    // `COMPLETE=bash acp-registry`: print the shell's registration, or the candidates of the
    // word being completed (rule codes, entry ids, client names included), and exit.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match run(cli.command, cli.global, &mut out) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            let _ = out.flush();
            // Errors can quote registry paths and git's output: escaped, each cause once.
            eprintln!("{}", failure_line(anyhow::Error::new(error).chain()));
            ExitCode::from(exit::FAILURE)
        }
    }
}
