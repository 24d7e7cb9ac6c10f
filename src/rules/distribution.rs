//! Distribution: platforms, archives, commands, checksums, version pins, package specs,
//! environment and ACP-mode arguments. Used for `distribution` and `preview.distribution`.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::entry::ManifestDoc;
use super::package_spec::{package_basename, Ecosystem, Package};
use super::sink::Sink;
use super::versions::PreviewVersion;
use crate::diagnostics::{Code, Fix, FixEdit, PIN_DIGESTS_COMMAND};
use crate::manifest::distribution::{
    is_legacy_platform_key, platform_suggestion, ArchiveFormat, Written,
};
use crate::manifest::{escape_pointer, Node, PLATFORMS};

/// The manifest as clients would read it, with legacy platform keys moved under `binary`
/// (in `distribution` and `preview.distribution`).
pub(crate) fn normalized_json(root: &Node) -> Value {
    #[cfg(test)]
    NORMALIZED.with(|n| n.set(n.get() + 1));
    let mut value = root.to_json();
    for path in ["/distribution", "/preview/distribution"] {
        if let Some(Value::Object(dist)) = value.pointer_mut(path) {
            let legacy: Vec<String> = dist
                .keys()
                .filter(|k| is_legacy_platform_key(k))
                .cloned()
                .collect();
            if legacy.is_empty() {
                continue;
            }
            let mut moved = serde_json::Map::new();
            for key in legacy {
                if let Some(v) = dist.remove(&key) {
                    moved.insert(key, v);
                }
            }
            match dist.get_mut("binary") {
                Some(Value::Object(binary)) => binary.extend(moved),
                _ => {
                    dist.insert("binary".into(), Value::Object(moved));
                }
            }
        }
    }
    value
}

