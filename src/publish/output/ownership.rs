//! The ownership manifest (`.acp-registry-output.json`) at the top of every output folder:
//! written streamed, read back to tell which paths this tool wrote.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::read::read_capped;
use acp_registry_core::fs::ValueBudget;

/// The ownership manifest written at the top of every output folder (and of `site/`).
pub(crate) const OWNERSHIP_FILE: &str = ".acp-registry-output.json";
/// The key that identifies an ownership manifest and its format.
const FORMAT_KEY: &str = "acp-registry-output";
const FORMAT: u64 = 1;
/// A manifest larger than this is not ours (10,000 agents need about 4 MB).
const MANIFEST_LIMIT: u64 = 64 << 20;
/// A manifest of more JSON values than this is not ours (two per file listed): counted before
/// the tree is built, since tiny values cost dozens of times their bytes in it.
const MANIFEST_VALUES: u64 = 1_000_000;
/// Write the ownership manifest listing `digests` (path and sha256; the manifest itself left
/// out) to `out`, in the order given (sorted by path, each once, by every caller), so it is
/// as deterministic as the files it lists. Streamed: at 100,000 agents the listing is tens of
/// megabytes. The bytes are those of `serde_json`'s pretty printer, plus a final newline.
pub(crate) fn write_ownership_manifest<'a>(
    out: &mut dyn Write,
    digests: impl Iterator<Item = (&'a str, &'a str)>,
) -> std::io::Result<()> {
    write!(out, "{{\n  \"{FORMAT_KEY}\": {FORMAT},\n  \"files\": {{")?;
    let mut first = true;
    for (path, digest) in digests.filter(|(path, _)| *path != OWNERSHIP_FILE) {
        out.write_all(if first { b"\n    " } else { b",\n    " })?;
        serde_json::to_writer(&mut *out, path)?;
        out.write_all(b": ")?;
        serde_json::to_writer(&mut *out, digest)?;
        first = false;
    }
    out.write_all(if first { b"}\n}\n" } else { b"\n  }\n}\n" })
}

/// The paths and digests listed by the manifest in `dir`; `None` when there is no readable
/// manifest of ours there (absent, a link, too large, or not our format).
pub(super) fn read_listing(dir: &Path) -> Option<BTreeMap<String, String>> {
    let bytes = read_capped(&dir.join(OWNERSHIP_FILE), MANIFEST_LIMIT).ok()??;
    let text = std::str::from_utf8(&bytes).ok()?;
    ValueBudget::new(MANIFEST_VALUES).spend(text).ok()?;
    let doc: Value = serde_json::from_str(text).ok()?;
    if doc.get(FORMAT_KEY)?.as_u64()? != FORMAT {
        return None;
    }
    doc.get("files")?
        .as_object()?
        .iter()
        .map(|(path, digest)| Some((path.clone(), digest.as_str()?.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::testing::test_files as files;
    use super::*;

    #[test]
    fn the_manifest_lists_every_other_path_with_its_digest_sorted() {
        let mut set = files(&["b.json", "a/x.svg", "SHA256SUMS"]);
        set.insert(OWNERSHIP_FILE.into(), b"stale".to_vec());
        let digests: BTreeMap<String, String> = set
            .iter()
            .map(|(path, bytes)| {
                (
                    path.clone(),
                    acp_registry_core::fs::digest::sha256_hex(bytes),
                )
            })
            .collect();
        let listed = digests.iter().map(|(p, d)| (p.as_str(), d.as_str()));
        let mut bytes = Vec::new();
        write_ownership_manifest(&mut bytes, listed).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&String> = doc["files"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["SHA256SUMS", "a/x.svg", "b.json"]);
        assert_eq!(
            doc["files"]["b.json"],
            acp_registry_core::fs::digest::sha256_hex(b"b.json")
        );
        assert!(text.ends_with("}\n"));
    }

    /// The streamed manifest is byte for byte what the pretty printer gave before it was
    /// streamed (earlier outputs keep verifying as ours), empty and escaped paths included.
    #[test]
    fn the_streamed_manifest_is_the_pretty_printed_json() {
        let cases: [&[(&str, &str)]; 3] = [
            &[],
            &[("a \"quoted\"\\path\u{7}é", "00")],
            &[
                ("SHA256SUMS", "ab"),
                (OWNERSHIP_FILE, "x"),
                ("site/i.html", "cd"),
            ],
        ];
        for listed in cases {
            let mut streamed = Vec::new();
            write_ownership_manifest(&mut streamed, listed.iter().copied()).unwrap();
            let files: serde_json::Map<String, Value> = listed
                .iter()
                .filter(|(path, _)| *path != OWNERSHIP_FILE)
                .map(|(path, digest)| ((*path).to_string(), Value::from(*digest)))
                .collect();
            let doc = serde_json::json!({ FORMAT_KEY: FORMAT, "files": files });
            let mut pretty = serde_json::to_vec_pretty(&doc).unwrap();
            pretty.push(b'\n');
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                String::from_utf8(pretty).unwrap()
            );
        }
    }
}
