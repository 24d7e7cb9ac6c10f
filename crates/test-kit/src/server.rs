//! A scripted HTTP/1.1 server on a loopback address, for the online tests, the online rule
//! cases and the online benchmark. Written on raw tokio sockets (not hyper) so that it can
//! misbehave on purpose: reset connections, send more body than its `Content-Length`,
//! answer late. It counts requests and the connections busy serving one at the same time.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One answer. `content_length` overrides the header (to lie about the body's size); `reset` drops the connection with a TCP reset instead of answering.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Headers sent, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Waited before answering.
    pub delay: Duration,
    /// The `Content-Length` sent instead of the body's length.
    pub content_length: Option<u64>,
    /// No `Content-Length`: the body ends when the connection closes.
    pub no_length: bool,
    /// Drop the connection with a TCP reset instead of answering.
    pub reset: bool,
    /// Bytes written verbatim instead of an answer (malformed HTTP), then the connection is
    /// held open for `hold` (a stall mid-answer) and closed.
    pub raw: Option<Vec<u8>>,
    /// How long a `raw` answer holds the connection open.
    pub hold: Duration,
    /// The body is written one byte at a time, this long apart (a trickling server).
    pub trickle: Option<Duration>,
}

impl Reply {
    /// An answer with `status` and no body.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            ..Reply::default()
        }
    }

    /// An answer with `status` and `body`.
    pub fn body(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            body: body.into(),
            ..Reply::default()
        }
    }

    /// A 200 JSON answer.
    pub fn json(value: &serde_json::Value) -> Reply {
        Reply::body(200, value.to_string()).header("content-type", "application/json")
    }

    /// A redirect of `status` to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::status(status).header("location", location)
    }

    /// A TCP reset instead of an answer.
    pub fn reset() -> Reply {
        Reply {
            reset: true,
            ..Reply::default()
        }
    }

    /// `bytes` written verbatim, then the connection held open for `hold`.
    pub fn raw(bytes: impl Into<Vec<u8>>, hold: Duration) -> Reply {
        Reply {
            raw: Some(bytes.into()),
            hold,
            ..Reply::default()
        }
    }

    /// A 200 answer whose `body` comes one byte every `interval`.
    pub fn trickle(body: impl Into<Vec<u8>>, interval: Duration) -> Reply {
        Reply {
            trickle: Some(interval),
            ..Reply::body(200, body)
        }
    }

    /// This answer with one more header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// This answer, sent after `delay`.
    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// A reply described in JSON (`status`, `headers`, `body` text, `json` value, `body_hex` bytes, `delay_ms`,
    /// `content_length`, `reset`), as written in the online rule cases.
    pub fn from_json(value: &serde_json::Value) -> Reply {
        let mut reply = Reply::status(value["status"].as_u64().unwrap_or(200) as u16);
        if let Some(headers) = value["headers"].as_object() {
            for (k, v) in headers {
                reply = reply.header(k, v.as_str().unwrap_or_default());
            }
        }
        if let Some(text) = value["body"].as_str() {
            reply.body = text.as_bytes().to_vec();
        }
        if !value["json"].is_null() {
            reply.body = value["json"].to_string().into_bytes();
        }
        if let Some(hex) = value["body_hex"].as_str() {
            reply.body = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex body"))
                .collect();
        }
        reply.delay = Duration::from_millis(value["delay_ms"].as_u64().unwrap_or(0));
        reply.content_length = value["content_length"].as_u64();
        reply.reset = value["reset"].as_bool().unwrap_or(false);
        reply
    }
}

/// What the server saw of a request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The method, as sent.
    pub method: String,
    /// The path and query, as sent.
    pub path: String,
    /// Header names lower-cased, in the order sent.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The value of the header `name` (lower case, as names are kept), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

type Handler = dyn Fn(&Request, usize) -> Reply + Send + Sync;

/// Scripted answers: `"METHOD /path"` to a sequence of replies (the last one repeats); a
/// HEAD without its own route answers like the GET route (without the body), as real
/// servers do; anything else is a 404.
pub fn routes(table: Vec<(&str, Vec<Reply>)>) -> impl Fn(&Request, usize) -> Reply + Send + Sync {
    let table: BTreeMap<String, Vec<Reply>> =
        table.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    move |request, nth| {
        let key = format!("{} {}", request.method, request.path);
        let get = format!("GET {}", request.path);
        let found = table.get(&key).or_else(|| {
            (request.method == "HEAD")
                .then(|| table.get(&get))
                .flatten()
        });
        match found {
            Some(replies) => replies[nth.min(replies.len() - 1)].clone(),
            None => Reply::status(404),
        }
    }
}

/// Routes written in JSON: `{"METHOD /path": [reply, …]}` (see [`Reply::from_json`]).
pub fn routes_from_json(
    value: &serde_json::Value,
) -> impl Fn(&Request, usize) -> Reply + Send + Sync {
    let table = value
        .as_object()
        .map(|routes| {
            routes
                .iter()
                .map(|(key, replies)| {
                    let replies = match replies.as_array() {
                        Some(list) => list.iter().map(Reply::from_json).collect(),
                        None => vec![Reply::from_json(replies)],
                    };
                    (key.as_str(), replies)
                })
                .collect()
        })
        .unwrap_or_default();
    routes(table)
}

#[derive(Default)]
struct Stats {
    log: Mutex<Vec<String>>,
    busy: AtomicUsize,
    max_busy: AtomicUsize,
}

