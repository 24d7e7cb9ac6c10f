//! `acp-registry explain`: a rule's documentation (with what the registry's configuration
//! does to it), the code list, or `docs/rules.md`.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::CommandError;
use super::exit::{self, Exit};
use crate::diagnostics::{explain, rules_markdown, Code};
use crate::registry::config::CONFIG_FILE;
use crate::registry::{Config, RegistryError};
use crate::rules::Level;

/// `explain`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Options {
    /// The registry whose acp-registry.jsonc may change the rule [default: `registry`, when
    /// there is one].
    #[arg(long, value_name = "DIR")]
    pub registry: Option<PathBuf>,
    /// The rule code, e.g. `icon-color` (`--list` lists them).
    #[arg(add = clap_complete::ArgValueCandidates::new(code_candidates))]
    pub code: Option<String>,
    /// List every code with its default severity and summary.
    #[arg(long, conflicts_with = "markdown")]
    pub list: bool,
    /// Print the whole catalogue as Markdown (the source of docs/rules.md).
    #[arg(long)]
    pub markdown: bool,
}

/// Shell completion of `explain CODE`: every rule code, sorted, with its summary as help.
fn code_candidates() -> Vec<clap_complete::CompletionCandidate> {
    let mut codes: Vec<Code> = Code::ALL.to_vec();
    codes.sort_by_key(|code| code.as_str());
    codes
        .into_iter()
        .map(|code| {
            clap_complete::CompletionCandidate::new(code.as_str()).help(Some(code.summary().into()))
        })
        .collect()
}

impl Options {
    /// What the flags ask for: `--list`, else `--markdown`, else the code.
    pub fn request(&self) -> Request {
        match (self.list, self.markdown, self.code.clone()) {
            (true, _, _) => Request::List,
            (_, true, _) => Request::Markdown,
            (_, _, Some(code)) => Request::Code(code),
            (_, _, None) => Request::Nothing,
        }
    }
}

/// What `explain` was asked to print.
pub enum Request {
    /// The explanation of one code (as typed; checked when run).
    Code(String),
    /// Every code with its default severity and summary (`--list`).
    List,
    /// The whole catalogue as `docs/rules.md` (`--markdown`).
    Markdown,
    /// No code given: say how to find one.
    Nothing,
}

/// What `explain` prints when no code, `--list` or `--markdown` is given (exit 2).
const NO_CODE: &str = "name a rule code, e.g. `acp-registry explain icon-color`; `acp-registry explain --list` lists every code";

/// Prints what `options` asks for. `--registry`: the registry whose `acp-registry.jsonc` may
/// change the rule (when not given, `registry` if there is one); one without configuration
/// changes nothing, and the Markdown catalogue always shows defaults. An unknown code (the
/// nearest one suggested) or a `--registry` that is not a folder prints nothing.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    let registry = match options.registry.as_deref() {
        Some(named) if !named.exists() => return Err(RegistryError::Missing(named.into()).into()),
        Some(named) if !named.is_dir() => {
            return Err(RegistryError::NotAFolder(named.into()).into())
        }
        Some(named) => named,
        None => Path::new(crate::flags::DEFAULT_REGISTRY),
    };
    let text = match options.request() {
        Request::Code(name) => {
            let code = name.parse::<Code>()?;
            let mut text = explain(code);
            text.push_str(&configured(code, registry));
            text
        }
        Request::List => list(),
        Request::Markdown => rules_markdown(),
        Request::Nothing => return Err(CommandError::Usage(NO_CODE.into())),
    };
    out.write_all(text.as_bytes())?;
    Ok(exit::OK)
}

/// One line per code: code, default severity and summary in aligned columns.
fn list() -> String {
    let width = Code::ALL
        .iter()
        .map(|c| c.as_str().len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for c in Code::ALL {
        // Severity's Display ignores padding: pad its text.
        let severity = c.default_severity().to_string();
        let _ = writeln!(
            out,
            "{:<width$}  {severity:<7}  {}",
            c.as_str(),
            c.summary()
        );
    }
    out
}

/// What the registry's configuration does to `code`, if anything.
fn configured(code: Code, registry: &Path) -> String {
    if !registry.join(CONFIG_FILE).is_file() {
        return String::new();
    }
    let (config, _) = Config::load(registry);
    let mut lines = Vec::new();
    match config.policy.severity.get(&code) {
        Some(Level::Off) => lines.push("turned off".to_string()),
        Some(Level::On(severity)) => lines.push(format!("severity {severity}")),
        None if code == Code::Sha256Missing => lines.push(format!(
            "require_sha256 {}",
            config.policy.require_sha256.as_str()
        )),
        None => {}
    }
    let exempt: Vec<&str> = config
        .policy
        .exemptions
        .iter()
        .filter(|(_, codes)| codes.contains(&code))
        .map(|(id, _)| id.as_str())
        .collect();
    if !exempt.is_empty() {
        lines.push(format!("not reported for {}", exempt.join(", ")));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nIn {}: {} ({CONFIG_FILE}).\n",
        registry.display(),
        lines.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_code_is_a_usage_error_that_says_how_to_find_one() {
        let mut out = Vec::new();
        let error = run(&Options::default(), &mut out).expect_err("no code");
        assert!(matches!(error, CommandError::Usage(_)), "{error:?}");
        assert_eq!(
            error.to_string(),
            "name a rule code, e.g. `acp-registry explain icon-color`; \
             `acp-registry explain --list` lists every code"
        );
        assert!(out.is_empty());
    }
}
