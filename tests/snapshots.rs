//! Snapshots of every renderer on the same broken fixture and of every `--help` text
//! (`cargo insta review` after an intended change).

mod common;

use acp_registry::commands::validate::{render, Format};
use acp_registry::registry::check_registry;
use common::{acp_registry, repo_root};

fn broken_report() -> acp_registry::diagnostics::Report {
    check_registry(&repo_root().join("tests/fixtures/broken"), None)
        .unwrap()
        .report
}

#[test]
fn human_renderer() {
    insta::assert_snapshot!(render(&broken_report(), Format::Human, false));
}

#[test]
fn human_renderer_with_color() {
    insta::assert_snapshot!(render(&broken_report(), Format::Human, true));
}

#[test]
fn json_renderer() {
    insta::assert_snapshot!(render(&broken_report(), Format::Json, false));
}

#[test]
fn github_renderer() {
    insta::assert_snapshot!(render(&broken_report(), Format::Github, false));
}

#[test]
fn github_step_summary() {
    insta::assert_snapshot!(
        acp_registry::diagnostics::render_github_summary(&broken_report()).unwrap()
    );
}

#[test]
fn sarif_renderer() {
    insta::assert_snapshot!(render(&broken_report(), Format::Sarif, false));
}

#[test]
fn help_texts() {
    for args in [
        &["--help"][..],
        &["validate", "--help"],
        &["build", "--help"],
        &["site", "--help"],
        &["explain", "--help"],
        &["fmt", "--help"],
        &["init", "--help"],
        &["new", "--help"],
        &["update", "--help"],
        &["completions", "--help"],
        &["man", "--help"],
        &["verify", "--help"],
        &["matrix", "--help"],
        &["pack", "--help"],
    ] {
        let run = acp_registry(args, &repo_root());
        assert_eq!(run.code, 0);
        let name = match args {
            [_] => "help".to_string(),
            [command, ..] => format!("help-{command}"),
            [] => unreachable!(),
        };
        insta::assert_snapshot!(name, run.stdout);
    }
}

#[test]
fn acp_collab_help_texts() {
    for args in [
        &["--help"][..],
        &["init", "--help"],
        &["append", "--help"],
        &["next", "--help"],
        &["wait", "--help"],
        &["validate", "--help"],
        &["status", "--help"],
        &["log", "--help"],
        &["skill", "install", "--help"],
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_acp-collab"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        let name = match args {
            [_] => "collab-help".to_string(),
            [command, ..] => format!("collab-help-{command}"),
            [] => unreachable!(),
        };
        insta::assert_snapshot!(name, String::from_utf8(output.stdout).unwrap());
    }
}
