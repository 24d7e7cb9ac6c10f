//! A site's well-known discovery index: 0.2.0 (`.well-known/agent-skills/index.json`, each
//! artifact checked against its `digest` before it is unpacked) or else 0.1.0
//! (`.well-known/skills/index.json`, each listed file checked against the site's
//! `SHA256SUMS`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::error::{refused, SkillFetchError};
use super::fetched::{FetchOptions, FetchedSkill};
use super::place::{net_error, resolve, Place, Target};
use super::sums::{Sums, SUMS_FILE};
use super::tree::{check_skill, read_folder};
use crate::archive::{self, ArchiveFormat, Limits};
use crate::net::Client;
use crate::skill_index::{
    digest_hex, ArtifactType, EntryV1, EntryV2, IndexV1, IndexV2, DISCOVERY_SCHEMA_V2, INDEX_FILE,
    V1_DIR, V2_DIR,
};
use acp_registry_core::fs::digest::sha256_hex;

/// A 0.2.0 index, when the site serves one.
pub(crate) async fn index_v2(
    client: &Client,
    place: &Place,
    opts: &FetchOptions,
) -> Result<Option<Vec<EntryV2>>, SkillFetchError> {
    let rel = format!("{V2_DIR}/{INDEX_FILE}");
    let Some(bytes) = place.get(client, &rel, opts.limits.index_bytes).await? else {
        return Ok(None);
    };
    let shown = place.show(&rel);
    let index: IndexV2 = serde_json::from_slice(&bytes)
        .map_err(|e| refused(&shown, format!("not a 0.2.0 discovery index: {e}")))?;
    if index.schema != DISCOVERY_SCHEMA_V2 {
        return Err(refused(
            &shown,
            format!("`$schema` must be {DISCOVERY_SCHEMA_V2}"),
        ));
    }
    if index.skills.len() > opts.limits.skills {
        return Err(refused(
            &shown,
            format!("it lists more than {} skills", opts.limits.skills),
        ));
    }
    Ok(Some(index.skills))
}

/// A 0.1.0 index, when the site serves one.
pub(crate) async fn index_v1(
    client: &Client,
    place: &Place,
    opts: &FetchOptions,
) -> Result<Option<Vec<EntryV1>>, SkillFetchError> {
    let rel = format!("{V1_DIR}/{INDEX_FILE}");
    let Some(bytes) = place.get(client, &rel, opts.limits.index_bytes).await? else {
        return Ok(None);
    };
    let shown = place.show(&rel);
    let index: IndexV1 = serde_json::from_slice(&bytes)
        .map_err(|e| refused(&shown, format!("not a 0.1.0 discovery index: {e}")))?;
    if index.skills.len() > opts.limits.skills {
        return Err(refused(
            &shown,
            format!("it lists more than {} skills", opts.limits.skills),
        ));
    }
    Ok(Some(index.skills))
}

/// The site's `SHA256SUMS`, when it serves one.
pub(crate) async fn sums(
    client: &Client,
    place: &Place,
    opts: &FetchOptions,
) -> Result<Option<Sums>, SkillFetchError> {
    let Some(bytes) = place
        .get(client, SUMS_FILE, opts.limits.index_bytes)
        .await?
    else {
        return Ok(None);
    };
    let max_lines = opts.limits.skills.saturating_mul(opts.limits.files);
    Sums::parse(&bytes, &place.show(SUMS_FILE), max_lines).map(Some)
}

/// One 0.2.0 skill: the artifact fetched, its digest checked, then unpacked and checked.
pub(crate) async fn fetch_v2(
    client: &Client,
    place: &Place,
    entry: &EntryV2,
    opts: &FetchOptions,
) -> Result<FetchedSkill, SkillFetchError> {
    let index = place.show(&format!("{V2_DIR}/{INDEX_FILE}"));
    let entry_shown = format!("{index} (skill `{}`)", entry.name);
    let hex = digest_hex(&entry.digest).ok_or_else(|| {
        refused(
            &entry_shown,
            "`digest` must be `sha256:` and 64 lowercase hex digits",
        )
    })?;
    let target = resolve(place, &format!("{V2_DIR}/"), &entry.url)
        .map_err(|why| refused(&entry_shown, format!("`url` {why}")))?;
    let cap = opts.limits.skill_bytes;
    let (bytes, shown) = match &target {
        Target::Rel(rel) => (place.get(client, rel, cap).await?, place.show(rel)),
        Target::Url(url) => (
            client
                .bytes(url, cap)
                .await
                .map_err(|e| net_error(url, e))?,
            url.clone(),
        ),
    };
    let bytes = bytes.ok_or_else(|| {
        refused(
            &shown,
            format!(
                "the index lists it for `{}` but it does not exist",
                entry.name
            ),
        )
    })?;
    let actual = sha256_hex(&bytes);
    if actual != hex {
        return Err(refused(&shown, format!("its sha256 is {actual}, the index's digest says {hex}: refusing it (nothing was unpacked)")));
    }
    let files = match entry.kind {
        ArtifactType::SkillMd => BTreeMap::from([("SKILL.md".to_owned(), bytes)]),
        ArtifactType::Archive => unpack(&bytes, &shown, opts)?,
    };
    check_skill(&entry.name, &files, &shown, &opts.limits)?;
    Ok(FetchedSkill {
        name: entry.name.clone(),
        files,
        source: shown,
        digest: Some(entry.digest.clone()),
        verified_by: "the index's digest".into(),
    })
}

