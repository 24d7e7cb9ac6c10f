//! Copy-ready install snippets, generated from the manifest's `distribution`: Zed
//! (`agent_servers` in `settings.json`), `JetBrains` (`acp.json`) and a plain command line.
//!
//! JSON is built with `serde_json` from structs (never by concatenating strings), shell words
//! are quoted for POSIX `sh` or PowerShell; the templates HTML-escape the result.

use std::collections::BTreeMap;

use serde::Serialize;

use super::labels::{label, PLATFORM_LABELS};
use super::urls::safe_url;
use crate::manifest::distribution::{ArchiveFormat, BinaryTarget, Distribution, Kind, Package};

/// Install instructions of one channel.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Install {
    /// The distribution the snippets use: `npx`, then `uvx`, then `binary`; None when the
    /// manifest has none.
    pub(crate) kind: Option<&'static str>,
    /// One sentence on what the snippets need.
    pub(crate) intro: String,
    /// Zed, `JetBrains` and command line, in that order.
    pub(crate) targets: Vec<Target>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Target {
    /// `zed`, `jetbrains` or `cli` (used in element ids).
    pub(crate) key: &'static str,
    pub(crate) title: &'static str,
    /// Where the snippet goes.
    pub(crate) hint: String,
    pub(crate) variants: Vec<Variant>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Variant {
    /// Which platforms the variant is for, when it is not for all.
    pub(crate) label: Option<String>,
    pub(crate) code: String,
}

/// One server entry of `agent_servers`. Field order is the output order.
#[derive(Serialize)]
struct Server {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    command: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
}

#[derive(Serialize)]
struct AgentServers {
    agent_servers: BTreeMap<String, Server>,
}

fn json_snippet(name: &str, server: Server) -> String {
    let doc = AgentServers {
        agent_servers: BTreeMap::from([(name.to_string(), server)]),
    };
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

pub(crate) use acp_registry_core::escape::shell_word as shell_quote;

/// Quote one word for PowerShell: bare when safe, else single-quoted with `'` doubled.
fn ps_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '\\' | '-' | ':' | '=')
        });
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "''"))
    }
}

pub(crate) fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `KEY=value ... command args` for `sh` (through `env` when a name is not a shell name).
fn sh_command(env: &BTreeMap<String, String>, words: &[String]) -> String {
    let mut parts = Vec::new();
    if env.keys().all(|k| is_env_name(k)) {
        // Shell assignments: the name bare, the value quoted.
        parts.extend(env.iter().map(|(k, v)| format!("{k}={}", shell_quote(v))));
    } else {
        // `env` takes NAME=value words, so the whole word may be quoted.
        parts.push("env".to_string());
        parts.extend(env.iter().map(|(k, v)| shell_quote(&format!("{k}={v}"))));
    }
    parts.push(shell_join(words));
    parts.join(" ")
}

/// A PowerShell string literal (always quoted: a bare word in expression mode is a command).
fn ps_literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// `$env:NAME = 'value'` lines, then `& .\cmd args`, for PowerShell in the unpacked folder.
fn ps_command(env: &BTreeMap<String, String>, cmd: &str, args: &[String]) -> String {
    let mut lines: Vec<String> = env
        .iter()
        .map(|(k, v)| {
            if is_env_name(k) {
                format!("$env:{k} = {}", ps_literal(v))
            } else {
                format!(
                    "[Environment]::SetEnvironmentVariable({}, {})",
                    ps_literal(k),
                    ps_literal(v)
                )
            }
        })
        .collect();
    let path = format!(".\\{}", cmd_path(cmd).replace('/', "\\"));
    let mut run = vec![format!("& {}", ps_quote(&path))];
    run.extend(args.iter().map(|a| ps_quote(a)));
    lines.push(run.join(" "));
    lines.join("\n")
}

