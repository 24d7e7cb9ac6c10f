//! `acp-collab init`: every validation error in order, resume, templates,
//! external mode, and symlink refusal.

use crate::support::*;
use acp_collab::{self as collab, spec, CollabError, InitOptions, InitOutcome};

fn base_args(folder: &str) -> Vec<String> {
    std::iter::once("init")
        .chain(acp_test_kit::collab::two_party_init_flags(folder, "O"))
        .map(str::to_owned)
        .collect()
}

fn usage_error(opts: &InitOptions) -> String {
    match collab::init(opts) {
        Err(CollabError::Usage(m)) => m,
        other => panic!("expected a usage error, got {other:?}"),
    }
}

type Tweak = Box<dyn Fn(&mut InitOptions)>;

/// Each bad argument with the usage error it gets, in the order they are checked.
fn init_error_cases() -> Vec<(Tweak, &'static str)> {
    vec![
        (
            Box::new(|o| o.objective = "  ".into()),
            "--objective must not be blank",
        ),
        (
            Box::new(|o| o.participants = vec!["a".into(), " a ".into(), " ".into()]),
            "at least two non-blank --participant values are required",
        ),
        (
            Box::new(|o| o.completion = vec![" ".into()]),
            "at least one non-blank --completion is required",
        ),
        (
            Box::new(|o| o.primary_type = "custom".into()),
            "custom deliverables require --primary-deliverable-file",
        ),
        (
            Box::new(|o| {
                o.primary_type = "custom".into();
                o.primary_file = Some("c.md".into());
                o.primary_checks = vec![" ".into()];
            }),
            "custom deliverables require at least one --primary-deliverable-check",
        ),
        (
            Box::new(|o| o.primary_file = Some("x.txt".into())),
            "primary deliverable file must end with .md",
        ),
        (
            Box::new(|o| o.primary_file = Some("x.MD".into())),
            "primary deliverable file must end with .md",
        ),
        (
            Box::new(|o| o.primary_file = Some("/abs/x.md".into())),
            "primary deliverable file must be relative and must not contain ..",
        ),
        (
            Box::new(|o| o.primary_file = Some("../x.md".into())),
            "primary deliverable file must be relative and must not contain ..",
        ),
        (
            Box::new(|o| o.deliverables_dir = "/abs/d".into()),
            "--deliverables-dir must be relative and must not contain ..",
        ),
        (
            Box::new(|o| o.deliverables_dir = "a/../b".into()),
            "--deliverables-dir must be relative and must not contain ..",
        ),
        (
            Box::new(|o| o.deliverables_mode = "external".into()),
            "--repo-root is required when --deliverables-mode external",
        ),
        (
            Box::new(|o| {
                o.deliverables_mode = "external".into();
                o.repo_root = Some("/repo".into());
            }),
            "--repo-root must be relative to the collaboration folder",
        ),
        (
            Box::new(|o| o.repo_root = Some("..".into())),
            "--repo-root is only allowed when --deliverables-mode external",
        ),
        // The first failure wins: a blank objective beats a bad file.
        (
            Box::new(|o| {
                o.objective = String::new();
                o.primary_file = Some("x.txt".into());
            }),
            "--objective must not be blank",
        ),
        // --resume does not skip argument validation.
        (
            Box::new(|o| {
                o.resume = true;
                o.completion = vec![];
            }),
            "at least one non-blank --completion is required",
        ),
    ]
}

#[test]
fn init_validation_errors_in_the_documented_order() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("c");
    let ok = || init_options(&folder, &["server", "reader"]);
    let cases = init_error_cases();
    for (tweak, expected) in cases {
        let mut opts = ok();
        tweak(&mut opts);
        assert_eq!(usage_error(&opts), expected);
        assert!(!folder.exists(), "nothing is written for: {expected}");
    }
}

