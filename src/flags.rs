//! Command-line pieces more than one command's options use: the `--registry` and test-only
//! loopback flag groups (flattened into each command's `Options`), the value parsers that
//! convert units once, where the flag is read (seconds to a [`Duration`], MiB to a
//! [`ByteSize`], a UTC time to epoch seconds), and [`parse`] / [`defaults`] for building
//! options from an argument list in tests and library calls.
//!
//! Ground floor of the command line: the domain modules whose options are flags (`verify`,
//! `pack`) and `commands` import it; it imports only `net` (the loopback variable's name) and
//! `time`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use acp_registry_client::platform::Kind;

/// The registry root every command reads when `--registry` is not given.
pub const DEFAULT_REGISTRY: &str = "registry";

/// `--registry`'s help, also given to the options that keep the root as a plain path
/// (`pack`'s).
pub const REGISTRY_HELP: &str = "The registry root: a folder with one sub-folder per agent";

/// `--registry`: the registry root.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Registry {
    /// The registry folder (`--registry`).
    #[arg(
        long = "registry",
        id = "registry",
        value_name = "DIR",
        default_value = DEFAULT_REGISTRY,
        help = REGISTRY_HELP
    )]
    pub root: PathBuf,
}

impl Registry {
    /// The registry at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Registry {
        Registry { root: root.into() }
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new(DEFAULT_REGISTRY)
    }
}

/// The flags every command takes, before or after its name (`global`): how much to print
/// and when to colour it. The binary reads them once and hands each command what it needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args)]
#[allow(clippy::doc_markdown)] // The field docs are `--help` text, written for users.
pub struct Global {
    /// Print only findings and errors: no progress bars, summaries or lines saying what was
    /// done (exit codes unchanged)
    #[arg(short, long, global = true, display_order = 900)]
    pub quiet: bool,
    /// When to colour: auto (on a terminal, unless NO_COLOR is set; CLICOLOR_FORCE colours a
    /// pipe too), always, never
    #[arg(
        long,
        value_name = "WHEN",
        global = true,
        default_value = "auto",
        display_order = 901
    )]
    pub color: ColorChoice,
}

/// `--color`'s values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour on a terminal unless `NO_COLOR` is set; `CLICOLOR_FORCE` forces it.
    #[default]
    Auto,
    /// Colour even when piped or redirected (and whatever `NO_COLOR` says).
    Always,
    /// No colour.
    Never,
}

/// At most this many entry ids are offered by completion.
const MAX_COMPLETED_IDS: usize = 10_000;

/// Shell completion of entry ids (`verify --agent`, `update --agent`): the entry folders
/// (holding `agent.json`, no link followed) of the registry named by a `--registry` earlier on
/// the command line being completed, else of `registry` in the current folder; sorted, at most
/// [`MAX_COMPLETED_IDS`], and only names an id can have (ASCII letters, digits, `-`, `.`, `_`),
/// so nothing the shell prints can be a control sequence.
#[must_use]
pub fn entry_ids() -> clap_complete::ArgValueCandidates {
    clap_complete::ArgValueCandidates::new(|| {
        let root = registry_on_command_line(std::env::args_os().skip(1))
            .unwrap_or_else(|| PathBuf::from(DEFAULT_REGISTRY));
        entry_id_candidates(&root)
            .into_iter()
            .map(clap_complete::CompletionCandidate::new)
            .collect()
    })
}

/// The last `--registry DIR` (or `--registry=DIR`) of `args`.
fn registry_on_command_line(args: impl Iterator<Item = std::ffi::OsString>) -> Option<PathBuf> {
    let mut found = None;
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        if text == "--registry" {
            found = args.peek().map(PathBuf::from);
        } else if let Some(dir) = text.strip_prefix("--registry=") {
            found = Some(PathBuf::from(dir));
        }
    }
    found.filter(|dir| !dir.as_os_str().is_empty())
}

/// The entry ids of the registry at `root`, for completion (see [`entry_ids`]).
fn entry_id_candidates(root: &std::path::Path) -> Vec<String> {
    use acp_registry_core::fs::{kind, list_dir, Kind};
    let plain = |name: &str| {
        !name.starts_with(['.', '_'])
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
    };
    let Ok(children) = list_dir(root) else {
        return Vec::new();
    };
    children
        .into_iter()
        .filter(|child| child.kind == Kind::Dir)
        .map(|child| child.name())
        .filter(|name| plain(name))
        .filter(|name| {
            matches!(
                kind(&root.join(name).join("agent.json")),
                Ok(Some(Kind::File))
            )
        })
        .take(MAX_COMPLETED_IDS)
        .collect()
}

/// The test-only loopback switch; its help is `validate`'s, reworded per command by
/// `mut_arg("allow_loopback_for_tests", …)` where the command says less.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args)]
pub struct Loopback {
    /// TEST ONLY: allow loopback addresses, over plain http too, so tests and benchmarks can
    /// use local servers. Relaxes nothing else; never use it on untrusted input.
    #[arg(
        long,
        env = crate::net::TEST_ALLOW_LOOPBACK_ENV,
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    pub allow_loopback_for_tests: bool,
}

