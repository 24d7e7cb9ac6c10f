//! `--shard K/N`: which part of the selected entries one run takes, and `matrix merge`, which
//! joins the parts again.
//!
//! The scheme: the selected ids are ranked by the SHA-256 of the id (ties, impossible in
//! practice, by the id) and shard `k` (0-based) takes the ranks `r` with `r·N/M = k` (integer
//! division, `M` selected entries): contiguous runs of the hash order. That gives
//!
//! - **balance within one**: every shard holds `⌊M/N⌋` or `⌈M/N⌉` entries;
//! - **stability**: an entry's place depends on its id's hash, never on where the id sorts in
//!   the registry, and adding (or removing) one entry moves at most one other entry across
//!   each of the `N − 1` boundaries, `N − 1` in all, each to a neighbouring shard when no
//!   shard is empty (a boundary `⌈k·M/N⌉` moves by at most one rank, and so does every
//!   rank).
//!
//! A pure hash (`sha256(id) mod N`) would move nothing but leaves shards uneven (10 entries
//! in 4 shards can come out 5, 3, 2, 0); dealing the hash order round-robin is even but moves
//! about half the entries on every addition. Contiguous ranges keep both properties within a
//! bound, so each shard's cache (keyed by its shard) stays warm from one night to the next.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

use super::matrix::{Matrix, PartFile, SelectedJob, FORMAT_VERSION};
use crate::diagnostics::escape;
use crate::manifest::distribution::Kind;

pub(super) mod spec;

pub(crate) use spec::check_count;
pub use spec::Shard;

/// The shard (0-based) of each id, in the order given: contiguous runs of the hash order
/// (see the module documentation).
pub(crate) fn assign(ids: &[String], count: usize) -> Vec<usize> {
    let mut order: Vec<(Vec<u8>, &str, usize)> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| (Sha256::digest(id.as_bytes()).to_vec(), id.as_str(), n))
        .collect();
    order.sort_unstable();
    let mut shards = vec![0; ids.len()];
    for (rank, (_, _, n)) in order.iter().enumerate() {
        shards[*n] = rank * count / ids.len();
    }
    shards
}

/// How many of `selected` entries shard `index` (0-based) of `count` holds.
pub(crate) fn size(selected: usize, index: usize, count: usize) -> usize {
    let start = |k: usize| (k * selected).div_ceil(count);
    start(index + 1) - start(index)
}

/// The ids of each shard, in registry order, for `--list-shards`: `ceil(M / size)` shards,
/// at most `max`, never more than the entries, at least one (an empty matrix is no matrix).
pub(crate) fn plan(ids: &[String], max: usize, size: usize) -> Vec<Vec<String>> {
    let count = ids.len().div_ceil(size.max(1)).clamp(1, max.max(1));
    let mut shards = vec![Vec::new(); count];
    for (id, shard) in ids.iter().zip(assign(ids, count)) {
        shards[shard].push(id.clone());
    }
    shards
}

/// What identifies a selection: the SHA-256 over each selected job's id, kind, version,
/// manifest digest and quarantine state, one line each in plan order. Parts agree on it
/// exactly when they split the same selection of the same registry revision.
pub(crate) fn selection_digest<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut hasher = Sha256::new();
    for line in lines {
        hasher.update(line.as_bytes());
        hasher.update(b"\n");
    }
    format!(
        "sha256:{}",
        acp_registry_core::fs::digest::hex(&hasher.finalize())
    )
}

/// Why parts cannot be merged.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MergeError {
    #[error("no part to merge: name the matrix.json of each shard")]
    NoParts,
    #[error("{second} and {first} {what}; merge only the parts of one run")]
    Mismatch {
        first: String,
        second: String,
        what: String,
    },
    #[error("{second} and {first} {what}: each shard may be merged once")]
    Overlap {
        first: String,
        second: String,
        what: String,
    },
    #[error("{path}: {what}; the part was edited or is damaged")]
    Forged { path: String, what: String },
}

/// The merged matrix, and the shards no part was given for with how many entries each holds.
#[derive(Debug)]
pub(crate) struct Merged {
    pub(crate) matrix: Matrix,
    pub(crate) count: usize,
    pub(crate) missing: Vec<(Shard, usize)>,
}

/// The whole selection as its parts list it: each id's shard (0-based), and each job.
struct Selection<'a> {
    shard_of: BTreeMap<&'a str, usize>,
    jobs: BTreeMap<(&'a str, Kind), &'a SelectedJob>,
}