#[test]
fn init_usage_errors_are_argparse_shaped_on_stderr_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("c");
    let mut args = base_args(f.to_str().unwrap());
    args[8] = " ".into(); // the objective
    let out = bin().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.starts_with("usage: acp-collab init "), "{err}");
    assert!(
        err.ends_with("\nacp-collab init: error: --objective must not be blank\n"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());

    let out = bin().args(["init", "--folder", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).ends_with(
        "acp-collab init: error: the following arguments are required: --participant, --objective, --completion, --primary-deliverable-type\n"
    ));
    let mut args = base_args(f.to_str().unwrap());
    args[12] = "memo".into();
    let out = bin().args(&args).output().unwrap();
    assert!(stderr(&out).ends_with(
        "acp-collab init: error: argument --primary-deliverable-type: invalid choice: 'memo' (choose from 'adr', 'custom', 'decision-memo', 'design-spec', 'implementation-plan', 'review-report', 'test-plan')\n"
    ), "{}", stderr(&out));
}

#[test]
fn init_refuses_an_existing_protocol_json_unless_resuming() {
    let fx = Fx::new(&["server", "reader"]);
    let before = fx.read("protocol.json");
    let mut opts = init_options(&fx.folder, &["server", "reader"]);
    assert_eq!(
        usage_error(&opts),
        "collaboration folder already contains protocol.json; use --resume to acknowledge it"
    );
    opts.resume = true;
    opts.objective = "A different objective".into();
    assert_eq!(
        collab::init(&opts).unwrap(),
        InitOutcome::AlreadyExists(fx.folder.clone())
    );
    assert_eq!(fx.read("protocol.json"), before, "resume rewrites nothing");
    let mut args = base_args(&fx.folder_str());
    args.push("--resume".into());
    let out = bin().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        format!(
            "Collaboration folder already exists: {0}\nserver runs: acp-collab next --folder {0} \
             --participant server\nreader runs: acp-collab next --folder {0} --participant reader\n",
            fx.folder_str()
        )
    );
}

#[test]
fn resume_without_protocol_json_initialises_normally() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = init_options(&tmp.path().join("c"), &["server", "reader"]);
    opts.resume = true;
    assert!(matches!(
        collab::init(&opts).unwrap(),
        InitOutcome::Initialized(_)
    ));
}

#[test]
fn init_writes_every_protocol_file_and_a_valid_folder() {
    let fx = Fx::new(&[" server ", "reader", "server", ""]);
    for name in spec::REQUIRED_FILES.iter().chain(["README.md", REF].iter()) {
        assert!(fx.path(name).is_file(), "{name}");
    }
    let p = fx.protocol();
    assert_eq!(
        p["participants"],
        serde_json::json!([{"id": "server"}, {"id": "reader"}])
    );
    assert_eq!(p["proposalOwner"], "server");
    assert_eq!(p["deliverables"]["owner"], "server");
    assert!(p.get("repoRoot").is_none());
    assert_eq!(p["completionGates"].as_array().unwrap().len(), 7);
    assert_eq!(
        p["completionGates"][1]["text"],
        "Primary deliverable exists: `deliverables/design-spec.md`"
    );
    let events = fx.read("events.jsonl");
    assert!(
        events.starts_with("{\"seq\":1,\"from\":\"server\",\"event\":\"initialized\",\"at\":\"")
    );
    assert!(events.ends_with(
        "\",\"summary\":\"Initialized ACP schema v2 collaboration workspace.\",\"doc\":\"protocol.json\"}\n"
    ));
    assert!(fx.read("readiness.md").contains("\n- [ ] Gate A\n"));
    assert!(fx
        .read("readiness.md")
        .contains("\n- [ ] Primary deliverable status is `Frozen`\n"));
    assert!(fx
        .read("decisions.md")
        .contains("- Reflected in: `deliverables/design-spec.md#proposed-design`"));
    fx.assert_valid();
}