/// The command of a binary target, run from the unpacked folder (Downloads table): POSIX
/// `sh` for macOS and Linux, PowerShell for Windows.
pub(crate) fn binary_command_line(platform: &str, target: &BinaryTarget) -> String {
    let cmd = target.cmd.clone().unwrap_or_default();
    let args = target.args.clone();
    let env = &target.env;
    if is_windows(platform) {
        return ps_command(env, &cmd, &args).replace('\n', "; ");
    }
    let mut words = vec![cmd];
    words.extend(args);
    sh_command(env, &words)
}

fn is_windows(platform: &str) -> bool {
    platform.starts_with("windows")
}

/// Folder name for unpacking: the agent name reduced to safe characters.
fn folder_name(agent_name: &str) -> String {
    let slug: String = agent_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let slug = slug
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    if slug.is_empty() {
        "agent".to_string()
    } else {
        slug
    }
}

/// `cmd` relative to the unpacked folder, without a leading `./` or `.\`.
fn cmd_path(cmd: &str) -> &str {
    cmd.strip_prefix("./")
        .or_else(|| cmd.strip_prefix(".\\"))
        .unwrap_or(cmd)
}

fn archive_file(url: &str) -> String {
    crate::manifest::distribution::archive_file_name(url, "archive").to_string()
}

fn is_sha256(s: &str) -> bool {
    use acp_registry_core::fs::digest::{is_sha256_hex, HexCase};
    is_sha256_hex(s, HexCase::Any)
}

/// What the steps of one platform download: the URL, its file name, the expected sha256.
struct Fetch<'a> {
    url: &'a str,
    file: &'a str,
    sha: Option<String>,
}

/// Download, check, unpack and run, for one platform.
fn binary_steps(folder: &str, platform: &str, target: &BinaryTarget) -> String {
    let Some(url) = target.archive.as_deref().and_then(safe_url) else {
        return "# No https download for this platform.".to_string();
    };
    let file = archive_file(&url);
    let fetch = Fetch {
        url: &url,
        file: &file,
        sha: target
            .sha256
            .clone()
            .filter(|s| is_sha256(s))
            .map(|s| s.to_ascii_lowercase()),
    };
    let cmd = target.cmd.clone().unwrap_or_default();
    let lines = if is_windows(platform) {
        powershell_steps(folder, &fetch, &cmd, target)
    } else {
        posix_steps(folder, platform, &fetch, &cmd, target)
    };
    lines.join("\n")
}

/// [`binary_steps`] in PowerShell.
fn powershell_steps(folder: &str, fetch: &Fetch, cmd: &str, target: &BinaryTarget) -> Vec<String> {
    let file = ps_quote(fetch.file);
    let mut lines = vec![
        format!(
            "New-Item -ItemType Directory -Force {} | Out-Null; Set-Location {}",
            ps_quote(folder),
            ps_quote(folder)
        ),
        format!(
            "Invoke-WebRequest -Uri {} -OutFile {file}",
            ps_quote(fetch.url)
        ),
    ];
    if let Some(sha) = &fetch.sha {
        lines.push(format!(
            "if ((Get-FileHash {file} -Algorithm SHA256).Hash -ne '{}') {{ throw 'checksum mismatch' }}",
            sha.to_ascii_uppercase()
        ));
    }
    match ArchiveFormat::of_file_name(fetch.file) {
        ArchiveFormat::Zip => lines.push(format!("Expand-Archive -Force {file} .")),
        ArchiveFormat::TarGz | ArchiveFormat::TarBz2 | ArchiveFormat::TarXz => {
            lines.push(format!("tar -xf {file}"));
        }
        ArchiveFormat::Raw => {}
    }
    lines.push(ps_command(&target.env, cmd, &target.args));
    lines
}

