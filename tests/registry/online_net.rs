//! The `net` layer against real HTTP servers on 127.0.0.1 (see `net_server`).
//!
//! The server is `acp_test_kit::server`, a scripted raw-socket HTTP server that can reset, lie
//! about lengths and count busy connections. The online rule cases of `tests/rules/` (an
//! `online.json` starts a server for the case) are run by `tests/rule_cases.rs`;
//! `bench/online.sh` with `examples/online_bench.rs` measures a run.

use crate::common;
use acp_test_kit::server as net_server;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use acp_registry::{Client, NetConfig, NetError};
use common::{fast_net, sha256_hex};
use net_server::{routes, Reply, Server};

fn config() -> NetConfig {
    fast_net(Duration::from_secs(5))
}

fn client() -> Client {
    Client::new(config()).unwrap()
}

fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// A server answering `route` ("METHOD /path") with `replies` in turn.
fn serve(route: &str, replies: Vec<Reply>) -> Server {
    Server::start(routes(vec![(route, replies)]))
}

/// A client that gives up a read after 300 ms and retries once.
fn impatient_client() -> Client {
    Client::new(NetConfig {
        timeout: Duration::from_millis(300),
        retries: 1,
        ..config()
    })
    .unwrap()
}

/// A server that answers 429 asking to wait `seconds`, then 200.
fn retry_after(seconds: &str) -> Server {
    serve(
        "HEAD /a.zip",
        vec![
            Reply::status(429).header("retry-after", seconds),
            Reply::status(200),
        ],
    )
}

/// Less than `limit` has passed since `start`.
fn assert_within(start: Instant, limit: Duration) {
    let took = start.elapsed();
    assert!(took < limit, "{took:?}");
}

#[test]
fn a_200_answer_passes_the_probe_and_carries_its_etag() {
    let server = serve(
        "HEAD /a.zip",
        vec![Reply::status(200).header("etag", "\"v1\"")],
    );
    let probed = run(client().probe(&server.url("/a.zip"))).unwrap();
    assert_eq!(probed.final_url, server.url("/a.zip"));
    assert_eq!(probed.validator.as_deref(), Some("\"v1\""));
}

#[test]
fn a_404_fails_at_once_without_retries() {
    let server = Server::start(routes(vec![]));
    let error = run(client().probe(&server.url("/gone.zip"))).unwrap_err();
    assert_eq!(error, NetError::Status(404));
    assert_eq!(server.requests(), ["HEAD /gone.zip"]);
}

