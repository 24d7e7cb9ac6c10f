//! Reading a `matrix.json` or a shard's part, whoever wrote it: bounded (the file, the JSON
//! values it parses into, the rows and the texts they keep) and every row checked before it
//! counts as evidence (docs/format.md#verification-evidence). A forged or damaged part is
//! refused; `build --matrix` and `--changed-only` set a bad row aside, saying why.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use serde::Deserialize;

use super::{
    Matrix, Part, PartFile, Row, FORMAT_VERSION, MAX_AGENT_INFO, MAX_AGENT_INFO_VALUES,
    MAX_AUTH_METHODS, MAX_TEXT, PART_VERSION,
};
use crate::diagnostics::escape;
use crate::manifest::distribution::Kind;
use crate::manifest::names::is_valid_id;
use crate::net::json::MAX_VERSION_LEN;
use crate::verify::result::cannot_pass;
use crate::verify::session::{excerpt, json_values, KEPT_COMMANDS};
use acp_registry_core::acp::methods::{self, Stability};
use acp_registry_core::time::{format_utc, parse_iso_utc_seconds};

/// The largest `matrix.json` or part read.
pub(crate) const MAX_BYTES: u64 = 32 * 1024 * 1024;
/// The most JSON values one may hold, counted before parsing: the parsed document stays
/// within about 70 MB however the values are shaped (measured worst: nested one-element
/// arrays in `agent_info`, about 260 bytes a value), where a row takes about 60.
pub(crate) const MAX_VALUES: usize = 250_000;
/// The most rows a file, and the most jobs and entries a part, may list.
pub(crate) const MAX_ROWS: usize = 30_000;
/// How far past the reader's "now" a `verified` time may be: the clocks of the machines that
/// ran the shards and of the one reading differ a little, never by more.
pub(crate) const CLOCK_SKEW_SECONDS: i64 = 300;

#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub(crate) struct MatrixError {
    pub(crate) path: String,
    pub(crate) reason: String,
}

/// A row set aside, and why.
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) id: String,
    pub(crate) distribution: Kind,
    pub(crate) reason: String,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the row of `{}` ({}): {}",
            escape::terminal(&excerpt(&self.id)),
            self.distribution,
            self.reason
        )
    }
}

/// A `matrix.json` as read: the rows that count as evidence, and those set aside.
#[derive(Debug)]
pub(crate) struct Read {
    pub(crate) matrix: Matrix,
    pub(crate) refused: Vec<Refused>,
}

/// A document that may or may not be a part.
#[derive(Deserialize)]
struct Document {
    version: u64,
    part: Option<Part>,
    agents: Vec<Row>,
}

/// The document in `path` (capped, no links followed), its JSON values counted before it is
/// parsed, its versions and its row count checked.
fn document(path: &Path) -> Result<Document, MatrixError> {
    let err = |reason: String| MatrixError {
        path: path.display().to_string(),
        reason,
    };
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| err("not a file name".into()))?;
    let bytes = acp_registry_core::fs::read_capped(parent, Path::new(name), MAX_BYTES)
        .map_err(|e| err(e.to_string()))?;
    let values = json_values(&bytes);
    if values > MAX_VALUES {
        return Err(err(format!(
            "more than {MAX_VALUES} JSON values ({values}); matrix writes far fewer, so the file was edited or is damaged"
        )));
    }
    let document: Document =
        serde_json::from_slice(&bytes).map_err(|e| err(format!("not a matrix.json: {e}")))?;
    if document.version != FORMAT_VERSION {
        return Err(err(format!(
            "format version {} is not {FORMAT_VERSION}",
            document.version
        )));
    }
    if document.agents.len() > MAX_ROWS {
        return Err(err(format!(
            "{} rows, more than the {MAX_ROWS} read",
            document.agents.len()
        )));
    }
    Ok(document)
}

