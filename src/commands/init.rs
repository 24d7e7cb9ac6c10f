//! `acp-registry init [DIR]`: the files a new registry repository needs (the configuration,
//! the registry workflow, the pre-commit hooks, a CONTRIBUTING guide), written all or none,
//! never over anything; then the setup checklist. The workflow template is also rendered for
//! this repository's own `.github/workflows/registry.yml` ([`workflow`]), so the two cannot
//! drift.

mod identity;

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use super::display::{display_root, join_display};
use super::error::CommandError;
use super::exit::{self, Exit};
use super::template::fill;
use crate::diagnostics::escape;
use crate::registry::config::CONFIG_FILE;
use acp_registry_core::fs::{self, Kind, ReadError};

const WORKFLOW: &str = include_str!("../../templates/init/registry.yml");
const CONFIG: &str = include_str!("../../templates/init/acp-registry.jsonc");
const PRE_COMMIT: &str = include_str!("../../templates/init/pre-commit-config.yaml");
const CONTRIBUTING: &str = include_str!("../../templates/init/CONTRIBUTING.md");

/// This tool's repository (Cargo.toml `repository`): the action, the hooks, the docs.
pub(crate) const REPOSITORY_URL: &str = env!("CARGO_PKG_REPOSITORY");
/// The release `init` refers to: the one running it.
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The header lines of acp-registry's own rendering of the workflow.
const CHECKOUT_ORIGIN: &str = "#
# This copy runs acp-registry's own bundled registry: templates/init/registry.yml rendered with
# the action of the checked-out commit (`uses: ./`, `version: source`). Edit the template, then
# regenerate it: ACP_REGISTRY_REGENERATE=1 cargo test --test registry own_registry_workflow";
/// The branch published when neither `--default-branch` nor `.git/HEAD` names one.
const FALLBACK_BRANCH: &str = "main";

/// What `init` writes and where; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Writes <registry>/acp-registry.jsonc, .github/workflows/registry.yml, \
.pre-commit-config.yaml and CONTRIBUTING.md, or nothing when one exists (exit 2), then prints the \
setup checklist."
)]
#[allow(clippy::doc_markdown)] // The field docs are `--help` text, written for users.
pub struct Options {
    /// The repository folder (created when missing).
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// The registry root inside DIR: `registry` (what every command assumes), or `.` for entries
    /// at the repository root.
    #[arg(long, value_name = "DIR", default_value = crate::flags::DEFAULT_REGISTRY)]
    pub registry: PathBuf,
    /// The branch the workflow publishes [default: the branch DIR/.git/HEAD names, else main].
    #[arg(long, value_name = "BRANCH")]
    pub default_branch: Option<String>,
    /// The registry's name: the site's title, header and <h1> (`registry.name`) [default:
    /// asked on a terminal, else a placeholder to fill in].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The https URL the registry's files are served under (`base_url`): the public URL of
    /// the bucket folder the workflow publishes to, e.g.
    /// https://agents.example.com/registry/v1/latest [default: asked on a terminal, else a
    /// placeholder to fill in].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
}

/// How the workflow installs acp-registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Install {
    /// The published action at this release: `<owner>/<name>@v<version>`.
    Release,
    /// The action of the checked-out commit (`./`), built from source: this repository's
    /// own workflow.
    Checkout,
}

/// The values the registry workflow is rendered with.
#[derive(Debug, Clone)]
pub struct Workflow<'a> {
    /// `REGISTRY_DIR`: the registry root in the repository (`registry`, `.`).
    pub registry_dir: &'a str,
    /// The branch pushes to which are published.
    pub default_branch: &'a str,
    /// Where the action comes from.
    pub install: Install,
}

