//! "One reader": every reader of a manifest's binary targets sees the same ones, through the
//! functions it really calls, for a corpus of odd distributions. A reader that grows its own
//! idea of a legacy platform key, or walks the raw JSON its own way, fails here.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::diagnostics::Code;
use crate::manifest::PLATFORMS;
use crate::published::{apply_patch, Form, Patch};
use crate::rules::{check_entry, EntryDir, EntryReport, ManifestDoc, Policy, RequireSha256};

/// Keys a reader might wrongly take for platforms, besides the six.
const ODD_KEYS: [&str; 6] = [
    "darwin-arm64",
    "plan9-mips",
    "linux/x86",
    "foo",
    "bar",
    "npx",
];

/// A case: what it shows, its `distribution`, and the targets every reader must see
/// (pointer, platform).
type Case = (&'static str, Value, Vec<(&'static str, &'static str)>);

fn corpus() -> Vec<Case> {
    let t = |platform: &str| json!({"archive": format!("http://x/v1.0.0/{platform}.tgz"), "args": ["--kept"]});
    vec![
        (
            "legacy platform keys, one misspelt",
            json!({"linux-x86_64": t("l"), "darwin-arm64": t("d")}),
            vec![
                ("/distribution/linux-x86_64", "linux-x86_64"),
                ("/distribution/darwin-arm64", "darwin-arm64"),
            ],
        ),
        (
            "an unknown distribution kind is no target",
            json!({"foo": t("foo"), "npx": {"package": "a@1.0.0"}}),
            vec![],
        ),
        ("empty objects", json!({"binary": {}, "npx": {}}), vec![]),
        ("an empty distribution", json!({}), vec![]),
        ("a distribution that is a list", json!([t("l")]), vec![]),
        (
            "non-object values",
            json!({"binary": {"linux-x86_64": "http://x/a.tgz", "linux-aarch64": null}, "windows-x86_64": 5, "npx": "a"}),
            vec![],
        ),
        (
            "mixed: binary members, unknown and escaped keys, a legacy key, other keys",
            json!({
                "binary": {"linux-x86_64": t("l"), "plan9-mips": t("p"), "linux/x86": t("s")},
                "darwin-aarch64": t("d"),
                "foo": t("foo"),
                "bar": [],
                "uvx": {"package": "a==1.0.0"}
            }),
            vec![
                ("/distribution/binary/linux-x86_64", "linux-x86_64"),
                ("/distribution/binary/plan9-mips", "plan9-mips"),
                ("/distribution/binary/linux~1x86", "linux/x86"),
                ("/distribution/darwin-aarch64", "darwin-aarch64"),
            ],
        ),
        (
            "one platform both under binary and as a legacy key",
            json!({"binary": {"linux-x86_64": t("a")}, "linux-x86_64": t("b")}),
            vec![
                ("/distribution/binary/linux-x86_64", "linux-x86_64"),
                ("/distribution/linux-x86_64", "linux-x86_64"),
            ],
        ),
    ]
}

/// The entry checked by the offline rules (every target lacks a sha256, so the rules name
/// each target they judge in a `sha256-missing` finding).
fn checked(dir: &std::path::Path, distribution: &Value) -> EntryReport {
    let agent = json!({
        "id": "odd", "name": "Odd", "version": "1.0.0", "description": "An odd agent.",
        "distribution": distribution
    });
    let folder = dir.join("odd");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("agent.json"), agent.to_string()).unwrap();
    let policy = Policy {
        require_sha256: RequireSha256::All,
        ..Policy::default()
    };
    let entry = EntryDir {
        name: "odd".into(),
        path: folder,
        display: "odd".into(),
    };
    check_entry(&entry, &policy)
}

fn rules_pointers(report: &EntryReport) -> BTreeSet<String> {
    report
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::Sha256Missing)
        .filter_map(|d| d.pointer.clone())
        .collect()
}

fn online_pointers(doc: &ManifestDoc) -> BTreeSet<String> {
    crate::online::target::collect(doc, &[])
        .into_iter()
        .filter_map(|target| match target {
            crate::online::target::Target::Archive(archive) => Some(archive.pointer),
            crate::online::target::Target::Package(_) => None,
        })
        .collect()
}

fn candidates() -> impl Iterator<Item = &'static str> {
    PLATFORMS.into_iter().chain(ODD_KEYS)
}

fn verify_platforms(doc: &ManifestDoc) -> BTreeSet<String> {
    let model = crate::verify::launch_model(doc);
    candidates()
        .filter(|p| crate::verify::has_build_for(&model, p))
        .map(str::to_string)
        .collect()
}

/// The platforms whose current target `pack` finds: it keeps their `args`, and publishes
/// next to their archive.
fn pack_platforms(doc: &ManifestDoc) -> BTreeSet<String> {
    use crate::pack::manifest::{base_url, target_value};
    let manifest = doc.root.to_json();
    candidates()
        .filter(|key| {
            let kept =
                target_value(&manifest, key, "a", "b", "c").get("args") == Some(&json!(["--kept"]));
            let beside = base_url(None, &manifest, key).as_deref() == Ok("http://x");
            assert_eq!(kept, beside, "pack reads `{key}` two ways");
            kept
        })
        .map(str::to_string)
        .collect()
}

/// The platforms of the published agent a `binary` patch appends to, and those the site
/// shows for it.
fn published_platforms(report: &EntryReport) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut agent, _) = Form::of(report).unwrap().into_channels("https://x");
    let site = crate::site::distribution_facts(&crate::site::view_of(&agent)).1;
    let patch = Patch {
        id: "odd".into(),
        append_args: BTreeMap::from([("binary".to_string(), vec!["--patched".to_string()])]),
        ..Patch::default()
    };
    apply_patch(&mut agent, &patch);
    let patched = agent
        .get("distribution")
        .and_then(|d| d.get("binary"))
        .and_then(Value::as_object)
        .map(|binary| {
            binary
                .iter()
                .filter(|(_, t)| {
                    t.get("args")
                        .is_some_and(|a| a.to_string().contains("--patched"))
                })
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    (patched, site.into_iter().collect())
}

#[test]
fn every_reader_sees_the_same_targets_for_odd_manifests() {
    let dir = tempfile::tempdir().unwrap();
    for (case, distribution, expected) in corpus() {
        let report = checked(dir.path(), &distribution);
        let doc = report.manifest_doc().unwrap();
        let pointers: BTreeSet<String> = expected.iter().map(|(p, _)| p.to_string()).collect();
        let platforms: BTreeSet<String> = expected.iter().map(|(_, k)| k.to_string()).collect();
        assert_eq!(rules_pointers(&report), pointers, "rules, {case}");
        assert_eq!(online_pointers(&doc), pointers, "online, {case}");
        assert_eq!(verify_platforms(&doc), platforms, "verify, {case}");
        assert_eq!(pack_platforms(&doc), platforms, "pack, {case}");
        let (patched, site) = published_platforms(&report);
        assert_eq!(patched, platforms, "variants, {case}");
        assert_eq!(site, platforms, "site, {case}");
    }
}
