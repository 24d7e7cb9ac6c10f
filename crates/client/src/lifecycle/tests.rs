use super::*;
use crate::document::Document;
use crate::resolve::{resolve, ResolveOptions};

const DAY: i64 = 86_400;

fn at(text: &str) -> i64 {
    acp_registry_core::time::parse_iso_utc_seconds(text).unwrap()
}

fn release(version: &str, published: Option<i64>) -> Release {
    Release {
        version: version.into(),
        published,
        ..Release::default()
    }
}

fn history(pin: &str, published: i64, history: Vec<Release>) -> Distribution {
    Distribution {
        version: Some(pin.into()),
        published: Some(published),
        history,
    }
}

#[test]
fn the_document_keeps_statuses_distributions_and_histories_and_ignores_the_rest() {
    let text = serde_json::json!({
        "version": "1.0.0", "as_of": "2026-12-01T00:00:00Z", "clients": [{"id": "zed"}],
        "agents": [
            {"id": "old", "status": "disabled", "reason": "renamed", "since": "2026-11-01",
             "replacement": "new", "in_registry": false, "compatibility": {"zed": {}},
             "distributions": {"npx": {"source": "npm", "package": "old", "version": "1.2.0",
                "published": "2026-11-20T08:00:00Z",
                "history": [
                    {"version": "1.2.0", "published": "2026-11-20T08:00:00Z"},
                    {"version": "1.1.0", "published": "2026-10-01T00:00:00Z", "deprecated": "bad"},
                    {"version": "1.0.0", "yanked": true, "preview": "yes", "unknown": [1]},
                    {"published": "2026-01-01T00:00:00Z"},
                    7
                ]}}},
            {"id": "new", "status": "retired-in-2030"},
            {"id": "old", "status": "active"},
            {"status": "deprecated"},
            {"id": 3}
        ]
    });
    let lifecycle = Lifecycle::parse(text.to_string().as_bytes()).unwrap();
    assert_eq!(lifecycle.agents.keys().collect::<Vec<_>>(), ["new", "old"]);
    assert_eq!(lifecycle.get("new").unwrap().status, Status::Active);
    let old = lifecycle.get("old").unwrap();
    assert_eq!(
        old.status,
        Status::Disabled,
        "the first entry of an id is kept"
    );
    assert_eq!(
        old.notice(),
        "since 2026-11-01: renamed; use new instead (`acp-registry install new`)"
    );
    assert_eq!(old.in_registry, Some(false));
    let npx = &old.distributions[&Kind::Npx];
    assert_eq!(npx.published, Some(at("2026-11-20T08:00:00Z")));
    assert_eq!(
        npx.history,
        vec![
            release("1.2.0", Some(at("2026-11-20T08:00:00Z"))),
            Release {
                deprecated: true,
                ..release("1.1.0", Some(at("2026-10-01T00:00:00Z")))
            },
            Release {
                yanked: true,
                ..release("1.0.0", None)
            },
        ]
    );
}

