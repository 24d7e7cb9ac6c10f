//! A local forward proxy that records each request's first line (`CONNECT host:port
//! HTTP/1.1`, with its `Proxy-Authorization` when sent) and refuses it with 403, so a test
//! sees which requests went through a proxy without any traffic leaving the machine.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

/// A running recording proxy on 127.0.0.1; it stops with the test process.
pub struct RecordingProxy {
    /// The address it listens on.
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
}

impl RecordingProxy {
    /// Start on a free loopback port.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    #[must_use]
    pub fn start() -> RecordingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = log.clone();
                std::thread::spawn(move || {
                    let Ok(reader) = stream.try_clone() else {
                        return;
                    };
                    let mut lines = BufReader::new(reader).lines();
                    let mut entry = lines.next().and_then(Result::ok).unwrap_or_default();
                    for line in lines.map_while(Result::ok) {
                        if line.is_empty() {
                            break;
                        }
                        if line
                            .to_ascii_lowercase()
                            .starts_with("proxy-authorization:")
                        {
                            entry.push_str(" | ");
                            entry.push_str(&line);
                        }
                    }
                    log.lock().expect("log").push(entry);
                    let mut stream = stream;
                    let _ = stream.write_all(
                        b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                });
            }
        });
        RecordingProxy { addr, seen }
    }

    /// `http://127.0.0.1:<port>`.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Each request's first line (and `Proxy-Authorization` header), in arrival order.
    ///
    /// # Panics
    /// When a connection thread panicked holding the log.
    #[must_use]
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().expect("log").clone()
    }
}
