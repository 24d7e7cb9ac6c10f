//! Copy-ready install snippets, generated from the manifest's `distribution`: Zed
//! (`agent_servers` in settings.json), JetBrains (`acp.json`) and a plain command line.
//!
//! JSON is built with serde_json from structs (never by concatenating strings), shell words
//! are quoted for POSIX `sh` or PowerShell; the templates HTML-escape the result.

use std::collections::BTreeMap;

use serde::Serialize;

use super::model::PLATFORM_LABELS;
use crate::manifest::distribution::{ArchiveFormat, BinaryTarget, Distribution, Kind};

/// Install instructions of one channel.
#[derive(Debug, Clone, Serialize)]
pub struct Install {
    /// The distribution the snippets use: `npx`, then `uvx`, then `binary`; None when the
    /// manifest has none.
    pub kind: Option<&'static str>,
    /// One sentence on what the snippets need.
    pub intro: String,
    /// Zed, JetBrains and command line, in that order.
    pub targets: Vec<Target>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// `zed`, `jetbrains` or `cli` (used in element ids).
    pub key: &'static str,
    pub title: &'static str,
    /// Where the snippet goes.
    pub hint: String,
    pub variants: Vec<Variant>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    /// Which platforms the variant is for, when it is not for all.
    pub label: Option<String>,
    pub code: String,
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

/// Quote one word for POSIX `sh`: bare when it only has safe characters, else in single
/// quotes.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '@' | '%' | '+' | '=' | ':' | ',' | '.' | '/' | '-')
        });
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

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

pub fn shell_join(words: &[String]) -> String {
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
pub fn binary_command_line(platform: &str, target: &BinaryTarget) -> String {
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

fn platform_label(key: &str) -> String {
    PLATFORM_LABELS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(key.to_string(), |(_, l)| l.to_string())
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
    s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// Download, check, unpack and run, for one platform.
fn binary_steps(folder: &str, platform: &str, target: &BinaryTarget) -> String {
    let cmd = target.cmd.clone().unwrap_or_default();
    let args = target.args.clone();
    let env = &target.env;
    let archive = target.archive.as_deref().and_then(super::safe_url);
    let sha = target
        .sha256
        .clone()
        .filter(|s| is_sha256(s))
        .map(|s| s.to_ascii_lowercase());
    let mut lines = Vec::new();
    let Some(url) = archive else {
        lines.push("# No https download for this platform.".to_string());
        return lines.join("\n");
    };
    let file = archive_file(&url);
    let format = ArchiveFormat::of_file_name(&file);
    if is_windows(platform) {
        lines.push(format!(
            "New-Item -ItemType Directory -Force {} | Out-Null; Set-Location {}",
            ps_quote(folder),
            ps_quote(folder)
        ));
        lines.push(format!(
            "Invoke-WebRequest -Uri {} -OutFile {}",
            ps_quote(&url),
            ps_quote(&file)
        ));
        if let Some(sha) = &sha {
            lines.push(format!(
                "if ((Get-FileHash {} -Algorithm SHA256).Hash -ne '{}') {{ throw 'checksum mismatch' }}",
                ps_quote(&file),
                sha.to_ascii_uppercase()
            ));
        }
        match format {
            ArchiveFormat::Zip => {
                lines.push(format!("Expand-Archive -Force {} .", ps_quote(&file)));
            }
            ArchiveFormat::TarGz | ArchiveFormat::TarBz2 | ArchiveFormat::TarXz => {
                lines.push(format!("tar -xf {}", ps_quote(&file)));
            }
            ArchiveFormat::Raw => {}
        }
        lines.push(ps_command(env, &cmd, &args));
    } else {
        lines.push(format!(
            "mkdir -p {} && cd {}",
            shell_quote(folder),
            shell_quote(folder)
        ));
        lines.push(format!(
            "curl -fL -o {} {}",
            shell_quote(&file),
            shell_quote(&url)
        ));
        if let Some(sha) = &sha {
            let tool = if platform.starts_with("darwin") {
                "shasum -a 256 -c"
            } else {
                "sha256sum -c"
            };
            lines.push(format!(
                "echo {} | {tool}",
                shell_quote(&format!("{sha}  {file}"))
            ));
        }
        lines.push(match format {
            ArchiveFormat::Zip => format!("unzip -o {}", shell_quote(&file)),
            ArchiveFormat::TarGz | ArchiveFormat::TarBz2 | ArchiveFormat::TarXz => {
                format!("tar -xf {}", shell_quote(&file))
            }
            ArchiveFormat::Raw => format!("chmod +x {}", shell_quote(&file)),
        });
        let mut words = vec![format!("./{}", cmd_path(&cmd).replace('\\', "/"))];
        words.extend(args);
        lines.push(sh_command(env, &words));
    }
    lines.join("\n")
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

/// Snippets for one channel's `distribution`.
pub fn install(agent_name: &str, distribution: &Distribution, platforms: &[String]) -> Install {
    for kind in [Kind::Npx, Kind::Uvx] {
        let Some(package) = distribution.package(kind) else {
            continue;
        };
        let pkg = package.spec.clone().unwrap_or_default();
        let extra = package.args.clone();
        let env = package.env.clone();
        let kind = kind.as_str();
        let mut args = Vec::new();
        if kind == "npx" {
            args.push("-y".to_string());
        }
        args.push(pkg);
        args.extend(extra);
        let mut words = vec![kind.to_string()];
        words.extend(args.iter().cloned());
        let one = |code: String| vec![Variant { label: None, code }];
        let (intro, cli_hint) = if kind == "npx" {
            (
                "Runs the pinned npm package with npx; needs Node.js.",
                "Start it in a terminal:",
            )
        } else {
            (
                "Runs the pinned Python package with uvx; needs uv.",
                "Start it in a terminal:",
            )
        };
        return Install {
            kind: Some(kind),
            intro: intro.to_string(),
            targets: targets(
                one(json_snippet(
                    agent_name,
                    zed_server(kind.to_string(), args.clone(), env.clone()),
                )),
                one(json_snippet(
                    agent_name,
                    jetbrains_server(kind.to_string(), args.clone(), env.clone()),
                )),
                one(sh_command(&env, &words)),
                cli_hint,
            ),
        };
    }
    if distribution.binary.is_empty() {
        return Install {
            kind: None,
            intro: "This entry has no distribution to install.".to_string(),
            targets: Vec::new(),
        };
    }
    let folder = folder_name(agent_name);
    // Platforms that launch the same way share one editor snippet.
    type Key = (bool, String, Vec<String>, BTreeMap<String, String>);
    let mut groups: Vec<(Key, Vec<String>)> = Vec::new();
    let mut cli = Vec::new();
    for platform in platforms {
        let Some(target) = distribution.target(platform) else {
            continue;
        };
        let key: Key = (
            is_windows(platform),
            target.cmd.clone().unwrap_or_default(),
            target.args.clone(),
            target.env.clone(),
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(platform.clone()),
            None => groups.push((key, vec![platform.clone()])),
        }
        cli.push(Variant {
            label: Some(platform_label(platform)),
            code: binary_steps(&folder, platform, target),
        });
    }
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
                .map(|p| platform_label(p))
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
