//! The skills outputs of `build` (docs/format.md#skills-indexes): every published skill, the
//! registry's stand-alone skills and the skills of the agents it publishes, in the site folder
//! where skill clients look for them:
//!
//! - `.well-known/agent-skills/index.json` (discovery 0.2.0): a `skill-md` artifact
//!   (`<name>/SKILL.md`) for a skill that is only SKILL.md, else an `archive`
//!   (`<name>.tar.gz`, members at the archive root, `scripts/` executable; `<name>.zip` when a
//!   path does not fit ustar's name fields, which the `skills` CLI reads alone), with the
//!   sha256 of the bytes written;
//! - `.well-known/skills/index.json` (0.1.0) and every listed file under
//!   `.well-known/skills/<name>/` (written for the marketplace too);
//! - `.claude-plugin/marketplace.json`, a plugin per skill (or the configured one) whose
//!   files are those folders (`plugins`);
//! - `.nojekyll`, so a branch-deployed GitHub Pages site serves the dot-folders.
//!
//! Planned with the rest of the build: every file composed (archives in parallel) and every
//! problem found before anything is written; the files then go through the build's sink like
//! the others (staging, ownership manifest, `SHA256SUMS`). The bytes are the ones the check
//! read ([`CheckedSkill`]), never read again. Deterministic: skills sorted by name, JSON in
//! the `skill_index` types' field order, archives by `archive` with time 0. Nothing is written
//! when the registry publishes no skill.

mod plugins;
mod shared;

use std::borrow::Cow;
use std::collections::BTreeSet;

use super::archive::{self, Entries, Entry, PackFormat};
use super::error::BuildError;
use crate::registry::config::SkillsConfig;
use crate::registry::Checked;
use crate::rules::{CheckedSkill, EntryReport};
use crate::site::{SiteSkill, SkillAgent, SkillFile, SkillInstall};
use acp_registry_client::skill_index::{
    is_safe_listed_path, is_skill_name, ArtifactType, EntryV1, EntryV2, IndexV1, IndexV2,
    DIGEST_PREFIX, DISCOVERY_SCHEMA_V2, INDEX_FILE, V1_DIR, V2_DIR,
};
use acp_registry_core::fs::digest::sha256_hex;
use rayon::prelude::*;
pub(crate) use shared::OutputFile;
use shared::{json, skill_error, Agent, Published};

/// The file that stops GitHub Pages' Jekyll from dropping dot-folders.
pub(crate) const NOJEKYLL: &str = ".nojekyll";

/// Every skill the build publishes, sorted by name, each name once: the skills of `entries`
/// (the agents published) and the stand-alone skills without an error.
pub(crate) fn published<'a>(
    checked: &'a Checked,
    entries: &[&'a EntryReport],
) -> Vec<Published<'a>> {
    let mut all: Vec<Published<'a>> = Vec::new();
    for entry in entries {
        let Some(doc) = entry.manifest_doc() else {
            continue;
        };
        let field = |key: &str| doc.root.get_str(key).unwrap_or_default().to_owned();
        for skill in &entry.skills {
            all.push(Published {
                skill,
                agent: Some(Agent {
                    id: entry.id().to_owned(),
                    name: field("name"),
                    version: field("version"),
                }),
            });
        }
    }
    let standalone = checked.skills.iter().filter(|report| {
        !report
            .diagnostics
            .iter()
            .any(|d| d.severity == crate::diagnostics::Severity::Error)
    });
    all.extend(
        standalone
            .filter_map(|report| report.skill.as_ref())
            .map(|skill| Published { skill, agent: None }),
    );
    // A duplicate name is an error the check reported; the first in folder order wins.
    all.sort_by(|a, b| (&a.skill.name, &a.skill.dir).cmp(&(&b.skill.name, &b.skill.dir)));
    all.dedup_by(|b, a| a.skill.name == b.skill.name);
    all
}

/// The site's view of the published skills ([`SiteSkill`]): what the site shows and the
/// install commands it derives, as `build` publishes them. The site takes them at merge
/// (`Site::new`'s skills argument, helper S's): until then only the tests call this.
pub(crate) fn site_skills(checked: &Checked, entries: &[&EntryReport]) -> Vec<SiteSkill> {
    let config = &checked.config.skills;
    published(checked, entries)
        .into_iter()
        .map(|p| {
            let skill = p.skill;
            SiteSkill {
                name: skill.name.clone(),
                description: skill.description.clone(),
                license: skill.license.clone(),
                compatibility: skill.compatibility.clone(),
                agent: p.agent.map(|a| SkillAgent {
                    id: a.id,
                    name: a.name,
                }),
                files: skill
                    .files
                    .iter()
                    .map(|f| SkillFile {
                        path: f.path.clone(),
                        size: f.bytes.len() as u64,
                        executable: f.executable,
                    })
                    .collect(),
                body: skill.body().to_owned(),
                install: SkillInstall {
                    well_known: config.well_known,
                    marketplace: config
                        .marketplace
                        .as_ref()
                        .map(|m| (m.name.clone(), plugins::plugin_of(&m.grouping, &skill.name))),
                },
            }
        })
        .collect()
}

