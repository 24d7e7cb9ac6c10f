//! A source's `SHA256SUMS` (`<64 hex>  <path>` per line, paths relative to the site or
//! marketplace root, as `build` writes it): what a file's bytes must hash to.

use std::collections::BTreeMap;

use super::error::{refused, SkillFetchError};
use acp_registry_core::fs::digest::{is_sha256_hex, sha256_hex, HexCase};

/// The file name, at the root of a site or marketplace.
pub(crate) const SUMS_FILE: &str = "SHA256SUMS";

/// The lines of a `SHA256SUMS`, by path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Sums {
    by_path: BTreeMap<String, String>,
    /// Where it was read (for messages).
    shown: String,
}

impl Sums {
    /// Reads `bytes`, shown as `shown`; at most `max_lines` lines.
    pub(crate) fn parse(
        bytes: &[u8],
        shown: &str,
        max_lines: usize,
    ) -> Result<Sums, SkillFetchError> {
        let text =
            std::str::from_utf8(bytes).map_err(|_| refused(shown, "it is not UTF-8 text"))?;
        let mut by_path = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            if by_path.len() >= max_lines {
                return Err(refused(
                    shown,
                    format!("it lists more than {max_lines} files"),
                ));
            }
            let bad = || {
                refused(
                    &format!("{shown}:{}", n + 1),
                    "expected `<64 hex digits>  <path>`",
                )
            };
            let (hex, path) = line.split_once(' ').ok_or_else(bad)?;
            let path = path
                .strip_prefix(' ')
                .or_else(|| path.strip_prefix('*'))
                .ok_or_else(bad)?;
            if !is_sha256_hex(hex, HexCase::Any) {
                return Err(bad());
            }
            let hex = hex.to_ascii_lowercase();
            if by_path.insert(path.to_owned(), hex).is_some() {
                return Err(refused(
                    &format!("{shown}:{}", n + 1),
                    "a second line for the same path",
                ));
            }
        }
        Ok(Sums {
            by_path,
            shown: shown.to_owned(),
        })
    }

    /// Refuses `bytes` (shown as `what`) unless the sums list `path` with their digest.
    pub(crate) fn verify(
        &self,
        path: &str,
        bytes: &[u8],
        what: &str,
    ) -> Result<(), SkillFetchError> {
        match self.by_path.get(path) {
            None => Err(refused(
                what,
                format!("{} does not list it, so it cannot be verified", self.shown),
            )),
            Some(hex) if *hex != sha256_hex(bytes) => Err(refused(
                what,
                format!(
                    "its sha256 is {}, {} says {hex}: the file differs from what the source published",
                    sha256_hex(bytes),
                    self.shown
                ),
            )),
            Some(_) => Ok(()),
        }
    }

    /// The listed paths below `prefix` (ending in `/`), without it.
    pub(crate) fn below<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.by_path
            .range(prefix.to_owned()..)
            .take_while(move |(p, _)| p.starts_with(prefix))
            .map(move |(p, _)| &p[prefix.len()..])
    }

    /// Where it was read.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_differs_or_is_not_listed_is_refused() {
        let good = sha256_hex(b"hi");
        let text = format!("{good}  a/SKILL.md\n{}  a/x\n", "0".repeat(64));
        let sums = Sums::parse(text.as_bytes(), "SHA256SUMS", 10).unwrap();
        assert!(sums.verify("a/SKILL.md", b"hi", "f").is_ok());
        assert!(sums
            .verify("a/x", b"hi", "f")
            .unwrap_err()
            .to_string()
            .contains("differs"));
        assert!(sums
            .verify("a/y", b"hi", "f")
            .unwrap_err()
            .to_string()
            .contains("does not list"));
        assert_eq!(sums.below("a/").collect::<Vec<_>>(), ["SKILL.md", "x"]);
        assert!(Sums::parse(b"zz  a\n", "S", 10).is_err());
        assert!(Sums::parse(text.as_bytes(), "S", 1).is_err());
    }
}