/// [`binary_steps`] in POSIX `sh`.
fn posix_steps(
    folder: &str,
    platform: &str,
    fetch: &Fetch,
    cmd: &str,
    target: &BinaryTarget,
) -> Vec<String> {
    let file = shell_quote(fetch.file);
    let mut lines = vec![
        format!(
            "mkdir -p {} && cd {}",
            shell_quote(folder),
            shell_quote(folder)
        ),
        format!("curl -fL -o {file} {}", shell_quote(fetch.url)),
    ];
    if let Some(sha) = &fetch.sha {
        let tool = if platform.starts_with("darwin") {
            "shasum -a 256 -c"
        } else {
            "sha256sum -c"
        };
        lines.push(format!(
            "echo {} | {tool}",
            shell_quote(&format!("{sha}  {}", fetch.file))
        ));
    }
    lines.push(match ArchiveFormat::of_file_name(fetch.file) {
        ArchiveFormat::Zip => format!("unzip -o {file}"),
        ArchiveFormat::TarGz | ArchiveFormat::TarBz2 | ArchiveFormat::TarXz => {
            format!("tar -xf {file}")
        }
        ArchiveFormat::Raw => format!("chmod +x {file}"),
    });
    let mut words = vec![format!("./{}", cmd_path(cmd).replace('\\', "/"))];
    words.extend(target.args.iter().cloned());
    lines.push(sh_command(&target.env, &words));
    lines
}

fn zed_server(command: String, args: Vec<String>, env: BTreeMap<String, String>) -> Server {
    Server {
        kind: Some("custom"),
        command,
        args,
        env,
    }
}

fn jetbrains_server(command: String, args: Vec<String>, env: BTreeMap<String, String>) -> Server {
    Server {
        kind: None,
        command,
        args,
        env,
    }
}

fn targets(
    zed: Vec<Variant>,
    jetbrains: Vec<Variant>,
    cli: Vec<Variant>,
    cli_hint: &str,
) -> Vec<Target> {
    vec![
        Target {
            key: "zed",
            title: "Zed",
            hint: "Add to agent_servers in Zed's settings.json:".to_string(),
            variants: zed,
        },
        Target {
            key: "jetbrains",
            title: "JetBrains IDEs",
            hint: "Add to ~/.jetbrains/acp.json:".to_string(),
            variants: jetbrains,
        },
        Target {
            key: "cli",
            title: "Command line",
            hint: cli_hint.to_string(),
            variants: cli,
        },
    ]
}

/// Snippets for one channel's `distribution`: a package runner when there is one (npx, then
/// uvx), else the binary downloads.
pub(crate) fn install(
    agent_name: &str,
    distribution: &Distribution,
    platforms: &[String],
) -> Install {
    for kind in [Kind::Npx, Kind::Uvx] {
        if let Some(package) = distribution.package(kind) {
            return package_install(agent_name, kind.as_str(), package);
        }
    }
    if distribution.binary.is_empty() {
        return Install {
            kind: None,
            intro: "This entry has no distribution to install.".to_string(),
            targets: Vec::new(),
        };
    }
    binary_install(agent_name, distribution, platforms)
}

/// Snippets that run a pinned package with `npx` or `uvx`.
fn package_install(agent_name: &str, kind: &'static str, package: &Package) -> Install {
    let mut args = Vec::new();
    if kind == "npx" {
        args.push("-y".to_string());
    }
    args.push(package.spec.clone().unwrap_or_default());
    args.extend(package.args.iter().cloned());
    let mut words = vec![kind.to_string()];
    words.extend(args.iter().cloned());
    let env = &package.env;
    let one = |code: String| vec![Variant { label: None, code }];
    let intro = if kind == "npx" {
        "Runs the pinned npm package with npx; needs Node.js."
    } else {
        "Runs the pinned Python package with uvx; needs uv."
    };
    Install {
        kind: Some(kind),
        intro: intro.to_string(),
        targets: targets(
            one(json_snippet(
                agent_name,
                zed_server(kind.to_string(), args.clone(), env.clone()),
            )),
            one(json_snippet(
                agent_name,
                jetbrains_server(kind.to_string(), args, env.clone()),
            )),
            one(sh_command(env, &words)),
            "Start it in a terminal:",
        ),
    }
}

