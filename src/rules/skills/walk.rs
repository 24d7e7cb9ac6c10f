//! One walk of a skill's folder: every regular file read once (through `fs`, capped),
//! links, special files and unreadable folders reported, none followed.

use std::collections::BTreeMap;
use std::path::Path;

use super::skill_dir::MAX_SKILL_BYTES;
use crate::rules::entry::{display_path, EntryDir};
use crate::rules::read::{read_failure, refused, unlistable};
use crate::rules::sink::Sink;
use acp_registry_core::fs::Kind;

/// What [`walk`] read: the regular files' total size, and their bytes (`rel` below the entry)
/// while that total stays within [`MAX_SKILL_BYTES`].
#[derive(Default)]
pub(super) struct Read {
    pub(super) size: u64,
    files: Vec<(String, Vec<u8>)>,
    /// Every regular file's path (`rel` below the entry), read or not.
    paths: Vec<String>,
    /// A file could not be read: the skill's files are incomplete.
    failed: bool,
}

impl Read {
    /// The files below `prefix`, relative to it; `None` when not all of them were read.
    /// Every regular file's path below `prefix`, relative to it, read or not.
    pub(super) fn paths_below(&self, prefix: &str) -> Vec<String> {
        self.paths
            .iter()
            .filter_map(|rel| rel.strip_prefix(prefix).map(str::to_owned))
            .collect()
    }

    pub(super) fn files_below(
        &mut self,
        prefix: &str,
        size: u64,
    ) -> Option<BTreeMap<String, Vec<u8>>> {
        if self.failed || size > MAX_SKILL_BYTES {
            return None;
        }
        let (below, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.files)
            .into_iter()
            .partition(|(rel, _)| rel.starts_with(prefix));
        self.files = rest;
        Some(
            below
                .into_iter()
                .map(|(rel, bytes)| (rel[prefix.len()..].to_owned(), bytes))
                .collect(),
        )
    }
}

/// The regular files under `dir` (`rel` below the entry), each read once (through `fs`,
/// capped) into `read`, reporting links, special files, files and folders that cannot be read;
/// none of them is followed or counted.
pub(super) fn walk(entry: &EntryDir, dir: &Path, rel: &str, sink: &mut Sink, read: &mut Read) {
    let children = match acp_registry_core::fs::list_dir(dir) {
        Ok(children) => children,
        Err(e) => {
            sink.push(unlistable(&display_path(entry, rel), &e));
            read.failed = true;
            return;
        }
    };
    for child in children {
        let child_rel = format!("{rel}/{}", child.name());
        let path = dir.join(&child.name);
        match child.kind {
            Kind::Dir => walk(entry, &path, &child_rel, sink, read),
            Kind::File => {
                read.paths.push(child_rel.clone());
                let len = std::fs::symlink_metadata(&path).map_or(0, |m| m.len());
                read.size += len;
                if read.size > MAX_SKILL_BYTES {
                    continue; // `skill-too-large`: nothing more is read.
                }
                let bytes = acp_registry_core::fs::read_capped(
                    &entry.path,
                    Path::new(&child_rel),
                    MAX_SKILL_BYTES,
                );
                match bytes {
                    Ok(bytes) => read.files.push((child_rel, bytes)),
                    Err(e) => {
                        sink.push(read_failure(&e, &display_path(entry, &child_rel)));
                        read.failed = true;
                    }
                }
            }
            kind => {
                if let Some(refused) = refused(kind, &display_path(entry, &child_rel)) {
                    sink.push(refused);
                }
                read.failed = true;
            }
        }
    }
}
