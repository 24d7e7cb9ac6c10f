//! Unit tests that span modules and reach crate-private functions (the integration tests
//! under `tests/` see only the public surface).

mod compat_golden;
mod one_reader;
mod published_once;
