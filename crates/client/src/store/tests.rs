//! What the store trusts: receipts that describe their folder, and nothing else.

use super::*;
use crate::resolve::{resolve, ResolveOptions};

fn resolution(version: &str, args: &[&str]) -> Resolution {
    let json = serde_json::json!({"agents": [{"id": "a", "name": "A", "version": version,
        "distribution": {"binary": {"linux-x86_64": {"archive": "https://x.test/a.tar.gz",
            "cmd": "bin/agent", "args": args,
            "sha256": "ab".repeat(32)}}}}]});
    let document = Document::parse(json.to_string().as_bytes(), "test").unwrap();
    let options = ResolveOptions {
        platform: Some("linux-x86_64".into()),
        ..ResolveOptions::default()
    };
    resolve(&document, "a", &options).unwrap()
}

/// An install of `res` as `install` leaves it: the program and a receipt.
fn fake_install(store: &Store, res: &Resolution) -> PathBuf {
    let dir = store.install_dir(res);
    std::fs::create_dir_all(dir.join("files/bin")).unwrap();
    std::fs::write(dir.join("files/bin/agent"), "#!/bin/sh\n").unwrap();
    let receipt = Receipt::new(res, "files/bin/agent".into(), pinned(res));
    std::fs::write(dir.join(RECEIPT), serde_json::to_vec(&receipt).unwrap()).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for item in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(item.file_name());
        if item.file_type().unwrap().is_dir() {
            copy_dir(&item.path(), &target);
        } else {
            std::fs::copy(item.path(), target).unwrap();
        }
    }
}

#[test]
fn only_receipts_that_describe_their_own_folder_count() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path().join("cache")).unwrap();
    let res = resolution("1.0.0", &[]);
    let dir = fake_install(&store, &res);
    let found = store.find(&res).expect("a valid install is found");
    assert_eq!(found.program, dir.join("files/bin/agent"));
    assert_eq!(found.dir, dir);
    // The same folder copied under another version or name describes somewhere else.
    let name = dir.file_name().unwrap();
    copy_dir(&dir, &store.agents().join("a/2.0.0").join(name));
    copy_dir(
        &dir,
        &store
            .agents()
            .join("a/1.0.0/linux-x86_64-binary-000000000000"),
    );
    assert_eq!(store.installed().unwrap(), vec![found.clone()]);
    assert_eq!(store.find(&resolution("2.0.0", &[])), None);
    // Other settings under the same pin are not this install.
    assert_eq!(store.find(&resolution("1.0.0", &["--other"])), None);
    // A receipt that is a link, or not JSON, or with a program outside: not an install.
    let receipt = std::fs::read(dir.join(RECEIPT)).unwrap();
    let elsewhere = root.path().join("receipt.json");
    std::fs::write(&elsewhere, &receipt).unwrap();
    std::fs::remove_file(dir.join(RECEIPT)).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&elsewhere, dir.join(RECEIPT)).unwrap();
        assert_eq!(store.find(&res), None, "a linked receipt is not read");
        std::fs::remove_file(dir.join(RECEIPT)).unwrap();
    }
    std::fs::write(dir.join(RECEIPT), b"{not json").unwrap();
    assert_eq!(store.find(&res), None);
    let mut value: serde_json::Value = serde_json::from_slice(&receipt).unwrap();
    value["program"] = "../../../../bin/sh".into();
    std::fs::write(dir.join(RECEIPT), value.to_string()).unwrap();
    assert_eq!(store.find(&res), None);
    assert_eq!(store.installed().unwrap(), vec![]);
    // gc and uninstall leave what has no valid receipt.
    assert_eq!(store.uninstall("a", None).unwrap(), Vec::<PathBuf>::new());
    assert!(dir.join("files/bin/agent").exists());
}

#[test]
fn the_default_root_follows_the_variable_then_xdg_then_home() {
    let saved: Vec<_> = [CACHE_DIR_ENV, "XDG_CACHE_HOME", "HOME"]
        .iter()
        .map(|name| (*name, std::env::var_os(name)))
        .collect();
    std::env::set_var(CACHE_DIR_ENV, "/c/acp");
    std::env::set_var("XDG_CACHE_HOME", "/xdg");
    std::env::set_var("HOME", "/home/u");
    assert_eq!(Store::default_root(), Some(PathBuf::from("/c/acp")));
    std::env::set_var(CACHE_DIR_ENV, "relative");
    let xdg = Store::default_root();
    std::env::remove_var(CACHE_DIR_ENV);
    std::env::remove_var("XDG_CACHE_HOME");
    let home = Store::default_root();
    for (name, value) in saved {
        match value {
            Some(value) => std::env::set_var(name, value),
            None => std::env::remove_var(name),
        }
    }
    if cfg!(windows) {
        return;
    }
    assert_eq!(
        xdg,
        Some(PathBuf::from("/xdg/acp-registry")),
        "a relative value is ignored"
    );
    let expected = if cfg!(target_os = "macos") {
        "/home/u/Library/Caches/acp-registry"
    } else {
        "/home/u/.cache/acp-registry"
    };
    assert_eq!(home, Some(PathBuf::from(expected)));
}