#[cfg(test)]
thread_local! {
    /// [`normalized_json`] calls on this thread: the counter test holds a check to one per
    /// entry.
    static NORMALIZED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many times [`normalized_json`] ran on this thread since the last call.
#[cfg(test)]
pub(crate) fn take_normalized_count() -> usize {
    NORMALIZED.with(std::cell::Cell::take)
}

pub(crate) fn check(doc: &ManifestDoc, sink: &mut Sink) {
    let Some(dist) = doc.root.get("distribution") else {
        return;
    };
    let expected = doc.root.get_str("version");
    check_distribution(doc, dist, "/distribution", expected, sink);
}

/// Every distribution rule on one distribution object; `expected` is the version pins must
/// equal (the root version, or the preview version).
pub(crate) fn check_distribution(
    doc: &ManifestDoc,
    dist: &Node,
    base: &str,
    expected: Option<&str>,
    sink: &mut Sink,
) {
    let written = Written::of(dist, base);
    for slot in written.binary.iter().filter(|s| s.legacy) {
        let (key, pointer) = (slot.platform, written.pointer(slot));
        sink.push(
            doc.at_key(
                Code::DistributionLegacy,
                &pointer,
                format!("platform `{key}` sits directly under `distribution` (the RFD's early form)"),
            )
            .help(format!(
                "move it into `\"binary\": {{ … }}`; it is normalised to `{base}/binary/{key}` in outputs"
            )),
        );
    }
    let expected = expected.and_then(PreviewVersion::parse).zip(expected);
    for slot in &written.binary {
        let pointer = written.pointer(slot);
        check_binary_target(doc, &pointer, slot.platform, slot.node, expected, sink);
    }
    if written.npx.is_none() && written.uvx.is_none() && !written.binary.is_empty() {
        check_coverage(doc, &written, sink);
    }
    if let Some(npx) = written.npx {
        check_package(
            doc,
            &format!("{base}/npx"),
            npx,
            Ecosystem::Npm,
            expected,
            sink,
        );
    }
    if let Some(uvx) = written.uvx {
        check_package(
            doc,
            &format!("{base}/uvx"),
            uvx,
            Ecosystem::PyPi,
            expected,
            sink,
        );
    }
}

fn check_coverage(doc: &ManifestDoc, written: &Written, sink: &mut Sink) {
    let present: Vec<&str> = written
        .binary
        .iter()
        .filter(|slot| PLATFORMS.contains(&slot.platform))
        .filter_map(|slot| slot.platform.split('-').next())
        .collect();
    let missing: Vec<&str> = sink
        .policy()
        .required_os
        .iter()
        .map(String::as_str)
        .filter(|os| !present.contains(os))
        .collect();
    if missing.is_empty() {
        return;
    }
    let pointer = if written.binary.iter().all(|slot| slot.legacy) {
        written.base.clone()
    } else {
        format!("{}/binary", written.base)
    };
    sink.push(
        doc.at_key(
            Code::PlatformCoverage,
            &pointer,
            format!("no binary build for {}", missing.join(", ")),
        )
        .help("add targets for the missing operating systems, or an npx/uvx distribution that runs everywhere"),
    );
}

fn check_binary_target(
    doc: &ManifestDoc,
    pointer: &str,
    key: &str,
    target: &Node,
    expected: Option<(PreviewVersion, &str)>,
    sink: &mut Sink,
) {
    if !PLATFORMS.contains(&key) {
        let mut d = doc.at_key(
            Code::PlatformUnknown,
            pointer,
            format!("unknown platform `{key}`"),
        );
        d = match platform_suggestion(key) {
            Some(right) => d
                .help(format!("use `{right}`"))
                .fix(Fix::new(pointer, FixEdit::RenameKey(right.into()))),
            None => d.help(format!("platforms are {}", PLATFORMS.join(", "))),
        };
        sink.push(d);
    }
    if let Some(archive) = target.get_str("archive") {
        check_archive(doc, &format!("{pointer}/archive"), archive, expected, sink);
    }
    if let Some(cmd) = target.get_str("cmd") {
        check_cmd(doc, &format!("{pointer}/cmd"), cmd, sink);
        if key.starts_with("windows-") {
            check_windows_suffix(doc, &format!("{pointer}/cmd"), cmd, sink);
        }
    }
    if target.as_object().is_some() && target.get("sha256").is_none() {
        check_sha256_missing(doc, pointer, key, sink);
    }
    check_args_and_env(doc, pointer, target, sink);
}

/// `sha256-missing`, at the severity `require_sha256` gives this entry.
fn check_sha256_missing(doc: &ManifestDoc, pointer: &str, key: &str, sink: &mut Sink) {
    let Some(severity) = sink.sha256_missing_severity() else {
        return;
    };
    let mut finding = doc
        .at_key(
            Code::Sha256Missing,
            pointer,
            format!("`{key}` does not pin a sha256 checksum"),
        )
        .help(format!(
            "run `{PIN_DIGESTS_COMMAND}` to pin it, or add `\"sha256\": \"<64 hex digits>\"` (`sha256sum` of the archive)"
        ));
    finding.severity = severity;
    sink.push(finding);
}

const INSTALLERS: [&str; 6] = [".dmg", ".pkg", ".deb", ".rpm", ".msi", ".appimage"];
const UNSUPPORTED_ARCHIVES: [&str; 9] = [
    ".7z", ".rar", ".tar", ".gz", ".bz2", ".xz", ".zst", ".tar.zst", ".lz",
];

/// The help of `archive-format`: the formats clients extract, from the one list.
fn supported_formats_help() -> String {
    let extensions: Vec<&str> = ArchiveFormat::extensions().collect();
    let (last, rest) = extensions.split_last().expect("formats are listed");
    format!(
        "publish a {} or {last} archive, or the raw executable",
        rest.join(", ")
    )
}

fn check_archive(
    doc: &ManifestDoc,
    pointer: &str,
    archive: &str,
    expected: Option<(PreviewVersion, &str)>,
    sink: &mut Sink,
) {
    let parsed = url::Url::parse(archive).ok();
    if let Some(problem) = super::metadata::url_problem(archive) {
        sink.push(
            doc.at(Code::ArchiveUrl, pointer, problem)
                .help("use the https URL of the pinned release asset"),
        );
    } else if archive.contains("/latest/") {
        sink.push(
            doc.at(
                Code::ArchiveUrl,
                pointer,
                "the archive URL points at a moving `/latest/` release",
            )
            .help("use the URL of the exact release, e.g. `…/releases/download/vX.Y.Z/…`"),
        );
    }
    let path = parsed.as_ref().map_or(archive, |u| u.path());
    let file = path.rsplit('/').next().unwrap_or_default().to_lowercase();
    if let Some(ext) = INSTALLERS.iter().find(|e| file.ends_with(*e)) {
        sink.push(
            doc.at(
                Code::ArchiveFormat,
                pointer,
                format!("`{ext}` installers are not supported"),
            )
            .help(supported_formats_help()),
        );
    } else if ArchiveFormat::of_file_name(&file) == ArchiveFormat::Raw {
        if let Some(ext) = UNSUPPORTED_ARCHIVES
            .iter()
            .rev()
            .find(|e| file.ends_with(*e))
        {
            sink.push(
                doc.at(
                    Code::ArchiveFormat,
                    pointer,
                    format!("`{ext}` archives are not supported by clients"),
                )
                .help(supported_formats_help()),
            );
        }
    }
    if let Some((want, want_text)) = expected {
        for found in url_versions(path) {
            if PreviewVersion::parse(&found).is_some_and(|v| v != want) {
                sink.push(
                    doc.at(
                        Code::VersionMismatch,
                        pointer,
                        format!(
                            "the archive URL is for version {found}, the manifest says {want_text}"
                        ),
                    )
                    .help("update the URL or the version so they agree"),
                );
                break;
            }
        }
    }
}

/// Versions a release URL path names: version-like path segments (`v1.2.3`, `1.2.3`,
/// `name-v1.2.3`, `name@1.2.3`, `1.2.3-<build>`), and npm tarball names (`/-/name-1.2.3.tgz`).
/// The file name itself is not read (it often embeds other numbers).
pub(crate) fn url_versions(path: &str) -> Vec<String> {
    static SEGMENT: OnceLock<Regex> = OnceLock::new();
    static TARBALL: OnceLock<Regex> = OnceLock::new();
    let segment = SEGMENT.get_or_init(|| {
        Regex::new(r"^(?:[A-Za-z0-9_.]*[A-Za-z_][-@]?)?v?(\d+\.\d+\.\d+)(-preview\.\d+)?(?:[-+][0-9A-Za-z.-]*)?$")
            .expect("valid regex")
    });
    let tarball = TARBALL.get_or_init(|| {
        Regex::new(r"/-/(?:[^/]*?)-(\d+\.\d+\.\d+(?:-preview\.\d+)?)\.tgz$").expect("valid regex")
    });
    let mut found = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for segment_text in &segments[..segments.len().saturating_sub(1)] {
        if let Some(c) = segment.captures(segment_text) {
            found.push(format!("{}{}", &c[1], c.get(2).map_or("", |m| m.as_str())));
        }
    }
    if let Some(c) = tarball.captures(path) {
        found.push(c[1].to_string());
    }
    found
}

fn check_cmd(doc: &ManifestDoc, pointer: &str, cmd: &str, sink: &mut Sink) {
    let normalized = cmd.replace('\\', "/");
    let problem = if normalized.starts_with('/') || normalized.starts_with("~") {
        Some("is an absolute path")
    } else if cmd.len() >= 2 && cmd.as_bytes()[1] == b':' && cmd.as_bytes()[0].is_ascii_alphabetic()
    {
        Some("is a drive path")
    } else if normalized.split('/').any(|part| part == "..") {
        Some("climbs out of the archive with `..`")
    } else if normalized.trim().is_empty() {
        Some("is empty")
    } else {
        None
    };
    if let Some(problem) = problem {
        let file = normalized.rsplit('/').next().unwrap_or_default();
        sink.push(
            doc.at(Code::CmdPath, pointer, format!("cmd `{cmd}` {problem}"))
                .help(format!(
                    "use the executable's path relative to the archive root, e.g. `./{}`",
                    if file.is_empty() || file == ".." {
                        "agent"
                    } else {
                        file
                    }
                )),
        );
    }
}

/// The suffixes Windows clients can launch.
const WINDOWS_SUFFIXES: [&str; 3] = [".exe", ".cmd", ".bat"];

/// `cmd-windows-suffix`: a Windows target names its executable by its full file name.
fn check_windows_suffix(doc: &ManifestDoc, pointer: &str, cmd: &str, sink: &mut Sink) {
    let lower = cmd.trim().to_ascii_lowercase();
    if lower.is_empty() || WINDOWS_SUFFIXES.iter().any(|s| lower.ends_with(s)) {
        return; // an empty cmd is `cmd-path`'s
    }
    sink.push(
        doc.at(
            Code::CmdWindowsSuffix,
            pointer,
            format!("Windows cmd `{cmd}` does not end in .exe, .cmd or .bat"),
        )
        .help(format!(
            "write the executable's file name as the archive holds it, e.g. `{}.exe`",
            cmd.trim()
        )),
    );
}

fn check_package(
    doc: &ManifestDoc,
    pointer: &str,
    target: &Node,
    ecosystem: Ecosystem,
    expected: Option<(PreviewVersion, &str)>,
    sink: &mut Sink,
) {
    check_args_and_env(doc, pointer, target, sink);
    let Some(spec) = target.get_str("package") else {
        return;
    };
    let package = Package::new(spec, ecosystem, expected);
    let pointer = format!("{pointer}/package");
    if let Some(d) = package.pin_problem(doc, &pointer) {
        sink.push(d);
    }
}

/// Environment variables clients drop or that change how a process starts or what it trusts.
pub(crate) fn reserved_env(name: &str) -> bool {
    const EXACT: [&str; 27] = [
        "PATH",
        "HOME",
        "USER",
        "SHELL",
        "TMPDIR",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "NODE_OPTIONS",
        "NODE_PATH",
        "NODE_EXTRA_CA_CERTS",
        "NODE_TLS_REJECT_UNAUTHORIZED",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "GIT_SSL_CAINFO",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "BASH_ENV",
        "ENV",
        "CI",
    ];
    const PREFIXES: [&str; 4] = ["DYLD_", "GITHUB_", "RUNNER_", "ACTIONS_"];
    let upper = name.to_uppercase();
    EXACT.contains(&upper.as_str()) || PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// A well-known agent CLI and the argument that selects ACP mode.
enum AcpMode {
    Flag(&'static [&'static str]),
    Subcommand,
}

fn well_known(program: &str) -> Option<(&'static str, AcpMode)> {
    let base = program
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(program)
        .trim_end_matches(".exe")
        .to_lowercase();
    Some(match base.as_str() {
        "gemini" | "gemini-cli" => ("gemini", AcpMode::Flag(&["--acp", "--experimental-acp"])),
        "opencode" | "opencode-ai" => ("opencode", AcpMode::Subcommand),
        "goose" => ("goose", AcpMode::Subcommand),
        "kimi" | "kimi-cli" => ("kimi", AcpMode::Subcommand),
        "openhands" | "openhands-ai" => ("openhands", AcpMode::Subcommand),
        "kiro" | "kiro-cli" => ("kiro", AcpMode::Subcommand),
        "qwen" | "qwen-code" => ("qwen", AcpMode::Flag(&["--acp", "--experimental-acp"])),
        "cline" => ("cline", AcpMode::Flag(&["--acp"])),
        "auggie" => ("auggie", AcpMode::Flag(&["--acp"])),
        "copilot-language-server" => ("copilot-language-server", AcpMode::Flag(&["--acp"])),
        _ => return None,
    })
}

/// The help of every `latest-tag` finding about an argument or a variable.
const PIN_EXACT: &str = "pin the exact version";

/// Whether an argument or a variable's value names a moving `latest` version.
fn follows_latest(text: &str) -> bool {
    text.contains("@latest") || text.contains("/latest/")
}

fn check_args_and_env(doc: &ManifestDoc, pointer: &str, target: &Node, sink: &mut Sink) {
    let args = target.get_strs("args");
    for (i, arg) in args.iter().enumerate() {
        if follows_latest(arg) {
            let message = format!("argument `{arg}` follows a moving latest version");
            let at = format!("{pointer}/args/{i}");
            sink.push(doc.at(Code::LatestTag, &at, message).help(PIN_EXACT));
        }
    }
    if let Some(env) = target.get("env") {
        check_env(doc, pointer, env, sink);
    }
    check_acp_mode(doc, pointer, target, &args, sink);
}

fn check_env(doc: &ManifestDoc, pointer: &str, env: &Node, sink: &mut Sink) {
    for member in env.unique_members() {
        let key = &member.key;
        let member_pointer = format!("{pointer}/env/{}", escape_pointer(key));
        if reserved_env(key) {
            sink.push(
                doc.at_key(
                    Code::EnvReserved,
                    &member_pointer,
                    format!("`{key}` is reserved: clients drop it or it would change how the agent starts"),
                )
                .help("remove it; configure the agent through its own variables or arguments"),
            );
        }
        if member.value.as_str().is_some_and(follows_latest) {
            let message = format!("`{key}` follows a moving latest version");
            sink.push(
                doc.at(Code::LatestTag, &member_pointer, message)
                    .help(PIN_EXACT),
            );
        }
    }
}

/// `acp-args-missing`: a well-known agent CLI launched without the argument selecting ACP.
fn check_acp_mode(doc: &ManifestDoc, pointer: &str, target: &Node, args: &[&str], sink: &mut Sink) {
    let program = target.get_str("cmd").map(str::to_string).or_else(|| {
        target
            .get_str("package")
            .map(|p| package_basename(p).to_string())
    });
    let Some((name, mode)) = program.as_deref().and_then(well_known) else {
        return;
    };
    let ok = match mode {
        AcpMode::Flag(flags) => args.iter().any(|a| {
            flags
                .iter()
                .any(|f| *a == *f || a.starts_with(&format!("{f}=")))
        }),
        AcpMode::Subcommand => args.first() == Some(&"acp"),
    };
    if ok {
        return;
    }
    let (what, fix) = match mode {
        AcpMode::Flag(flags) => (
            format!("the `{}` flag", flags[0]),
            format!("\"args\": [\"{}\"]", flags[0]),
        ),
        AcpMode::Subcommand => (
            "the `acp` subcommand".to_string(),
            "\"args\": [\"acp\"]".to_string(),
        ),
    };
    let at = if target.get("args").is_some() {
        format!("{pointer}/args")
    } else {
        pointer.to_string()
    };
    sink.push(
        doc.at(
            Code::AcpArgsMissing,
            &at,
            format!("{name} is launched without {what}; it would start its interactive terminal UI instead of speaking ACP"),
        )
        .help(format!("add {fix}")),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_versions_reads_tags_not_file_names() {
        assert_eq!(
            url_versions("/o/r/releases/download/v1.2.3/agent-9.9.9.tar.gz"),
            ["1.2.3"]
        );
        assert_eq!(
            url_versions("/lab/2026.07.20-8cc9c0b/darwin/arm64/x.tar.gz"),
            ["2026.07.20"]
        );
        assert_eq!(
            url_versions("/o/r/releases/download/rust-v0.4.0/x.zip"),
            ["0.4.0"]
        );
        assert_eq!(
            url_versions("/o/r/releases/download/2383.9/x.zip"),
            Vec::<String>::new()
        );
        assert_eq!(
            url_versions("/pkg/-/pkg-1.0.0-preview.2.tgz"),
            ["1.0.0-preview.2"]
        );
    }
}