/// Why `init` wrote nothing (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("--registry `{0}` must be a relative path inside DIR made of plain names (letters, digits, `.`, `_`, `-`), e.g. `registry`, or `.` for entries at the repository root")]
    /// `--registry` is absolute, leaves DIR or has unusual characters.
    Registry(String),
    #[error("--default-branch `{0}` is not a plain branch name (letters, digits, `.`, `_`, `-`, `/`), e.g. `main`")]
    /// The branch name could not be written into the workflow safely.
    Branch(String),
    #[error("--name: {0}")]
    /// `--name` (or the answer) cannot name a registry.
    Name(String),
    #[error("--base-url: {0}")]
    /// `--base-url` (or the answer) is not an https URL the registry can be served under.
    BaseUrl(String),
    #[error("init wrote nothing, because these exist already (it never overwrites):\n{}\nmove them away, or run init in an empty folder and merge its files by hand", .0.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
    /// Files (or folders in their place) that exist, as shown.
    Exists(Vec<String>),
    #[error("`{0}` is not a folder; name the repository folder (or a new one) as DIR")]
    /// DIR exists and is not a folder.
    NotAFolder(String),
    #[error("init wrote nothing, because `{0}` is a symbolic link: init never writes through a link below DIR (it could point anywhere); replace it with a real folder, or remove it")]
    /// A file or folder on the way to one below DIR is a link (as shown).
    Link(String),
    #[error("cannot write `{path}`: {source}")]
    /// Creating a folder or writing a file failed; what was written is removed again.
    Io {
        /// The path as shown.
        path: String,
        /// The failure.
        source: ReadError,
    },
    #[error(
        "a template of init does not fill ({0}); this is a bug of acp-registry, please report it"
    )]
    /// A template of `templates/init/` is broken.
    Template(String),
}

/// `owner/name` of this tool's GitHub repository.
fn repository_slug() -> &'static str {
    REPOSITORY_URL.trim_start_matches("https://github.com/")
}

/// The registry workflow (`templates/init/registry.yml`) rendered with `values`.
pub fn workflow(values: &Workflow) -> Result<String, InitError> {
    let action = match values.install {
        Install::Release => format!("{}@v{VERSION}", repository_slug()),
        Install::Checkout => "./".to_string(),
    };
    let (with, origin) = match values.install {
        Install::Release => (String::new(), String::new()),
        // Built from the checked-out commit: the action and the tool it tests are one.
        Install::Checkout => (
            "with:\n  version: source".to_string(),
            CHECKOUT_ORIGIN.to_string(),
        ),
    };
    fill(WORKFLOW, &|key| match key {
        "registry_dir" => Some(values.registry_dir.to_string()),
        "default_branch" => Some(values.default_branch.to_string()),
        "action" => Some(action.clone()),
        "action_with" => Some(with.clone()),
        "origin" => Some(origin.clone()),
        _ => None,
    })
    .map_err(InitError::Template)
}

/// The registry root as the workflow and later commands name it: `.` or `a/b`, refused when
/// it could leave DIR or needs quoting anywhere it is written.
fn registry_dir(path: &Path) -> Result<String, InitError> {
    let refused = || InitError::Registry(path.display().to_string());
    let plain = |name: &str| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
            && !name.starts_with('-')
    };
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::Normal(name) => match name.to_str() {
                Some(name) if plain(name) && name != ".." => parts.push(name),
                _ => return Err(refused()),
            },
            _ => return Err(refused()),
        }
    }
    Ok(if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    })
}

/// `--default-branch`, else the branch `.git/HEAD` of `dir` names, else `main`.
fn default_branch(options: &Options) -> Result<String, InitError> {
    let plain = |name: &str| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
            && !name.starts_with(['-', '/', '.'])
            && !name.contains("..")
    };
    if let Some(branch) = &options.default_branch {
        return if plain(branch) {
            Ok(branch.clone())
        } else {
            Err(InitError::Branch(branch.clone()))
        };
    }
    let head = fs::read_capped(&options.dir, Path::new(".git/HEAD"), 1024).ok();
    let named = head
        .as_deref()
        .and_then(|bytes| std::str::from_utf8(bytes).ok())
        .and_then(|text| text.trim().strip_prefix("ref: refs/heads/"))
        .filter(|branch| plain(branch))
        .map(str::to_string);
    Ok(named.unwrap_or_else(|| FALLBACK_BRANCH.to_string()))
}

/// ` --registry DIR` for the commands `init` prints or writes, empty for the default root.
fn registry_flag(registry_dir: &str) -> String {
    if registry_dir == crate::flags::DEFAULT_REGISTRY {
        String::new()
    } else {
        format!(" --registry {registry_dir}")
    }
}

