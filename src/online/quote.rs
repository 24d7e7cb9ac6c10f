//! Text from a server, made safe to quote in a finding (one line, no control characters,
//! bounded): every online finding that repeats what a server said goes through it.

/// Text from a server, made safe to quote in a finding: one line, no control characters,
/// at most 200 characters.
pub(crate) fn quote_remote(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let clean = clean.split_whitespace().collect::<Vec<_>>().join(" ");
    match clean.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &clean[..i]),
        None => clean,
    }
}
