//! The icons `build` publishes: their names, their bytes as validated, and the safety rules
//! they are held to whatever the configuration says.

use std::path::Path;

use super::error::{io, BuildError};
use crate::diagnostics::Code;
use crate::manifest::MAX_ICON_BYTES;
use crate::rules::EntryReport;

/// The name an entry's icon is published under: `<id>.svg`, `<id>-light.svg`, ….
pub(super) fn published_icon(entry: &EntryReport, icon: &str) -> String {
    format!("{}{}", entry.id(), icon.trim_start_matches("icon"))
}

/// Icons are published byte for byte, so they must pass the safety rules even when the
/// policy silenced them (the configuration is part of an untrusted pull request).
pub(super) fn refuse_unsafe_icon(file: &str, bytes: &[u8]) -> Result<(), BuildError> {
    let text = String::from_utf8_lossy(bytes);
    let findings = crate::rules::check_icon(file, &text);
    let unsafe_icon = findings
        .iter()
        .find(|d| matches!(d.code, Code::IconUnsafe | Code::IconXml | Code::IconRoot));
    match unsafe_icon {
        Some(d) => Err(BuildError::UnsafeIcon {
            file: format!("{file}:{}:{}", d.line(), d.column()),
            message: format!("{} ({})", d.message, d.code),
        }),
        None => Ok(()),
    }
}

/// The entry's icons as validated (the text the rules read; from disk only if it was not kept).
pub(super) fn icon_files(entry: &EntryReport) -> Result<Vec<(String, Vec<u8>)>, BuildError> {
    let read = |icon: &String| {
        if let Some(text) = entry.file_text(icon) {
            return Ok(text.as_bytes().to_vec());
        }
        // The same refusals as the rules: no link, regular files only, capped.
        acp_registry_core::fs::read_capped(&entry.entry.path, Path::new(icon), MAX_ICON_BYTES)
            .map_err(|e| match e {
                acp_registry_core::fs::ReadError::Io(e) => e,
                other => std::io::Error::other(other.to_string()),
            })
            .map_err(io(&entry.entry.path.join(icon)))
    };
    entry
        .icons
        .iter()
        .map(|icon| Ok((icon.clone(), read(icon)?)))
        .collect()
}
