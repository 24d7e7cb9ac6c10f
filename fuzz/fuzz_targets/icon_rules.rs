//! Arbitrary bytes as an icon never panic the icon rules or the site's sanitiser, and what the
//! sanitiser writes passes every icon rule (the site serves only what `icon-unsafe` accepts).
//! `cargo fuzz run icon_rules`
#![no_main]

use acp_registry::Severity;
use acp_registry::check_icon;
use acp_registry::site::sanitise_icon;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = check_icon("icon.svg", text);
    }
    let accepted = std::str::from_utf8(data)
        .map(|text| check_icon("icon.svg", text).iter().all(|d| d.severity != Severity::Error))
        .unwrap_or(false);
    if let (true, Some(clean)) = (accepted, sanitise_icon(data)) {
        let unsafe_after: Vec<_> = check_icon("icon.svg", &clean)
            .into_iter()
            .filter(|d| d.code.as_str() == "icon-unsafe")
            .collect();
        assert!(unsafe_after.is_empty(), "sanitised icon is unsafe: {clean}\n{unsafe_after:?}");
    }
});