/// How a binary target launches: on Windows or not, `cmd`, `args`, `env`. Platforms that
/// launch the same way share one editor snippet.
type Launch = (bool, String, Vec<String>, BTreeMap<String, String>);

/// Snippets for binary downloads: one command-line variant per platform, one editor
/// snippet per way of launching.
fn binary_install(agent_name: &str, distribution: &Distribution, platforms: &[String]) -> Install {
    let folder = folder_name(agent_name);
    let mut groups: Vec<(Launch, Vec<String>)> = Vec::new();
    let mut cli = Vec::new();
    for platform in platforms {
        let Some(target) = distribution.target(platform) else {
            continue;
        };
        let launch: Launch = (
            is_windows(platform),
            target.cmd.clone().unwrap_or_default(),
            target.args.clone(),
            target.env.clone(),
        );
        match groups.iter_mut().find(|(k, _)| *k == launch) {
            Some((_, members)) => members.push(platform.clone()),
            None => groups.push((launch, vec![platform.clone()])),
        }
        cli.push(Variant {
            label: Some(label(&PLATFORM_LABELS, platform).to_string()),
            code: binary_steps(&folder, platform, target),
        });
    }
    let (zed, jetbrains) = editor_variants(agent_name, &folder, groups);
    Install {
        kind: Some("binary"),
        intro: format!(
            "Download and unpack the archive for your platform (the command-line steps unpack \
             it into a folder named {folder}), then point your editor at the command inside it: \
             replace /path/to/{folder} with that folder."
        ),
        targets: targets(
            zed,
            jetbrains,
            cli,
            "Download, check, unpack and start it in a terminal:",
        ),
    }
}

/// The Zed and `JetBrains` variants of each launch group, labelled with its platforms.
fn editor_variants(
    agent_name: &str,
    folder: &str,
    groups: Vec<(Launch, Vec<String>)>,
) -> (Vec<Variant>, Vec<Variant>) {
    let mut zed = Vec::new();
    let mut jetbrains = Vec::new();
    for ((windows, cmd, args, env), members) in groups {
        let command = if windows {
            format!(
                "C:\\path\\to\\{folder}\\{}",
                cmd_path(&cmd).replace('/', "\\")
            )
        } else {
            format!("/path/to/{folder}/{}", cmd_path(&cmd).replace('\\', "/"))
        };
        let label = Some(
            members
                .iter()
                .map(|p| label(&PLATFORM_LABELS, p))
                .collect::<Vec<_>>()
                .join(", "),
        );
        zed.push(Variant {
            label: label.clone(),
            code: json_snippet(
                agent_name,
                zed_server(command.clone(), args.clone(), env.clone()),
            ),
        });
        jetbrains.push(Variant {
            label,
            code: json_snippet(agent_name, jetbrains_server(command, args, env)),
        });
    }
    (zed, jetbrains)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("--acp"), "--acp");
        assert_eq!(shell_quote("@scope/pkg@1.0.0"), "@scope/pkg@1.0.0");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(ps_quote("it's"), "'it''s'");
        assert_eq!(ps_literal("acp"), "'acp'");
    }

    #[test]
    fn env_prefix() {
        let env = BTreeMap::from([("A_B".to_string(), "1 2".to_string())]);
        assert_eq!(sh_command(&env, &["x".into()]), "A_B='1 2' x");
        let odd = BTreeMap::from([("A-B".to_string(), "1".to_string())]);
        assert_eq!(sh_command(&odd, &["x".into()]), "env A-B=1 x");
        assert_eq!(sh_command(&BTreeMap::new(), &["x".into()]), "x");
        let both = BTreeMap::from([
            ("MODE".to_string(), "a b".to_string()),
            ("A\"B".to_string(), "it's".to_string()),
        ]);
        assert_eq!(
            ps_command(&both, "./bin\\x.exe", &["--acp".into(), "a b".into()]),
            "[Environment]::SetEnvironmentVariable('A\"B', 'it''s')\n$env:MODE = 'a b'\n& .\\bin\\x.exe --acp 'a b'"
        );
    }
}
