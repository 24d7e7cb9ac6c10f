//! Package specs of `npx` and `uvx` distributions: splitting a spec into name, extras and
//! version pin, the npm and `PyPI` name rules, and the one finding about a spec's shape and pin
//! (`package-spec`, `package-unpinned`, `latest-tag`, `version-mismatch`).

use std::sync::OnceLock;

use regex::Regex;

use super::entry::ManifestDoc;
use super::versions::PreviewVersion;
use crate::diagnostics::{Code, Diagnostic};

/// Which registry a package spec names a package of.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Ecosystem {
    /// npm (`npx`).
    Npm,
    /// `PyPI` (`uvx`).
    PyPi,
}

/// An npx or uvx package spec split into name, extras (uvx: the text inside `[…]`) and
/// version pin.
struct PackageSpec<'a> {
    name: &'a str,
    extras: Option<&'a str>,
    pin: Option<&'a str>,
}

fn split_npm(spec: &str) -> PackageSpec<'_> {
    // `@scope/name@1.2.3`: the version separator is the last `@` that is not the first char.
    match spec[1.min(spec.len())..].rfind('@') {
        Some(i) => PackageSpec {
            name: &spec[..i + 1],
            extras: None,
            pin: Some(&spec[i + 2..]),
        },
        None => PackageSpec {
            name: spec,
            extras: None,
            pin: None,
        },
    }
}

/// `name[extra,…]==X.Y.Z` or `name[extra,…]@X.Y.Z`; an unclosed `[` stays in the name (and
/// makes it invalid).
fn split_pypi(spec: &str) -> PackageSpec<'_> {
    let (requirement, pin) = match spec.split_once("==").or_else(|| spec.split_once('@')) {
        Some((requirement, pin)) => (requirement, Some(pin)),
        None => (spec, None),
    };
    let extras = requirement
        .split_once('[')
        .and_then(|(name, rest)| Some((name, rest.strip_suffix(']')?)));
    PackageSpec {
        name: extras.map_or(requirement, |(name, _)| name),
        extras: extras.map(|(_, extras)| extras),
        pin,
    }
}

/// Name and version pin of an npx (`npm`) or uvx package spec, as the rules read it.
pub(crate) fn package_name_and_pin(spec: &str, npm: bool) -> (&str, Option<&str>) {
    let parsed = if npm {
        split_npm(spec)
    } else {
        split_pypi(spec)
    };
    (parsed.name, parsed.pin)
}