impl<'a> Selection<'a> {
    /// The selection of `part`, once its `jobs` are found to be what `selection` digests
    /// and `selected` counts; ids in plan order, every job of an id together.
    fn of(part: &'a PartFile) -> Result<Selection<'a>, MergeError> {
        let forged = |what: String| MergeError::Forged {
            path: part.path.clone(),
            what,
        };
        let lines: Vec<String> = part.part.jobs.iter().map(SelectedJob::line).collect();
        if selection_digest(lines.iter().map(String::as_str)) != part.part.selection {
            return Err(forged(
                "`part.jobs` are not what `part.selection` is the digest of".into(),
            ));
        }
        let mut ids: Vec<&'a str> = Vec::new();
        let mut jobs = BTreeMap::new();
        for job in &part.part.jobs {
            if ids.last() != Some(&job.id.as_str()) {
                ids.push(&job.id);
            }
            if jobs
                .insert((job.id.as_str(), job.distribution), job)
                .is_some()
            {
                return Err(forged(format!(
                    "`part.jobs` lists `{}` ({}) twice",
                    escape::terminal(&job.id),
                    job.distribution
                )));
            }
        }
        let owned: Vec<String> = ids.iter().map(ToString::to_string).collect();
        let shard_of: BTreeMap<&str, usize> = ids
            .iter()
            .copied()
            .zip(assign(&owned, part.shard.count()))
            .collect();
        if shard_of.len() != ids.len() || ids.len() != part.part.selected {
            return Err(forged(format!(
                "`part.selected` is {}, but `part.jobs` list {} entries (the jobs of each entry together, in plan order)",
                part.part.selected,
                shard_of.len()
            )));
        }
        Ok(Selection { shard_of, jobs })
    }

    /// Whether `part` holds exactly its shard's entries, and each row is of one of them, as
    /// the selection has it (a distribution not skipped, its version and fingerprint).
    fn check(&self, part: &PartFile) -> Result<(), MergeError> {
        let forged = |what: String| MergeError::Forged {
            path: part.path.clone(),
            what,
        };
        let index = part.shard.index() - 1;
        let claims = |id: &str| match self.shard_of.get(id) {
            None => "is not in the selection".to_string(),
            Some(k) => format!("is an entry of shard {}/{}", k + 1, part.shard.count()),
        };
        let entries: BTreeSet<&str> = part.part.entries.iter().map(String::as_str).collect();
        if let Some(id) = entries
            .iter()
            .find(|id| self.shard_of.get(**id) != Some(&index))
        {
            return Err(forged(format!(
                "shard {} claims `{}`, which {}",
                part.shard,
                escape::terminal(id),
                claims(id)
            )));
        }
        let mine = self.shard_of.values().filter(|k| **k == index).count();
        if entries.len() != mine || entries.len() != part.part.entries.len() {
            return Err(forged(format!(
                "shard {} holds {mine} entries of the selection, `part.entries` lists {}",
                part.shard,
                part.part.entries.len()
            )));
        }
        for row in &part.agents {
            let what = |why: String| {
                forged(format!(
                    "the row of `{}` ({}) {why}",
                    escape::terminal(&row.id),
                    row.distribution
                ))
            };
            if !entries.contains(row.id.as_str()) {
                return Err(what(format!(
                    "is not one of the part's entries: it {}",
                    claims(&row.id)
                )));
            }
            match self.jobs.get(&(row.id.as_str(), row.distribution)) {
                None => {
                    return Err(what(
                        "is of a distribution the selection does not have".into(),
                    ))
                }
                Some(job) if job.skipped => {
                    return Err(what(
                        "is of a quarantined distribution, which matrix skips".into(),
                    ))
                }
                Some(job) if job.version != row.version || job.fingerprint != row.fingerprint => {
                    return Err(what(format!(
                        "has version `{}` and fingerprint `{}`, the selection {} and {}",
                        escape::terminal(&row.version),
                        row.fingerprint,
                        escape::terminal(&job.version),
                        job.fingerprint
                    )))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// Join the parts of one split run into the document the unsplit run writes: the rows of
/// every part, sorted by id and distribution. Refuses parts of different selections or shard
/// counts, a shard given twice, and a part whose entries are not exactly its shard's in the
/// selection every part lists (whatever parts are missing) or whose rows the selection does
/// not have. `read::part` checked each row alone.
pub(crate) fn merge(parts: Vec<PartFile>) -> Result<Merged, MergeError> {
    let first = parts.first().ok_or(MergeError::NoParts)?;
    let count = first.shard.count();
    let selection = Selection::of(first)?;
    let mut by_shard: BTreeMap<Shard, &str> = BTreeMap::new();
    for part in &parts {
        let differs = |what: String| MergeError::Mismatch {
            first: first.path.clone(),
            second: part.path.clone(),
            what,
        };
        if part.shard.count() != count {
            return Err(differs(format!(
                "split the run into different numbers of shards ({} and {count})",
                part.shard.count()
            )));
        }
        if part.part.selection != first.part.selection
            || part.part.selected != first.part.selected
            || part.part.jobs != first.part.jobs
        {
            return Err(differs(
                "come from different registry revisions or selections (their `part.selection` or `part.jobs` differ)"
                    .into(),
            ));
        }
        if let Some(other) = by_shard.insert(part.shard, &part.path) {
            return Err(MergeError::Overlap {
                first: other.to_string(),
                second: part.path.clone(),
                what: format!("are both shard {}", part.shard),
            });
        }
        selection.check(part)?;
    }
    let selected = first.part.selected;
    let missing = (1..=count)
        .filter_map(|k| Shard::new(k, count).ok())
        .filter(|s| !by_shard.contains_key(s))
        .map(|s| (s, size(selected, s.index() - 1, count)))
        .collect();
    let mut agents: Vec<_> = parts.into_iter().flat_map(|p| p.agents).collect();
    agents.sort_by(|a, b| (&a.id, a.distribution).cmp(&(&b.id, b.distribution)));
    Ok(Merged {
        matrix: Matrix {
            version: FORMAT_VERSION,
            agents,
        },
        count,
        missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("agent-{i}")).collect()
    }

    #[test]
    fn shards_parse_as_k_of_n_and_refuse_what_does_not_exist() {
        assert_eq!("2/4".parse::<Shard>().unwrap(), Shard::new(2, 4).unwrap());
        assert_eq!(Shard::new(3, 8).unwrap().to_string(), "3/8");
        for bad in ["0/4", "5/4", "1/0", "4", "a/b", "1/257", "-1/2", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert!("256/256".parse::<Shard>().is_ok());
    }

    #[test]
    fn every_selected_entry_is_in_exactly_one_shard_and_shards_differ_by_at_most_one() {
        for m in [0, 1, 2, 3, 7, 10, 41, 100] {
            let ids = ids(m);
            for n in 1..=8 {
                let shards = assign(&ids, n);
                assert_eq!(shards.len(), m);
                let mut sizes = vec![0; n];
                for s in &shards {
                    assert!(*s < n, "{m} entries, {n} shards: shard {s}");
                    sizes[*s] += 1;
                }
                let (min, max) = (sizes.iter().min(), sizes.iter().max());
                assert!(max.unwrap() - min.unwrap() <= 1, "{m}/{n}: {sizes:?}");
                for (k, got) in sizes.iter().enumerate() {
                    assert_eq!(*got, size(m, k, n), "{m}/{n}: shard {k}");
                }
            }
        }
    }

    #[test]
    fn an_entry_s_shard_depends_on_its_id_not_on_its_position() {
        let forward = ids(30);
        let mut backward = forward.clone();
        backward.reverse();
        let of = |list: &[String]| -> BTreeMap<String, usize> {
            list.iter().cloned().zip(assign(list, 4)).collect()
        };
        assert_eq!(of(&forward), of(&backward));
    }

    #[test]
    fn adding_an_entry_moves_at_most_one_other_entry_per_boundary_to_a_neighbour() {
        for m in [1, 5, 12, 40] {
            for n in 1..=8 {
                for added in ["aaa", "new-agent", "zzz", "m", "agent-7b"] {
                    let before = ids(m);
                    let mut after = before.clone();
                    after.insert(0, added.to_string());
                    let old = assign(&before, n);
                    let new = assign(&after, n);
                    let moved: Vec<(usize, usize)> = old
                        .iter()
                        .zip(&new[1..])
                        .filter(|(a, b)| a != b)
                        .map(|(a, b)| (*a, *b))
                        .collect();
                    assert!(moved.len() < n, "{m}+1 in {n}: {moved:?}");
                    // With fewer entries than shards some are empty, and a move skips them.
                    assert!(
                        m < n || moved.iter().all(|(a, b)| a.abs_diff(*b) == 1),
                        "{m}+1 in {n}: {moved:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn plans_add_a_shard_per_size_entries_up_to_the_maximum_and_never_an_empty_one() {
        let count = |m: usize, max: usize, size: usize| plan(&ids(m), max, size).len();
        assert_eq!(count(0, 8, 4), 1);
        assert_eq!(count(4, 8, 4), 1);
        assert_eq!(count(5, 8, 4), 2);
        assert_eq!(count(100, 8, 4), 8);
        assert_eq!(count(3, 8, 1), 3);
        assert!(plan(&ids(5), 8, 1).iter().all(|s| s.len() == 1));
    }
}
