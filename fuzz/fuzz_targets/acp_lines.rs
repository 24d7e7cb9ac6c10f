//! The JSON-RPC line reader of `verify` and `acp-collab acp`: arbitrary bytes, cut into
//! arbitrary chunks, give the same frames as one push (but for `TooLong::seen`, which counts
//! what had arrived when the line was dropped and so depends on the chunking), no frame exceeds the cap or holds a
//! newline, and every line that parses as a message re-parses from its own serialisation.
//! `cargo fuzz run acp_lines`
#![no_main]

use acp_registry::acp::{Frame, LineBuffer, Message};
use libfuzzer_sys::fuzz_target;

const CAP: usize = 64;

fn frames(chunks: &[&[u8]]) -> Vec<Frame> {
    let mut buffer = LineBuffer::new(CAP);
    let mut out: Vec<Frame> = chunks.iter().flat_map(|c| buffer.push(c)).collect();
    out.extend(buffer.finish());
    for frame in &mut out {
        if let Frame::TooLong { seen } = frame {
            assert!(*seen > CAP, "dropped a line of {seen} bytes under the cap");
            *seen = 0;
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the chunk length, so the same stream is cut at many places.
    let Some((&step, stream)) = data.split_first() else {
        return;
    };
    let whole = frames(&[stream]);
    let chunks: Vec<&[u8]> = stream.chunks(usize::from(step % 17) + 1).collect();
    assert_eq!(frames(&chunks), whole, "chunking changed the frames");
    for frame in &whole {
        let Frame::Line(line) = frame else { continue };
        assert!(line.len() <= CAP && !line.contains(&b'\n'));
        if let Ok(message) = Message::parse(line) {
            let again = message.to_line();
            assert!(again.ends_with('\n'));
            let reparsed = Message::parse(again.trim_end_matches('\n').as_bytes());
            assert_eq!(reparsed.as_ref(), Ok(&message), "round trip of {again}");
        }
    }
});
