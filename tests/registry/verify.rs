//! `verify` and `matrix` end to end, against the scriptable test agent
//! `tests/agents/acp_agent.py` served by a local HTTP server as a raw binary (or inside a
//! `.tar.gz`), run with `--registry .` inside a generated registry.
//!
//! Cases: a well-behaved agent, stdout logging, a notification and a request before the
//! response, silence, immediate exit; setsid'd and orphaned grandchildren that ignore SIGTERM, an
//! orphan that re-executes itself with an empty environment (with and without namespaces, beside
//! a slower agent under `-j 2`); what a hostile agent reaches (the verifier's secret variable, a
//! descriptor the caller left open, writes outside the sandbox, the run folders' modes, with and
//! without namespaces and with Landlock refused); a library caller's own children left alone;
//! contradicting capabilities, protocol version 2, no sign-in, the sandbox environment, `-j`
//! order, not tested, quarantine, `matrix` and `--changed-only`, `build --matrix`; shards (a
//! partition for N = 1…8 composing with `--agent` and `--type`, stable when an entry is added,
//! `matrix merge` equal to the unsharded `matrix.json` and `matrix.md` byte for byte, refused
//! mismatches, overlaps and missing shards); a flooding agent under a peak-RSS bound (the verifier's
//! own high-water mark), a never-reading agent ending within `--timeout` plus the grace, the
//! `$GITHUB_STEP_SUMMARY` table. `bench/verify.sh` and `bench/verify_flood.sh` measure time and
//! peak memory against the same agents.
#![cfg(unix)]

use std::path::Path;

use serde_json::{json, Value};

use crate::common;
use acp_test_kit::server as net_server;
use acp_test_kit::wheel::{agent_script, binary_everywhere, registry};
use common::verify::{run, Run};
use net_server::{Reply, Server};

fn tar_gz(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (path, data, mode) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(*mode);
        header.set_cksum();
        builder.append_data(&mut header, path, *data).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

/// A server with the agent as `/agent` and as `bin/acp-agent` in `/agent.tar.gz`.
pub(crate) fn server() -> Server {
    let script = agent_script();
    let archive = tar_gz(&[("bin/acp-agent", &script, 0o644)]);
    Server::start(move |request, _| match request.path.as_str() {
        "/agent" => Reply::body(200, script.clone()),
        "/agent.tar.gz" => Reply::body(200, archive.clone()),
        _ => Reply::status(404),
    })
}

/// A manifest whose binary distribution runs the test agent in `mode` on every platform.
pub(crate) fn manifest(id: &str, server: &Server, mode: &str, extra: Value) -> Value {
    let target = json!({"archive": server.url("/agent"), "cmd": "agent", "args": ["--mode", mode]});
    let mut doc = json!({
        "id": id, "name": id, "version": "1.0.0", "description": "A test agent.",
        "distribution": binary_everywhere(&target),
    });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            doc[k] = v;
        }
    }
    doc
}

pub(crate) fn set_env(doc: &mut Value, key: &str, value: &str) {
    for target in doc["distribution"]["binary"]
        .as_object_mut()
        .unwrap()
        .values_mut()
    {
        target["env"][key] = json!(value);
    }
}

fn verify_json(root: &Path, extra: &[&str]) -> Run {
    // Generous: a loaded CI machine must not turn a slow start into a timeout.
    let mut args = vec!["verify", "--format", "json", "--timeout", "30"];
    args.extend(extra);
    run(root, &args)
}

#[test]
fn a_well_behaved_agent_passes_and_its_answer_is_recorded() {
    let server = server();
    let reg = registry(&[manifest("good", &server, "well-behaved", json!({}))]);
    let run = verify_json(&reg.root, &[]);
    assert_eq!(run.code, 0, "{}", run.all());
    let agent = &run.json()["agents"][0];
    assert_eq!(agent["status"], "passed", "{}", run.all());
    assert_eq!(agent["protocol_version"], 1);
    assert_eq!(agent["initialize"]["agentInfo"]["name"], "test-agent");
    assert_eq!(agent["auth_methods"][0]["type"], "agent");
    assert!(run.codes().is_empty(), "{:?}", run.codes());
}

#[test]
fn a_tar_gz_is_unpacked_and_cmd_inside_it_is_made_executable() {
    let server = server();
    let mut doc = manifest("packed", &server, "well-behaved", json!({}));
    for target in doc["distribution"]["binary"]
        .as_object_mut()
        .unwrap()
        .values_mut()
    {
        target["archive"] = json!(server.url("/agent.tar.gz"));
        target["cmd"] = json!("./bin/acp-agent");
    }
    let reg = registry(&[doc]);
    let run = verify_json(&reg.root, &[]);
    assert_eq!(run.json()["agents"][0]["status"], "passed", "{}", run.all());
}

#[test]
fn a_log_line_on_stdout_is_a_protocol_violation() {
    let server = server();
    let reg = registry(&[manifest("logger", &server, "stdout-log", json!({}))]);
    let run = verify_json(&reg.root, &[]);
    assert_eq!(run.code, 1);
    assert_eq!(run.codes(), ["agent-protocol"]);
    assert!(run.findings().findings[0]
        .message
        .contains("Starting test agent"));
}

#[test]
fn notifications_are_skipped_and_agent_requests_answered_with_an_error() {
    let server = server();
    let reg = registry(&[manifest("chatty", &server, "chatty", json!({}))]);
    let run = verify_json(&reg.root, &[]);
    // The agent exits with code 4 unless its request got an error response.
    assert_eq!(run.json()["agents"][0]["status"], "passed", "{}", run.all());
    assert_eq!(run.json()["agents"][0]["notifications"], 1);
    assert_eq!(
        run.json()["agents"][0]["agent_requests"],
        json!(["fs/read_text_file"])
    );
}

#[test]
fn an_agent_that_never_answers_times_out() {
    let server = server();
    let reg = registry(&[manifest("silent", &server, "silent", json!({}))]);
    let run = run(&reg.root, &["verify", "--format", "json", "--timeout", "1"]);
    assert_eq!(run.codes(), ["agent-timeout"], "{}", run.all());
}

#[test]
fn an_agent_that_exits_at_once_is_a_launch_failure_with_its_exit_code() {
    let server = server();
    let reg = registry(&[manifest("quitter", &server, "exit", json!({}))]);
    let run = verify_json(&reg.root, &[]);
    assert_eq!(run.codes(), ["agent-launch"]);
    assert!(
        run.findings().findings[0].message.contains("code 3"),
        "{}",
        run.all()
    );
}

fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
    // Gone, or a zombie nobody reaps any more (not ours: the verifier has exited).
    stat.is_ok_and(|s| !s.contains(") Z ")) && unsafe { libc::kill(pid, 0) } == 0
}

