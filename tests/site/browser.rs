//! The catalogue site in a real headless browser, served over http and opened from disk.
//!
//! Renders the bundled registry's site into a temporary folder (with a site of one hostile
//! entry under `hostile/` and one of 300 agents under `many/`) and runs
//! `node tests/browser/site.mjs <base-url> <artefact-dir> <base-url>hostile/ <base-url>many/`,
//! which drives Debian's `/usr/bin/chromium` with playwright-core and axe-core (see that
//! script for the checks), twice: with the folder served on 127.0.0.1 by a tiny HTTP server,
//! and with its `file://` URL, as a maintainer opens `dist/site/index.html` (where the
//! browser refuses fetches and CORS-mode loads such as mask images from files).
//! Screenshots land in `target/site-artefacts/{http,file}/`.
//!
//! Needs `tests/browser/install.sh` to have run once (chromium + `npm ci`); without it this
//! test fails and says so.

use crate::common as site_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const BROWSER_TIMEOUT: Duration = Duration::from_secs(300);

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Serves `root` on 127.0.0.1 (a thread per connection) until the test process ends.
/// Returns the base URL.
fn serve(root: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            std::thread::spawn(move || {
                let _ = handle(stream, &root);
            });
        }
    });
    format!("http://{address}/")
}

fn handle(mut stream: TcpStream, root: &Path) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut parts = request.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("/");
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let mut relative = path.trim_start_matches('/').to_string();
    if relative.is_empty() || relative.ends_with('/') {
        relative.push_str("index.html");
    }
    let safe = !relative
        .split('/')
        .any(|s| s == ".." || s.is_empty() || s.contains('\\'));
    let file = root.join(&relative);
    let body = if safe && (method == "GET" || method == "HEAD") {
        std::fs::read(&file).ok()
    } else {
        None
    };
    let (status, kind, body) = match body {
        Some(body) => ("200 OK", content_type(&file), body),
        None => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            b"not found\n".to_vec(),
        ),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != "HEAD" {
        stream.write_all(&body)?;
    }
    stream.flush()
}

fn missing_prerequisites(browser_dir: &Path) -> Vec<String> {
    let mut missing = Vec::new();
    if !Path::new(CHROMIUM).exists() {
        missing.push(format!("{CHROMIUM} (Debian package `chromium`)"));
    }
    for package in ["playwright-core", "axe-core"] {
        if !browser_dir.join("node_modules").join(package).is_dir() {
            missing.push(format!("tests/browser/node_modules/{package}"));
        }
    }
    if Command::new("node").arg("--version").output().is_err() {
        missing.push("node".to_string());
    }
    missing
}

/// The rendered sites, written once for both tests into `target/tmp/site-browser/` (a
/// static is never dropped, so not a temporary folder), and a lock that runs one browser at
/// a time (they share two cores with the rest of the test suite).
fn sites() -> &'static Path {
    static SITES: OnceLock<PathBuf> = OnceLock::new();
    SITES.get_or_init(|| {
        let site = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site-browser");
        if site.exists() {
            std::fs::remove_dir_all(&site).unwrap();
        }
        write_sites(&site);
        site
    })
}

static ONE_BROWSER: Mutex<()> = Mutex::new(());

/// Runs every browser check on the sites at `base` (`name`: the artefact folder).
fn browser_checks_pass(name: &str, base: &str) {
    let repo = site_common::repo();
    let browser_dir = repo.join("tests/browser");
    let missing = missing_prerequisites(&browser_dir);
    assert!(
        missing.is_empty(),
        "the browser tests need {}.\nRun `tests/browser/install.sh` (installs Debian's chromium and the \
         npm packages pinned in tests/browser/package-lock.json), then run the tests again.",
        missing.join(", ")
    );
    let _one = ONE_BROWSER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // target/site-artefacts/<name>, next to target/tmp.
    let artefacts = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("site-artefacts")
        .join(name);
    let (status, out, err) = run_browser_checks(&browser_dir, base, &artefacts);
    match status {
        Some(status) if status.success() => {
            println!("{out}");
            for name in ["index-light", "index-dark", "agent-light", "agent-dark"] {
                let shot = artefacts.join(format!("{name}.png"));
                assert!(shot.is_file(), "screenshot {} missing", shot.display());
            }
        }
        Some(status) => panic!("browser checks failed over {base} ({status}):\n{out}\n{err}"),
        None => panic!(
            "browser checks did not finish within {}s:\n{out}\n{err}",
            BROWSER_TIMEOUT.as_secs()
        ),
    }
}

#[test]
fn site_works_over_http_in_a_headless_browser() {
    let base = serve(sites().to_path_buf());
    browser_checks_pass("http", &base);
}

#[test]
fn site_works_from_disk_in_a_headless_browser() {
    // What `xdg-open dist/site/index.html` opens: no server, an opaque origin.
    let base = url::Url::from_directory_path(sites()).unwrap();
    browser_checks_pass("file", base.as_str());
}

/// Writes the three sites into `site`: the bundled registry's at the root (with evidence in
/// every verification state, and two skills), one with a hostile entry and a hostile skill under
/// `hostile/` and one of 300 agents under `many/`.
fn write_sites(site: &Path) {
    // The bundled registry, four agents with evidence in each verification state.
    // With a skill of the first agent and a stand-alone one, listed in both skill outputs.
    let agents = site_common::bundled_agents_with_verifications();
    let first = &agents[0];
    let skills = [
        acp_registry::site::SiteSkill {
            agent: Some(acp_registry::site::SkillAgent {
                id: first.id.clone(),
                name: first.id.clone(),
            }),
            ..crate::skills::skill("agent-helper")
        },
        crate::skills::skill("stand-alone"),
    ];
    let files = acp_registry::site::render(&agents, &skills, &site_common::options()).unwrap();
    site_common::write_site(&files, site);
    // A second site under hostile/: one entry whose every string is an injection attempt.
    let hostile = acp_registry::site::render(
        &[
            site_common::hostile_agent(),
            site_common::simple_agent("plain", "Plain"),
        ],
        &[crate::skills::hostile_skill()],
        &site_common::options(),
    )
    .unwrap();
    site_common::write_site(&hostile, &site.join("hostile"));
    // A third under many/: 300 agents, so the pager (static and scripted) has seven pages.
    let many: Vec<_> = (0..300)
        .map(|i| site_common::simple_agent(&format!("agent-{i:03}"), &format!("Agent {i:03}")))
        .collect();
    let many = acp_registry::site::render(&many, &[], &site_common::options()).unwrap();
    site_common::write_site(&many, &site.join("many"));
}

/// Runs `site.mjs` on the sites served at `base`, killed after [`BROWSER_TIMEOUT`]: its exit
/// status (`None` when it was killed), stdout and stderr.
fn run_browser_checks(
    browser_dir: &Path,
    base: &str,
    artefacts: &Path,
) -> (Option<ExitStatus>, String, String) {
    let logs = tempfile::tempdir().unwrap();
    let stdout_path = logs.path().join("stdout");
    let stderr_path = logs.path().join("stderr");
    let mut child = Command::new("node")
        .arg(browser_dir.join("site.mjs"))
        .arg(base)
        .arg(artefacts)
        .arg(format!("{base}hostile/"))
        .arg(format!("{base}many/"))
        .current_dir(browser_dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("start node");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut out = String::new();
    let mut err = String::new();
    std::fs::File::open(&stdout_path)
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    std::fs::File::open(&stderr_path)
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status, out, err)
}
