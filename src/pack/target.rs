//! Rust target triples as registry platforms: which `distribution.binary` key a build
//! serves, which archive format it ships in and what its executable is called.

use crate::publish::archive::PackFormat;

/// What a target triple means for packaging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Platform {
    /// The `distribution.binary` key (`linux-x86_64`, ...).
    pub(crate) key: &'static str,
    pub(crate) format: PackFormat,
    pub(crate) windows: bool,
}

/// The platform of a Rust target triple such as `aarch64-unknown-linux-musl`; `None` for
/// an architecture or operating system the registry has no key for.
pub(crate) fn platform(triple: &str) -> Option<Platform> {
    let arch = match triple.split('-').next()? {
        "x86_64" => "x86_64",
        "aarch64" | "arm64" => "aarch64",
        _ => return None,
    };
    let parts: Vec<&str> = triple.split('-').collect();
    let os = if parts.contains(&"linux") {
        "linux"
    } else if parts.contains(&"darwin") {
        "darwin"
    } else if parts.contains(&"windows") {
        "windows"
    } else {
        return None;
    };
    let key = crate::manifest::PLATFORMS
        .into_iter()
        .find(|k| *k == format!("{os}-{arch}"))?;
    let windows = os == "windows";
    Some(Platform {
        key,
        format: if windows {
            PackFormat::Zip
        } else {
            PackFormat::TarGz
        },
        windows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_triples_map_to_platform_keys_and_formats() {
        let cases = [
            (
                "x86_64-unknown-linux-musl",
                "linux-x86_64",
                PackFormat::TarGz,
            ),
            (
                "aarch64-unknown-linux-gnu",
                "linux-aarch64",
                PackFormat::TarGz,
            ),
            ("x86_64-apple-darwin", "darwin-x86_64", PackFormat::TarGz),
            ("aarch64-apple-darwin", "darwin-aarch64", PackFormat::TarGz),
            ("x86_64-pc-windows-msvc", "windows-x86_64", PackFormat::Zip),
            (
                "aarch64-pc-windows-msvc",
                "windows-aarch64",
                PackFormat::Zip,
            ),
        ];
        for (triple, key, format) in cases {
            let p = platform(triple).unwrap();
            assert_eq!((p.key, p.format), (key, format), "{triple}");
        }
        assert_eq!(platform("riscv64gc-unknown-linux-gnu"), None);
        assert_eq!(platform("x86_64-unknown-freebsd"), None);
        assert_eq!(platform(""), None);
    }
}