/// The tag on the command line of the grandchild the agent reports in its answer's `_meta`
/// (a private `/proc` hides the pid the verifier sees).
fn grandchild_of(run: &Run, agent: usize) -> String {
    let tag = &run.json()["agents"][agent]["initialize"]["_meta"]["tag"];
    tag.as_str()
        .unwrap_or_else(|| panic!("no grandchild tag: {}", run.all()))
        .to_string()
}

/// The live processes whose command line holds `--tag TAG`.
pub(crate) fn tagged(tag: &str) -> Vec<i32> {
    let needle = format!("--tag\0{tag}\0");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .filter(|pid| alive(*pid))
        .collect()
}

/// Whether a process tagged `tag` still runs; those that do are killed, so a failing test
/// leaves nothing.
pub(crate) fn survived(tag: &str) -> bool {
    let left = tagged(tag);
    for pid in &left {
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    !left.is_empty()
}

fn grandchild_is_gone(mode: &str) {
    let server = server();
    let reg = registry(&[manifest("spawner", &server, mode, json!({}))]);
    let run = verify_json(&reg.root, &[]);
    assert_eq!(run.json()["agents"][0]["status"], "passed", "{}", run.all());
    let tag = grandchild_of(&run, 0);
    assert!(!survived(&tag), "grandchild {tag} survived verify");
}

#[test]
#[cfg(target_os = "linux")]
fn a_grandchild_that_calls_setsid_and_ignores_sigterm_is_killed() {
    grandchild_is_gone("grandchild");
}

#[test]
#[cfg(target_os = "linux")]
fn an_orphaned_grandchild_reparented_to_the_verifier_is_killed() {
    grandchild_is_gone("orphan");
}

/// `verify -j 2` of an agent whose grandchild escapes (`reexec-orphan`) beside one slow to
/// answer, the verifier's command changed by `prepare`: both must pass, and the grandchild
/// must be gone when verify returns.
#[cfg(target_os = "linux")]
fn escaped_orphan_is_killed(prepare: impl FnOnce(&mut std::process::Command)) -> Run {
    let server = server();
    let reg = registry(&[
        manifest("escaper", &server, "reexec-orphan", json!({})),
        manifest("patient", &server, "slow", json!({})),
    ]);
    let mut command = common::verify::command(
        &reg.root,
        &["verify", "--format", "json", "--timeout", "30", "-j", "2"],
    );
    command.arg("--no-cache");
    prepare(&mut command);
    let run = common::verify::run_command(&mut command);
    assert_eq!(run.json()["agents"][0]["status"], "passed", "{}", run.all());
    assert_eq!(run.json()["agents"][1]["status"], "passed", "{}", run.all());
    let tag = grandchild_of(&run, 0);
    assert!(!survived(&tag), "re-executed orphan {tag} survived verify");
    run
}

#[test]
#[cfg(target_os = "linux")]
fn an_orphan_that_re_executes_itself_with_an_empty_environment_is_killed_and_no_other_agent() {
    escaped_orphan_is_killed(|_| {});
}

#[test]
#[cfg(target_os = "linux")]
fn without_namespaces_an_escaped_orphan_is_still_killed() {
    let run = escaped_orphan_is_killed(without_namespaces);
    assert_eq!(
        run.json()["agents"][0]["isolation"]["pid_namespace"],
        false,
        "{}",
        run.all()
    );
}

/// Run the command in a user namespace of its own whose limits allow no further user or
/// PID namespace, as on a machine that refuses them to unprivileged users. Where user
/// namespaces are refused already, the command runs as it is.
#[cfg(target_os = "linux")]
pub(crate) fn without_namespaces(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid and getegid cannot fail.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let writes: Vec<(std::ffi::CString, Vec<u8>)> = [
        ("/proc/self/uid_map", format!("0 {uid} 1")),
        ("/proc/self/setgroups", "deny".to_string()),
        ("/proc/self/gid_map", format!("0 {gid} 1")),
        ("/proc/sys/user/max_user_namespaces", "0".to_string()),
        ("/proc/sys/user/max_pid_namespaces", "0".to_string()),
    ]
    .into_iter()
    .map(|(path, text)| (std::ffi::CString::new(path).unwrap(), text.into_bytes()))
    .collect();
    // SAFETY: unshare, open, write and close on memory prepared before the fork.
    unsafe {
        command.pre_exec(move || {
            if libc::unshare(libc::CLONE_NEWUSER) != 0 {
                return Ok(());
            }
            for (path, text) in &writes {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY);
                let written = fd >= 0 && libc::write(fd, text.as_ptr().cast(), text.len()) > 0;
                libc::close(fd);
                if !written && !path.to_bytes().ends_with(b"setgroups") {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// Stack on the command the 16 Landlock layers the kernel allows (each only refusing to
/// make block devices), so the agent's own ruleset is refused (E2BIG).
#[cfg(target_os = "linux")]
fn landlock_layers_exhausted(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    const MAKE_BLOCK: u64 = 1 << 11;
    // SAFETY: prctl and the Landlock system calls on a local attribute, between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            for _ in 0..16 {
                let handled = MAKE_BLOCK;
                let fd = libc::syscall(
                    libc::SYS_landlock_create_ruleset,
                    &raw const handled,
                    size_of::<u64>(),
                    0u32,
                );
                if fd < 0 || libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(fd as i32);
            }
            Ok(())
        });
    }
}

#[test]
#[cfg(target_os = "linux")]
fn a_library_caller_keeps_the_children_it_starts_during_a_run() {
    let server = server();
    let reg = registry(&[manifest("patient", &server, "slow", json!({}))]);
    let checked = acp_registry::check_registry(&reg.root, None).unwrap();
    let timeout = std::time::Duration::from_secs(30);
    let options = acp_registry::verify::Options::with_network(common::fast_net(timeout), timeout);
    // Started while the agent is still answering, so its clean-up sees it.
    let spawner = std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_millis(300));
        std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap()
    });
    let outcome = {
        let _alone = common::verify::in_process();
        acp_registry::verify::run(&checked, &options).unwrap()
    };
    let mut child = spawner.join().unwrap();
    let kept = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(!outcome.report.has_errors());
    assert!(kept, "verify killed a child its caller started");
}

/// What the `probe` agent reached, run by a verifier that has a secret variable, a
/// descriptor left open (not close-on-exec) as fd 100, a HOME and a cache folder of its own;
/// and the paths outside the sandbox it tried to write.
struct Probe {
    run: Run,
    secret: String,
    outside: Vec<std::path::PathBuf>,
    _dir: tempfile::TempDir,
}