/// The registry's name and base URL, when given or answered (checked).
#[derive(Debug, Clone, Default)]
pub(crate) struct Identity {
    name: Option<String>,
    base_url: Option<String>,
}

/// `--name` and `--base-url`, checked; each one missing is asked for when standard input and
/// standard error are terminals, and left to a placeholder otherwise.
fn identity(options: &Options) -> Result<Identity, CommandError> {
    use std::io::IsTerminal;
    let mut out = Identity {
        name: options
            .name
            .as_deref()
            .map(identity::check_name)
            .transpose()
            .map_err(InitError::Name)?,
        base_url: options
            .base_url
            .as_deref()
            .map(identity::check_base_url)
            .transpose()
            .map_err(InitError::BaseUrl)?,
    };
    let asking = (out.name.is_none() || out.base_url.is_none())
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal();
    if asking {
        let (stdin, mut stderr) = (std::io::stdin(), std::io::stderr());
        let mut input = stdin.lock();
        writeln!(
            stderr,
            "Press Enter to leave a value to fill in later in {CONFIG_FILE}."
        )?;
        if out.name.is_none() {
            let question = "Registry name (the site's title, e.g. Acme Agent Registry)";
            out.name = identity::ask(question, identity::check_name, &mut input, &mut stderr)?;
        }
        if out.base_url.is_none() {
            let question = "Base URL the registry's files are served under (https://…)";
            out.base_url =
                identity::ask(question, identity::check_base_url, &mut input, &mut stderr)?;
        }
    }
    Ok(out)
}

/// The files `init` writes, by path inside DIR, sorted.
pub(crate) fn files(
    registry_dir: &str,
    default_branch: &str,
    id: &Identity,
) -> Result<Vec<(String, String)>, InitError> {
    let flag = registry_flag(registry_dir);
    let validate_args = if flag.is_empty() {
        String::new()
    } else {
        format!("args: [--registry, {registry_dir}]")
    };
    let value = |key: &str| match key {
        "registry_dir" => Some(registry_dir.to_string()),
        "registry_flag" => Some(flag.clone()),
        "entry" => Some(join_display(root(registry_dir), "my-agent")),
        "validate_args" => Some(validate_args.clone()),
        "repository_url" => Some(REPOSITORY_URL.to_string()),
        "version" => Some(VERSION.to_string()),
        "registry" => Some(identity::registry_member(id.name.as_deref())),
        "base_url" => Some(identity::base_url_member(id.base_url.as_deref())),
        _ => None,
    };
    let workflow = workflow(&Workflow {
        registry_dir,
        default_branch,
        install: Install::Release,
    })?;
    let filled = |template| fill(template, &value).map_err(InitError::Template);
    let mut files = vec![
        (".github/workflows/registry.yml".to_string(), workflow),
        (".pre-commit-config.yaml".to_string(), filled(PRE_COMMIT)?),
        ("CONTRIBUTING.md".to_string(), filled(CONTRIBUTING)?),
        (
            join_display(root(registry_dir), CONFIG_FILE),
            filled(CONFIG)?,
        ),
    ];
    files.sort();
    Ok(files)
}

/// `registry_dir` as a prefix of paths: `.` is none.
fn root(registry_dir: &str) -> &str {
    if registry_dir == "." {
        ""
    } else {
        registry_dir
    }
}