#[test]
fn every_deliverable_type_gets_its_byte_exact_template() {
    for kind in spec::DELIVERABLE_TYPES {
        let fx = Fx::with(&["a", "b"], |o| {
            o.primary_type = kind.into();
            if kind == "custom" {
                o.primary_file = Some("out/custom.md".into());
                o.primary_checks = vec![" One ".into(), String::new(), "Two".into()];
            }
        });
        let (title, default_file, sections) = spec::deliverable_spec(kind).unwrap();
        let file = default_file.unwrap_or("out/custom.md");
        let sections: Vec<String> = if kind == "custom" {
            vec!["One".into(), "Two".into()]
        } else {
            sections.iter().map(|s| (*s).to_owned()).collect()
        };
        let body: Vec<String> = sections.iter().map(|s| format!("## {s}\n\n")).collect();
        let expected = format!(
            "# {title}\n\nDeliverable type: `{kind}`\nStatus: Draft\n\n{}\n",
            body.join("\n\n")
        );
        assert_eq!(fx.read(&format!("deliverables/{file}")), expected, "{kind}");
        assert_eq!(fx.primary, format!("deliverables/{file}"));
        fx.assert_valid();
    }
}

#[test]
fn builtin_types_store_but_ignore_checks() {
    let fx = Fx::with(&["a", "b"], |o| o.primary_checks = vec!["Extra".into()]);
    assert_eq!(
        fx.protocol()["deliverables"]["primary"]["checklist"],
        serde_json::json!(["Extra"])
    );
    assert!(!fx.read(REF).contains("Extra"));
    fx.assert_valid();
}

#[test]
fn primary_ref_is_normalised_like_a_posix_path() {
    let fx = Fx::with(&["a", "b"], |o| {
        o.deliverables_dir = "./d/".into();
        o.primary_file = Some("./x.md".into());
    });
    assert_eq!(fx.primary, "d/x.md");
    assert!(fx.path("d/x.md").is_file());
    fx.assert_valid();
}

#[test]
fn empty_deliverables_dir_is_accepted_by_init_and_rejected_by_the_validator() {
    let fx = Fx::with(&["a", "b"], |o| o.deliverables_dir = String::new());
    assert_eq!(fx.primary, "design-spec.md");
    assert!(fx.path("design-spec.md").is_file());
    assert_eq!(fx.errors(), vec!["deliverables.dir is required"]);
}

#[test]
fn external_mode_writes_into_the_repository_and_validates() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().canonicalize().unwrap().join("repo");
    let folder = repo.join(".acp/run");
    let mut opts = init_options(&folder, &["a", "b"]);
    opts.deliverables_mode = "external".into();
    opts.repo_root = Some("../..".into());
    opts.deliverables_dir = "docs/out".into();
    opts.primary_type = "decision-memo".into();
    collab::init(&opts).unwrap();
    assert!(repo.join("docs/out/decision-memo.md").is_file());
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("protocol.json")).unwrap())
            .unwrap();
    assert_eq!(p["repoRoot"], "../..");
    assert!(std::fs::read_to_string(folder.join("readiness.md"))
        .unwrap()
        .contains("- Primary: `external:decision-memo.md`"));
    assert!(std::fs::read_to_string(folder.join("README.md"))
        .unwrap()
        .contains("- `docs/out/`:"));
    let report = collab::validate(folder.to_str().unwrap()).unwrap();
    assert_eq!(report.exit_code(), 0, "{}", report.render_text());
}

#[test]
fn a_stale_event_log_gets_a_second_initialized_line() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("c");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("events.jsonl"), "{\"seq\":1}").unwrap();
    collab::init(&init_options(&folder, &["a", "b"])).unwrap();
    let log = std::fs::read_to_string(folder.join("events.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 2);
    assert!(log.lines().nth(1).unwrap().contains("\"initialized\""));
}

#[test]
fn init_on_a_regular_file_is_an_error_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let out = bin()
        .args(base_args(file.to_str().unwrap()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: ") && err.contains("is not a directory"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn init_refuses_to_write_through_a_symlink() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("c");
    std::fs::create_dir_all(folder.join("deliverables")).unwrap();
    let outside = tmp.path().join("outside.md");
    std::fs::write(&outside, "keep me").unwrap();
    std::os::unix::fs::symlink(&outside, folder.join("deliverables/design-spec.md")).unwrap();
    let err = match collab::init(&init_options(&folder, &["a", "b"])) {
        Err(e @ CollabError::Read(_)) => e.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(
        err.contains("deliverables/design-spec.md is a symlink"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me");
    assert!(
        !folder.join("protocol.json").exists(),
        "nothing was written"
    );
}