const INHERITED_FD: i32 = 100;

fn probe_run(prepare: impl FnOnce(&mut std::process::Command)) -> Probe {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let (home, cache, elsewhere) = (
        dir.path().join("home"),
        dir.path().join("cache"),
        dir.path().join("elsewhere"),
    );
    for folder in [&home, &cache, &elsewhere] {
        std::fs::create_dir(folder).unwrap();
    }
    let outside = vec![
        home.join("written"),
        cache.join("written"),
        elsewhere.join("written"),
    ];
    let joined = std::env::join_paths(&outside).unwrap();
    let mut doc = manifest("probe", &server, "probe", json!({}));
    set_env(&mut doc, "WRITE_PROBES", joined.to_str().unwrap());
    set_env(&mut doc, "SECRET_NAME", "ACP_TEST_VERIFIER_SECRET");
    let reg = registry(&[doc]);
    let secret = format!("s3cret-{:016x}", std::process::id() as u64 * 7919 + 17);
    let marker = std::fs::File::create(dir.path().join("inherited-marker")).unwrap();
    let fd = marker.as_raw_fd();
    let mut command = common::verify::command(
        &reg.root,
        &["verify", "--format", "json", "--timeout", "30"],
    );
    command
        .arg("--cache")
        .arg(&cache)
        .env("HOME", &home)
        .env("ACP_TEST_VERIFIER_SECRET", &secret);
    // SAFETY: dup2 only, between fork and exec; dup2 leaves the copy without close-on-exec.
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(fd, INHERITED_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    prepare(&mut command);
    let run = common::verify::run_command(&mut command);
    drop(marker);
    assert_eq!(run.json()["agents"][0]["status"], "passed", "{}", run.all());
    Probe {
        run,
        secret,
        outside,
        _dir: dir,
    }
}

impl Probe {
    fn report(&self) -> Value {
        self.run.json()["agents"][0]["initialize"]["_meta"]["probe"].clone()
    }
}

/// The Landlock ABI of the running kernel (0: none).
#[cfg(target_os = "linux")]
pub(crate) fn landlock_abi() -> i64 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only asks.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    abi.max(0)
}

/// Whether this process may unshare these namespaces (tried in a child).
#[cfg(target_os = "linux")]
pub(crate) fn unshare_allowed(flags: i32) -> bool {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new("true");
    // SAFETY: unshare(2) only, between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.status().is_ok_and(|s| s.success())
}

#[test]
#[cfg(target_os = "linux")]
fn the_agent_cannot_read_a_variable_only_the_verifier_has() {
    // Root reads any dumpable process; a user namespace or Landlock takes that away.
    if unsafe { libc::geteuid() } == 0
        && landlock_abi() == 0
        && !unshare_allowed(libc::CLONE_NEWUSER)
    {
        eprintln!("skipped: running as root on a kernel with neither Landlock nor user namespaces");
        return;
    }
    let probe = probe_run(|_| {});
    let seen = probe.report()["secrets"].to_string();
    assert!(
        !seen.contains(&probe.secret),
        "the agent read the verifier's secret: {seen}"
    );
}

#[test]
#[cfg(target_os = "linux")]
fn a_descriptor_the_caller_left_open_is_not_visible_to_the_agent() {
    let probe = probe_run(|_| {});
    let fds = probe.report()["fds"].clone();
    assert!(fds.is_object(), "{}", probe.run.all());
    assert!(
        !fds.to_string().contains("inherited-marker"),
        "the agent inherited the verifier's descriptor: {fds}"
    );
}

#[test]
#[cfg(target_os = "linux")]
fn writes_outside_the_sandbox_fail_and_inside_succeed_where_landlock_is_available() {
    if landlock_abi() < 2 {
        eprintln!("skipped: this kernel has no Landlock (ABI 2 or later) to restrict writes with");
        return;
    }
    let probe = probe_run(|_| {});
    let writes = probe.report()["writes"].clone();
    for path in &probe.outside {
        assert!(
            !path.exists(),
            "the agent wrote {}: {writes}",
            path.display()
        );
    }
    let inside: Vec<&str> = writes
        .as_object()
        .unwrap()
        .iter()
        .filter(|(path, _)| !probe.outside.iter().any(|o| o.to_str() == Some(path)))
        .map(|(_, outcome)| outcome.as_str().unwrap())
        .collect();
    assert_eq!(inside, ["written"; 4], "{writes}");
}

#[test]
#[cfg(target_os = "linux")]
fn the_json_report_names_the_isolation_the_kernel_gave() {
    let probe = probe_run(|_| {});
    let isolation = &probe.run.json()["agents"][0]["isolation"];
    let landlock = match landlock_abi() {
        0 | 1 => "unavailable",
        2..=5 => "partial",
        _ => "full",
    };
    assert_eq!(isolation["landlock"], landlock, "{isolation}");
    let namespaces = unshare_allowed(libc::CLONE_NEWUSER | libc::CLONE_NEWPID)
        || unshare_allowed(libc::CLONE_NEWPID);
    assert_eq!(isolation["pid_namespace"], namespaces, "{isolation}");
    assert_eq!(isolation["verifier_dumpable"], false, "{isolation}");
}

#[test]
#[cfg(target_os = "linux")]
fn an_agent_the_kernel_refuses_landlock_for_still_runs_without_the_verifier_s_secrets() {
    if landlock_abi() == 0 {
        eprintln!("skipped: this kernel has no Landlock, which every other test shows already");
        return;
    }
    let probe = probe_run(landlock_layers_exhausted);
    let isolation = &probe.run.json()["agents"][0]["isolation"];
    assert_eq!(isolation["landlock"], "unavailable", "{isolation}");
    assert!(!probe.report()["fds"]
        .to_string()
        .contains("inherited-marker"));
    // Without Landlock, root keeps its hold on the verifier unless a user namespace took it.
    if unsafe { libc::geteuid() } != 0 || isolation["user_namespace"] == true {
        let seen = probe.report()["secrets"].to_string();
        assert!(!seen.contains(&probe.secret), "{seen}");
    }
}