/// A running server; dropping it stops it.
pub struct Server {
    /// The address it listens on.
    pub addr: SocketAddr,
    stats: Arc<Stats>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Server {
    /// Start on 127.0.0.1 with a handler given the request and how many times its
    /// `"METHOD /path"` was seen before.
    pub fn start(handler: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static) -> Server {
        Server::start_on("127.0.0.1".parse().unwrap(), handler)
    }

    /// [`Server::start`] on the address `ip`.
    pub fn start_on(
        ip: IpAddr,
        handler: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let listener = std::net::TcpListener::bind((ip, 0)).expect("bind a loopback port");
        Server::start_with(listener, handler)
    }

    /// Serve on a listener bound by the caller (who needed the address first).
    pub fn start_with(
        listener: std::net::TcpListener,
        handler: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static,
    ) -> Server {
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stats = Arc::new(Stats::default());
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let handler: Arc<Handler> = Arc::new(handler);
        let thread_stats = stats.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).unwrap();
                tokio::select! {
                    () = accept_loop(listener, handler, thread_stats) => {}
                    _ = stopped => {}
                }
            });
        });
        Server {
            addr,
            stats,
            stop: Some(stop),
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request seen, as `"METHOD /path"`, in arrival order.
    pub fn requests(&self) -> Vec<String> {
        self.stats.log.lock().unwrap().clone()
    }

    /// The most connections that were serving a request at the same moment.
    pub fn max_busy(&self) -> usize {
        self.stats.max_busy.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn accept_loop(listener: TcpListener, handler: Arc<Handler>, stats: Arc<Stats>) {
    let seen = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (handler, stats, seen) = (handler.clone(), stats.clone(), seen.clone());
        tokio::spawn(async move { serve(stream, handler, stats, seen).await });
    }
}

/// Serve the requests of one keep-alive connection.
async fn serve(
    mut stream: TcpStream,
    handler: Arc<Handler>,
    stats: Arc<Stats>,
    seen: Arc<Mutex<BTreeMap<String, usize>>>,
) {
    let mut buffer = Vec::new();
    loop {
        let Some(request) = read_request(&mut stream, &mut buffer).await else {
            return;
        };
        let busy = stats.busy.fetch_add(1, Ordering::SeqCst) + 1;
        stats.max_busy.fetch_max(busy, Ordering::SeqCst);
        let key = format!("{} {}", request.method, request.path);
        stats.log.lock().unwrap().push(key.clone());
        let nth = {
            let mut seen = seen.lock().unwrap();
            let n = seen.entry(key).or_default();
            *n += 1;
            *n - 1
        };
        let reply = handler(&request, nth);
        tokio::time::sleep(reply.delay).await;
        let kept = write_reply(&mut stream, &request, &reply).await;
        stats.busy.fetch_sub(1, Ordering::SeqCst);
        if !kept {
            return;
        }
    }
}

/// Read one request head (requests carry no body here).
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Request> {
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
            buffer.drain(..end + 4);
            let mut lines = head.lines();
            let mut words = lines.next()?.split(' ');
            let headers = lines
                .filter_map(|line| line.split_once(':'))
                .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
                .collect();
            return Some(Request {
                method: words.next()?.to_string(),
                path: words.next()?.to_string(),
                headers,
            });
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// Write `reply`; false when the connection must close.
async fn write_reply(stream: &mut TcpStream, request: &Request, reply: &Reply) -> bool {
    if reply.reset {
        // Zero linger makes the close a TCP reset; it does not block (the deprecation warns
        // about a non-zero linger).
        #[allow(deprecated)]
        let _ = stream.set_linger(Some(Duration::ZERO));
        return false;
    }
    if let Some(raw) = &reply.raw {
        let _ = stream.write_all(raw).await;
        tokio::time::sleep(reply.hold).await;
        return false;
    }
    let length = reply.content_length.unwrap_or(reply.body.len() as u64);
    let mut head = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
    if !reply.no_length {
        head.push_str(&format!("content-length: {length}\r\n"));
    }
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let honest = reply.content_length.is_none() && !reply.no_length;
    if !honest {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    if let (Some(interval), false) = (reply.trickle, request.method == "HEAD") {
        if stream.write_all(&bytes).await.is_err() {
            return false;
        }
        for byte in &reply.body {
            tokio::time::sleep(interval).await;
            if stream.write_all(&[*byte]).await.is_err() {
                return false;
            }
        }
        return honest;
    }
    if request.method != "HEAD" {
        bytes.extend_from_slice(&reply.body);
    }
    stream.write_all(&bytes).await.is_ok() && honest
}

/// An address of this machine that is neither loopback nor public (`192.0.2.2`, `10.1.0.4`,
/// …): the one the machine would send from towards a documentation address, found by
/// connecting a UDP socket, which sends nothing. Tests of hosts allowed private addresses
/// serve from it, so nothing leaves the machine. `None` when the machine has no such address.
#[must_use]
pub fn local_private_address() -> Option<IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("198.51.100.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    let private = match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            a == 10
                || (a == 172 && (16..32).contains(&b))
                || (a == 192 && b == 168)
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 2)
                || (a == 198 && (b == 18 || b == 19))
                || (a == 198 && b == 51 && c == 100)
                || (a == 203 && b == 0 && c == 113)
        }
        IpAddr::V6(_) => false,
    };
    private.then_some(ip)
}
