//! The validator's working state, shared by the checks of every file of `validate`: the
//! findings so far and the reading of a folder file, where a refused symlink becomes one
//! finding (reported once) and any other read failure an internal error.

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::CollabError;
use crate::paths::{self, ReadError};

/// The findings of one validation as they are made, and the folder they are about.
pub(super) struct Validator<'a> {
    /// The collaboration folder.
    pub(super) folder: &'a Path,
    /// The `ERROR: ` messages so far, in check order.
    pub(super) errors: Vec<String>,
    /// The `WARNING: ` messages so far, in check order.
    pub(super) warnings: Vec<String>,
    /// The symlinks already reported, each reported once.
    pub(super) reported_symlinks: BTreeSet<String>,
}

impl Validator<'_> {
    pub(super) fn err(&mut self, msg: impl Into<String>) {
        self.errors.push(msg.into());
    }

    /// Turns a read problem into an ERROR (symlinks, once each) or an internal failure.
    pub(super) fn read_problem(&mut self, e: ReadError) -> Result<(), CollabError> {
        match e {
            ReadError::Symlink(m) => {
                if self.reported_symlinks.insert(m.clone()) {
                    self.errors.push(m);
                }
                Ok(())
            }
            e @ ReadError::Io(_) => Err(e.into()),
        }
    }

    /// Reads `base/rel`; a refused symlink is reported here, once.
    pub(super) fn read(&mut self, base: &Path, rel: &str) -> Result<Doc, CollabError> {
        match paths::read_text(base, rel) {
            Ok(Some(text)) => Ok(Doc::Text(text)),
            Ok(None) => Ok(Doc::Missing),
            Err(e) => self.read_problem(e).map(|()| Doc::Refused),
        }
    }

    /// A protocol text file; missing reads as empty (step 1 reported it).
    pub(super) fn read_folder_file(&mut self, name: &str) -> Result<String, CollabError> {
        let folder = self.folder;
        Ok(match self.read(folder, name)? {
            Doc::Text(text) => text,
            Doc::Missing | Doc::Refused => String::new(),
        })
    }
}

/// A file read by the validator.
pub(super) enum Doc {
    /// The file's text.
    Text(String),
    /// No such file.
    Missing,
    /// A symlink, already reported.
    Refused,
}
