//! The JSONC parser and its span look-ups never panic, and spans stay inside the text.
//! `cargo fuzz run jsonc_parse`
#![no_main]

use acp_registry::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse(text) {
        Ok(node) => {
            assert!(node.span.end <= text.len());
            let _ = node.to_json();
            for duplicate in node.duplicate_keys() {
                assert!(duplicate.span.end <= text.len());
                let _ = node.pointer(&duplicate.pointer);
            }
        }
        Err(error) => assert!(error.span.start <= text.len()),
    }
});