/// Read a `matrix.json` (a part reads as its rows) for use at `now`: a file that is not one
/// is refused; a row failing [`check_row`], or sharing its id and distribution with another
/// row, is set aside with the reason.
pub(crate) fn read(path: &Path, now: i64) -> Result<Read, MatrixError> {
    let document = document(path)?;
    let mut count: BTreeMap<(&str, Kind), usize> = BTreeMap::new();
    for row in &document.agents {
        *count
            .entry((row.id.as_str(), row.distribution))
            .or_default() += 1;
    }
    let twice: BTreeSet<(String, Kind)> = count
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|((id, kind), _)| (id.to_string(), kind))
        .collect();
    let (mut agents, mut refused) = (Vec::new(), Vec::new());
    for row in document.agents {
        let checked = if twice.contains(&(row.id.clone(), row.distribution)) {
            Err("another row is for the same agent and distribution: the file was edited or is damaged".to_string())
        } else {
            check_row(&row, now)
        };
        match checked {
            Ok(()) => agents.push(row),
            Err(reason) => refused.push(Refused {
                id: row.id,
                distribution: row.distribution,
                reason,
            }),
        }
    }
    Ok(Read {
        matrix: Matrix {
            version: FORMAT_VERSION,
            agents,
        },
        refused,
    })
}

/// Read the part one `matrix --shard K/N` wrote, for merging at `now`: refused whole when
/// anything in it is wrong (a row failing [`check_row`] included, named).
pub(crate) fn part(path: &Path, now: i64) -> Result<PartFile, MatrixError> {
    let err = |reason: String| MatrixError {
        path: path.display().to_string(),
        reason,
    };
    let document = document(path)?;
    let part = document.part.ok_or_else(|| {
        err("a whole matrix.json, not a shard's part (written without --shard)".into())
    })?;
    if part.version != PART_VERSION {
        return Err(err(format!(
            "part version {} is not {PART_VERSION}; run every shard with this version of acp-registry",
            part.version
        )));
    }
    let shard = part
        .shard
        .parse()
        .map_err(|e: String| err(format!("part.shard: {}", escape::terminal(&excerpt(&e)))))?;
    if part.jobs.len() > MAX_ROWS || part.entries.len() > MAX_ROWS {
        return Err(err(format!(
            "part lists more than {MAX_ROWS} jobs or entries"
        )));
    }
    if let Some(job) = part.jobs.iter().find(|j| {
        !is_valid_id(&j.id)
            || !plain_version(&j.version)
            || !hex(&j.manifest, 64)
            || !hex(&j.fingerprint, 16)
    }) {
        return Err(err(format!(
            "part.jobs: the job of `{}` ({}) is not as matrix writes one (a registry id, a version, hexadecimal digests); the part was edited or is damaged",
            escape::terminal(&excerpt(&job.id)),
            job.distribution
        )));
    }
    if let Some(id) = part.entries.iter().find(|id| !is_valid_id(id)) {
        return Err(err(format!(
            "part.entries: `{}` is not a registry id",
            escape::terminal(&excerpt(id))
        )));
    }
    let mut seen = BTreeSet::new();
    for row in &document.agents {
        let refused = |reason: String| {
            err(Refused {
                id: row.id.clone(),
                distribution: row.distribution,
                reason,
            }
            .to_string())
        };
        if !seen.insert((row.id.as_str(), row.distribution)) {
            return Err(refused(
                "a second row for the same agent and distribution: the part was edited or is damaged".into(),
            ));
        }
        check_row(row, now).map_err(refused)?;
    }
    Ok(PartFile {
        path: path.display().to_string(),
        shard,
        part,
        agents: document.agents,
    })
}

/// Why `row` cannot count as evidence at `now`, if it cannot: a field `matrix` never writes
/// so (an id that is no registry id, a malformed version, fingerprint or time, a method it
/// does not probe, more or longer texts than it keeps), a `verified` time after `now` plus
/// [`CLOCK_SKEW_SECONDS`], or a `status` its details contradict.
pub(crate) fn check_row(row: &Row, now: i64) -> Result<(), String> {
    if !is_valid_id(&row.id) {
        return Err("`id` is not a registry id".into());
    }
    if !plain_version(&row.version) {
        return Err(format!(
            "`version` is empty, longer than {MAX_VERSION_LEN} bytes or holds control characters"
        ));
    }
    if !hex(&row.fingerprint, 16) {
        return Err("`fingerprint` is not 16 lowercase hexadecimal digits".into());
    }
    check_verified(&row.verified, now)?;
    check_details(row)?;
    check_status(row)
}

