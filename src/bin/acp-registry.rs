//! `acp-registry`: argument parsing only; the work is in the library.

// The doc comments below are the `--help` text, written for users (PyPI, $GITHUB_STEP_SUMMARY),
// and pinned byte for byte by the snapshots: not rustdoc.
#![allow(clippy::doc_markdown)]

/// Registry runs allocate many small values (parsed trees, findings, JSON): mimalloc serves
/// them in about half the CPU of the system allocator (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use acp_registry::commands::{
    self, build, exit, explain, failure_line, fmt, init, manual, matrix, new, online, pack, update,
    validate, verify, CommandError, Exit, Stream,
};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

/// Validate, build and publish an ACP (Agent Client Protocol) agent registry.
#[derive(Parser)]
#[command(name = "acp-registry", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct RegistryArg {
    /// The registry root: a folder with one sub-folder per agent.
    #[arg(long, value_name = "DIR", default_value = commands::DEFAULT_REGISTRY)]
    registry: PathBuf,
}

#[derive(Subcommand)]
enum Command {
    /// Check every entry against the schema and the rule catalogue.
    Validate(ValidateArgs),
    /// Validate, then write registry files, icons, schemas, the site and SHA256SUMS.
    Build(BuildArgs),
    /// Render only the static catalogue site.
    Site(SiteArgs),
    /// Print the documentation of a rule code.
    Explain(ExplainArgs),
    /// Rewrite manifests in the canonical layout, keeping every comment.
    Fmt(FmtArgs),
    /// Start a registry repository: configuration, workflow, hooks and CONTRIBUTING.md.
    Init(InitArgs),
    /// Scaffold a new entry: a commented agent.json, a placeholder icon and a README.
    New(NewArgs),
    /// Move entries to the newest version npm, PyPI and GitHub releases serve (never down).
    Update(UpdateArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or PowerShell).
    Completions(CompletionsArgs),
    /// Print the manual page (roff): every command and option, exit status, environment and
    /// examples, e.g. `acp-registry man | man -l -`.
    Man,
    /// Launch agents as an editor would and check their ACP `initialize` answer.
    Verify(VerifyArgs),
    /// Verify, then open a session and probe the session methods; write matrix.json and
    /// matrix.md.
    Matrix(MatrixArgs),
    /// Build one platform's release archive of an entry and record it in its agent.json.
    Pack(PackArgs),
}

#[derive(Args)]
struct FmtArgs {
    #[command(flatten)]
    registry: RegistryArg,
    /// Write nothing: list the manifests that would change and exit 1 if any would.
    #[arg(long)]
    check: bool,
    /// Entry folders or agent.json files [default: every entry of --registry].
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
}

#[derive(Args)]
#[command(
    after_help = "Writes <registry>/acp-registry.jsonc, .github/workflows/registry.yml, \
.pre-commit-config.yaml and CONTRIBUTING.md, or nothing when one exists (exit 2), then prints the \
setup checklist."
)]
struct InitArgs {
    /// The repository folder (created when missing).
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// The registry root inside DIR: `registry` (what every command assumes), or `.` for entries
    /// at the repository root.
    #[arg(long, value_name = "DIR", default_value = commands::DEFAULT_REGISTRY)]
    registry: PathBuf,
    /// The branch the workflow publishes [default: the branch DIR/.git/HEAD names, else main].
    #[arg(long, value_name = "BRANCH")]
    default_branch: Option<String>,
}

#[derive(Args)]
#[command(group = clap::ArgGroup::new("launch").required(true))]
struct NewArgs {
    #[command(flatten)]
    registry: RegistryArg,
    /// The agent's id, also its folder name: lowercase letters, digits and `-`.
    id: String,
    /// Launched with npx: an npm package, `name` or `@scope/name`, optionally pinned `@X.Y.Z`.
    #[arg(long, value_name = "PKG", group = "launch")]
    npx: Option<String>,
    /// Launched with uvx: a PyPI package, optionally pinned `==X.Y.Z`.
    #[arg(long, value_name = "PKG", group = "launch")]
    uvx: Option<String>,
    /// Per-platform archives: those of --archive, each with its sha256, else placeholders for
    /// macOS, Linux and Windows.
    #[arg(long, group = "launch")]
    binary: bool,
    /// With --binary: one platform's release archive, e.g. `linux-x86_64=<asset URL>`
    /// (repeat per platform). Its sha256 is written: GitHub's published digest of the asset,
    /// else that of the download.
    #[arg(long, value_name = "PLATFORM=URL", requires = "binary", value_parser = parse_archive)]
    archive: Vec<new::Archive>,
    /// Largest archive downloaded to hash it, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = acp_registry::online::DEFAULT_ARCHIVE_CAP_MIB)]
    archive_cap: u64,
    /// GitHub API base URL asked for published digests (overrides `online.github_api`).
    #[arg(long, value_name = "URL")]
    github_api: Option<String>,
    #[command(flatten)]
    loopback: LoopbackArg,
}

