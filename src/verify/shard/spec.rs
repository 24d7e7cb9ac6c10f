//! `--shard K/N`: one part of a split run, as the flag and a shard's `matrix.json` write it.

use std::fmt;
use std::str::FromStr;

/// The most shards a run may be split into: GitHub Actions runs at most 256 jobs of one
/// matrix.
pub(crate) const MAX_SHARDS: usize = 256;

/// One part of a split run: `index` of `count`, both counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shard {
    index: usize,
    count: usize,
}

impl Shard {
    /// Shard `index` of `count` (1 ≤ index ≤ count ≤ [`MAX_SHARDS`]).
    ///
    /// # Errors
    /// A message saying which bound the numbers break.
    pub fn new(index: usize, count: usize) -> Result<Shard, String> {
        check_count(count)?;
        if index == 0 || index > count {
            return Err(format!(
                "shard {index} of {count} does not exist: K must be 1 to {count}"
            ));
        }
        Ok(Shard { index, count })
    }

    /// Counted from 1.
    #[must_use]
    pub fn index(self) -> usize {
        self.index
    }

    /// How many shards the run is split into.
    #[must_use]
    pub fn count(self) -> usize {
        self.count
    }
}

/// Whether `count` shards may be asked for.
///
/// # Errors
/// A message naming the allowed range.
pub(crate) fn check_count(count: usize) -> Result<(), String> {
    if count == 0 || count > MAX_SHARDS {
        return Err(format!(
            "{count} shards: N must be 1 to {MAX_SHARDS} (a GitHub Actions matrix runs at most {MAX_SHARDS} jobs)"
        ));
    }
    Ok(())
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let number = |part: &str| {
            part.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{text}` is not K/N, e.g. 2/4 (the second of four shards)"))
        };
        let (index, count) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not K/N, e.g. 2/4 (the second of four shards)"))?;
        Shard::new(number(index)?, number(count)?)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}
