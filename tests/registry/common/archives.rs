//! Archives built entry by entry with raw headers, so hostile names, links and special
//! files get in (shared by `tests/registry/verify_archive.rs` and `tests/registry/net_faults.rs`).

use std::io::Write;

use acp_registry::archive::ArchiveFormat;

#[derive(Clone, Copy)]
/// One archive entry.
pub(crate) enum Entry<'a> {
    File(&'a str, &'a [u8]),
    /// A file with these mode bits (a [`Entry::File`] has 0755).
    Mode(&'a str, &'a [u8], u32),
    /// A folder, mode 0777.
    Dir(&'a str),
    Symlink(&'a str, &'a str),
    Hardlink(&'a str, &'a str),
    /// A character device (1, 3), as `/dev/null` is.
    Device(&'a str),
    Fifo(&'a str),
}

/// A tar written with raw headers, so names like `../x` and `/etc/x` get in.
pub(crate) fn tar(entries: &[Entry]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for entry in entries {
        let mut header = tar::Header::new_gnu();
        let (name, data, kind, link): (&str, &[u8], tar::EntryType, Option<&str>) = match *entry {
            Entry::File(n, d) | Entry::Mode(n, d, _) => (n, d, tar::EntryType::Regular, None),
            Entry::Dir(n) => (n, b"", tar::EntryType::Directory, None),
            Entry::Symlink(n, t) => (n, b"", tar::EntryType::Symlink, Some(t)),
            Entry::Hardlink(n, t) => (n, b"", tar::EntryType::Link, Some(t)),
            Entry::Device(n) => (n, b"", tar::EntryType::Char, None),
            Entry::Fifo(n) => (n, b"", tar::EntryType::Fifo, None),
        };
        header.set_entry_type(kind);
        header.set_size(data.len() as u64);
        header.set_mode(match *entry {
            Entry::Mode(_, _, mode) => mode,
            Entry::Dir(_) => 0o777,
            _ => 0o755,
        });
        if let Entry::Device(_) = entry {
            header.set_device_major(1).unwrap();
            header.set_device_minor(3).unwrap();
        }
        // Written into the raw name field: `set_path` refuses `..` itself.
        let raw = &mut header.as_old_mut().name;
        raw[..name.len()].copy_from_slice(name.as_bytes());
        if let Some(target) = link {
            let raw = &mut header.as_old_mut().linkname;
            raw[..target.len()].copy_from_slice(target.as_bytes());
        }
        header.set_cksum();
        builder.append(&header, data).unwrap();
    }
    builder.into_inner().unwrap()
}

/// `plain` compressed for a tar format.
pub(crate) fn compress(format: ArchiveFormat, plain: &[u8]) -> Vec<u8> {
    match format {
        ArchiveFormat::TarGz => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(plain).unwrap();
            gz.finish().unwrap()
        }
        ArchiveFormat::TarBz2 => {
            let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            bz.write_all(plain).unwrap();
            bz.finish().unwrap()
        }
        ArchiveFormat::TarXz => {
            let mut xz = xz2::write::XzEncoder::new(Vec::new(), 1);
            xz.write_all(plain).unwrap();
            xz.finish().unwrap()
        }
        other => panic!("{other:?} is not a tar format"),
    }
}

/// [`tar`] as a `.tar.gz`.
pub(crate) fn tar_gz(entries: &[Entry]) -> Vec<u8> {
    compress(ArchiveFormat::TarGz, &tar(entries))
}

/// A zip of `entries` (links as zip symlinks, devices and FIFOs by their Unix mode); zip
/// has no hard links. A name given twice is written twice (the zip writer refuses that, so
/// the repeat goes in under a stand-in name of the same length, replaced afterwards).
pub(crate) fn zip_entries(entries: &[Entry]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().unix_permissions(0o755);
    let special = |mode: u32| SimpleFileOptions::default().external_attributes(mode << 16);
    let mut seen = std::collections::BTreeSet::new();
    let mut stand_ins = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let original = match *entry {
            Entry::File(n, _)
            | Entry::Mode(n, _, _)
            | Entry::Dir(n)
            | Entry::Symlink(n, _)
            | Entry::Hardlink(n, _)
            | Entry::Device(n)
            | Entry::Fifo(n) => n,
        };
        let name = if seen.insert(original) {
            original.to_string()
        } else {
            let stand_in = format!("{i:\u{1}>width$}", width = original.len());
            stand_ins.push((stand_in.clone(), original));
            stand_in
        };
        match *entry {
            Entry::File(_, data) => {
                writer.start_file(&name, options).unwrap();
                writer.write_all(data).unwrap();
            }
            Entry::Mode(_, data, mode) => {
                let options = SimpleFileOptions::default().unix_permissions(mode);
                writer.start_file(&name, options).unwrap();
                writer.write_all(data).unwrap();
            }
            Entry::Dir(_) => writer
                .add_directory(&name, options.unix_permissions(0o777))
                .unwrap(),
            Entry::Symlink(_, target) => writer.add_symlink(&name, target, options).unwrap(),
            Entry::Device(_) => writer.start_file(&name, special(0o020644)).unwrap(),
            Entry::Fifo(_) => writer.start_file(&name, special(0o010644)).unwrap(),
            Entry::Hardlink(..) => panic!("zip has no hard links"),
        }
    }
    let mut bytes = writer.finish().unwrap().into_inner();
    for (stand_in, original) in stand_ins {
        replace_all(&mut bytes, stand_in.as_bytes(), original.as_bytes());
    }
    bytes
}

/// Every occurrence of `from` in `bytes` replaced by `to`, of the same length.
fn replace_all(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    assert_eq!(from.len(), to.len());
    let mut at = 0;
    while let Some(i) = bytes[at..].windows(from.len()).position(|w| w == from) {
        bytes[at + i..at + i + from.len()].copy_from_slice(to);
        at += i + from.len();
    }
}

/// `entries` packed as `format`.
pub(crate) fn archive(format: ArchiveFormat, entries: &[Entry]) -> Vec<u8> {
    match format {
        ArchiveFormat::Zip => zip_entries(entries),
        tar_format => compress(tar_format, &tar(entries)),
    }
}

/// Every archive format `verify` unpacks.
pub(crate) const FORMATS: [ArchiveFormat; 4] = [
    ArchiveFormat::Zip,
    ArchiveFormat::TarGz,
    ArchiveFormat::TarXz,
    ArchiveFormat::TarBz2,
];