fn parse_archive(text: &str) -> Result<new::Archive, String> {
    new::Archive::parse(text)
}

#[derive(Args)]
#[command(
    after_help = "Exit codes: 0 nothing to do (or every update applied), 1 updates available but not \
applied, or an entry failed (the report names the entry and the source), 2 usage or I/O failure.",
    mut_arg("allow_loopback_for_tests", |arg| arg.help(
        "TEST ONLY: allow loopback addresses, over plain http too (see `validate`)"
    ))
)]
struct UpdateArgs {
    #[command(flatten)]
    registry: RegistryArg,
    /// Only these entry ids (comma-separated or repeated) [default: every entry].
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    agent: Vec<String>,
    /// The version followed: `version` (stable) or the `preview` block.
    #[arg(long, value_enum, default_value = "stable")]
    channel: ChannelArg,
    /// Write the updates (comments and layout kept); each entry is re-validated and restored
    /// on failure.
    #[arg(long)]
    apply: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: UpdateFormatArg,
    /// Longest GitHub rate-limit reset to wait for, in seconds; longer ones are reported.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    rate_limit_wait: u64,
    /// Largest archive downloaded to hash when a release publishes no digest, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = acp_registry::online::DEFAULT_ARCHIVE_CAP_MIB)]
    archive_cap: u64,
    /// Release-age cooldown: apply only releases published at least DAYS days ago (npm
    /// `time`, PyPI upload time, GitHub `published_at`, at every source of the entry); a
    /// newer one is reported as held with the date it becomes eligible, and the newest old
    /// enough is taken instead, never below the current version. A release of unknown age
    /// is never applied under a cooldown. Pick at least the largest minimum release age
    /// your users set (npm `min-release-age` in days, pnpm `minimumReleaseAge` in minutes),
    /// or they cannot install the pins; longer means fixes arrive later. Overrides
    /// `update.min_age_days` [default: the configuration's, else 0].
    #[arg(long, value_name = "DAYS", value_parser = clap::value_parser!(u32).range(..=i64::from(acp_registry::MAX_MIN_AGE_DAYS)))]
    min_age: Option<u32>,
    /// Measure release ages at this UTC time instead of now (`2026-03-01T12:00:00Z` or
    /// `2026-03-01`), to reproduce an earlier run.
    #[arg(long, value_name = "TIME", value_parser = update::parse_as_of)]
    as_of: Option<i64>,
    #[command(flatten)]
    endpoints: EndpointArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum ChannelArg {
    Stable,
    Preview,
}

#[derive(Clone, Copy, ValueEnum)]
enum UpdateFormatArg {
    Text,
    Json,
}

#[derive(Args)]
struct CompletionsArgs {
    /// The shell to complete for.
    shell: clap_complete::Shell,
}

#[derive(Clone, Copy, ValueEnum)]
enum KindArg {
    Binary,
    Npx,
    Uvx,
}

#[derive(Args)]
#[command(mut_arg("allow_loopback_for_tests", |arg| arg.help(
    "TEST ONLY: allow loopback addresses, over plain http too, so tests can serve archives \
locally. Never use it on untrusted input"
)))]
struct VerifyArgs {
    #[command(flatten)]
    registry: RegistryArg,
    /// Only these agent ids (comma-separated); quarantined ids named here are run.
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    agent: Option<Vec<String>>,
    /// Only these distribution kinds (comma-separated).
    #[arg(
        long = "type",
        value_enum,
        value_name = "KIND,...",
        value_delimiter = ','
    )]
    kind: Option<Vec<KindArg>>,
    /// Only entries whose files changed since this git revision.
    #[arg(long, value_name = "REV")]
    changed_since: Option<String>,
    /// Only shard K of N of the selected entries (e.g. 2/4): each entry is in exactly one
    /// shard, by a hash of its id, and shards differ by at most one entry.
    #[arg(long, value_name = "K/N", conflicts_with = "list_shards")]
    shard: Option<acp_registry::verify::Shard>,
    /// Launch nothing: print the shards of the selected entries, one per --shard-size entries
    /// and at most MAX, as a GitHub Actions strategy.matrix with --format json.
    #[arg(long, value_name = "MAX")]
    list_shards: Option<usize>,
    /// With --list-shards: entries per shard before another shard is added.
    #[arg(
        long,
        value_name = "SIZE",
        default_value_t = 1,
        requires = "list_shards"
    )]
    shard_size: usize,
    /// Agents run at once (the report order does not depend on it).
    #[arg(short = 'j', long, value_name = "N", default_value_t = 1)]
    jobs: usize,
    /// Seconds to wait for each ACP answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    timeout: u64,
    /// Fail when a distribution cannot be tested on this machine.
    #[arg(long)]
    require_tested: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: FormatArg,
    /// Cache folder for downloaded archives [default: the user's cache folder].
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Neither read nor write the archive cache.
    #[arg(long, conflicts_with = "cache")]
    no_cache: bool,
    /// Largest archive downloaded, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = acp_registry::online::DEFAULT_ARCHIVE_CAP_MIB)]
    archive_cap: u64,
    /// Most bytes one archive may unpack to, in MiB (per agent; hard links count as copies).
    #[arg(long, value_name = "MIB", default_value_t = acp_registry::archive::DEFAULT_UNPACK_CAP_MIB)]
    unpack_cap: u64,
    #[command(flatten)]
    loopback: LoopbackArg,
}

