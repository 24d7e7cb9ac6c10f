//! Safe reading of an untrusted tree (a registry, a collaboration folder).
//!
//! Every reader of registry or collaboration files goes through here, so the same rules hold
//! everywhere:
//!
//! - **No link is followed** below the folder the caller trusts (`base`): every component of
//!   the relative path is opened with `O_NOFOLLOW` from its parent's handle (`openat`), so a
//!   link in an intermediate folder cannot slip through either. `base` itself is followed
//!   (the user named it).
//! - **Only regular files are read.** Opening never blocks (`O_NONBLOCK`, so a FIFO does not
//!   wait for a writer); the handle's own `fstat` must say "regular file" before one byte is
//!   read, so devices (`/dev/zero`), FIFOs and sockets are refused, and so is a regular file
//!   with more than one name (a hard link can bring any file of the same file system into the
//!   tree without a link to show at the path).
//! - **Size limits hold while reading**: at most `limit + 1` bytes are ever read, whatever the
//!   metadata says (procfs files report 0 bytes, a file can grow while it is read).
//!
//! - **What a document parses into is bounded** by the caller: [`ValueBudget`] counts a JSON
//!   text's values before a tree of it is built.
//!
//! Platforms without `openat` check every component with `symlink_metadata` instead.
//!
//! The registry tool's `fs::archive` extracts downloaded archives under the same rules; it
//! lives there, so `acp-collab` does not link the archive crates.

pub mod atomic;
pub mod digest;
mod read;
mod values;
mod write;

pub use read::{
    kind, list_dir, no_follow, open_path, read_capped, read_capped_named, read_limited, regular,
    Child, Kind, ReadError, Special,
};
pub use values::ValueBudget;
pub use write::{
    create_dirs_below, no_link_below, process_is_gone, replace_file, write_below, write_new,
};