/// The network settings of the commands that fetch for a registry (`validate --online`,
/// `update`, `verify`, `matrix`): `--allow-private-host HOST|CIDR` (repeatable) and
/// `--proxy-from-env`, each joined with the configuration's `network` section, and
/// `--ca-file FILE` (command line only).
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
#[allow(clippy::doc_markdown)] // The field docs are `--help` text, written for users.
pub struct NetworkFlags {
    /// A host name, IP address or CIDR range (`10.20.0.0/16`) allowed to resolve to a private
    /// or reserved address: a mirror on the company network; repeat for more (added to
    /// `network.private_hosts`). Still https only; loopback, link-local and unspecified
    /// addresses stay refused.
    #[arg(long = "allow-private-host", value_name = "HOST|CIDR", value_parser = private_host)]
    pub allow_private_host: Vec<String>,
    /// Send https requests through the proxy HTTPS_PROXY (else ALL_PROXY) names, except to
    /// the hosts of NO_PROXY (also `network.proxy_from_env`). The proxy resolves the names it
    /// connects to, so their addresses are not checked here.
    #[arg(long)]
    pub proxy_from_env: bool,
    /// A PEM file of certificate authorities to trust besides the built-in roots (a company
    /// mirror's, or a TLS-inspecting proxy's); repeat for more. Command line only: never
    /// from the configuration, which a pull request can change.
    #[arg(long, value_name = "FILE")]
    pub ca_file: Vec<std::path::PathBuf>,
}

impl NetworkFlags {
    /// Set the private hosts (these flags' and `configured`, the configuration's) and, when
    /// these flags or `proxy_from_env` (the configuration's) ask for it, the proxy of the
    /// environment on `net`.
    ///
    /// # Errors
    /// A proxy variable that names no usable proxy (`socks5://`, not a URL), naming it.
    pub fn apply(
        &self,
        net: &mut crate::net::NetConfig,
        configured: &[String],
        proxy_from_env: bool,
    ) -> Result<(), String> {
        net.private_hosts = self
            .allow_private_host
            .iter()
            .chain(configured)
            .cloned()
            .collect();
        for path in &self.ca_file {
            let read = acp_registry_core::fs::open_path(path)
                .and_then(|file| acp_registry_core::fs::read_limited(file, MAX_CA_FILE_BYTES));
            let bytes = read.map_err(|e| format!("--ca-file {}: {e}", path.display()))?;
            net.extra_roots.push(bytes);
        }
        if self.proxy_from_env || proxy_from_env {
            net.proxy = crate::net::ProxySettings::from_env().map_err(|e| {
                format!("{e}; set it to an http:// or https:// proxy, or drop --proxy-from-env (network.proxy_from_env)")
            })?;
        }
        Ok(())
    }
}

/// The largest `--ca-file` read (a system bundle of every public root is about 220 KiB).
const MAX_CA_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One `--allow-private-host` value, checked and written canonically (`Mirror.Example.` is
/// `mirror.example`); a bad one is refused naming the forms expected.
pub fn private_host(text: &str) -> Result<String, String> {
    text.parse::<crate::net::PrivateHost>()
        .map(|host| host.to_string())
        .map_err(|e| e.to_string())
}

/// `--type`'s values (`binary`, `npx`, `uvx`), listed bare as they always were (`Kind` is the
/// client library's, so it cannot implement clap's `ValueEnum` here).
pub fn kind_parser() -> impl clap::builder::TypedValueParser<Value = Kind> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Kind::ALL.map(Kind::as_str)).map(|name| {
        Kind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
            .expect("a listed value")
    })
}

/// A `--…` flag given in whole seconds, e.g. `--timeout 60`.
pub fn seconds(text: &str) -> Result<Duration, std::num::ParseIntError> {
    text.parse().map(Duration::from_secs)
}

/// A size given on the command line in MiB (`--archive-cap 512`) and used in bytes: the
/// conversion happens once, when the flag is read. Shown in MiB (`[default: 512]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize {
    mib: u64,
}

impl ByteSize {
    /// `mib` MiB.
    pub const fn mib(mib: u64) -> ByteSize {
        ByteSize { mib }
    }

    /// The size in bytes (saturating: a cap past `u64::MAX` bytes is no cap).
    pub const fn bytes(self) -> u64 {
        self.mib.saturating_mul(1024 * 1024)
    }
}

impl FromStr for ByteSize {
    type Err = std::num::ParseIntError;

    fn from_str(text: &str) -> Result<ByteSize, Self::Err> {
        text.parse().map(ByteSize::mib)
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.mib)
    }
}

