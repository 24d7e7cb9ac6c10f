//! `verify`'s second containment round against hostile test agents (`tests/agents/acp_agent.py`):
//! an agent that tries to read the runner's credentials (a fake HOME's git, npm, gh and SSH
//! files, the checkout's `.git/config`, `$GITHUB_WORKSPACE`, `$RUNNER_TEMP`, another agent's
//! sandbox) and every process's command line and environment; agents and their setsid'd
//! grandchildren ending when the verifier is killed with SIGKILL, with and without namespaces; the
//! isolation named on the terminal and in the step summary. What the kernel offers decides
//! what is asserted, and each test prints the isolation it ran under.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::verify::{
    landlock_abi, manifest, server, set_env, survived, tagged, without_namespaces,
};
use acp_test_kit::wheel::registry;
use acp_test_kit::Run;

/// A secret only the command line of the verifier's parent holds.
const CMDLINE_SECRET: &str = "cmdline-secret-4b1d";
/// The verifier's `GITHUB_TOKEN` (`common::verify::command` sets the same).
const TOKEN: &str = "secret-token";

/// Whether this machine lets an unprivileged process mount a `/proc` of its own PID
/// namespace (what the verifier's init does), asked of util-linux's `unshare`.
fn private_proc_possible() -> bool {
    Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--mount-proc",
            "true",
        ])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Files a runner holds secrets in, each with a fake secret: in `home` (the verifier's HOME),
/// the checkout `checkout`, `$GITHUB_WORKSPACE` and `$RUNNER_TEMP`.
fn plant_credentials(home: &Path, checkout: &Path, workspace: &Path, temp: &Path) -> Vec<PathBuf> {
    let files = [
        (
            home.join(".git-credentials"),
            "https://x:ghp_fake@github.com\n",
        ),
        (
            home.join(".npmrc"),
            "//registry.npmjs.org/:_authToken=npm_fake\n",
        ),
        (
            home.join(".config/gh/hosts.yml"),
            "github.com:\n  oauth_token: gho_fake\n",
        ),
        (
            home.join(".ssh/id_ed25519"),
            "-----BEGIN OPENSSH PRIVATE KEY-----\n",
        ),
        (
            checkout.join(".git/config"),
            "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic ZmFrZQ==\n",
        ),
        (workspace.join("token.txt"), "workspace secret\n"),
        (temp.join("_runner_file_commands/set_env"), "TOKEN=fake\n"),
    ];
    for (path, text) in &files {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let mut probes: Vec<PathBuf> = files.into_iter().map(|(p, _)| p).collect();
    probes.extend([
        home.to_path_buf(),
        checkout.to_path_buf(),
        PathBuf::from("/etc/shadow"),
    ]);
    probes
}

/// The verifier run from inside `checkout` (its registry), under a parent whose command line
/// holds [`CMDLINE_SECRET`], with `env` added and the command changed by `prepare`.
fn verify_in_checkout(
    registry_root: &Path,
    env: &[(&str, &Path)],
    prepare: impl FnOnce(&mut Command),
) -> Run {
    let mut command = Command::new("sh");
    command
        .args(["-c", "\"$@\"; exit $?", CMDLINE_SECRET, crate::REGISTRY])
        .args([
            "verify",
            "--format",
            "json",
            "--timeout",
            "60",
            "--no-cache",
        ])
        .args(["--registry", "."])
        .current_dir(registry_root)
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .env("GITHUB_TOKEN", TOKEN)
        .env("ACP_TEST_VERIFIER_SECRET", "verifier-secret-9e2");
    for (key, value) in env {
        command.env(key, value);
    }
    prepare(&mut command);
    Run::of(&mut command)
}

#[test]
fn a_hostile_agent_reads_none_of_the_runner_s_files_nor_other_processes_where_the_kernel_allows() {
    hostile_reader(|_| {});
}

#[test]
fn without_namespaces_a_hostile_agent_still_reads_none_of_the_runner_s_files() {
    hostile_reader(without_namespaces);
}

/// Run the `probe` agent after a `plant` agent, from inside a checkout, with a HOME, a
/// workspace and a runner folder holding fake credentials, the verifier changed by `prepare`;
/// assert what the isolation the kernel gave must stop.
fn hostile_reader(prepare: impl FnOnce(&mut Command)) {
    let server = server();
    let outside = tempfile::tempdir().unwrap();
    let (home, workspace, temp) = (
        outside.path().join("home"),
        outside.path().join("workspace"),
        outside.path().join("runner-temp"),
    );
    let planter = manifest("a-planter", &server, "plant", json!({}));
    let mut probe = manifest("b-probe", &server, "probe", json!({}));
    let reg = registry(&[planter, probe.clone()]);
    // The registry is checked out: its parent holds `.git`.
    let checkout = reg.root.parent().unwrap().to_path_buf();
    let probes = plant_credentials(&home, &checkout, &workspace, &temp);
    let joined = std::env::join_paths(&probes).unwrap();
    set_env(&mut probe, "READ_PROBES", joined.to_str().unwrap());
    set_env(
        &mut probe,
        "READ_SIBLING",
        "0000-a-planter-binary/sandbox/home/planted",
    );
    set_env(&mut probe, "SECRET_NAME", "ACP_TEST_VERIFIER_SECRET");
    std::fs::write(
        reg.root.join("b-probe/agent.json"),
        serde_json::to_string_pretty(&probe).unwrap(),
    )
    .unwrap();
    let run = verify_in_checkout(
        &reg.root,
        &[
            ("HOME", &home),
            ("GITHUB_WORKSPACE", &workspace),
            ("RUNNER_TEMP", &temp),
        ],
        prepare,
    );
    let agents = run.json()["agents"].clone();
    assert_eq!(agents[0]["status"], "passed", "{}", run.all());
    assert_eq!(agents[1]["status"], "passed", "{}", run.all());
    let isolation = &agents[1]["isolation"];
    eprintln!("isolation: {isolation}");
    let report = &agents[1]["initialize"]["_meta"]["probe"];
    // Seconds each part of the probe took (a part over its limit says "timeout").
    eprintln!("probe timings: {}", report["timings"]);
    assert_eq!(report["self"], "read", "its own /proc/self: {report}");
    if landlock_abi() >= 2 {
        assert_eq!(isolation["reads"], "landlock", "{isolation}");
    }
    if isolation["reads"] == "landlock" {
        let reads = report["reads"].as_object().unwrap();
        assert_eq!(
            reads.len(),
            probes.len() + 1,
            "{reads:?} (timings {})",
            report["timings"]
        );
        for (path, outcome) in reads {
            assert!(
                outcome != "read" && outcome != "listed",
                "the agent could read {path}: {reads:?}"
            );
        }
    }
    assert_processes_hidden(report, isolation);
}

/// The agent read no other process's environment, and with a private `/proc` saw only its
/// own processes (and its init's blanked command line).
fn assert_processes_hidden(report: &Value, isolation: &Value) {
    let processes = report["processes"].as_object().expect("a process listing");
    // Without Landlock (whose ptrace scoping hides them) nor a private /proc, the verifier's
    // dumpable ancestors' environments are the user's to read.
    let hidden = isolation["landlock"] != "unavailable" || isolation["proc"] == "private";
    for (pid, seen) in processes.iter().filter(|_| hidden) {
        let environ = seen["environ"].as_str().unwrap_or("");
        assert!(
            !environ.contains(TOKEN) && !environ.contains("verifier-secret-9e2"),
            "the environment of {pid} was readable: {seen}"
        );
    }
    // A private /proc needs the PID namespace (which `without_namespaces` takes away).
    if private_proc_possible() && isolation["pid_namespace"] == true {
        assert_eq!(isolation["proc"], "private", "{isolation}");
    }
    if isolation["proc"] == "private" {
        for (pid, seen) in processes {
            let cmdline = seen["cmdline"].as_str().unwrap_or("");
            assert!(
                cmdline.is_empty() || cmdline.contains("--mode probe"),
                "the agent saw process {pid} ({cmdline}) of the runner: {processes:?}"
            );
        }
    }
    assert!(
        !serde_json::to_string(processes)
            .unwrap()
            .contains(CMDLINE_SECRET)
            || isolation["proc"] == "host",
        "a private /proc showed the verifier's parent: {processes:?}"
    );
}

/// Start verify on an agent (`hold`: a setsid'd grandchild that ignores SIGTERM, then no
/// answer), SIGKILL the verifier once both run, and wait (bounded) for every process tagged
/// with the run's tag to be gone.
fn killed_verifier_leaves_nothing(prepare: impl FnOnce(&mut Command)) {
    let server = server();
    let tag = format!("kill-{}-{:x}", std::process::id(), fastrand::u64(..));
    let mut doc = manifest("holder", &server, "hold", json!({}));
    for target in doc["distribution"]["binary"]
        .as_object_mut()
        .unwrap()
        .values_mut()
    {
        target["args"] = json!(["--mode", "hold", "--tag", tag]);
    }
    let reg = registry(&[doc]);
    let mut command =
        crate::common::verify::command(&reg.root, &["verify", "--timeout", "120", "--no-cache"]);
    command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    prepare(&mut command);
    let mut verifier = command.spawn().unwrap();
    let started = Instant::now();
    // The agent and its grandchild (re-executed as `linger`) both carry the tag.
    let running = || {
        let modes: Vec<bool> = tagged(&tag).iter().map(|pid| lingers(*pid)).collect();
        modes.contains(&true) && modes.contains(&false)
    };
    while !running() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = running();
    verifier.kill().unwrap();
    verifier.wait().unwrap();
    let killed = Instant::now();
    while !tagged(&tag).is_empty() && killed.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(before, "the agent and its grandchild never ran");
    assert!(
        !survived(&tag),
        "processes of the agent outlived the killed verifier"
    );
}

/// Whether `pid` is the test agent's `linger` mode (a grandchild after its re-execution).
fn lingers(pid: i32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.windows(13).any(|w| w == b"--mode\0linger"))
}

#[test]
fn agents_and_their_grandchildren_die_with_a_sigkilled_verifier() {
    killed_verifier_leaves_nothing(|_| {});
}

#[test]
fn without_namespaces_agents_and_their_grandchildren_die_with_a_sigkilled_verifier() {
    killed_verifier_leaves_nothing(without_namespaces);
}

#[test]
fn the_terminal_and_the_step_summary_name_the_isolation() {
    let server = server();
    let reg = registry(&[manifest("good", &server, "well-behaved", json!({}))]);
    let summary = reg.root.parent().unwrap().join("summary.md");
    let terminal = crate::common::verify::run(&reg.root, &["verify", "--timeout", "30"]);
    let line = terminal
        .all()
        .lines()
        .find(|l| l.starts_with("isolation: "))
        .unwrap_or_else(|| panic!("no isolation line: {}", terminal.all()))
        .to_string();
    eprintln!("{line}");
    let github = Run::of(
        crate::common::verify::command(
            &reg.root,
            &["verify", "--format", "github", "--timeout", "30"],
        )
        .arg("--no-cache")
        .env("GITHUB_STEP_SUMMARY", &summary),
    );
    assert_eq!(github.code, 0, "{}", github.all());
    let text = std::fs::read_to_string(&summary).unwrap();
    let described = line.trim_start_matches("isolation: ");
    assert!(
        text.contains(&format!("**Isolation:** {described}\n")),
        "{text}"
    );
    if landlock_abi() >= 2 {
        assert!(described.starts_with("Landlock"), "{described}");
    }
}