/// Write every file, or none when one of them (or a non-folder in the place of a folder on
/// the way) exists; then print what was created and the setup checklist.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    let registry = registry_dir(&options.registry)?;
    let branch = default_branch(options)?;
    let id = identity(options)?;
    let files = files(&registry, &branch, &id)?;
    let shown_dir = display_root(&options.dir);
    // DIR is the user's choice: a link to a folder is fine.
    if options.dir.exists() && !options.dir.is_dir() {
        return Err(InitError::NotAFolder(options.dir.display().to_string()).into());
    }
    let shown = |rel: &str| join_display(&shown_dir, rel);
    for (rel, _) in &files {
        if let Err(ReadError::Link { rel }) = fs::no_link_below(&options.dir, Path::new(rel)) {
            let link = super::display::slash_path(&rel);
            return Err(InitError::Link(shown(&link)).into());
        }
    }
    let conflicts: Vec<String> = files
        .iter()
        .filter(|(rel, _)| is_taken(&options.dir, rel))
        .map(|(rel, _)| shown(rel))
        .collect();
    if !conflicts.is_empty() {
        return Err(InitError::Exists(conflicts).into());
    }
    write_all(&options.dir, &files, &shown)?;
    for (rel, _) in &files {
        writeln!(out, "created {}", escape::terminal(&shown(rel)))?;
    }
    let text = checklist(&shown_dir, &registry, &branch, &id);
    out.write_all(escape::terminal(&text).as_bytes())?;
    Ok(exit::OK)
}

/// Whether `rel` exists below `dir`, or something that is not a folder is where one of its
/// folders belongs.
fn is_taken(dir: &Path, rel: &str) -> bool {
    let mut path = dir.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        path.push(part);
        match fs::kind(&path) {
            Ok(None) => return false,
            Ok(Some(Kind::Dir)) if i + 1 < parts.len() => {}
            _ => return true,
        }
    }
    true
}

/// Create the folders and files, each file new and whole; on a failure remove what this run
/// created (and only that) and report the path.
fn write_all(
    dir: &Path,
    files: &[(String, String)],
    shown: &dyn Fn(&str) -> String,
) -> Result<(), InitError> {
    let mut created = Vec::new();
    create(dir, files, &mut created).map_err(|(path, source)| {
        for (done, is_dir) in created.iter().rev() {
            let _ = if *is_dir {
                std::fs::remove_dir(done)
            } else {
                std::fs::remove_file(done)
            };
        }
        let rel = path.strip_prefix(dir).unwrap_or(&path);
        InitError::Io {
            path: shown(&super::display::slash_path(rel)),
            source,
        }
    })
}

/// Create each missing folder and each file, recording them in `created` (path, is a folder).
fn create(
    dir: &Path,
    files: &[(String, String)],
    created: &mut Vec<(PathBuf, bool)>,
) -> Result<(), (PathBuf, ReadError)> {
    for (rel, text) in files {
        let path = dir.join(rel);
        let mut folders: Vec<&Path> = path.ancestors().skip(1).collect();
        folders.reverse();
        for folder in folders {
            if folder.as_os_str().is_empty() || folder.exists() {
                continue;
            }
            std::fs::create_dir(folder).map_err(|e| (folder.to_path_buf(), ReadError::Io(e)))?;
            created.push((folder.to_path_buf(), true));
        }
        fs::write_new(&path, text.as_bytes()).map_err(|e| (path.clone(), e))?;
        created.push((path, false));
    }
    Ok(())
}