/// Reads `--as-of`: an RFC 3339 time with a zone (`2026-03-01T12:00:00Z`), or a date
/// (`2026-03-01`, midnight UTC); seconds since the Unix epoch.
pub fn as_of(text: &str) -> Result<i64, String> {
    let full = match text.len() {
        10 => format!("{text}T00:00:00Z"),
        _ => text.to_string(),
    };
    acp_registry_core::time::parse_iso_utc_seconds(&full).ok_or_else(|| {
        format!("`{text}` is not a UTC time; write e.g. 2026-03-01T12:00:00Z or 2026-03-01")
    })
}

/// The options `args` (the flags after the command's name) give, e.g.
/// `parse::<validate::Options>(&["--format", "json", "--registry", dir])`: what the binary
/// would pass, for tests and library callers. Variables a flag reads (`env = …`) are read.
pub fn parse<T: clap::Args + clap::FromArgMatches>(args: &[&str]) -> Result<T, clap::Error> {
    let command = T::augment_args(clap::Command::new("acp-registry"));
    let matches = command
        .try_get_matches_from(std::iter::once("acp-registry").chain(args.iter().copied()))?;
    T::from_arg_matches(&matches)
}

/// The options an empty command line gives, environment variables left out: each
/// command's `Default`.
///
/// # Panics
///
/// When `T` requires an argument (a command with a positional one has no default).
#[must_use]
pub fn defaults<T: clap::Args + clap::FromArgMatches>() -> T {
    let command =
        T::augment_args(clap::Command::new("acp-registry")).mut_args(|arg| arg.env(None::<&str>));
    let matches = command
        .try_get_matches_from(["acp-registry"])
        .expect("an empty command line parses");
    T::from_arg_matches(&matches).expect("an empty command line parses")
}

/// `clap::ValueEnum` for an enum whose values `--help` lists bare, `[possible values: a, b]`:
/// deriving it would list each variant's rustdoc as help, which those flags never showed.
macro_rules! bare_value_enum {
    ($type:ty { $($variant:path => $name:literal),+ $(,)? }) => {
        impl clap::ValueEnum for $type {
            fn value_variants<'a>() -> &'a [Self] {
                &[$($variant),+]
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(match self {
                    $($variant => $name),+
                }))
            }
        }
    };
}
pub(crate) use bare_value_enum;

bare_value_enum!(ColorChoice {
    ColorChoice::Auto => "auto",
    ColorChoice::Always => "always",
    ColorChoice::Never => "never",
});

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, clap::Args)]
    struct Flags {
        #[command(flatten)]
        registry: Registry,
        #[arg(long, value_parser = seconds, default_value = "60")]
        timeout: Duration,
        #[arg(long, default_value_t = ByteSize::mib(512))]
        cap: ByteSize,
    }

    #[test]
    fn units_are_converted_where_the_flag_is_read() {
        let flags: Flags = parse(&["--timeout", "5", "--cap", "2"]).unwrap();
        assert_eq!(flags.timeout, Duration::from_secs(5));
        assert_eq!(flags.cap.bytes(), 2 * 1024 * 1024);
        assert_eq!(flags.registry, Registry::default());
        let flags: Flags = defaults();
        assert_eq!(flags.timeout, Duration::from_secs(60));
        assert_eq!(flags.cap.bytes(), 512 * 1024 * 1024);
        assert_eq!(ByteSize::mib(u64::MAX).bytes(), u64::MAX);
        let error = parse::<Flags>(&["--cap", "x"]).unwrap_err().to_string();
        assert!(error.contains("invalid digit found in string"), "{error}");
    }

    #[test]
    fn entry_ids_are_the_plain_entry_folders_of_the_registry_named_last() {
        let args = |list: &[&str]| {
            list.iter()
                .map(std::ffi::OsString::from)
                .collect::<Vec<_>>()
        };
        let named = |list: &[&str]| registry_on_command_line(args(list).into_iter());
        assert_eq!(named(&["verify", "--agent", "x"]), None);
        assert_eq!(
            named(&["--registry", "a", "verify", "--registry=b", "--agent"]),
            Some(PathBuf::from("b"))
        );
        assert_eq!(named(&["--registry"]), None);
        let dir = std::env::temp_dir().join(format!("flags-ids-{}", std::process::id()));
        for (folder, manifest) in [
            ("beta", true),
            ("alpha", true),
            ("empty", false),
            ("_x", true),
        ] {
            std::fs::create_dir_all(dir.join(folder)).unwrap();
            if manifest {
                std::fs::write(dir.join(folder).join("agent.json"), "{}").unwrap();
            }
        }
        std::fs::create_dir_all(dir.join("Bad\u{1b}[31m")).unwrap();
        std::fs::write(dir.join("Bad\u{1b}[31m/agent.json"), "{}").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.join("alpha"), dir.join("linked")).unwrap();
        assert_eq!(entry_id_candidates(&dir), ["alpha", "beta"]);
        assert!(entry_id_candidates(&dir.join("missing")).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn as_of_takes_a_time_or_a_date() {
        assert_eq!(as_of("1970-01-02"), Ok(86_400));
        assert_eq!(as_of("1970-01-01T00:01:00Z"), Ok(60));
        assert!(as_of("yesterday").is_err());
    }
}