impl VerifyArgs {
    fn options(self) -> verify::Options {
        verify::Options {
            registry: self.registry.registry,
            agents: self.agent,
            kinds: self.kind.map(|kinds| {
                kinds
                    .into_iter()
                    .map(|k| match k {
                        KindArg::Binary => acp_registry::DistributionKind::Binary,
                        KindArg::Npx => acp_registry::DistributionKind::Npx,
                        KindArg::Uvx => acp_registry::DistributionKind::Uvx,
                    })
                    .collect()
            }),
            changed_since: self.changed_since,
            shard: self.shard,
            list_shards: self.list_shards.map(|max| verify::ListShards {
                max,
                size: self.shard_size,
            }),
            jobs: self.jobs,
            timeout: std::time::Duration::from_secs(self.timeout),
            require_tested: self.require_tested,
            format: self.format.into(),
            color: Stream::Stdout.use_color(),
            cache: self.cache,
            no_cache: self.no_cache,
            archive_cap_mib: self.archive_cap,
            unpack_cap_mib: self.unpack_cap,
            allow_loopback_for_tests: self.loopback.allow_loopback_for_tests,
        }
    }
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
struct MatrixArgs {
    #[command(subcommand)]
    command: Option<MatrixCommand>,
    #[command(flatten)]
    verify: VerifyArgs,
    /// The matrix.json to write; matrix.md is written beside it.
    #[arg(long, value_name = "FILE", default_value = "matrix.json")]
    out: PathBuf,
    /// Keep the rows of the existing --out whose version and distribution did not change.
    #[arg(long)]
    changed_only: bool,
}

#[derive(Subcommand)]
enum MatrixCommand {
    /// Join the matrix.json of each `matrix --shard K/N` run into the matrix.json and
    /// matrix.md one unsharded run writes.
    #[command(
        after_help = "Exit 0 when every shard was given, 1 when shards are missing (written \
with the rows there are, each missing shard named on stderr), 2 when the parts cannot be merged: \
another registry revision or selection, another shard count, a shard or an entry twice."
    )]
    Merge(MergeArgs),
}

#[derive(Args)]
struct MergeArgs {
    /// The matrix.json of each shard.
    #[arg(value_name = "PART.json", required = true)]
    parts: Vec<PathBuf>,
    /// The matrix.json to write; matrix.md is written beside it.
    #[arg(long, value_name = "FILE", default_value = "matrix.json")]
    out: PathBuf,
}

impl From<FormatArg> for validate::Format {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Human => validate::Format::Human,
            FormatArg::Json => validate::Format::Json,
            FormatArg::Github => validate::Format::Github,
            FormatArg::Sarif => validate::Format::Sarif,
        }
    }
}

