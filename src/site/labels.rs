//! The words people read for the manifest's keys: platform, sign-in and distribution labels,
//! shared by the view models, the snippets and the search index.

/// Platform keys with the labels people read.
pub(crate) const PLATFORM_LABELS: [(&str, &str); 6] = [
    ("darwin-aarch64", "macOS arm64"),
    ("darwin-x86_64", "macOS x86-64"),
    ("linux-aarch64", "Linux arm64"),
    ("linux-x86_64", "Linux x86-64"),
    ("windows-aarch64", "Windows arm64"),
    ("windows-x86_64", "Windows x86-64"),
];

/// Auth types with labels; `none` stands for "nothing declared".
pub(crate) const AUTH_LABELS: [(&str, &str); 4] = [
    ("agent", "Agent sign-in"),
    ("terminal", "Terminal sign-in"),
    ("env_var", "API key variable"),
    ("none", "Not declared"),
];

/// Distribution kinds with labels.
pub(crate) const DEPLOY_LABELS: [(&str, &str); 3] = [
    ("binary", "Binary download"),
    ("npx", "npx (Node.js)"),
    ("uvx", "uvx (Python)"),
];

/// Verification states (`build --matrix`) with the badge and filter labels, in filter order.
pub(crate) const VERIFICATION_LABELS: [(&str, &str); 4] = [
    ("verified", "Verified"),
    ("failed", "Launch failed"),
    ("expired", "Verification expired"),
    ("stale", "Verified an earlier release"),
];

/// The label of `key` in `table`, or the key itself when the table does not know it.
pub(crate) fn label<'a>(table: &[(&'a str, &'a str)], key: &'a str) -> &'a str {
    table
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(key, |(_, l)| l)
}
