//! The published form is composed once per entry: a check normalizes each manifest once
//! (the schema rule's reading is where the published form starts, whatever the number of
//! outputs), a build under the checked base URL writes the check's agents without composing
//! them again, and the site reads both channels from one form per entry.

use std::io::Write;
use std::path::Path;

use crate::publish::build::{plan, BuildOptions};
use crate::publish::output::{FileSink, Tree};
use crate::publish::BuildError;
use crate::registry::check_registry_to_build;
use crate::rules::take_normalized_count;

/// A sink that takes every file and keeps nothing.
struct Discard;

impl FileSink for Discard {
    fn file(
        &self,
        path: &str,
        content: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<String, BuildError> {
        content(&mut std::io::sink()).map_err(|source| BuildError::Io {
            path: path.into(),
            source,
        })?;
        Ok(String::new())
    }
}

/// The bundled registry (three outputs, one a preview channel with patches), copied.
fn bundled(to: &Path) -> usize {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("registry");
    let mut entries = 0;
    for item in std::fs::read_dir(&from).unwrap().flatten() {
        let target = to.join(item.file_name());
        if item.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            for file in std::fs::read_dir(item.path()).unwrap().flatten() {
                std::fs::copy(file.path(), target.join(file.file_name())).unwrap();
            }
            entries += usize::from(target.join("agent.json").is_file());
        } else {
            std::fs::copy(item.path(), target).unwrap();
        }
    }
    entries
}

/// `normalized_json` calls of `f`, run on one thread: rayon's work inside stays on the
/// pool's only thread, whose counter is read there.
fn normalizations<T: Send>(f: impl FnOnce() -> T + Send) -> (usize, T) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        take_normalized_count();
        let out = f();
        (take_normalized_count(), out)
    })
}

#[test]
fn a_check_and_its_build_normalize_each_manifest_once_whatever_the_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let entries = bundled(dir.path());
    let (count, checked) = normalizations(|| check_registry_to_build(dir.path()).unwrap());
    assert!(!checked.report.has_errors(), "{:?}", checked.report.diagnostics);
    assert_eq!(checked.config.outputs.len(), 3);
    assert_eq!(count, entries, "one normalization per entry in the check");

    let (count, ()) = normalizations(|| {
        let plan = plan(&checked, &BuildOptions::default(), None).unwrap();
        plan.files.produce(&Discard).unwrap();
    });
    assert_eq!(count, 0, "the build writes what the check composed");

    let options = BuildOptions {
        site: true,
        ..BuildOptions::default()
    };
    let (count, ()) = normalizations(|| {
        let plan = plan(&checked, &options, None).unwrap();
        plan.files.produce(&Discard).unwrap();
    });
    assert_eq!(count, entries, "the site: one form per entry for both channels");
}