#[derive(Args)]
struct PackArgs {
    #[command(flatten)]
    registry: RegistryArg,
    /// The entry id, e.g. `agent-collaboration-protocol`.
    id: String,
    /// The Rust target triple the binary was built for, e.g. `x86_64-unknown-linux-musl`.
    #[arg(long, value_name = "TRIPLE")]
    target: String,
    /// The built executable to ship (optional with --check: then the archive is compared
    /// with the manifest only).
    #[arg(long, value_name = "PATH", required_unless_present = "check")]
    binary: Option<PathBuf>,
    /// The release version, X.Y.Z (with --check, the manifest's by default).
    #[arg(long, value_name = "X.Y.Z", required_unless_present = "check")]
    version: Option<String>,
    /// Archives are published at <URL>/v<version>/<file> [default: the current archive
    /// URL's folder, else the repository's GitHub releases].
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The licence file bundled as LICENSE.
    #[arg(long, value_name = "FILE", default_value = "LICENSE")]
    license: PathBuf,
    /// Output folder; archives go to <DIR>/v<version>/.
    #[arg(long, value_name = "DIR", default_value = "dist/packages")]
    out: PathBuf,
    /// Write nothing: exit 1 unless the archive in --out is the one agent.json records (and,
    /// with --binary, the one these inputs build).
    #[arg(long)]
    check: bool,
}

#[derive(Args)]
#[command(
    after_help = "Exit codes: 0 everything written (or --check found no difference), 1 errors found \
(nothing written) or --check found differences, 2 usage or I/O failure (the message names the path or \
flag to change), 3 with --last-good: published, but entries that fail validation were held back in \
their previous form or left out (the findings name them)."
)]
struct BuildArgs {
    #[command(flatten)]
    registry: RegistryArg,
    /// Output folder, replaced atomically as a whole.
    #[arg(long, value_name = "DIR", default_value = "dist")]
    out: PathBuf,
    /// URL the files are published under (overrides `base_url` in acp-registry.jsonc).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Skip the static site.
    #[arg(long)]
    no_site: bool,
    /// Write nothing: rebuild in memory and exit 1 if the output folder differs.
    #[arg(long)]
    check: bool,
    /// Publish the results of `acp-registry matrix` (a matrix.json): verification.json (and
    /// its schema) beside the registry files, and the verification badges and filter on the
    /// site. Evidence for another version or distribution than the published one is stale.
    #[arg(long, value_name = "FILE")]
    matrix: Option<PathBuf>,
    /// With --matrix: evidence older than DAYS days is expired [default: `verify.max_age_days`,
    /// else 30].
    #[arg(long, value_name = "DAYS", requires = "matrix", value_parser = clap::value_parser!(u32).range(1..=i64::from(acp_registry::MAX_MIN_AGE_DAYS)))]
    max_age: Option<u32>,
    /// With --matrix: measure evidence ages at this UTC time (`2026-03-01T12:00:00Z` or
    /// `2026-03-01`) [default: SOURCE_DATE_EPOCH, else now]. Give it (or SOURCE_DATE_EPOCH) for
    /// a reproducible build.
    #[arg(long, value_name = "TIME", requires = "matrix", value_parser = update::parse_as_of)]
    as_of: Option<i64>,
    /// The registry.json a previous build published, or the dist/ folder holding it: entries
    /// that fail validation keep their previous form (or are left out) instead of stopping the
    /// build, and the exit code is 3.
    #[arg(long, value_name = "PATH")]
    last_good: Option<PathBuf>,
    /// Format of the findings: human text on stderr, the others on stdout (as `validate`).
    #[arg(long, value_enum, default_value = "human")]
    format: FormatArg,
}

#[derive(Args)]
struct SiteArgs {
    #[command(flatten)]
    registry: RegistryArg,
    /// Output folder for the site, replaced atomically as a whole.
    #[arg(long, value_name = "DIR", default_value = "dist/site")]
    out: PathBuf,
    /// URL the registry's files are published under.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Write nothing: exit 1 if the output folder differs from a fresh render.
    #[arg(long)]
    check: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// Compiler-style findings with source excerpts.
    Human,
    /// A versioned JSON document of findings.
    Json,
    /// GitHub Actions workflow commands (and a table in $GITHUB_STEP_SUMMARY).
    Github,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
}