fn valid_npm_name(name: &str) -> bool {
    static NAME: OnceLock<Regex> = OnceLock::new();
    NAME.get_or_init(|| {
        Regex::new(r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$").expect("valid regex")
    })
    .is_match(name)
        && name.len() <= 214
}

fn valid_pypi_name(name: &str) -> bool {
    static NAME: OnceLock<Regex> = OnceLock::new();
    NAME.get_or_init(|| {
        Regex::new(r"^(?i:[a-z0-9]|[a-z0-9][a-z0-9._-]*[a-z0-9])$").expect("valid regex")
    })
    .is_match(name)
}

/// A range, a bad extra or a bad package name: the message, and a help when the default
/// ("pin the exact version: …") does not fit.
fn spec_shape_problem(
    spec: &str,
    parsed: &PackageSpec,
    ecosystem: Ecosystem,
) -> Option<(String, Option<String>)> {
    let ranges = ["<", ">", "~=", "!=", ","];
    let in_range = |part: &str| ranges.iter().any(|op| part.contains(op));
    if ecosystem == Ecosystem::PyPi && (in_range(parsed.name) || parsed.pin.is_some_and(in_range)) {
        return Some((format!("`{spec}` is a version range, not a pin"), None));
    }
    if let Some(bad) = parsed
        .extras
        .and_then(|e| e.split(',').find(|extra| !valid_pypi_name(extra)))
    {
        return Some((
            format!("`{bad}` in `{spec}` is not a valid extra name"),
            Some(
                "extras are PyPI names separated by commas, without spaces: `pkg[acp,cli]==X.Y.Z`"
                    .into(),
            ),
        ));
    }
    let (valid, registry, help) = match ecosystem {
        Ecosystem::Npm => (
            valid_npm_name(parsed.name),
            "npm",
            "npm names are lowercase: `name` or `@scope/name`, then `@X.Y.Z`",
        ),
        Ecosystem::PyPi => (
            valid_pypi_name(parsed.name),
            "PyPI",
            "PyPI names are letters, digits, `.`, `_` and `-`, optionally `[extras]`, then `==X.Y.Z`",
        ),
    };
    (!valid).then(|| {
        (
            format!("`{}` is not a valid {registry} package name", parsed.name),
            Some(help.to_string()),
        )
    })
}

/// An npx or uvx package spec and the version the manifest expects it to pin.
pub(super) struct Package<'a> {
    spec: &'a str,
    ecosystem: Ecosystem,
    parsed: PackageSpec<'a>,
    expected: Option<(PreviewVersion, &'a str)>,
}

impl<'a> Package<'a> {
    pub(super) fn new(
        spec: &'a str,
        ecosystem: Ecosystem,
        expected: Option<(PreviewVersion, &'a str)>,
    ) -> Self {
        let parsed = match ecosystem {
            Ecosystem::Npm => split_npm(spec),
            Ecosystem::PyPi => split_pypi(spec),
        };
        Self {
            spec,
            ecosystem,
            parsed,
            expected,
        }
    }

    fn tool(&self) -> &'static str {
        match self.ecosystem {
            Ecosystem::Npm => "npx",
            Ecosystem::PyPi => "uvx",
        }
    }

    /// The spec pinned to `version`, as the help suggests it.
    fn pinned(&self, version: &str) -> String {
        let name = self.parsed.name;
        match self.ecosystem {
            Ecosystem::Npm => format!("{name}@{version}"),
            Ecosystem::PyPi => {
                let extras = self
                    .parsed
                    .extras
                    .map(|e| format!("[{e}]"))
                    .unwrap_or_default();
                format!("{name}{extras}=={version}")
            }
        }
    }

    /// "pin the exact version: `…`", with the version the manifest expects.
    fn pin_help(&self) -> String {
        let want = self.expected.map_or("X.Y.Z", |(_, t)| t);
        format!("pin the exact version: `{}`", self.pinned(want))
    }

    /// The one finding about the shape of the spec and its pin, if any.
    pub(super) fn pin_problem(&self, doc: &ManifestDoc, pointer: &str) -> Option<Diagnostic> {
        let spec = self.spec;
        if let Some((message, help)) = spec_shape_problem(spec, &self.parsed, self.ecosystem) {
            let help = help.unwrap_or_else(|| self.pin_help());
            return Some(doc.at(Code::PackageSpec, pointer, message).help(help));
        }
        let Some(pin) = self.parsed.pin else {
            let want = self.expected.map_or("X.Y.Z", |(_, t)| t);
            let message = format!("{} package `{spec}` has no version pin", self.tool());
            let help = format!("pin it: `{}`", self.pinned(want));
            return Some(doc.at(Code::PackageUnpinned, pointer, message).help(help));
        };
        if pin.eq_ignore_ascii_case("latest") {
            let message = format!("`{spec}` follows the moving `latest` tag");
            return Some(
                doc.at(Code::LatestTag, pointer, message)
                    .help(self.pin_help()),
            );
        }
        let Some(found) = PreviewVersion::parse(pin) else {
            let message = format!("`{pin}` in `{spec}` is {}", not_exact(pin));
            return Some(
                doc.at(Code::PackageSpec, pointer, message)
                    .help(self.pin_help()),
            );
        };
        let (want, want_text) = self.expected?;
        (found != want).then(|| {
            let message = format!("{} pins {pin}, the manifest says {want_text}", self.tool());
            let help = format!("use `{}`, or change the version", self.pinned(want_text));
            doc.at(Code::VersionMismatch, pointer, message).help(help)
        })
    }
}

/// Why a pin that is not X.Y.Z is refused.
fn not_exact(pin: &str) -> &'static str {
    if pin.starts_with(['^', '~', '>', '<', '=', '*']) || pin.contains(' ') || pin.contains('x') {
        "a version range"
    } else {
        "not an exact X.Y.Z version"
    }
}

/// `@scope/name@1.2.3` → `name`; `pkg[extra]==1.2` → `pkg`.
pub(super) fn package_basename(spec: &str) -> &str {
    let name = split_npm(spec).name;
    let name = name.split(['=', '[']).next().unwrap_or(name);
    name.rsplit('/').next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_specs_split_scope_aware() {
        let s = split_npm("@google/gemini-cli@0.51.0");
        assert_eq!((s.name, s.pin), ("@google/gemini-cli", Some("0.51.0")));
        let s = split_npm("@google/gemini-cli");
        assert_eq!((s.name, s.pin), ("@google/gemini-cli", None));
        assert_eq!(package_basename("@qwen-code/qwen-code@0.20.1"), "qwen-code");
    }

    #[test]
    fn pypi_specs_split_extras_from_name_and_pin() {
        let s = split_pypi("fast-agent-acp[acp,cli]==0.9.20");
        assert_eq!(
            (s.name, s.extras, s.pin),
            ("fast-agent-acp", Some("acp,cli"), Some("0.9.20"))
        );
        let s = split_pypi("kimi-cli[acp]@1.2.3");
        assert_eq!(
            (s.name, s.extras, s.pin),
            ("kimi-cli", Some("acp"), Some("1.2.3"))
        );
        let s = split_pypi("pkg[acp==1.0.0");
        assert_eq!((s.name, s.extras, s.pin), ("pkg[acp", None, Some("1.0.0")));
        assert_eq!(package_basename("kimi-cli[acp]==1.2.3"), "kimi-cli");
    }
}