/// What to set up on GitHub, and the command to run next.
fn checklist(dir: &str, registry: &str, branch: &str, id: &Identity) -> String {
    let config = join_display(dir, &join_display(root(registry), CONFIG_FILE));
    let flag = registry_flag(registry);
    let cd = if dir.is_empty() {
        String::new()
    } else {
        format!("cd {} && ", acp_registry_core::escape::shell_word(dir))
    };
    let base_url = match &id.base_url {
        Some(url) => format!(
            "`base_url` in {config}:\n     {url}\n     (serve that bucket's <prefix>/latest folder there)."
        ),
        None => format!(
            "`base_url` in {config}: the public URL of that bucket's\n     <prefix>/latest folder (a TODO until then; `validate` warns base-url-public)."
        ),
    };
    let name = if id.name.is_some() {
        String::new()
    } else {
        format!(
            "\nThe registry has no name yet: set `registry.name` in {config} (the site's title)."
        )
    };
    format!(
        "\
The registry is `{registry}`; with no agents yet `acp-registry validate{flag}` and `build{flag}` pass.
The workflow checks pull requests and publishes pushes to `{branch}` (--default-branch names another).{name}

Set up on GitHub, in the repository's Settings:
  1. Pages: Source \"GitHub Actions\" (the publish job deploys the site).
  2. Secrets and variables > Actions: the secrets REGISTRY_S3_ENDPOINT, REGISTRY_S3_BUCKET,
     REGISTRY_S3_ACCESS_KEY_ID and REGISTRY_S3_SECRET_ACCESS_KEY of the S3-compatible bucket
     the registry files are published to (without them only the site is deployed); the
     variables REGISTRY_S3_REGION (default `auto`) and REGISTRY_S3_PREFIX (default
     `registry/v1`) when yours differ.
  3. {base_url}
  4. The secret REGISTRY_UPDATE_TOKEN (a GitHub App token, or a fine-grained token with
     contents and pull-requests write), so the nightly update pull requests run the checks.
     Without it the update and quarantine jobs open their pull requests with the workflow's
     own token, which needs Actions > General > Workflow permissions: \"Allow GitHub Actions
     to create and approve pull requests\" (and the checks do not run on those pull requests).
  5. Branches: protect `{branch}`, requiring the checks \"Validate the changed entries\" and
     \"Archives, packages and launches of the changed entries\".
  6. A public repository, or paid features on a private one: the pull request check uploads
     its findings to code scanning (GitHub Advanced Security on a private repository), the
     publish job attests every published file (artifact attestations: GitHub Enterprise Cloud
     on a private repository) and Pages needs a paid plan there; on a private repository
     without them remove the steps \"Upload to code scanning\" and \"Attest every published
     file\" from the workflow.

next: add the first agent
  {cd}acp-registry new <id> --npx PKG{flag}
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_path_is_plain_and_inside_dir() {
        let dir = |p: &str| registry_dir(Path::new(p)).ok();
        assert_eq!(dir("registry").as_deref(), Some("registry"));
        assert_eq!(dir("./registry/").as_deref(), Some("registry"));
        assert_eq!(dir(".").as_deref(), Some("."));
        assert_eq!(dir("a/b").as_deref(), Some("a/b"));
        for refused in ["../x", "/abs", "a b", "${{x}}", "-x", "a/../b"] {
            assert_eq!(dir(refused), None, "{refused}");
        }
    }

    #[test]
    fn the_repository_is_this_crates_github_repository() {
        assert!(REPOSITORY_URL.starts_with("https://github.com/"));
        assert_eq!(repository_slug().split('/').count(), 2);
    }

    #[test]
    fn the_configuration_states_the_defaults_and_every_key() {
        let (_, text) = files("registry", "main", &Identity::default())
            .unwrap()
            .into_iter()
            .find(|(rel, _)| rel.ends_with(CONFIG_FILE))
            .unwrap();
        let source = acp_registry_core::source::SourceFile::new(CONFIG_FILE, text.as_str());
        let (config, findings) = crate::registry::Config::parse(source);
        assert!(findings.is_empty(), "{findings:?}");
        let defaults = crate::registry::Config::default();
        assert_eq!(config.base_url, defaults.base_url);
        assert_eq!(config.publish_quarantined, defaults.publish_quarantined);
        assert_eq!(config.update_min_age_days, defaults.update_min_age_days);
        assert_eq!(config.verify_max_age_days, defaults.verify_max_age_days);
        assert_eq!(
            format!("{:?}", config.outputs),
            format!("{:?}", defaults.outputs)
        );
        assert_eq!(
            format!("{:?}", config.policy),
            format!("{:?}", defaults.policy)
        );
        for key in crate::registry::Config::keys()
            .iter()
            .filter(|k| **k != "$schema")
        {
            assert!(
                text.contains(&format!("\"{key}\":")),
                "{key} is not explained"
            );
        }
    }

    #[test]
    fn pre_commit_passes_the_registry_only_when_it_is_not_the_default() {
        let hooks = |registry: &str| {
            files(registry, "main", &Identity::default())
                .unwrap()
                .into_iter()
                .find(|(rel, _)| rel == ".pre-commit-config.yaml")
                .unwrap()
                .1
        };
        assert!(!hooks("registry").contains("args"));
        assert!(hooks(".").contains("args: [--registry, .]"));
        assert!(hooks(".").contains(&format!("rev: v{VERSION}")));
    }
}