#[derive(Args)]
#[command(
    after_help = "Exit codes: 0 no errors (and no warnings with --deny-warnings), 1 errors found (or \
warnings with --deny-warnings), 2 usage or I/O failure (the message names the path or flag to change)."
)]
struct ValidateArgs {
    #[command(flatten)]
    registry: RegistryArg,
    /// Files or entry folders to report on, e.g. `registry/foo/agent.json` (as pre-commit passes
    /// them); registry-wide rules such as duplicate ids still see every entry.
    #[arg(value_name = "PATH", conflicts_with = "changed_since")]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: FormatArg,
    /// Exit 1 when there are warnings, not only errors.
    #[arg(long)]
    deny_warnings: bool,
    /// Check only entries whose files changed since this git revision (registry-wide rules
    /// such as duplicate ids still see every entry), and compare them with their manifests at
    /// REV: a lower version, a changed distribution under the same version, renamed and removed
    /// ids.
    #[arg(long, value_name = "REV")]
    changed_since: Option<String>,
    /// Apply the fixes that are certain (platform key spellings, http to https, `api_key` to
    /// `env_var`, the ignored `icon` field, digests found by --verify-archives), comments
    /// kept; then report what still needs a person.
    #[arg(long)]
    fix: bool,
    #[command(flatten)]
    online: OnlineArgs,
}

#[derive(Args)]
#[command(next_help_heading = "Online checks")]
struct OnlineArgs {
    /// Also check over the network: archive URLs answer, npm and PyPI pins exist.
    #[arg(long)]
    online: bool,
    /// Download every archive and compare its sha256 with the pin (implies --online); a pin
    /// that no longer matches at an unchanged version is `archive-retagged`.
    #[arg(long)]
    verify_archives: bool,
    /// Add every entry with an `archive-retagged` finding to quarantine.json (comments kept;
    /// created when absent).
    #[arg(long, requires = "verify_archives")]
    quarantine_retagged: bool,
    /// Largest archive --verify-archives downloads, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = acp_registry::online::DEFAULT_ARCHIVE_CAP_MIB)]
    archive_cap: u64,
    /// Cache folder for online successes [default: the user's cache folder].
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Neither read nor write the cache.
    #[arg(long, conflicts_with = "cache")]
    no_cache: bool,
    /// Age in seconds after which a cached success is checked again.
    #[arg(long, value_name = "SECONDS", default_value_t = 86_400)]
    cache_max_age: u64,
    #[command(flatten)]
    endpoints: EndpointArgs,
}

/// The endpoint overrides and the loopback switch of `validate --online` and `update`.
#[derive(Args)]
struct EndpointArgs {
    /// npm registry base URL (overrides `online.npm_registry`).
    #[arg(long, value_name = "URL")]
    npm_registry: Option<String>,
    /// PyPI base URL (overrides `online.pypi`).
    #[arg(long, value_name = "URL")]
    pypi_url: Option<String>,
    /// GitHub API base URL (overrides `online.github_api`).
    #[arg(long, value_name = "URL")]
    github_api: Option<String>,
    #[command(flatten)]
    loopback: LoopbackArg,
}

impl EndpointArgs {
    /// `base` with these endpoints and the loopback switch.
    fn flags(self, base: online::Flags) -> online::Flags {
        online::Flags {
            endpoints: acp_registry::online::EndpointOverrides {
                npm: self.npm_registry,
                pypi: self.pypi_url,
                github_api: self.github_api,
            },
            allow_loopback_for_tests: self.loopback.allow_loopback_for_tests,
            ..base
        }
    }
}

/// The test-only loopback switch; its help is `validate`'s, reworded per command by
/// `mut_arg` where the command says less.
#[derive(Args)]
struct LoopbackArg {
    /// TEST ONLY: allow loopback addresses, over plain http too, so tests and benchmarks can
    /// use local servers. Relaxes nothing else; never use it on untrusted input.
    #[arg(
        long,
        env = acp_registry::TEST_ALLOW_LOOPBACK_ENV,
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    allow_loopback_for_tests: bool,
}

impl OnlineArgs {
    fn flags(self) -> Option<online::Flags> {
        let base = online::Flags {
            verify_archives: self.verify_archives,
            quarantine_retagged: self.quarantine_retagged,
            archive_cap_mib: self.archive_cap,
            cache: self.cache,
            no_cache: self.no_cache,
            cache_max_age: std::time::Duration::from_secs(self.cache_max_age),
            ..online::Flags::default()
        };
        (self.online || self.verify_archives).then(|| self.endpoints.flags(base))
    }
}

