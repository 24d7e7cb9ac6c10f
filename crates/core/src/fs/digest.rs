//! Lowercase hex, as sha256 pins, digests and fingerprints are written everywhere (the
//! registry tool and the collaboration engine alike), and the one check of whether a text is
//! a sha256 in hex ([`is_sha256_hex`]), with the case rule each contract fixes.

use sha2::{Digest, Sha256};

/// `bytes` as lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            // Writing to a String cannot fail.
            let _ = write!(out, "{b:02x}");
            out
        })
}

/// The SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Which letters a hex digest may be written with: the contracts differ, so the caller names
/// its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HexCase {
    /// `0-9a-f` only: the collaboration protocol's `sha256` (docs/collab-protocol.md, "64
    /// lowercase hex", recorded verbatim and compared byte for byte with what we compute).
    Lower,
    /// `0-9a-fA-F`: an agent's `sha256` pin (schemas/agent.schema.json `^[0-9a-fA-F]{64}$`,
    /// docs/format.md "64 hex characters"), GitHub's `digest`, and what is derived from them;
    /// such a value is compared lowercased.
    Any,
}

/// Whether `text` is a SHA-256 digest in hex: exactly 64 hex digits, of the letters `case`
/// allows, nothing around them.
pub fn is_sha256_hex(text: &str, case: HexCase) -> bool {
    text.len() == 64
        && text.bytes().all(|b| match case {
            HexCase::Lower => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
            HexCase::Any => b.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lowercase_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xab, 0xff]), "000fabff");
        assert_eq!(hex(&[]), "");
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn a_sha256_is_64_hex_digits_of_the_case_the_contract_allows() {
        let lower = sha256_hex(b"");
        let upper = lower.to_ascii_uppercase();
        assert!(is_sha256_hex(&lower, HexCase::Lower));
        assert!(is_sha256_hex(&lower, HexCase::Any));
        assert!(is_sha256_hex(&upper, HexCase::Any));
        assert!(!is_sha256_hex(&upper, HexCase::Lower), "lowercase only");
        for bad in [
            &lower[1..],
            &format!("{lower}0"),
            &format!(" {}", &lower[1..]),
        ] {
            assert!(!is_sha256_hex(bad, HexCase::Any), "{bad:?}");
        }
        let not_hex = format!("g{}", &lower[1..]);
        assert!(!is_sha256_hex(&not_hex, HexCase::Any));
        assert!(!is_sha256_hex("", HexCase::Any));
    }
}