/// Every file of the skills outputs, paths relative to the site folder, sorted; empty when no
/// skill is published. Every problem is found here, before anything is written.
pub(crate) fn plan<'a>(
    checked: &'a Checked,
    entries: &[&'a EntryReport],
) -> Result<Vec<OutputFile<'a>>, BuildError> {
    let skills = published(checked, entries);
    if skills.is_empty() {
        return Ok(Vec::new());
    }
    for p in &skills {
        refuse_unlistable(p.skill)?;
    }
    let config: &SkillsConfig = &checked.config.skills;
    let mut files: Vec<OutputFile<'a>> = vec![(NOJEKYLL.to_owned(), Cow::Borrowed(&[]))];
    if config.well_known {
        files.extend(well_known(&skills)?);
    }
    if config.well_known || config.marketplace.is_some() {
        files.extend(skill_folders(&skills));
    }
    if let Some(marketplace) = &config.marketplace {
        files.push(plugins::marketplace(&skills, marketplace, config));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut seen = BTreeSet::new();
    if let Some((path, _)) = files.iter().find(|(path, _)| !seen.insert(path.as_str())) {
        return Err(skill_error(path, "two skills outputs have this path"));
    }
    Ok(files)
}

/// What the check refused cannot reach here; held to the index rules again so an index
/// never lists what a client would drop.
fn refuse_unlistable(skill: &CheckedSkill) -> Result<(), BuildError> {
    if !is_skill_name(&skill.name) {
        return Err(skill_error(
            &skill.dir,
            "its name is not a valid skill name",
        ));
    }
    match skill.files.iter().find(|f| !is_safe_listed_path(&f.path)) {
        Some(file) => Err(skill_error(
            &format!("{}/{}", skill.dir, file.path),
            "a skills index cannot list this path (skill-file-path)",
        )),
        None => Ok(()),
    }
}

/// Every skill's files in its 0.1.0 folder, `.well-known/skills/<name>/`: what the 0.1.0
/// index lists and what the marketplace's plugins are.
fn skill_folders<'a>(skills: &[Published<'a>]) -> Vec<OutputFile<'a>> {
    let mut files = Vec::new();
    for skill in skills.iter().map(|p| p.skill) {
        for file in &skill.files {
            let path = format!("{V1_DIR}/{}/{}", skill.name, file.path);
            files.push((path, Cow::Borrowed(file.bytes.as_slice())));
        }
    }
    files
}

/// Both versions of the well-known index and the 0.2.0 artifacts.
fn well_known<'a>(skills: &[Published<'a>]) -> Result<Vec<OutputFile<'a>>, BuildError> {
    let artifacts: Vec<(ArtifactType, String, Vec<u8>)> = skills
        .par_iter()
        .map(|p| artifact(p.skill))
        .collect::<Result<_, _>>()?;
    let mut files = Vec::new();
    let mut v2 = Vec::new();
    let mut v1 = Vec::new();
    for (p, (kind, url, bytes)) in skills.iter().zip(artifacts) {
        let skill = p.skill;
        v2.push(EntryV2 {
            name: skill.name.clone(),
            description: skill.description.clone(),
            kind,
            url: url.clone(),
            digest: format!("{DIGEST_PREFIX}{}", sha256_hex(&bytes)),
        });
        files.push((format!("{V2_DIR}/{url}"), Cow::Owned(bytes)));
        v1.push(EntryV1 {
            name: skill.name.clone(),
            description: skill.description.clone(),
            files: skill.files.iter().map(|f| f.path.clone()).collect(),
        });
    }
    let v2 = IndexV2 {
        schema: DISCOVERY_SCHEMA_V2.to_owned(),
        skills: v2,
    };
    files.push((format!("{V2_DIR}/{INDEX_FILE}"), Cow::Owned(json(&v2))));
    files.push((
        format!("{V1_DIR}/{INDEX_FILE}"),
        Cow::Owned(json(&IndexV1 { skills: v1 })),
    ));
    Ok(files)
}

/// A skill's 0.2.0 artifact: its type, its URL relative to the index and its bytes.
fn artifact(skill: &CheckedSkill) -> Result<(ArtifactType, String, Vec<u8>), BuildError> {
    if let [only] = skill.files.as_slice() {
        if only.path == "SKILL.md" {
            let url = format!("{}/SKILL.md", skill.name);
            return Ok((ArtifactType::SkillMd, url, only.bytes.clone()));
        }
    }
    let entries: Entries = skill
        .files
        .iter()
        .map(|f| {
            let entry = Entry {
                bytes: f.bytes.clone(),
                executable: f.executable,
            };
            (f.path.clone(), entry)
        })
        .collect();
    // The `skills` CLI reads a tar's ustar name fields only (no GNU or PAX long names).
    let format = if entries.keys().all(|p| archive::fits_ustar(p)) {
        PackFormat::TarGz
    } else {
        PackFormat::Zip
    };
    let bytes = archive::write(format, &entries, 0)
        .map_err(|e| skill_error(&skill.dir, &format!("cannot archive it: {e}")))?;
    let url = format!("{}.{}", skill.name, format.extension());
    Ok((ArtifactType::Archive, url, bytes))
}