#[derive(Args)]
struct ExplainArgs {
    /// The registry whose acp-registry.jsonc may change the rule [default: `registry`, when
    /// there is one].
    #[arg(long, value_name = "DIR")]
    registry: Option<PathBuf>,
    /// The rule code, e.g. `icon-color` (`--list` lists them).
    code: Option<String>,
    /// List every code with its default severity and summary.
    #[arg(long, conflicts_with = "markdown")]
    list: bool,
    /// Print the whole catalogue as Markdown (the source of docs/rules.md).
    #[arg(long)]
    markdown: bool,
}

impl ValidateArgs {
    fn options(self) -> validate::Options {
        validate::Options {
            registry: self.registry.registry,
            format: self.format.into(),
            deny_warnings: self.deny_warnings,
            changed_since: self.changed_since,
            paths: self.paths,
            color: Stream::Stdout.use_color(),
            online: self.online.flags(),
            fix: self.fix,
        }
    }
}

impl BuildArgs {
    fn options(self) -> build::Options {
        build::Options {
            registry: self.registry.registry,
            out: self.out,
            base_url: self.base_url,
            site: !self.no_site,
            site_only: false,
            check: self.check,
            color: Stream::Stderr.use_color(),
            matrix: self.matrix,
            max_age_days: self.max_age,
            as_of: self.as_of,
            last_good: self.last_good,
            format: self.format.into(),
        }
    }
}

impl SiteArgs {
    fn options(self) -> build::Options {
        build::Options {
            registry: self.registry.registry,
            out: self.out,
            base_url: self.base_url,
            site: true,
            site_only: true,
            check: self.check,
            color: Stream::Stderr.use_color(),
            matrix: None,
            max_age_days: None,
            as_of: None,
            last_good: None,
            format: validate::Format::Human,
        }
    }
}

impl FmtArgs {
    fn options(self) -> fmt::Options {
        fmt::Options {
            registry: self.registry.registry,
            paths: self.paths,
            check: self.check,
        }
    }
}

impl MatrixArgs {
    fn options(self) -> matrix::Options {
        matrix::Options {
            common: self.verify.options(),
            out: self.out,
            changed_only: self.changed_only,
        }
    }
}

impl PackArgs {
    fn options(self) -> pack::Options {
        pack::Options {
            pack: pack::PackOptions {
                registry: self.registry.registry,
                id: self.id,
                target: self.target,
                binary: self.binary,
                version: self.version,
                base_url: self.base_url,
                license: self.license,
                out: self.out,
                mtime: pack::source_date_epoch(),
            },
            check: self.check,
        }
    }
}

impl ExplainArgs {
    fn request(&self) -> explain::Request {
        match (self.list, self.markdown, self.code.clone()) {
            (true, _, _) => explain::Request::List,
            (_, true, _) => explain::Request::Markdown,
            (_, _, Some(code)) => explain::Request::Code(code),
            (_, _, None) => explain::Request::Nothing,
        }
    }
}

impl NewArgs {
    fn options(self) -> new::Options {
        new::Options {
            registry: self.registry.registry,
            id: self.id,
            launch: match (self.npx, self.uvx) {
                (Some(package), _) => new::Launch::Npx(package),
                (_, Some(package)) => new::Launch::Uvx(package),
                _ => new::Launch::Binary(self.archive),
            },
            color: Stream::Stdout.use_color(),
            online: online::Flags {
                archive_cap_mib: self.archive_cap,
                endpoints: acp_registry::online::EndpointOverrides {
                    github_api: self.github_api,
                    ..Default::default()
                },
                allow_loopback_for_tests: self.loopback.allow_loopback_for_tests,
                ..online::Flags::default()
            },
        }
    }
}

impl UpdateArgs {
    fn options(self) -> update::Options {
        let online = online::Flags {
            archive_cap_mib: self.archive_cap,
            ..online::Flags::default()
        };
        update::Options {
            registry: self.registry.registry,
            agents: self.agent,
            channel: match self.channel {
                ChannelArg::Stable => update::Channel::Stable,
                ChannelArg::Preview => update::Channel::Preview,
            },
            apply: self.apply,
            format: match self.format {
                UpdateFormatArg::Text => update::Format::Text,
                UpdateFormatArg::Json => update::Format::Json,
            },
            rate_limit_wait: std::time::Duration::from_secs(self.rate_limit_wait),
            online: self.endpoints.flags(online),
            min_age_days: self.min_age,
            as_of: self.as_of,
        }
    }
}

