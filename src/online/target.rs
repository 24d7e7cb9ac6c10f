//! What the online rules ask the network about: the [`Target`]s of one manifest (archive
//! URLs, npm and `PyPI` packages), and whether an archive's pin is one the base revision had.

use std::collections::BTreeSet;

use super::options::Endpoints;
use crate::diagnostics::{Diagnostic, Severity};
use crate::manifest::agent::AgentView;
use crate::manifest::distribution::{Distribution, Kind};
use crate::rules::{package_name_and_pin, ManifestDoc};

/// One thing to ask the network about, in one manifest.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Archive(ArchiveTarget),
    Package(PackageTarget),
}

/// A binary target's archive URL.
#[derive(Debug, Clone)]
pub(crate) struct ArchiveTarget {
    pub(crate) platform: String,
    /// JSON pointer of the platform's target object.
    pub(crate) pointer: String,
    pub(crate) url: String,
    pub(crate) sha256: Option<String>,
}

/// An npx (`npm`) or uvx package spec.
#[derive(Debug, Clone)]
pub(crate) struct PackageTarget {
    pub(crate) npm: bool,
    pub(crate) pointer: String,
    pub(crate) name: String,
    pub(crate) version: Option<String>,
}

impl Target {
    pub(crate) fn host(&self, endpoints: &Endpoints) -> String {
        let url = match self {
            Target::Archive(archive) => &archive.url,
            Target::Package(package) if package.npm => &endpoints.npm,
            Target::Package(_) => &endpoints.pypi,
        };
        url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// The stable distribution's archives and packages of one manifest (preview artefacts are
/// not probed), leaving out values the offline rules already reported as errors.
pub(crate) fn collect(doc: &ManifestDoc, offline: &[Diagnostic]) -> Vec<Target> {
    let reported: BTreeSet<&str> = offline
        .iter()
        .filter(|d| d.severity == Severity::Error && d.file == doc.source.path)
        .filter_map(|d| d.pointer.as_deref())
        .collect();
    // The launch model's targets: only the keys the rules treat as targets are probed.
    let dist = AgentView::from_node(&doc.root).distribution;
    let mut out = Vec::new();
    for target in &dist.binary {
        let Some(url) = &target.archive else {
            continue;
        };
        if reported.contains(format!("{}/archive", target.pointer).as_str()) {
            continue;
        }
        out.push(Target::Archive(ArchiveTarget {
            platform: target.platform.clone(),
            pointer: target.pointer.clone(),
            url: url.clone(),
            sha256: target.sha256.as_deref().map(str::to_ascii_lowercase),
        }));
    }
    for package in [&dist.npx, &dist.uvx].into_iter().flatten() {
        let npm = package.kind == Kind::Npx;
        let pointer = format!("{}/package", package.pointer);
        let Some(spec) = &package.spec else {
            continue;
        };
        if reported.contains(pointer.as_str()) {
            continue;
        }
        let (name, pin) = package_name_and_pin(spec, npm);
        out.push(Target::Package(PackageTarget {
            npm,
            pointer,
            name: name.to_string(),
            version: pin.map(str::to_string),
        }));
    }
    out
}

/// Whether `target`'s pin is one the base revision already had: the manifest's `version`,
/// and the platform's `archive` and `sha256`, unchanged in `base` (the manifest's text there).
pub(crate) fn pin_established(doc: &ManifestDoc, target: &ArchiveTarget, base: &str) -> bool {
    let Ok(old) = crate::manifest::jsonc::parse(base) else {
        return false;
    };
    if old.get_str("version") != doc.root.get_str("version") {
        return false;
    }
    let Some(dist) = old.get("distribution") else {
        return false;
    };
    let pin = target.sha256.as_deref();
    Distribution::from_node(dist, "/distribution")
        .binary
        .iter()
        .any(|old| {
            old.platform == target.platform
                && old.archive.as_deref() == Some(target.url.as_str())
                && old
                    .sha256
                    .as_deref()
                    .map(str::to_ascii_lowercase)
                    .as_deref()
                    == pin
        })
}

/// The `quarantine.json` reason for an entry whose archives at `version` were re-uploaded:
/// the same for every platform, so one member covers them all.
pub(crate) fn retag_reason(version: &str) -> String {
    format!(
        "retagged: the {version} archives no longer match their sha256 pins (possible compromise; see `acp-registry explain archive-retagged`)"
    )
}