#[test]
#[cfg(target_os = "linux")]
fn without_namespaces_landlock_still_hides_the_verifier_s_secrets() {
    if landlock_abi() == 0 {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let probe = probe_run(without_namespaces);
    let isolation = &probe.run.json()["agents"][0]["isolation"];
    assert_eq!(isolation["pid_namespace"], false, "{isolation}");
    let seen = probe.report()["secrets"].to_string();
    assert!(!seen.contains(&probe.secret), "{seen}");
}

#[test]
fn run_folders_are_private_to_the_user() {
    let probe = probe_run(|_| {});
    let modes = probe.report()["modes"].as_object().unwrap().clone();
    assert!(
        modes
            .keys()
            .any(|folder| folder.contains("acp-registry-verify-")),
        "{modes:?}"
    );
    for (folder, mode) in &modes {
        assert_eq!(mode, "0o700", "{folder}");
    }
}

#[test]
fn capabilities_that_contradict_the_manifest_are_reported_at_the_claim() {
    let server = server();
    let doc = manifest(
        "liar",
        &server,
        "contradict",
        json!({"capabilities": ["session/load", "session/list"], "protocol_version": 1}),
    );
    let reg = registry(&[doc]);
    let run = verify_json(&reg.root, &[]);
    assert_eq!(run.codes(), ["agent-manifest-mismatch"], "{}", run.all());
    assert_eq!(
        run.findings().findings[0].pointer.as_deref(),
        Some("/capabilities/0")
    );
}

#[test]
fn answering_protocol_version_2_is_reported() {
    let server = server();
    let reg = registry(&[manifest("future", &server, "v2", json!({}))]);
    let run = verify_json(&reg.root, &[]);
    assert_eq!(run.codes(), ["agent-protocol-version"], "{}", run.all());
}

#[test]
fn no_sign_in_method_fails_the_auth_policy_unless_the_configuration_allows_it() {
    let server = server();
    let reg = registry(&[manifest("open", &server, "no-auth", json!({}))]);
    assert_eq!(verify_json(&reg.root, &[]).codes(), ["agent-auth"]);
    std::fs::write(
        reg.root.join("acp-registry.jsonc"),
        r#"{"verify": {"auth_types": []}}"#,
    )
    .unwrap();
    assert!(verify_json(&reg.root, &[]).codes().is_empty());
    std::fs::write(
        reg.root.join("acp-registry.jsonc"),
        r#"{"exemptions": {"open": ["agent-auth"]}}"#,
    )
    .unwrap();
    assert!(verify_json(&reg.root, &[]).codes().is_empty());
}

#[test]
fn the_sandbox_has_a_fresh_home_and_only_allowed_variables() {
    let server = server();
    let mut doc = manifest("env", &server, "env", json!({}));
    set_env(&mut doc, "LD_PRELOAD", "/evil.so");
    set_env(&mut doc, "AGENT_FLAG", "on");
    let reg = registry(&[doc]);
    let run = verify_json(&reg.root, &[]);
    let env = &run.json()["agents"][0]["initialize"]["_meta"]["env"];
    assert_eq!(env["AGENT_FLAG"], "on");
    assert!(env.get("LD_PRELOAD").is_none());
    assert!(env.get("GITHUB_TOKEN").is_none());
    let home = env["HOME"].as_str().unwrap();
    assert_ne!(Some(home.to_string()), std::env::var("HOME").ok());
    assert!(env["npm_config_cache"]
        .as_str()
        .unwrap()
        .contains("acp-registry-verify-"));
    // The sandbox is gone with the run.
    assert!(!Path::new(home).exists());
}

#[test]
fn parallel_runs_report_in_the_same_order_as_serial_ones() {
    let server = server();
    let entries: Vec<Value> = ["delta", "alpha", "charlie", "bravo"]
        .iter()
        .enumerate()
        .map(|(i, id)| {
            manifest(
                id,
                &server,
                if i % 2 == 0 {
                    "well-behaved"
                } else {
                    "no-auth"
                },
                json!({}),
            )
        })
        .collect();
    let reg = registry(&entries);
    let one = verify_json(&reg.root, &["-j", "1"]);
    let four = verify_json(&reg.root, &["-j", "4"]);
    let ids = |r: &Run| {
        r.json()["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&one), ["alpha", "bravo", "charlie", "delta"]);
    assert_eq!(ids(&one), ids(&four));
    assert_eq!(one.findings().findings, four.findings().findings);
}

#[test]
fn a_platform_without_a_build_is_not_tested_and_require_tested_fails_it() {
    let server = server();
    let mut doc = manifest("windows-only", &server, "well-behaved", json!({}));
    doc["distribution"]["binary"] =
        json!({"windows-x86_64": {"archive": server.url("/agent"), "cmd": "agent.exe"}});
    let reg = registry(&[doc]);
    let run = verify_json(&reg.root, &[]);
    assert_eq!(
        (run.code, run.codes()),
        (0, vec!["agent-not-tested".to_string()])
    );
    assert_eq!(run.json()["agents"][0]["status"], "not-tested");
    let strict = verify_json(&reg.root, &["--require-tested"]);
    assert_eq!(strict.code, 1);
    assert_eq!(strict.findings().findings[0].severity, "error");
}

#[test]
fn quarantined_agents_are_skipped_unless_named() {
    let server = server();
    let reg = registry(&[manifest("held", &server, "exit", json!({}))]);
    std::fs::write(
        reg.root.join("quarantine.json"),
        r#"{"held": "broken release"}"#,
    )
    .unwrap();
    let run = verify_json(&reg.root, &[]);
    assert_eq!(run.json()["agents"][0]["status"], "skipped");
    assert_eq!(run.code, 0);
    let named = verify_json(&reg.root, &["--agent", "held"]);
    assert_eq!(named.codes(), ["agent-launch"]);
}

#[test]
fn the_terminal_report_has_one_line_per_agent_and_distribution() {
    let server = server();
    let reg = registry(&[
        manifest("good", &server, "well-behaved", json!({})),
        manifest("bad", &server, "exit", json!({})),
    ]);
    let run = run(&reg.root, &["verify", "--timeout", "30"]);
    let all = run.all();
    let lines: Vec<&str> = all.lines().take(2).collect();
    assert!(lines[0].starts_with("✗ bad binary ("), "{}", run.all());
    assert!(lines[0].contains("agent-launch"));
    assert!(lines[1].starts_with("✓ good binary ("), "{}", run.all());
}

#[test]
fn matrix_probes_the_session_methods_and_changed_only_reuses_unchanged_rows() {
    let server = server();
    let reg = registry(&[manifest("good", &server, "well-behaved", json!({}))]);
    let out = reg.root.parent().unwrap().join("matrix.json");
    let out_arg = out.to_str().unwrap().to_string();
    let first = run(&reg.root, &["matrix", "--timeout", "30", "--out", &out_arg]);
    assert_eq!(first.code, 0, "{}", first.all());
    let matrix: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let methods = &matrix["agents"][0]["methods"];
    assert_eq!(methods["session/new"], "success");
    assert_eq!(methods["session/list"], "success");
    assert_eq!(methods["session/load"], "not-found");
    assert_eq!(methods["session/set_mode"], "success");
    assert_eq!(methods["session/delete"], "method-not-found");
    // Unstable methods are listed as advertised, never sent.
    assert_eq!(methods.get("session/fork"), None);
    assert_eq!(
        matrix["agents"][0]["unstable_methods"],
        json!(["session/fork"])
    );
    let md = std::fs::read_to_string(out.with_extension("md")).unwrap();
    assert!(md.contains("| `session/list` | success |"), "{md}");
    assert!(
        md.contains("Unstable methods advertised (not probed): `session/fork`."),
        "{md}"
    );
    // Unchanged: the row (and its date) is kept without launching; the agent now fails.
    let verified = matrix["agents"][0]["verified"].clone();
    let again = run(&reg.root, &["matrix", "--changed-only", "--out", &out_arg]);
    assert!(again.all().contains("- good binary"), "{}", again.all());
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(kept["agents"][0]["verified"], verified);
    assert_eq!(kept["agents"][0]["methods"], matrix["agents"][0]["methods"]);
}

#[test]
fn matrix_refuses_to_overwrite_a_file_it_did_not_write() {
    let server = server();
    let reg = registry(&[manifest("good", &server, "well-behaved", json!({}))]);
    let out = reg.root.parent().unwrap().join("notes.json");
    std::fs::write(&out, "my notes").unwrap();
    let run = run(&reg.root, &["matrix", "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "my notes");
}

/// The test entries are minimal: an `acp-registry.jsonc` turning off what `build` would refuse
/// them for.
fn silence_what_build_refuses_a_minimal_entry_for(root: &Path) {
    let off = [
        "archive-url",
        "version-mismatch",
        "icon-missing",
        "platform-coverage",
        "license-url-missing",
        "sha256-missing",
    ];
    let severity: serde_json::Map<String, Value> =
        off.iter().map(|c| (c.to_string(), json!("off"))).collect();
    std::fs::write(
        root.join("acp-registry.jsonc"),
        json!({"severity": severity}).to_string(),
    )
    .unwrap();
}

#[test]
fn build_with_a_matrix_publishes_the_evidence_current_then_stale_for_a_new_version() {
    let server = server();
    let reg = registry(&[manifest(
        "good",
        &server,
        "well-behaved",
        json!({"license": "MIT"}),
    )]);
    // The manifest as it is published (https; the test switch fetches loopback over http),
    // so the build compares the very distribution `matrix` launched.
    let path = reg.root.join("good/agent.json");
    let published = std::fs::read_to_string(&path)
        .unwrap()
        .replace("http://127.0.0.1", "https://127.0.0.1");
    std::fs::write(&path, published).unwrap();
    let matrix = reg.root.parent().unwrap().join("matrix.json");
    let matrix_arg = matrix.to_str().unwrap().to_string();
    assert_eq!(
        run(
            &reg.root,
            &["matrix", "--timeout", "30", "--out", &matrix_arg]
        )
        .code,
        0
    );
    silence_what_build_refuses_a_minimal_entry_for(&reg.root);
    let build = |out: &str| {
        let mut command = std::process::Command::new(crate::REGISTRY);
        command
            .args([
                "build",
                "--registry",
                ".",
                "--out",
                out,
                "--matrix",
                &matrix_arg,
            ])
            .current_dir(&reg.root);
        Run::of(&mut command).assert_ok();
        std::fs::read_to_string(reg.root.join(out).join("site/agents/good/index.html")).unwrap()
    };
    let page = build("../dist");
    assert!(page.contains("<dt>Verification</dt>"), "{page}");
    assert!(
        page.contains(r#"<p class="badge badge-verified">Verified</p>"#),
        "{page}"
    );
    assert!(
        page.contains("<li><code>session/list</code></li>"),
        "{page}"
    );
    // What `matrix` recorded is what the build compares: the launch applies as published.
    let evidence: Value = serde_json::from_str(
        &std::fs::read_to_string(reg.root.join("../dist/verification.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(evidence["agents"][0]["state"], "current", "{evidence:#}");
    assert_eq!(
        evidence["agents"][0]["evidence"]["unstable_methods"],
        json!(["session/fork"])
    );
    // A new version was not verified: its page shows the old run as stale.
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"1.0.0\"", "\"1.1.0\"");
    std::fs::write(&path, text).unwrap();
    let stale = build("../dist2");
    assert!(
        stale.contains(r#"<p class="badge badge-stale">Verified an earlier release</p>"#),
        "{stale}"
    );
    assert!(
        stale.contains("Verified an earlier release: 1.0.0 (binary)"),
        "{stale}"
    );
    assert!(!stale.contains("badge-verified"), "{stale}");
}

/// How a `verify` child ended: its output, wall time, peak RSS, and whether `guard` ran out.
struct Measured {
    run: Run,
    elapsed: std::time::Duration,
    peak_rss_kib: i64,
    killed: bool,
}

/// Run `verify ARGS` in `root`, killed after `guard` so that a hang fails instead of blocking
/// the suite; its peak RSS is the verifier's own high-water mark, polled (not `wait4`'s, which
/// would count the test process's memory the child shared between fork and exec).
fn measured(root: &Path, args: &[&str], guard: std::time::Duration) -> Measured {
    use std::io::Read;
    let started = std::time::Instant::now();
    // Reaped below by wait4.
    #[allow(clippy::zombie_processes)]
    let mut child = common::verify::command(root, args)
        .arg("--no-cache")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    let pid = child.id() as libc::pid_t;
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    let mut killed = false;
    let mut peak_kib = 0;
    // SAFETY: wait4 on our own child, with pointers to locals.
    while unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) } == 0 {
        peak_kib = peak_kib.max(acp_test_kit::rss::high_water_of(child.id()).unwrap_or(0));
        if started.elapsed() > guard && !killed {
            killed = true;
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let elapsed = started.elapsed();
    let stdout = reader.join().unwrap();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    Measured {
        // Standard error went to /dev/null.
        run: Run {
            code,
            stdout,
            stderr: String::new(),
        },
        elapsed,
        peak_rss_kib: i64::try_from(peak_kib).unwrap_or(i64::MAX),
        killed,
    }
}

#[test]
fn an_agent_flooding_stdout_with_non_json_lines_leaves_the_verifier_memory_bounded() {
    let server = server();
    let args = ["verify", "--format", "json", "--timeout", "3"];
    let guard = std::time::Duration::from_secs(60);
    let reference = measured(
        &registry(&[manifest("good", &server, "well-behaved", json!({}))]).root,
        &args,
        guard,
    );
    assert_eq!(reference.run.code, 0, "{}", reference.run.all());
    let flood = measured(
        &registry(&[manifest("flood", &server, "flood", json!({}))]).root,
        &args,
        guard,
    );
    assert!(!flood.killed, "verify did not end: {}", flood.run.all());
    // The documented bound per agent (docs/format.md#verify-and-matrix) over the same run's
    // well-behaved reference; the unbounded verifier reached about 1 GB here.
    let bound_kib = 32 * 1024;
    assert!(
        flood.peak_rss_kib < reference.peak_rss_kib + bound_kib,
        "peak RSS {} KiB against {} KiB for a well-behaved agent",
        flood.peak_rss_kib,
        reference.peak_rss_kib
    );
    let findings = flood.run.findings();
    let messages: Vec<&str> = findings
        .findings
        .iter()
        .map(|f| f.message.as_str())
        .collect();
    let dropped: u64 = messages
        .iter()
        .find_map(|m| m.strip_prefix("… and ")?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no count of the violations not kept: {messages:?}"));
    assert!(dropped > 10_000, "{messages:?}");
    assert_eq!(
        flood.run.json()["agents"][0]["protocol_violations"]
            .as_array()
            .map(Vec::len),
        Some(20),
        "{}",
        flood.run.all()
    );
}

#[test]
fn an_agent_that_never_reads_its_stdin_cannot_hold_verify_past_its_timeout() {
    let server = server();
    let reg = registry(&[manifest("deaf", &server, "deaf", json!({}))]);
    let deaf = measured(
        &reg.root,
        &["verify", "--format", "json", "--timeout", "3"],
        std::time::Duration::from_secs(60),
    );
    assert!(!deaf.killed, "verify hung on an agent that does not read");
    // --timeout, the two-second grace of the clean-up, and room for a loaded machine.
    assert!(
        deaf.elapsed < std::time::Duration::from_secs(3 + 2 + 10),
        "{:?}",
        deaf.elapsed
    );
    assert!(
        deaf.run.codes().contains(&"agent-timeout".to_string()),
        "{}",
        deaf.run.all()
    );
    assert!(
        deaf.run.all().contains("did not read its stdin"),
        "{}",
        deaf.run.all()
    );
}

#[test]
fn verify_format_github_appends_the_agents_and_findings_to_the_step_summary() {
    let server = server();
    let reg = registry(&[
        manifest("good", &server, "well-behaved", json!({})),
        manifest("open", &server, "no-auth", json!({})),
    ]);
    let summary = reg.root.parent().unwrap().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let run = common::verify::run_command(
        common::verify::command(
            &reg.root,
            &["verify", "--format", "github", "--timeout", "30"],
        )
        .arg("--no-cache")
        .env("GITHUB_STEP_SUMMARY", &summary),
    );
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.all().contains("::error file="), "{}", run.all());
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.starts_with("earlier step\n"), "{text}");
    assert!(text.contains("| `good` | binary |"), "{text}");
    assert!(text.contains("| `open` | binary |"), "{text}");
    assert!(text.contains("| error | `agent-auth` |"), "{text}");
}

/// A registry of `ids` whose only build is for Windows: `verify` plans each of them (a
/// `not-tested` row) without launching anything, so shards cost nothing to run.
pub(crate) fn untestable_registry(ids: &[String]) -> acp_test_kit::wheel::Registry {
    let entries: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({
                "id": id, "name": id, "version": "1.0.0", "description": "A test agent.",
                "distribution": {"binary": {"windows-x86_64": {
                    "archive": "https://example.com/agent.zip", "cmd": "agent.exe"}}},
            })
        })
        .collect();
    registry(&entries)
}

fn agent_ids(run: &Run) -> Vec<String> {
    run.json()["agents"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", run.all()))
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect()
}

/// Each selected id's shard (1-based) when the selection is split into `n`.
fn shards_of(root: &Path, n: usize, extra: &[&str]) -> std::collections::BTreeMap<String, usize> {
    let mut of = std::collections::BTreeMap::new();
    for k in 1..=n {
        let shard = format!("{k}/{n}");
        let mut args = vec!["--shard", shard.as_str()];
        args.extend(extra);
        let run = verify_json(root, &args);
        assert_eq!(run.code, 0, "{}", run.all());
        assert_eq!(run.json()["part"]["shard"], shard.as_str());
        for id in agent_ids(&run) {
            assert!(
                of.insert(id.clone(), k).is_none(),
                "{id} is in two shards of {n}"
            );
        }
    }
    of
}

#[test]
fn shards_partition_the_selection_for_every_n_and_compose_with_agent_and_type() {
    let ids: Vec<String> = (0..11).map(|i| format!("agent-{i:02}")).collect();
    let reg = untestable_registry(&ids);
    for n in 1..=8 {
        let of = shards_of(&reg.root, n, &[]);
        let got: Vec<&String> = of.keys().collect();
        assert_eq!(
            got,
            ids.iter().collect::<Vec<_>>(),
            "{n} shards: every entry once"
        );
        let mut sizes = vec![0; n];
        for k in of.values() {
            sizes[k - 1] += 1;
        }
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(max - min <= 1, "{n} shards: {sizes:?}");
    }
    // The shards split what the other filters select, and only that.
    let named = "agent-01,agent-04,agent-05,agent-09";
    let of = shards_of(&reg.root, 3, &["--agent", named, "--type", "binary"]);
    assert_eq!(of.keys().cloned().collect::<Vec<_>>().join(","), named);
    let none = verify_json(&reg.root, &["--shard", "1/2", "--type", "npx"]);
    assert_eq!(agent_ids(&none), Vec::<String>::new());
    // --list-shards prints the same split as the runs.
    let list = run(
        &reg.root,
        &["verify", "--list-shards", "4", "--format", "json"],
    );
    let listed: Value = serde_json::from_str(list.stdout.trim()).unwrap();
    let runs = shards_of(&reg.root, 4, &[]);
    for (k, shard) in listed["include"].as_array().unwrap().iter().enumerate() {
        assert_eq!(shard["shard"], format!("{}/4", k + 1));
        for id in shard["agents"].as_array().unwrap() {
            assert_eq!(runs[id.as_str().unwrap()], k + 1, "{id}");
        }
    }
}

#[test]
fn adding_an_entry_keeps_every_other_entry_in_its_shard_but_one_per_boundary() {
    let mut ids: Vec<String> = (0..12).map(|i| format!("agent-{i:02}")).collect();
    let before = shards_of(&untestable_registry(&ids).root, 4, &[]);
    ids.push("a-new-agent".into());
    let after = shards_of(&untestable_registry(&ids).root, 4, &[]);
    let moved: Vec<(&String, usize, usize)> = before
        .iter()
        .filter(|(id, k)| after[*id] != **k)
        .map(|(id, k)| (id, *k, after[id]))
        .collect();
    assert!(moved.len() <= 3, "{moved:?}");
    assert!(
        moved.iter().all(|(_, a, b)| a.abs_diff(*b) == 1),
        "{moved:?}"
    );
}

#[test]
fn shard_and_list_shards_refuse_bad_values_naming_the_flag() {
    let reg = untestable_registry(&["solo".to_string()]);
    for (args, flag) in [
        (&["--shard", "0/4"][..], "--shard"),
        (&["--shard", "5/4"], "--shard"),
        (&["--shard", "1/257"], "--shard"),
        (&["--shard", "two"], "--shard"),
        (&["--list-shards", "0"], "--list-shards"),
        (&["--list-shards", "300"], "--list-shards"),
        (&["--list-shards", "4", "--shard-size", "0"], "--shard-size"),
        (&["--list-shards", "4", "--shard", "1/4"], "--shard"),
    ] {
        let run = verify_json(&reg.root, args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.all());
        assert!(run.all().contains(flag), "{args:?}: {}", run.all());
    }
}

/// `acp-registry matrix merge ARGS` in `dir`, at the time [`matrix_at`] stamps rows with (a
/// row dated after the merge's "now" is refused).
fn merge(dir: &Path, args: &[&str]) -> Run {
    common::verify::run_command(
        std::process::Command::new(crate::REGISTRY)
            .args(["matrix", "merge"])
            .args(args)
            .env("ACP_REGISTRY_TEST_NOW", "2026-12-01T08:00:00Z")
            .current_dir(dir),
    )
}

/// `matrix` into `out`, every row stamped with the same time.
fn matrix_at(root: &Path, out: &Path, extra: &[&str]) -> Run {
    let out = out.to_str().unwrap();
    let mut args = vec!["matrix", "--timeout", "30", "--out", out];
    args.extend(extra);
    let mut command = common::verify::command(root, &args);
    command
        .arg("--no-cache")
        .env("ACP_REGISTRY_TEST_NOW", "2026-12-01T08:00:00Z");
    common::verify::run_command(&mut command)
}

#[test]
fn merging_the_shards_of_a_matrix_gives_the_unsharded_matrix_byte_for_byte() {
    let server = server();
    let reg = registry(&[
        manifest("alpha", &server, "well-behaved", json!({})),
        manifest("bravo", &server, "no-auth", json!({})),
        manifest("charlie", &server, "well-behaved", json!({})),
        manifest("delta", &server, "exit", json!({})),
    ]);
    let dir = reg.root.parent().unwrap().to_path_buf();
    let whole = matrix_at(&reg.root, &dir.join("whole/matrix.json"), &["-j", "4"]);
    assert_eq!(whole.code, 0, "{}", whole.all());
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let part = dir.join(format!("parts/{k}.json"));
        let run = matrix_at(&reg.root, &part, &["--shard", &shard]);
        assert_eq!(run.code, 0, "{}", run.all());
    }
    let merged = merge(
        &dir,
        &[
            "parts/3.json",
            "parts/1.json",
            "parts/2.json",
            "--out",
            "merged/matrix.json",
        ],
    );
    assert_eq!(merged.code, 0, "{}", merged.all());
    assert!(
        merged.all().contains("merged 3 of 3 shards (4 rows)"),
        "{}",
        merged.all()
    );
    for file in ["matrix.json", "matrix.md"] {
        let want = std::fs::read(dir.join("whole").join(file)).unwrap();
        let got = std::fs::read(dir.join("merged").join(file)).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "{file}"
        );
    }
    let whole: Value =
        serde_json::from_slice(&std::fs::read(dir.join("whole/matrix.json")).unwrap()).unwrap();
    assert!(
        whole.get("part").is_none(),
        "an unsharded run writes no part"
    );
    assert_eq!(whole["agents"].as_array().unwrap().len(), 4);
}

#[test]
fn merge_refuses_parts_of_other_runs_and_overlaps_and_names_missing_shards() {
    let ids: Vec<String> = (0..6).map(|i| format!("agent-{i}")).collect();
    let reg = untestable_registry(&ids);
    let dir = reg.root.parent().unwrap().to_path_buf();
    let part = |name: &str, extra: &[&str]| {
        let run = matrix_at(&reg.root, &dir.join(name), extra);
        assert_eq!(run.code, 0, "{}", run.all());
        name.to_string()
    };
    let (one, two, three) = (
        part("1.json", &["--shard", "1/3"]),
        part("2.json", &["--shard", "2/3"]),
        part("3.json", &["--shard", "3/3"]),
    );
    let halves = part("half.json", &["--shard", "1/2"]);
    let subset = part(
        "subset.json",
        &["--shard", "2/3", "--agent", "agent-1,agent-2"],
    );
    let whole = part("whole.json", &[]);
    for (parts, says) in [
        (vec![&one, &halves], "different numbers of shards"),
        (
            vec![&one, &subset],
            "different registry revisions or selections",
        ),
        (vec![&one, &two, &one], "are both shard 1/3"),
        (vec![&one, &whole], "not a shard's part"),
    ] {
        let mut args: Vec<&str> = parts.iter().map(|p| p.as_str()).collect();
        args.extend(["--out", "merged.json"]);
        let run = merge(&dir, &args);
        assert_eq!(run.code, 2, "{parts:?}: {}", run.all());
        assert!(run.all().contains(says), "{parts:?}: {}", run.all());
        assert!(
            !dir.join("merged.json").exists(),
            "{parts:?}: nothing written"
        );
    }
    // A registry edited between shards is another revision.
    std::fs::write(
        reg.root.join("agent-0/agent.json"),
        std::fs::read_to_string(reg.root.join("agent-0/agent.json"))
            .unwrap()
            .replace("A test agent.", "An edited test agent."),
    )
    .unwrap();
    let edited = part("edited.json", &["--shard", "2/3"]);
    let run = merge(&dir, &[&one, &edited, "--out", "merged.json"]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(
        run.all().contains("different registry revisions"),
        "{}",
        run.all()
    );
    // Missing shards: written with what there is, each missing shard named, exit 1.
    let run = merge(&dir, &[&three, "--out", "merged.json"]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.all().contains("shard 1/3 is missing"), "{}", run.all());
    assert!(run.all().contains("shard 2/3 is missing"), "{}", run.all());
    assert!(!run.all().contains("shard 3/3 is missing"), "{}", run.all());
    assert!(dir.join("merged.json").exists());
    assert!(dir.join("merged.md").exists());
    let again = merge(&dir, &[&one, &two, &three, "--out", "merged.json"]);
    assert_eq!(again.code, 0, "{}", again.all());
    let run = merge(&dir, &[&one, &two, &three, "--out", &three]);
    assert_eq!(run.code, 2, "{}", run.all());
}

/// A PEP 503 simple index on 127.0.0.1 serving `wheels` (name, version, `Requires-Python`):
/// `/simple/<name>/` links each file with its sha256 and `data-requires-python`, as the
/// Python package registry does; `/files/<file>` serves it.
fn package_index(wheels: &[(&str, &str, Option<&str>)]) -> Server {
    let mut pages = std::collections::BTreeMap::new();
    let mut files = std::collections::BTreeMap::new();
    for &(name, version, requires) in wheels {
        let (file, bytes) = acp_test_kit::wheel::wheel(name, version, requires);
        let sha = acp_test_kit::sha256_hex(&bytes);
        let attr = requires.map_or(String::new(), |r| {
            format!(
                " data-requires-python=\"{}\"",
                r.replace('<', "&lt;").replace('>', "&gt;")
            )
        });
        pages.insert(
            format!("/simple/{name}/"),
            format!("<!DOCTYPE html><html><body><a href=\"/files/{file}#sha256={sha}\"{attr}>{file}</a></body></html>\n"),
        );
        files.insert(format!("/files/{file}"), bytes);
    }
    Server::start(move |request, _| {
        if let Some(page) = pages.get(&request.path) {
            Reply::body(200, page.clone()).header("content-type", "text/html")
        } else if let Some(bytes) = files.get(&request.path) {
            Reply::body(200, bytes.clone())
        } else {
            Reply::status(404)
        }
    })
}

/// A manifest whose only distribution is the uvx package `spec` run in `mode`.
fn uvx_manifest(id: &str, spec: &str, mode: &str) -> Value {
    json!({
        "id": id, "name": id, "version": "1.0.0", "description": "A test agent.",
        "distribution": {"uvx": {"package": spec, "args": ["--mode", mode]}},
    })
}

/// `verify --format json` with uv pointed at `index` through the test-only variable.
fn verify_with_index(root: &Path, index: &Server) -> Run {
    common::verify::run_command(
        common::verify::command(root, &["verify", "--format", "json", "--timeout", "30"])
            .arg("--no-cache")
            .env("ACP_REGISTRY_TEST_UV_INDEX", index.url("/simple")),
    )
}

#[test]
fn a_uvx_package_from_a_local_index_is_installed_then_launched_and_passes() {
    if !acp_test_kit::uvx_or_skip(
        "a_uvx_package_from_a_local_index_is_installed_then_launched_and_passes",
    ) {
        return;
    }
    let index = package_index(&[("acp-test-agent", "1.0.0", None)]);
    let reg = registry(&[uvx_manifest("py-agent", "acp-test-agent==1.0.0", "env")]);
    let run = verify_with_index(&reg.root, &index);
    assert_eq!(run.code, 0, "{}", run.all());
    let agent = &run.json()["agents"][0];
    assert_eq!(agent["distribution"], "uvx");
    assert_eq!(agent["status"], "passed", "{}", run.all());
    assert_eq!(agent["initialize"]["agentInfo"]["name"], "test-agent");
    assert!(agent["fetch_seconds"].as_f64().unwrap() > 0.0, "{agent}");
    assert!(run.codes().is_empty(), "{:?}", run.codes());
    // The wheel came from the test's index, and the agent ran from the run's uv cache.
    let wheel_file = "GET /files/acp_test_agent-1.0.0-py3-none-any.whl";
    assert!(
        index.requests().iter().any(|r| r == wheel_file),
        "{:?}",
        index.requests()
    );
    let env = &agent["initialize"]["_meta"]["env"];
    assert!(
        env["UV_CACHE_DIR"]
            .as_str()
            .unwrap()
            .contains("acp-registry-verify-"),
        "{env}"
    );
    assert_eq!(env["UV_DEFAULT_INDEX"], index.url("/simple"), "{env}");
    assert!(env.get("ACP_REGISTRY_TEST_UV_INDEX").is_none(), "{env}");
    assert!(env.get("GITHUB_TOKEN").is_none(), "{env}");
}

#[test]
fn a_uvx_package_whose_requires_python_excludes_this_python_is_an_interpreter_finding() {
    if !acp_test_kit::uvx_or_skip(
        "a_uvx_package_whose_requires_python_excludes_this_python_is_an_interpreter_finding",
    ) {
        return;
    }
    let index = package_index(&[
        ("acp-test-agent", "1.0.0", None),
        ("acp-future-agent", "1.0.0", Some(">=3.99")),
    ]);
    let reg = registry(&[
        uvx_manifest("future", "acp-future-agent==1.0.0", "well-behaved"),
        uvx_manifest("present", "acp-test-agent==1.0.0", "exit"),
    ]);
    let run = verify_with_index(&reg.root, &index);
    assert_eq!(run.code, 1, "{}", run.all());
    let document = run.findings();
    let findings: Vec<(&str, &str, &str)> = document
        .findings
        .iter()
        .map(|f| {
            (
                f.file.as_str(),
                f.code.as_str(),
                f.pointer.as_deref().unwrap_or(""),
            )
        })
        .collect();
    // The interpreter is the cause for the one, not for the agent that starts and exits.
    assert_eq!(
        findings,
        [
            (
                "future/agent.json",
                "agent-python-version",
                "/distribution/uvx/package"
            ),
            ("present/agent.json", "agent-launch", "/distribution/uvx"),
        ],
        "{}",
        run.all()
    );
    let message = &document.findings[0].message;
    assert!(
        message.contains("`acp-future-agent==1.0.0` needs Python >=3.99"),
        "{message}"
    );
    assert!(message.contains("; uv found Python 3."), "{message}");
    let future = &run.json()["agents"][0];
    assert_eq!(future["status"], "failed");
    assert!(future["reason"]
        .as_str()
        .unwrap()
        .starts_with("agent-python-version: "));
}

#[test]
fn the_test_uv_index_must_be_a_loopback_url() {
    let reg = registry(&[uvx_manifest(
        "py-agent",
        "acp-test-agent==1.0.0",
        "well-behaved",
    )]);
    for value in [
        "https://pypi.example.org/simple",
        "file:///tmp/simple",
        "http://user:pw@127.0.0.1/simple",
    ] {
        let run = common::verify::run_command(
            common::verify::command(&reg.root, &["verify"])
                .env("ACP_REGISTRY_TEST_UV_INDEX", value),
        );
        assert_eq!(run.code, 2, "{value}: {}", run.all());
        assert!(
            run.all().contains("ACP_REGISTRY_TEST_UV_INDEX="),
            "{}",
            run.all()
        );
        assert!(run.all().contains("for tests only"), "{}", run.all());
    }
}