/// The manual page's text beyond the argument definitions.
const MANUAL: manual::ManualText = manual::ManualText {
    exit_status: &[
        ("0", "Success: no errors (validate, verify), everything written (build, site, fmt, new, init, pack, matrix), nothing to do (update), or --check found no difference."),
        ("1", "Findings: errors (or warnings with --deny-warnings), a build refused because of them, differences found by --check, a failed launch (verify), updates not applied or an entry that failed (update). The report says which."),
        ("2", "Usage or I/O failure: a bad flag, a path that does not exist, an output the tool may not replace. One error line names the path or flag to change."),
        ("3", "build --last-good: published, with entries that fail validation held back in their previous form or left out; the findings name them."),
    ],
    environment: &[
        ("NO_COLOR", "Set to anything non-empty: no colour, even on a terminal."),
        ("GITHUB_STEP_SUMMARY", "With --format github, the file the findings table is appended to."),
        ("GITHUB_TOKEN", "update: sent as a bearer token to the GitHub API host only."),
        ("SOURCE_DATE_EPOCH", "pack: the time stamp of archive entries (default 0). build --matrix: the time evidence ages are measured at, unless --as-of is given (default: now)."),
        ("XDG_CACHE_HOME", "validate --online, verify: where the cache folder goes (default ~/.cache, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows)."),
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
    ],
    see_also: &["acp-collab(1)"],
};

/// Runs one subcommand; its report goes to `out` (stdout) or stderr.
fn run(command: Command, out: &mut dyn Write) -> Result<Exit, CommandError> {
    let err = &mut std::io::stderr();
    match command {
        Command::Validate(args) => validate::run(&args.options(), out),
        Command::Build(args) => build::run(&args.options(), out, err),
        Command::Site(args) => build::run(&args.options(), out, err),
        Command::Fmt(args) => fmt::run(&args.options(), out, err),
        Command::Verify(args) => verify::run(&args.options(), out),
        Command::Matrix(MatrixArgs {
            command: Some(MatrixCommand::Merge(merge)),
            ..
        }) => matrix::merge(
            &matrix::MergeOptions {
                parts: merge.parts,
                out: merge.out,
            },
            out,
            err,
        ),
        Command::Matrix(args) => matrix::run(&args.options(), out),
        Command::Pack(args) => pack::run(&args.options(), out),
        Command::Explain(args) => explain::run(args.request(), args.registry.as_deref(), out),
        Command::Init(args) => init::run(
            &init::Options {
                dir: args.dir,
                registry: args.registry,
                default_branch: args.default_branch,
            },
            out,
        ),
        Command::New(args) => new::run(&args.options(), out),
        Command::Update(args) => update::run(&args.options(), out),
        Command::Completions(args) => {
            manual::completions(args.shell, &mut Cli::command(), "acp-registry", out)?;
            Ok(exit::OK)
        }
        Command::Man => {
            manual::man_page(Cli::command(), &MANUAL, out)?;
            Ok(exit::OK)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match run(cli.command, &mut out) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            let _ = out.flush();
            // Errors can quote registry paths and git's output: escaped, each cause once.
            eprintln!("{}", failure_line(anyhow::Error::new(error).chain()));
            ExitCode::from(exit::FAILURE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(args: &[&str]) -> Command {
        let argv = std::iter::once("acp-registry").chain(args.iter().copied());
        Cli::try_parse_from(argv).expect("valid arguments").command
    }

    #[test]
    fn validate_online_and_update_read_the_endpoint_flags_into_the_same_online_flags() {
        let endpoints = ["--npm-registry", "http://n", "--pypi-url", "http://p"];
        let endpoints = [&endpoints[..], &["--github-api", "http://g"]].concat();
        let Command::Validate(validate) =
            command(&[&["validate", "--online"], &endpoints[..]].concat())
        else {
            panic!("validate");
        };
        let Command::Update(update) = command(&[&["update"], &endpoints[..]].concat()) else {
            panic!("update");
        };
        let from_validate = validate.options().online.expect("--online");
        let from_update = update.options().online;
        for flags in [&from_validate, &from_update] {
            assert_eq!(flags.endpoints.npm.as_deref(), Some("http://n"));
            assert_eq!(flags.endpoints.pypi.as_deref(), Some("http://p"));
            assert_eq!(flags.endpoints.github_api.as_deref(), Some("http://g"));
        }
    }
}