#[test]
fn a_500_is_retried_until_the_server_answers_200() {
    let server = serve(
        "HEAD /a.zip",
        vec![Reply::status(500), Reply::status(503), Reply::status(200)],
    );
    run(client().probe(&server.url("/a.zip"))).unwrap();
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_500_that_persists_fails_after_the_configured_retries() {
    let server = serve("HEAD /a.zip", vec![Reply::status(500)]);
    let error = run(client().probe(&server.url("/a.zip"))).unwrap_err();
    assert_eq!(error, NetError::Status(500));
    assert_eq!(server.requests().len(), 1 + config().retries as usize);
}

#[test]
fn a_429_waits_as_long_as_retry_after_asks() {
    let server = retry_after("1");
    let start = Instant::now();
    run(client().probe(&server.url("/a.zip"))).unwrap();
    // The backoff alone would be about 10 ms.
    assert!(
        start.elapsed() >= Duration::from_millis(950),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_long_retry_after_is_capped() {
    let server = retry_after("3600");
    let client = Client::new(NetConfig {
        retry_after_cap: Duration::from_millis(200),
        ..config()
    })
    .unwrap();
    let start = Instant::now();
    run(client.probe(&server.url("/a.zip"))).unwrap();
    assert_within(start, Duration::from_secs(3));
}

#[test]
fn head_refused_with_405_falls_back_to_get() {
    let server = Server::start(routes(vec![
        ("HEAD /a.zip", vec![Reply::status(405)]),
        ("GET /a.zip", vec![Reply::body(200, "archive")]),
    ]));
    run(client().probe(&server.url("/a.zip"))).unwrap();
    assert_eq!(server.requests(), ["HEAD /a.zip", "GET /a.zip"]);
}

/// A server whose `/r<n>` redirects to `/r<n-1>` and `/r0` answers 200.
fn redirect_chain() -> Server {
    Server::start(|request: &net_server::Request, _| {
        let n: usize = request.path.trim_start_matches("/r").parse().unwrap_or(0);
        if n == 0 {
            Reply::status(200)
        } else {
            Reply::redirect(302, &format!("/r{}", n - 1))
        }
    })
}

#[test]
fn five_redirects_are_followed_to_the_final_url() {
    let server = redirect_chain();
    let probed = run(client().probe(&server.url("/r5"))).unwrap();
    assert_eq!(probed.final_url, server.url("/r0"));
    assert_eq!(server.requests().len(), 6);
}

#[test]
fn a_sixth_redirect_is_too_many() {
    let server = redirect_chain();
    let error = run(client().probe(&server.url("/r6"))).unwrap_err();
    assert_eq!(error, NetError::TooManyRedirects(5));
    assert_eq!(server.requests().len(), 6);
}

#[test]
fn a_redirect_loop_is_detected() {
    let server = Server::start(routes(vec![
        ("HEAD /a", vec![Reply::redirect(301, "/b")]),
        ("HEAD /b", vec![Reply::redirect(307, "/a")]),
    ]));
    let error = run(client().probe(&server.url("/a"))).unwrap_err();
    assert_eq!(error, NetError::RedirectLoop(server.url("/a")));
}

#[test]
fn a_redirect_to_a_private_address_is_refused_before_connecting() {
    for target in [
        "http://10.0.0.1/a.zip",
        "https://192.168.1.1/a.zip",
        "https://[fd00::1]/a.zip",
    ] {
        let server = serve("HEAD /a.zip", vec![Reply::redirect(302, target)]);
        let error = run(client().probe(&server.url("/a.zip"))).unwrap_err();
        assert!(error.is_refused(), "{target}: {error:?}");
        assert_eq!(server.requests(), ["HEAD /a.zip"]);
    }
}

#[test]
fn a_redirect_to_plain_http_on_a_public_host_is_refused() {
    let server = serve(
        "HEAD /a.zip",
        vec![Reply::redirect(302, "http://downloads.example.com/a.zip")],
    );
    let error = run(client().probe(&server.url("/a.zip"))).unwrap_err();
    assert_eq!(
        error,
        NetError::NotHttps("http://downloads.example.com/a.zip".into())
    );
}

fn with_hosts(hosts: &[(&str, &[&str])], allow_loopback: bool) -> Client {
    let hosts: BTreeMap<String, Vec<std::net::IpAddr>> = hosts
        .iter()
        .map(|(name, addrs)| {
            (
                name.to_string(),
                addrs.iter().map(|a| a.parse().unwrap()).collect(),
            )
        })
        .collect();
    Client::new(NetConfig {
        hosts,
        allow_loopback,
        ..config()
    })
    .unwrap()
}

#[test]
fn a_name_resolving_to_a_private_address_is_refused() {
    let client = with_hosts(
        &[
            ("intranet.example", &["10.0.0.7"]),
            ("mixed.example", &["93.184.215.14", "192.168.0.9"]),
        ],
        true,
    );
    for (url, addr) in [
        ("https://intranet.example/a.zip", "10.0.0.7"),
        ("https://mixed.example/a.zip", "192.168.0.9"),
    ] {
        match run(client.probe(url)).unwrap_err() {
            NetError::Refused { addr: got, .. } => assert_eq!(got.to_string(), addr),
            other => panic!("{url}: {other:?}"),
        }
    }
}

#[test]
fn a_redirect_to_a_name_resolving_to_a_private_address_is_refused() {
    let server = serve(
        "HEAD /a.zip",
        vec![Reply::redirect(302, "https://metadata.example/latest")],
    );
    let client = with_hosts(&[("metadata.example", &["169.254.169.254"])], true);
    let error = run(client.probe(&server.url("/a.zip"))).unwrap_err();
    assert!(matches!(error, NetError::Refused { .. }), "{error:?}");
}

#[test]
fn loopback_is_refused_without_the_test_switch() {
    let server = serve("HEAD /a.zip", vec![Reply::status(200)]);
    let strict = Client::new(NetConfig {
        allow_loopback: false,
        ..config()
    })
    .unwrap();
    assert!(run(strict.probe(&server.url("/a.zip")))
        .unwrap_err()
        .is_refused());
    // A name that resolves to loopback is refused by the resolver too.
    let named = with_hosts(&[("local.example", &["127.0.0.1"])], false);
    let url = format!("https://local.example:{}/a.zip", server.addr.port());
    assert!(run(named.probe(&url)).unwrap_err().is_refused());
    assert!(server.requests().is_empty());
}

#[test]
fn a_slow_server_times_out_promptly() {
    let server = serve(
        "HEAD /slow.zip",
        vec![Reply::status(200).after(Duration::from_secs(5))],
    );
    let client = impatient_client();
    let start = Instant::now();
    let error = run(client.probe(&server.url("/slow.zip"))).unwrap_err();
    assert!(matches!(error, NetError::Timeout(_)), "{error:?}");
    assert_within(start, Duration::from_secs(2));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_connection_reset_is_retried() {
    let server = serve("HEAD /a.zip", vec![Reply::reset(), Reply::status(200)]);
    run(client().probe(&server.url("/a.zip"))).unwrap();
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_body_longer_than_its_content_length_is_read_only_up_to_it() {
    let server = serve(
        "GET /a.zip",
        vec![Reply {
            content_length: Some(5),
            ..Reply::body(200, "helloEXTRA")
        }],
    );
    let download = run(client().download(&server.url("/a.zip"), 1024)).unwrap();
    assert_eq!(download.size, 5);
    assert_eq!(download.sha256, sha256_hex(b"hello"));
}

#[test]
fn a_body_over_the_cap_is_refused_declared_or_not() {
    let server = Server::start(routes(vec![
        ("GET /declared.zip", vec![Reply::body(200, vec![b'x'; 100])]),
        (
            "GET /streamed.zip",
            vec![Reply {
                no_length: true,
                ..Reply::body(200, vec![b'x'; 100])
            }],
        ),
    ]));
    let client = client();
    for path in ["/declared.zip", "/streamed.zip"] {
        let error = run(client.download(&server.url(path), 50)).unwrap_err();
        assert_eq!(error, NetError::TooLarge { cap: 50 }, "{path}");
    }
}

#[test]
fn a_download_streams_its_sha256() {
    let body = vec![7u8; 300_000];
    let server = serve("GET /a.zip", vec![Reply::body(200, body.clone())]);
    let download = run(client().download(&server.url("/a.zip"), 1 << 20)).unwrap();
    assert_eq!(
        (download.size, download.sha256),
        (300_000, sha256_hex(&body))
    );
}

#[test]
fn the_per_host_limit_is_never_exceeded() {
    let server = Server::start(|_: &net_server::Request, _| {
        Reply::status(200).after(Duration::from_millis(40))
    });
    let client = std::sync::Arc::new(
        Client::new(NetConfig {
            per_host: 3,
            ..config()
        })
        .unwrap(),
    );
    let urls: Vec<String> = (0..30).map(|i| server.url(&format!("/{i}.zip"))).collect();
    run(async {
        let tasks: Vec<_> = urls
            .iter()
            .map(|url| {
                let (client, url) = (client.clone(), url.clone());
                tokio::spawn(async move { client.probe(&url).await })
            })
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
    });
    assert_eq!(server.requests().len(), 30);
    assert!(server.max_busy() <= 3, "{} at once", server.max_busy());
    assert!(server.max_busy() >= 2, "requests never overlapped");
}

#[test]
fn duplicate_urls_are_fetched_once() {
    let server = serve(
        "HEAD /a.zip",
        vec![Reply::status(200).after(Duration::from_millis(50))],
    );
    let client = std::sync::Arc::new(client());
    let url = server.url("/a.zip");
    run(async {
        let tasks: Vec<_> = (0..10)
            .map(|_| {
                let (client, url) = (client.clone(), url.clone());
                tokio::spawn(async move { client.probe(&url).await })
            })
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
    });
    assert_eq!(server.requests(), ["HEAD /a.zip"]);
}

#[test]
fn unreachable_hosts_fail_promptly() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let start = Instant::now();
    let client = client();
    let refused = run(client.probe(&format!("http://127.0.0.1:{port}/a.zip"))).unwrap_err();
    assert!(matches!(refused, NetError::Connect(_)), "{refused:?}");
    let unknown = run(client.probe("https://no-such-host.invalid/a.zip")).unwrap_err();
    assert!(matches!(unknown, NetError::Dns { .. }), "{unknown:?}");
    assert_within(start, Duration::from_secs(10));
}

#[test]
fn a_missing_document_is_none_and_a_present_one_is_parsed() {
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Named {
        name: String,
    }
    let server = serve(
        "GET /pkg",
        vec![Reply::json(&serde_json::json!({"name": "pkg"}))],
    );
    let client = client();
    let doc = run(client.document::<Named>(&server.url("/pkg")))
        .unwrap()
        .unwrap();
    assert_eq!(doc.name, "pkg");
    assert_eq!(
        run(client.document::<Named>(&server.url("/nope"))).unwrap(),
        None
    );
}

#[test]
fn malformed_http_fails_cleanly_and_a_later_good_answer_is_used() {
    for garbage in [
        &b"HTTP/1.1 two hundred OK\r\n\r\n"[..],
        b"\x00\xff\xfe garbage, not HTTP at all\r\n\r\n",
        b"HTTP/1.1 200\r\nno colon in this header\r\n\r\n",
    ] {
        let server = serve(
            "HEAD /a.zip",
            vec![Reply::raw(garbage, Duration::ZERO), Reply::status(200)],
        );
        run(client().probe(&server.url("/a.zip")))
            .unwrap_or_else(|e| panic!("{:?}: {e:?}", String::from_utf8_lossy(garbage)));
        assert_eq!(
            server.requests().len(),
            2,
            "{:?} retried once",
            String::from_utf8_lossy(garbage)
        );
    }
}

#[test]
fn a_server_stalling_mid_body_times_out_promptly() {
    let server = serve(
        "GET /a.zip",
        vec![Reply::raw(
            &b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\npartial"[..],
            Duration::from_secs(10),
        )],
    );
    let client = impatient_client();
    let start = Instant::now();
    assert!(run(client.download(&server.url("/a.zip"), 1 << 20)).is_err());
    assert_within(start, Duration::from_secs(3));
}

/// 10 kB sent one byte every 50 ms: 20 bytes/s, under any sensible minimum rate, and never
/// silent long enough for the read timeout.
fn trickling() -> Server {
    serve(
        "GET /a.zip",
        vec![Reply::trickle(vec![7; 10_000], Duration::from_millis(50))],
    )
}

#[test]
fn a_trickling_download_fails_at_the_minimum_rate_and_is_not_retried() {
    let server = trickling();
    let client = Client::new(NetConfig {
        min_download_rate: 1_000,
        rate_window: Duration::from_millis(500),
        download_deadline: Duration::from_secs(60),
        ..config()
    })
    .unwrap();
    let start = Instant::now();
    let error = run(client.download(&server.url("/a.zip"), 1 << 20)).unwrap_err();
    assert_eq!(
        error,
        NetError::TooSlow {
            bytes_per_second: 1_000,
            window: Duration::from_millis(500)
        }
    );
    assert_within(start, Duration::from_secs(3));
    assert_eq!(
        server.requests(),
        ["GET /a.zip"],
        "a slow server is not asked again"
    );
}

#[test]
fn a_download_ends_at_its_overall_deadline_whatever_its_attempts() {
    // Each attempt trickles (the rate check is off) and the first two are cut off by a
    // reset, so only the deadline over all attempts ends it.
    let server = serve(
        "GET /a.zip",
        vec![
            Reply::reset(),
            Reply::reset(),
            Reply::trickle(vec![7; 10_000], Duration::from_millis(50)),
        ],
    );
    let client = Client::new(NetConfig {
        min_download_rate: 0,
        download_deadline: Duration::from_millis(1_500),
        ..config()
    })
    .unwrap();
    let start = Instant::now();
    let error = run(client.download(&server.url("/a.zip"), 1 << 20)).unwrap_err();
    assert_eq!(error, NetError::Deadline(Duration::from_millis(1_500)));
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(1_400) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert_eq!(server.requests().len(), 3, "{:?}", server.requests());
}

#[test]
fn a_download_above_the_minimum_rate_completes() {
    // About 500 to 1,000 bytes/s (a byte every millisecond or two) against a 100 bytes/s
    // minimum over 200 ms windows: several windows pass, none too slow.
    let server = serve(
        "GET /a.zip",
        vec![Reply::trickle(vec![7; 600], Duration::from_millis(1))],
    );
    let client = Client::new(NetConfig {
        min_download_rate: 100,
        rate_window: Duration::from_millis(200),
        ..config()
    })
    .unwrap();
    let download = run(client.download(&server.url("/a.zip"), 1 << 20)).unwrap();
    assert_eq!(download.size, 600);
}