#[test]
fn what_is_not_a_lifecycle_document_is_an_error() {
    for bad in [&b"<html>502</html>"[..], b"[]", b"{\"agents\": [", b""] {
        assert!(
            Lifecycle::parse(bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    let big = vec![b' '; usize::try_from(MAX_LIFECYCLE_BYTES).unwrap() + 1];
    assert!(matches!(
        Lifecycle::parse(&big),
        Err(LifecycleError::TooLarge)
    ));
    assert_eq!(Lifecycle::parse(b"{}").unwrap(), Lifecycle::default());
}

#[test]
fn a_pin_old_enough_is_used_and_one_of_unknown_time_is_left_to_the_caller() {
    let now = 100 * DAY;
    let dist = history("2.0.0", 90 * DAY, vec![]);
    assert_eq!(dist.cooldown("2.0.0", 7 * DAY, now), Some(Cooldown::Pin));
    // The document describes another pin (an older copy): the pin's time is unknown.
    assert_eq!(dist.cooldown("2.1.0", 7 * DAY, now), None);
    // ... unless the history has it.
    let dist = history("2.0.0", 90 * DAY, vec![release("2.1.0", Some(99 * DAY))]);
    assert_eq!(
        dist.cooldown("2.1.0", 7 * DAY, now),
        Some(Cooldown::NoneEligible {
            eligible_at: 106 * DAY
        }),
        "2.0.0 is the document's pin, not a release of its history"
    );
}

#[test]
fn a_young_pin_gives_the_newest_older_release_that_is_old_enough_and_not_withdrawn() {
    let now = 100 * DAY;
    let dist = history(
        "1.3.0",
        99 * DAY,
        vec![
            release("1.4.0", Some(50 * DAY)),
            release("1.3.0", Some(99 * DAY)),
            release("1.3.0-preview.1", Some(60 * DAY)),
            Release {
                yanked: true,
                ..release("1.2.2", Some(70 * DAY))
            },
            Release {
                deprecated: true,
                ..release("1.2.1", Some(70 * DAY))
            },
            release("1.2.0", Some(95 * DAY)),
            release("1.10.0-beta", Some(10 * DAY)),
            release("1.1.0", Some(80 * DAY)),
            release("1.0.0", None),
        ],
    );
    assert_eq!(
        dist.cooldown("1.3.0", 7 * DAY, now),
        Some(Cooldown::Older {
            version: "1.1.0".into(),
            published: 80 * DAY,
            eligible_at: 106 * DAY
        })
    );
    assert_eq!(
        dist.cooldown("1.3.0", 30 * DAY, now),
        Some(Cooldown::NoneEligible {
            eligible_at: 129 * DAY
        })
    );
    // A preview pin may fall back to a preview.
    let preview = history(
        "2.0.0-preview.2",
        99 * DAY,
        vec![release("2.0.0-preview.1", Some(80 * DAY))],
    );
    assert_eq!(
        preview.cooldown("2.0.0-preview.2", 7 * DAY, now),
        Some(Cooldown::Older {
            version: "2.0.0-preview.1".into(),
            published: 80 * DAY,
            eligible_at: 106 * DAY
        })
    );
}

/// Property: over random histories, the chooser returns exactly the newest release that is
/// older than the pin, old enough, and not yanked, deprecated or a preview; never a newer,
/// younger or withdrawn one.
#[test]
fn the_chooser_returns_the_newest_eligible_release_of_any_history() {
    let mut rng = fastrand::Rng::with_seed(20_261_201);
    let now = 1_000 * DAY;
    let window = 7 * DAY;
    for _ in 0..2_000 {
        let pin = format!("1.{}.0", rng.u32(0..10));
        let pin_published = now - rng.i64(0..7) * DAY;
        let releases: Vec<Release> = (0..rng.usize(0..12))
            .map(|_| {
                let pre = if rng.u8(0..5) == 0 { "-preview.1" } else { "" };
                Release {
                    version: format!("1.{}.{}{pre}", rng.u32(0..12), rng.u32(0..3)),
                    published: (rng.u8(0..6) != 0).then(|| now - rng.i64(0..20) * DAY),
                    yanked: rng.u8(0..6) == 0,
                    deprecated: rng.u8(0..6) == 0,
                    preview: !pre.is_empty(),
                }
            })
            .collect();
        let dist = history(&pin, pin_published, releases.clone());
        let eligible = |r: &&Release| {
            !r.yanked
                && !r.deprecated
                && !r.preview
                && version_order(&r.version, &pin).is_lt()
                && r.published.is_some_and(|p| p + window <= now)
        };
        let expected = releases
            .iter()
            .filter(eligible)
            .max_by(|a, b| version_order(&a.version, &b.version))
            .map(|r| r.version.clone());
        let got = match dist.cooldown(&pin, window, now) {
            Some(Cooldown::Older { version, .. }) => Some(version),
            Some(Cooldown::NoneEligible { .. }) => None,
            other => panic!("a young pin: {other:?}"),
        };
        assert_eq!(
            got.as_deref()
                .map(|v| version_order(v, expected.as_deref().unwrap_or(""))),
            expected.as_ref().map(|_| Ordering::Equal),
            "{pin} {releases:?}"
        );
        if let Some(version) = &got {
            let chosen = releases
                .iter()
                .find(|r| &r.version == version && eligible(r));
            assert!(chosen.is_some(), "{version} is not eligible: {releases:?}");
        }
    }
}

#[test]
fn versions_order_numerically_with_prereleases_below_their_release() {
    let mut versions = [
        "1.10.0",
        "1.2.0",
        "1.2.0-preview.10",
        "1.2.0-preview.2",
        "0.9",
        "1.2.0+build",
        "2.0.0rc1",
    ];
    versions.sort_by(|a, b| version_order(a, b));
    assert_eq!(
        versions,
        [
            "0.9",
            "1.2.0-preview.2",
            "1.2.0-preview.10",
            "1.2.0",
            "1.2.0+build",
            "1.10.0",
            "2.0.0rc1"
        ]
    );
}

fn resolution(kind: &str, spec: &str) -> Resolution {
    let json = serde_json::json!({"agents": [{"id": "a", "name": "A", "version": "1.3.0",
        "distribution": {kind: {"package": spec}}}]});
    let doc = Document::parse(json.to_string().as_bytes(), "test").unwrap();
    resolve(&doc, "a", &ResolveOptions::default()).unwrap()
}

#[test]
fn an_older_release_replaces_only_the_specs_version_and_names_the_install() {
    for (kind, spec, older) in [
        ("npx", "@scope/agent@1.3.0", "@scope/agent@1.1.0"),
        ("npx", "agent@1.3.0", "agent@1.1.0"),
        ("uvx", "agent[extra]==1.3.0", "agent[extra]==1.1.0"),
        ("uvx", "agent@1.3.0", "agent@1.1.0"),
    ] {
        let res = resolution(kind, spec);
        assert_eq!(pinned_version(&res).as_deref(), Some("1.3.0"), "{spec}");
        let moved = at_version(&res, "1.1.0").unwrap();
        assert_eq!(moved.package.as_ref().unwrap().package, older);
        assert_eq!(moved.entry.version, "1.1.0");
        assert_eq!(moved.args, res.args);
    }
    let res = resolution("npx", "agent@1.3.0");
    for hostile in ["1.1.0 || 9", "../1.0.0", "latest", "1.1.0 file:/etc", ""] {
        assert_eq!(at_version(&res, hostile), None, "{hostile}");
    }
    assert_eq!(pinned_version(&resolution("npx", "agent@latest")), None);
    assert_eq!(
        at_version(&resolution("npx", "agent@^1.3.0"), "1.1.0"),
        None
    );
}