/// An archive's files (a `.tar.gz` or `.zip` by its name), unpacked aside with `archive`'s
/// rules and read back with links refused; the aside folder is removed.
fn unpack(
    bytes: &[u8],
    shown: &str,
    opts: &FetchOptions,
) -> Result<BTreeMap<String, Vec<u8>>, SkillFetchError> {
    let name = shown.rsplit('/').next().unwrap_or(shown);
    let format = ArchiveFormat::of_file_name(name.split(['?', '#']).next().unwrap_or(name));
    if !matches!(format, ArchiveFormat::TarGz | ArchiveFormat::Zip) {
        return Err(refused(
            shown,
            "an archive artifact must be a .tar.gz or a .zip",
        ));
    }
    let aside =
        Aside::new().map_err(|e| refused(shown, format!("cannot make a temporary folder: {e}")))?;
    let file = aside.0.join("artifact");
    acp_registry_core::fs::write_new(&file, bytes).map_err(|e| refused(shown, e))?;
    let dest = aside.0.join("skill");
    let limits = Limits {
        max_bytes: opts.limits.skill_bytes,
        max_entries: u64::try_from(opts.limits.files.saturating_mul(2)).unwrap_or(u64::MAX),
    };
    archive::extract(&file, format, &dest, "artifact", limits).map_err(|e| refused(shown, e))?;
    read_folder(&dest, shown, &opts.limits)
}

/// A temporary folder of ours, removed when dropped.
struct Aside(PathBuf);

impl Aside {
    fn new() -> std::io::Result<Aside> {
        let dir = std::env::temp_dir().join(format!(
            "acp-skill-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        // `create_dir` fails on anything already there, a link included: the folder is ours.
        std::fs::create_dir(&dir)?;
        Ok(Aside(dir))
    }
}

impl Drop for Aside {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One 0.1.0 skill: every listed file fetched from `.well-known/skills/<name>/<path>` and
/// checked against `sums` (or taken unverified when the caller allows it and there are none).
pub(crate) async fn fetch_v1(
    client: &Client,
    place: &Place,
    entry: &EntryV1,
    sums: Option<&Sums>,
    opts: &FetchOptions,
) -> Result<FetchedSkill, SkillFetchError> {
    let folder = format!("{V1_DIR}/{}", entry.name);
    let shown = place.show(&format!("{folder}/"));
    let index = place.show(&format!("{V1_DIR}/{INDEX_FILE}"));
    let listed = format!("{index} (skill `{}`)", entry.name);
    if !acp_registry_core::skill_install::is_skill_name(&entry.name) {
        return Err(refused(&listed, "`name` is not a skill name"));
    }
    if entry.files.len() > opts.limits.files {
        return Err(refused(
            &listed,
            format!("`files` lists more than {}", opts.limits.files),
        ));
    }
    if let Some(bad) = entry
        .files
        .iter()
        .find(|p| !acp_registry_core::skill_install::is_safe_file_path(p))
    {
        return Err(refused(
            &listed,
            format!("`files` lists `{bad}`, a path that could leave the skill folder"),
        ));
    }
    let mut files = BTreeMap::new();
    let mut left = opts.limits.skill_bytes;
    for path in &entry.files {
        let rel = format!("{folder}/{path}");
        let what = place.show(&rel);
        let bytes = place
            .get(client, &rel, left)
            .await?
            .ok_or_else(|| refused(&what, "the index lists it but it does not exist: the index is stale or the site incomplete"))?;
        if let Some(sums) = sums {
            sums.verify(&rel, &bytes, &what)?;
        }
        left = left.saturating_sub(bytes.len() as u64);
        files.insert(path.clone(), bytes);
    }
    check_skill(&entry.name, &files, &shown, &opts.limits)?;
    Ok(FetchedSkill {
        name: entry.name.clone(),
        files,
        source: shown,
        digest: None,
        verified_by: sums.map_or_else(
            || "nothing (--allow-unverified)".to_owned(),
            |s| s.shown().to_owned(),
        ),
    })
}