/// A version as a manifest may give one: not empty, at most [`MAX_VERSION_LEN`] bytes, no
/// control characters.
fn plain_version(version: &str) -> bool {
    !version.is_empty()
        && version.len() <= MAX_VERSION_LEN
        && !version.chars().any(char::is_control)
}

/// `len` lowercase hexadecimal digits.
fn hex(text: &str, len: usize) -> bool {
    text.len() == len
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `verified`: written as `matrix` writes it (`2026-03-01T12:00:00Z`), and not in the future.
fn check_verified(text: &str, now: i64) -> Result<(), String> {
    let Some(at) = parse_iso_utc_seconds(text).filter(|at| format_utc(*at) == text) else {
        return Err(format!(
            "`verified` is `{}`, not a UTC time written as 2026-03-01T12:00:00Z",
            escape::terminal(&excerpt(text))
        ));
    };
    if at > now.saturating_add(CLOCK_SKEW_SECONDS) {
        return Err(format!(
            "`verified` is {text}, after the time it is read at ({}) by more than the {} minutes allowed for clock skew: no launch is dated in the future",
            format_utc(now),
            CLOCK_SKEW_SECONDS / 60
        ));
    }
    Ok(())
}

/// What the agent said, within what `matrix` keeps and probes.
fn check_details(row: &Row) -> Result<(), String> {
    let probed: BTreeSet<String> = std::iter::once("session/new".to_string())
        .chain(methods::probed_session_methods())
        .collect();
    if let Some(method) = row.methods.keys().find(|m| !probed.contains(*m)) {
        return Err(format!(
            "`methods` has `{}`, which matrix does not probe",
            escape::terminal(&excerpt(method))
        ));
    }
    let mut unstable = BTreeSet::new();
    if let Some(method) = row
        .unstable_methods
        .iter()
        .find(|m| methods::stability(m) != Some(Stability::Unstable) || !unstable.insert(*m))
    {
        return Err(format!(
            "`unstable_methods` has `{}`, not an unstable method of the catalogue or listed twice",
            escape::terminal(&excerpt(method))
        ));
    }
    let long = |text: &String| text.len() > MAX_TEXT;
    if row.auth_methods.len() > MAX_AUTH_METHODS
        || row.auth_methods.iter().any(|a| {
            long(&a.id)
                || long(&a.name)
                || long(&a.kind)
                || a.meta_kinds.len() > 2
                || a.meta_kinds.iter().any(|k| k != "agent" && k != "terminal")
        })
        || row.commands.len() > KEPT_COMMANDS
        || row.commands.iter().any(long)
    {
        return Err(format!(
            "more than {MAX_AUTH_METHODS} auth methods or {KEPT_COMMANDS} commands, a text longer than {MAX_TEXT} bytes or `meta_kinds` other than `agent` and `terminal`: not what matrix keeps"
        ));
    }
    if row
        .agent_info
        .as_ref()
        .is_some_and(|info| !super::keeps_agent_info(info))
    {
        return Err(format!(
            "`agent_info` is longer than the {MAX_AGENT_INFO} bytes or {MAX_AGENT_INFO_VALUES} JSON values matrix keeps"
        ));
    }
    if row.protocol_version.is_some() && !row.methods.contains_key("session/new") {
        return Err("`methods` has no `session/new`, which matrix sends every agent that answered `initialize`".into());
    }
    Ok(())
}

/// `status`: `passed` or `failed`, and never `passed` where the details decide a failure
/// ([`cannot_pass`], the rule `verify` applies).
fn check_status(row: &Row) -> Result<(), String> {
    match row.status.as_str() {
        "failed" => Ok(()),
        "passed" => match cannot_pass(row.protocol_version) {
            Some(why) => Err(format!(
                "`status` is `passed`, but its details say the launch failed: {why}"
            )),
            None => Ok(()),
        },
        other => Err(format!(
            "`status` is `{}`, not `passed` or `failed`",
            escape::terminal(&excerpt(other))
        )),
    }
}
