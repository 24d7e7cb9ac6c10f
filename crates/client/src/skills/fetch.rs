//! [`fetch_skills`]: which kind of source a text names (a site with a 0.2.0 or 0.1.0 index, or
//! a marketplace; a URL or a folder, or the index or marketplace file itself), the skills
//! chosen from it, and every one fetched and verified before any is returned.

use super::error::{refused, SkillFetchError};
use super::fetched::{FetchOptions, FetchedSkill, Selection};
use super::marketplace;
use super::place::Place;
use super::site;
use crate::net::Client;
use crate::skill_index::{INDEX_FILE, MARKETPLACE_FILE, PLUGIN_DIR, V1_DIR, V2_DIR};

/// Fetches the `selection` of the skills `source` offers: a site (URL or folder) with a
/// well-known index (0.2.0 tried first, then 0.1.0), else a marketplace. `source` may also name
/// the index or `marketplace.json` itself. Every skill is fetched and verified before any is
/// returned, so a caller that installs the result installs nothing on any failure.
///
/// # Errors
/// [`SkillFetchError`] naming the file or URL at fault: no index or marketplace there, a
/// skill not offered, a request that failed, a digest or `SHA256SUMS` line that differs, an
/// unsafe path, a link, a name that is not the same everywhere, a bound exceeded.
pub async fn fetch_skills(
    client: &Client,
    source: &str,
    selection: &Selection,
    opts: &FetchOptions,
) -> Result<Vec<FetchedSkill>, SkillFetchError> {
    let (root, only) = root_of(source);
    let place = Place::of(root)?;
    if only != Some(Kind::Marketplace) {
        if let Some(entries) = site::index_v2(client, &place, opts).await? {
            let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
            let mut out = Vec::new();
            for name in choose(
                &names,
                selection,
                &place.show(&format!("{V2_DIR}/{INDEX_FILE}")),
            )? {
                let entry = entries
                    .iter()
                    .find(|e| e.name == name)
                    .expect("chosen from the list");
                out.push(site::fetch_v2(client, &place, entry, opts).await?);
            }
            return Ok(out);
        }
        if let Some(entries) = site::index_v1(client, &place, opts).await? {
            let sums = site::sums(client, &place, opts).await?;
            if sums.is_none() && !opts.allow_unverified {
                return Err(refused(
                    &place.show(super::sums::SUMS_FILE),
                    "missing, so the 0.1.0 index's files cannot be verified (its index lists no digests); \
                     publish one (acp-registry build writes it), or pass --allow-unverified to take the files as served",
                ));
            }
            let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
            let mut out = Vec::new();
            for name in choose(
                &names,
                selection,
                &place.show(&format!("{V1_DIR}/{INDEX_FILE}")),
            )? {
                let entry = entries
                    .iter()
                    .find(|e| e.name == name)
                    .expect("chosen from the list");
                out.push(site::fetch_v1(client, &place, entry, sums.as_ref(), opts).await?);
            }
            return Ok(out);
        }
    }
    if let Some(plugins) = marketplace::plugins(client, &place, opts).await? {
        let sums = site::sums(client, &place, opts).await?;
        marketplace::require_sums(&place, sums.as_ref(), opts)?;
        let offered = marketplace::offered(&place, &plugins, sums.as_ref())?;
        let names: Vec<&str> = offered.iter().map(|o| o.name.as_str()).collect();
        let shown = place.show(&marketplace::marketplace_rel());
        let mut out = Vec::new();
        for name in choose(&names, selection, &shown)? {
            let skill = offered
                .iter()
                .find(|o| o.name == name)
                .expect("chosen from the list");
            out.push(marketplace::fetch(client, &place, skill, sums.as_ref(), opts).await?);
        }
        return Ok(out);
    }
    Err(refused(
        source,
        format!(
            "no skills index or marketplace there: expected {V2_DIR}/{INDEX_FILE}, {V1_DIR}/{INDEX_FILE} or \
             {PLUGIN_DIR}/{MARKETPLACE_FILE} below it (a registry folder is installed with --registry)"
        ),
    ))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Site,
    Marketplace,
}

/// The root a source text names, and the kind when it names an index or marketplace file.
fn root_of(source: &str) -> (&str, Option<Kind>) {
    let trimmed = source.trim_end_matches('/');
    for (suffix, kind) in [
        (format!("{V2_DIR}/{INDEX_FILE}"), Kind::Site),
        (format!("{V1_DIR}/{INDEX_FILE}"), Kind::Site),
        (
            format!("{PLUGIN_DIR}/{MARKETPLACE_FILE}"),
            Kind::Marketplace,
        ),
    ] {
        if let Some(root) = trimmed.strip_suffix(suffix.as_str()) {
            let root = root.trim_end_matches('/');
            return (if root.is_empty() { "." } else { root }, Some(kind));
        }
    }
    (source, None)
}

/// The names `selection` takes from `offered` (listed by `shown`): unique names required.
fn choose(
    offered: &[&str],
    selection: &Selection,
    shown: &str,
) -> Result<Vec<String>, SkillFetchError> {
    let mut sorted = offered.to_vec();
    sorted.sort_unstable();
    if let Some(pair) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(refused(
            shown,
            format!(
                "it lists the skill `{}` twice: a skill's name must be unique",
                pair[0]
            ),
        ));
    }
    let list = || {
        if sorted.is_empty() {
            "none".to_owned()
        } else {
            sorted.join(", ")
        }
    };
    match selection {
        Selection::All => Ok(offered.iter().map(|s| (*s).to_owned()).collect()),
        Selection::Names(names) if names.is_empty() => match offered {
            [one] => Ok(vec![(*one).to_owned()]),
            _ => Err(refused(
                shown,
                format!(
                    "it offers {} skills ({}): name the ones to install, or pass --all",
                    offered.len(),
                    list()
                ),
            )),
        },
        Selection::Names(names) => names
            .iter()
            .map(|name| {
                if offered.contains(&name.as_str()) {
                    Ok(name.clone())
                } else {
                    Err(refused(
                        shown,
                        format!("it offers no skill `{name}`; it offers: {}", list()),
                    ))
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_may_name_its_index_or_marketplace_file() {
        assert_eq!(
            root_of("https://x.org/.well-known/agent-skills/index.json"),
            ("https://x.org", Some(Kind::Site))
        );
        assert_eq!(
            root_of("dist/site/.claude-plugin/marketplace.json"),
            ("dist/site", Some(Kind::Marketplace))
        );
        assert_eq!(root_of("dist/site"), ("dist/site", None));
    }

    #[test]
    fn several_skills_need_names_or_all_and_duplicates_are_refused() {
        let sel = Selection::Names(vec![]);
        assert_eq!(choose(&["a"], &sel, "i").unwrap(), ["a"]);
        assert!(choose(&["a", "b"], &sel, "i")
            .unwrap_err()
            .to_string()
            .contains("--all"));
        assert!(choose(&["a", "a"], &Selection::All, "i")
            .unwrap_err()
            .to_string()
            .contains("twice"));
        assert!(choose(&["a"], &Selection::Names(vec!["c".into()]), "i").is_err());
    }
}
