//! The published form is composed once per entry: a check normalizes each manifest once
//! (the schema rule's reading is where the published form starts, whatever the number of
//! outputs), a build under the checked base URL writes the check's agents without composing
//! them again, and the site reads both channels from one form per entry each time it asks.

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

/// The bundled registry (three outputs, one a preview channel with patches), copied;
/// returns how many entries it has.
fn bundled(to: &Path) -> usize {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for item in std::fs::read_dir(from).unwrap().flatten() {
            let target = to.join(item.file_name());
            if item.file_type().unwrap().is_dir() {
                copy(&item.path(), &target);
            } else {
                std::fs::copy(item.path(), target).unwrap();
            }
        }
    }
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("registry");
    copy(&from, to);
    std::fs::read_dir(to)
        .unwrap()
        .flatten()
        .filter(|item| item.path().join("agent.json").is_file())
        .count()
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
    assert!(
        !checked.report.has_errors(),
        "{:?}",
        checked.report.diagnostics
    );
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
    // The site reads both channels from one form, once for its listing when planned and
    // once for the page when rendered: it holds no agent between the two (memory stays flat
    // with the registry's size), and the registry files still add nothing.
    assert_eq!(count, 2 * entries, "the site: one form per entry per pass");
}
