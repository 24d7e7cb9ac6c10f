//! Reading registry files for the rules: through [`acp_registry_core::fs`] (no link followed, regular
//! files only, a size cap), each refusal or failure one finding naming the path.
//!
//! Links are refused, not resolved: a symbolic link anywhere in a registry (a file of an entry,
//! anything under `skill/`, the configuration, quarantine; an entry folder at the root is
//! `registry::discover`'s) is a `file-link` error and is never read, even when it points inside:
//! it can be retargeted later, git on Windows checks it out as text, and the output would publish
//! what no reviewer saw at that path. Only the `--registry` root may be a link. A hard link (a
//! regular file with more than one name) is `file-link` too: it brings in any file of the same
//! file system with nothing at the path to show it. FIFOs, sockets and devices are
//! `file-not-regular`; a path of the wrong kind (`agent.json/`, `skill` as a file) or an
//! unreadable one is `file-unreadable`, and the entry is still reported.

use std::path::Path;

use super::sink::Sink;
use crate::diagnostics::{Code, Diagnostic};
use acp_registry_core::fs::{self, ReadError};
use acp_registry_core::source::{SourceFile, Span};

/// Read `base/rel` through [`acp_registry_core::fs`] (no link followed, regular files only, at most
/// `limit` bytes), reporting every refusal as a finding on `display` (the shown `base/rel`).
pub(crate) fn read_text(
    base: &Path,
    rel: &str,
    display: &str,
    limit: u64,
    sink: &mut Sink,
) -> Option<String> {
    let Some(text) = read_text_if_present(base, rel, display, limit, sink) else {
        sink.push(read_failure(&ReadError::NotFound, display));
        return None;
    };
    text
}

/// [`read_text`] where absence is the caller's to report: `None` when `base/rel` does not
/// exist (one open instead of a look before it).
pub(crate) fn read_text_if_present(
    base: &Path,
    rel: &str,
    display: &str,
    limit: u64,
    sink: &mut Sink,
) -> Option<Option<String>> {
    Some(match fs::read_capped(base, Path::new(rel), limit) {
        Ok(bytes) => decode_utf8(bytes, display, sink),
        Err(ReadError::NotFound) => return None,
        Err(ReadError::Link { rel: link }) => {
            // Name the link itself, which may be a folder on the way to the file.
            let link = link.to_string_lossy().replace('\\', "/");
            let shown = match display.strip_suffix(rel) {
                Some(prefix) if !link.is_empty() => format!("{prefix}{link}"),
                _ => display.to_string(),
            };
            sink.push(link_finding(&shown));
            None
        }
        Err(error) => {
            sink.push(read_failure(&error, display));
            None
        }
    })
}

/// The finding for a path that could not be read.
pub(crate) fn read_failure(error: &ReadError, display: &str) -> Diagnostic {
    match error {
        ReadError::Link { .. } => link_finding(display),
        ReadError::NotRegular(special) => special_finding(display, *special),
        ReadError::HardLink { links } => Diagnostic::new(
            Code::FileLink,
            format!(
                "{display} is a hard link (the file has {links} names); links are never followed in a registry"
            ),
        )
        .in_file(display)
        .help("replace the hard link with a copy of the file"),
        ReadError::TooLarge { limit, reported } => {
            let size = reported.map_or("over".to_string(), |n| format!("{n} bytes, over"));
            Diagnostic::new(
                Code::FileTooLarge,
                format!("{display} is {size} the {} KiB limit", limit / 1024),
            )
            .in_file(display)
            .help("shrink the file; it is not parsed while over the limit")
        }
        ReadError::IsDir => Diagnostic::new(
            Code::FileUnreadable,
            format!("cannot read {display}: it is a folder, not a file"),
        )
        .in_file(display)
        .help("replace the folder with the file, or remove it"),
        ReadError::NotDir { rel } => Diagnostic::new(
            Code::FileUnreadable,
            format!(
                "cannot read {display}: `{}` is a file, not a folder",
                rel.display()
            ),
        )
        .in_file(display)
        .help("replace the file with a folder, or remove it"),
        _ => Diagnostic::new(
            Code::FileUnreadable,
            format!("cannot read {display}: {error}"),
        )
        .in_file(display)
        .help("make it readable by the user running acp-registry (check its permissions)"),
    }
}

/// The finding for a folder that could not be listed.
pub(crate) fn unlistable(display: &str, error: &std::io::Error) -> Diagnostic {
    Diagnostic::new(
        Code::FileUnreadable,
        format!("cannot read folder {display}: {error}"),
    )
    .in_file(display)
    .help("make the folder readable and listable by the user running acp-registry")
}

/// The finding for a path a registry may not hold at all: a link or a FIFO, socket or
/// device. `None` for regular files and folders.
pub(crate) fn refused(kind: fs::Kind, display: &str) -> Option<Diagnostic> {
    match kind {
        fs::Kind::Link => Some(link_finding(display)),
        fs::Kind::Special(special) => Some(special_finding(display, special)),
        fs::Kind::File | fs::Kind::Dir => None,
    }
}

fn link_finding(display: &str) -> Diagnostic {
    Diagnostic::new(
        Code::FileLink,
        format!("{display} is a symbolic link; links are never followed in a registry"),
    )
    .in_file(display)
    .help("replace the link with the file (or folder) itself")
}

fn special_finding(display: &str, special: fs::Special) -> Diagnostic {
    Diagnostic::new(
        Code::FileNotRegular,
        format!("{display} is {special}, not a regular file"),
    )
    .in_file(display)
    .help("replace it with a regular file, or remove it")
}

/// Decode UTF-8 (a BOM is tolerated and dropped), reporting the first bad byte.
pub(crate) fn decode_utf8(bytes: Vec<u8>, display: &str, sink: &mut Sink) -> Option<String> {
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.replace_range(..3, "");
            }
            Some(text)
        }
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let prefix = String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned();
            let source = SourceFile::new(display, prefix);
            sink.push(
                Diagnostic::new(
                    Code::NotUtf8,
                    format!("{display} is not valid UTF-8 (byte offset {valid})"),
                )
                .at(&source, Span::new(valid, valid))
                .help("re-save the file as UTF-8"),
            );
            None
        }
    }
}
