//! Platforms, distribution kinds and archive formats: the registry format's fixed vocabulary,
//! shared by the client and the `acp-registry` tool's rules, site and `verify`.

/// The six platform keys of `distribution.binary`, sorted.
pub const PLATFORMS: [&str; 6] = [
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
];

/// How a distribution launches.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Per-platform archives or executables.
    Binary,
    /// An npm package run by `npx`.
    Npx,
    /// A `PyPI` package run by `uvx`.
    Uvx,
}

impl Kind {
    /// Every kind, in output order.
    pub const ALL: [Kind; 3] = [Kind::Binary, Kind::Npx, Kind::Uvx];

    /// The key naming this kind under `distribution`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Binary => "binary",
            Kind::Npx => "npx",
            Kind::Uvx => "uvx",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The platform key of the machine running this code, when it is one of [`PLATFORMS`].
pub fn current_platform() -> Option<&'static str> {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "linux" => "linux",
        "windows" => "windows",
        _ => return None,
    };
    let arch = match std::env::consts::ARCH {
        "aarch64" => "aarch64",
        "x86_64" => "x86_64",
        _ => return None,
    };
    let key = format!("{os}-{arch}");
    PLATFORMS.into_iter().find(|p| *p == key)
}

/// The file name an archive URL ends in (query and fragment dropped), or `default` when the
/// last segment is empty or hidden.
pub fn archive_file_name<'a>(url: &'a str, default: &'a str) -> &'a str {
    let name = url
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .rsplit('/')
        .next()
        .unwrap_or("");
    if name.is_empty() || name.starts_with('.') {
        default
    } else {
        name
    }
}

/// How a binary target's download is packed, told by its file name: one of the archive
/// formats clients extract, or the executable itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// `.zip`.
    Zip,
    /// `.tar.gz` or `.tgz`.
    TarGz,
    /// `.tar.bz2` or `.tbz2`.
    TarBz2,
    /// `.tar.xz`.
    TarXz,
    /// The download is the executable itself.
    Raw,
}

impl ArchiveFormat {
    /// Every extension clients extract, with its format, in the order messages list them.
    pub const EXTENSIONS: [(&'static str, ArchiveFormat); 6] = [
        (".zip", ArchiveFormat::Zip),
        (".tar.gz", ArchiveFormat::TarGz),
        (".tgz", ArchiveFormat::TarGz),
        (".tar.bz2", ArchiveFormat::TarBz2),
        (".tbz2", ArchiveFormat::TarBz2),
        (".tar.xz", ArchiveFormat::TarXz),
    ];

    /// The format of a file name by its extension (ASCII case ignored); `Raw` for any other.
    pub fn of_file_name(name: &str) -> ArchiveFormat {
        let lower = name.to_ascii_lowercase();
        Self::EXTENSIONS
            .iter()
            .find(|(extension, _)| lower.ends_with(extension))
            .map_or(ArchiveFormat::Raw, |&(_, format)| format)
    }

    /// The format of a URL or file name, query and fragment ignored.
    pub fn of(url: &str) -> ArchiveFormat {
        Self::of_file_name(url.split(['?', '#']).next().unwrap_or(""))
    }

    /// The extensions clients extract, `.zip` first.
    pub fn extensions() -> impl Iterator<Item = &'static str> {
        Self::EXTENSIONS.iter().map(|&(extension, _)| extension)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_platform_is_one_of_the_six_keys_on_supported_machines() {
        if let Some(key) = current_platform() {
            assert!(PLATFORMS.contains(&key), "{key}");
        }
    }

    #[test]
    fn an_archive_file_name_drops_query_and_fragment_and_refuses_hidden_names() {
        assert_eq!(
            archive_file_name("https://x/a/agent.tgz?sig=1#f", "d"),
            "agent.tgz"
        );
        assert_eq!(archive_file_name("https://x/a/", "d"), "d");
        assert_eq!(archive_file_name("https://x/.hidden", "d"), "d");
    }
}
