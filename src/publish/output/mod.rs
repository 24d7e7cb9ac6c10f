//! The output folder `build` and `site` replace: the tool's ownership manifest
//! (`.acp-registry-output.json`), the checks before replacing a folder (overlap with the
//! registry, ownership, removability), the atomic replacement and the `--check` comparison.
//!
//! - `ownership`: the manifest, written streamed and read back;
//! - `destination`: where an output may go (overlap with the registry, ownership,
//!   removability);
//! - `staging`: writing a [`Tree`] into a staging folder and swapping it in;
//! - `check`: `--check`, a fresh build compared with the folder file by file;
//! - `read`: reading the folder without following links, and showing its paths;
//! - `tree`: [`Tree`] and [`FileSink`], the files of a build as they are produced;
//! - `testing`: fixtures for the tests of these steps.
//!
//! The output folder may be a previous run's, a user's, or (in CI) part of an untrusted pull
//! request: it is read without following links, opened without blocking, and replaced only
//! when every path in it is one this tool wrote and nobody changed since.
//!
//! We replace only what we wrote: a folder is replaced when it is empty, or when every path in it
//! is listed in its manifest with an unchanged sha256 (or lies in a sub-folder with a valid
//! manifest of its own, so `site` may replace `dist/site/`), and `access(2)` says every path can
//! be removed; otherwise exit 2 listing the paths. `SHA256SUMS` lists only published files, not
//! the manifests (the two cannot list each other). `--out` and `--registry` are compared with
//! links resolved: the same folder, an output inside the registry (except `<registry>/dist`) or
//! a registry inside the output is refused; the output is written at the resolved path, so a
//! link named as `--out` is kept. Staging (`staging`) writes every file through one
//! `fs::atomic::Batch` and swaps the tree in with one `renameat2(RENAME_EXCHANGE)`; a failure
//! leaves the old output.

mod check;
mod destination;
mod ownership;
mod read;
mod staging;
#[cfg(test)]
mod testing;
mod tree;

pub(crate) use check::compare;
pub(crate) use destination::{check_destination, refuse_overlap};
pub(crate) use ownership::{write_ownership_manifest, OWNERSHIP_FILE};
pub(crate) use staging::write_atomically;
pub(crate) use tree::{FileSink, Tree};
