//! Newline-delimited framing with a size cap: bytes in, complete lines out. A line longer
//! than the cap is reported once and skipped up to its newline, so a peer cannot make the
//! reader hold unbounded memory.

/// Default cap of one message line (ACP messages are small; 8 MiB leaves room for file
/// contents in `fs/*` requests).
pub const DEFAULT_LINE_CAP: usize = 8 * 1024 * 1024;

/// What the buffer yields: a complete line, or the news that one was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// One line, without its `\n` (and without a `\r` before it).
    Line(Vec<u8>),
    /// A line over the cap was dropped; `seen` bytes of it were read before dropping.
    TooLong {
        /// Bytes of the line read before it was dropped.
        seen: usize,
    },
}

/// Bytes not yet ending in a newline, held up to the cap.
#[derive(Debug)]
pub struct LineBuffer {
    buf: Vec<u8>,
    cap: usize,
    /// Inside an over-long line: discard until the next newline.
    skipping: bool,
    skipped: usize,
}

impl LineBuffer {
    /// An empty buffer dropping lines longer than `cap` bytes.
    pub fn new(cap: usize) -> Self {
        Self {
            buf: Vec::new(),
            cap,
            skipping: false,
            skipped: 0,
        }
    }

    /// Feed bytes; returns the lines they complete, in order.
    pub fn push(&mut self, mut bytes: &[u8]) -> Vec<Frame> {
        let mut frames = Vec::new();
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let (part, rest) = match newline {
                Some(i) => (&bytes[..i], Some(&bytes[i + 1..])),
                None => (bytes, None),
            };
            if self.skipping {
                self.skipped += part.len();
            } else if self.buf.len() + part.len() > self.cap {
                self.skipping = true;
                self.skipped = self.buf.len() + part.len();
                self.buf.clear();
                frames.push(Frame::TooLong { seen: self.skipped });
            } else {
                self.buf.extend_from_slice(part);
            }
            match rest {
                Some(rest) => {
                    if !self.skipping {
                        frames.push(Frame::Line(take_line(&mut self.buf)));
                    }
                    self.skipping = false;
                    self.skipped = 0;
                    bytes = rest;
                }
                None => break,
            }
        }
        frames
    }

    /// End of stream: the unterminated last line, if any.
    pub fn finish(&mut self) -> Option<Frame> {
        if self.skipping || self.buf.is_empty() {
            return None;
        }
        Some(Frame::Line(take_line(&mut self.buf)))
    }
}

fn take_line(buf: &mut Vec<u8>) -> Vec<u8> {
    let mut line = std::mem::take(buf);
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(frames: Vec<Frame>) -> Vec<String> {
        frames
            .into_iter()
            .map(|f| match f {
                Frame::Line(l) => String::from_utf8(l).unwrap(),
                Frame::TooLong { seen } => format!("<too long: {seen}>"),
            })
            .collect()
    }

    #[test]
    fn lines_split_across_pushes_are_joined_and_crlf_is_trimmed() {
        let mut buf = LineBuffer::new(100);
        assert!(buf.push(b"{\"a\"").is_empty());
        assert_eq!(lines(buf.push(b":1}\r\n{}\nrest")), ["{\"a\":1}", "{}"]);
        assert_eq!(lines(buf.finish().into_iter().collect()), ["rest"]);
        assert_eq!(buf.finish(), None);
    }

    #[test]
    fn an_over_long_line_is_reported_once_and_the_next_line_survives() {
        let mut buf = LineBuffer::new(4);
        assert_eq!(lines(buf.push(b"abc")), Vec::<String>::new());
        assert_eq!(lines(buf.push(b"defgh")), ["<too long: 8>"]);
        assert!(buf.push(b"more bytes").is_empty());
        assert_eq!(lines(buf.push(b"xx\nok\n")), ["ok"]);
        assert_eq!(buf.finish(), None);
    }
}
