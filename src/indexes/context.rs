//! One run's state ([`Ctx`]): the findings so far, the network (built on first use), the
//! private scratch folder skills are laid out in, and the byte budget of the run.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use acp_registry_core::fs::ReadError;
use acp_registry_core::source::SourceFile;

use super::error::CheckError;
use super::limits::{MAX_INDEX_BYTES, MAX_SKILL_BYTES, MAX_TOTAL_BYTES};
use super::origin::{Fetched, Place};
use crate::diagnostics::{Diagnostic, Report};
use crate::net::{Client, NetConfig, NetError};
use crate::rules::Policy;

/// The network of a run: one runtime, a client capped for documents and one for files.
struct Net {
    runtime: tokio::runtime::Runtime,
    documents: Client,
    files: Client,
}

/// One run's state.
pub(crate) struct Ctx {
    report: Report,
    config: NetConfig,
    net: OnceCell<Result<Net, String>>,
    scratch: Scratch,
    /// Bytes read so far, against [`MAX_TOTAL_BYTES`].
    read: u64,
    /// Documents already fetched while looking at a site, so each is asked once.
    probed: Vec<(Place, Vec<u8>)>,
    /// The policy the skill rules run under: the defaults (no registry configuration here).
    pub(crate) policy: Policy,
}

impl Ctx {
    pub(crate) fn new(config: NetConfig) -> Result<Ctx, CheckError> {
        Ok(Ctx {
            report: Report::default(),
            config,
            net: OnceCell::new(),
            scratch: Scratch::new().map_err(|e| CheckError::Setup(e.to_string()))?,
            read: 0,
            probed: Vec::new(),
            policy: Policy::default(),
        })
    }

    /// The report, sorted.
    pub(crate) fn finish(mut self) -> Report {
        self.report.finish();
        std::mem::take(&mut self.report)
    }

    /// Record a finding.
    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        self.report.diagnostics.push(diagnostic);
    }

    /// Keep `source` for excerpts.
    pub(crate) fn keep(&mut self, source: SourceFile) {
        self.report.sources.insert(source.path.clone(), source);
    }

    /// One more skill or plugin checked.
    pub(crate) fn counted(&mut self) {
        self.report.entries += 1;
    }

    fn net(&self) -> Result<&Net, String> {
        self.net
            .get_or_init(|| {
                let runtime = crate::net::runtime().map_err(|e| e.to_string())?;
                let client = |cap| {
                    Client::new(NetConfig {
                        document_cap: cap,
                        ..self.config.clone()
                    })
                    .map_err(|e| e.to_string())
                };
                Ok(Net {
                    runtime,
                    documents: client(MAX_INDEX_BYTES)?,
                    files: client(MAX_SKILL_BYTES)?,
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether a document is at `place`; its bytes are kept for [`Ctx::document`].
    pub(crate) fn probe(&mut self, place: &Place) -> Fetched {
        let fetched = self.fetch(place, MAX_INDEX_BYTES);
        if let Fetched::Bytes(bytes) = &fetched {
            self.probed.push((place.clone(), bytes.clone()));
        }
        fetched
    }

    /// An index or manifest at `place`, at most [`MAX_INDEX_BYTES`] (once: a probed one is
    /// not asked again).
    pub(crate) fn document(&mut self, place: &Place) -> Fetched {
        if let Some(at) = self.probed.iter().position(|(p, _)| p == place) {
            return Fetched::Bytes(self.probed.swap_remove(at).1);
        }
        self.fetch(place, MAX_INDEX_BYTES)
    }

    /// A listed file or artifact at `place`, at most [`MAX_SKILL_BYTES`] and within the run's
    /// byte budget.
    pub(crate) fn file(&mut self, place: &Place) -> Fetched {
        if self.read >= MAX_TOTAL_BYTES {
            return Fetched::Failed(format!(
                "not read: this run already read {MAX_TOTAL_BYTES} bytes, its limit"
            ));
        }
        self.fetch(place, MAX_SKILL_BYTES)
    }

    fn fetch(&mut self, place: &Place, cap: u64) -> Fetched {
        let fetched = match place {
            Place::Local { base, rel } => read_local(base, rel, cap),
            Place::Remote(url) => match self.net() {
                Err(e) => Fetched::Failed(e),
                Ok(net) => {
                    // Each client's document cap is the cap asked for (`net` enforces it).
                    let client = if cap == MAX_SKILL_BYTES {
                        &net.files
                    } else {
                        &net.documents
                    };
                    let page = net.runtime.block_on(client.api_page(url, "*/*", None));
                    match page {
                        Ok(page) => match (page.status, page.body) {
                            (200, Some(body)) => Fetched::Bytes(body),
                            (404 | 410, _) => {
                                Fetched::Absent(format!("HTTP status {}", page.status))
                            }
                            (status, _) => Fetched::Failed(format!("HTTP status {status}")),
                        },
                        Err(NetError::Status(status @ (404 | 410))) => {
                            Fetched::Absent(format!("HTTP status {status}"))
                        }
                        Err(e) => Fetched::Failed(e.to_string()),
                    }
                }
            },
        };
        if let Fetched::Bytes(bytes) = &fetched {
            self.read += bytes.len() as u64;
        }
        fetched
    }

    /// A fresh, empty folder of the scratch area, for one skill.
    pub(crate) fn scratch_dir(&mut self) -> std::io::Result<PathBuf> {
        self.scratch.fresh()
    }
}

fn read_local(base: &Path, rel: &str, cap: u64) -> Fetched {
    match acp_registry_core::fs::read_capped(base, Path::new(rel), cap) {
        Ok(bytes) => Fetched::Bytes(bytes),
        Err(ReadError::NotFound) => Fetched::Absent("it does not exist".into()),
        Err(e) => Fetched::Failed(e.to_string()),
    }
}

/// A private folder of the system's temporary folder, removed with everything in it when the
/// run ends; each skill gets a fresh sub-folder, removed when the skill is judged.
struct Scratch {
    root: PathBuf,
    next: u64,
}

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        let root = std::env::temp_dir().join(format!(
            "acp-registry-skill-check-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&root)?;
        Ok(Scratch { root, next: 0 })
    }

    fn fresh(&mut self) -> std::io::Result<PathBuf> {
        self.next += 1;
        let dir = self.root.join(self.next.to_string());
        std::fs::create_dir(&dir)?;
        Ok(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Ours alone: created above with a unique name, never through a link.
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
