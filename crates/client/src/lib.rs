//! Install and run the agents of an ACP (Agent Client Protocol) registry safely, from an
//! editor or any other client.
//!
//! Everything a registry checks ends at its published `registry.json`; this crate carries the
//! checks to the machine that runs the agents. The steps, each its own module:
//!
//! 1. [`registry`]: load `registry.json` from a URL (through an on-disk cache with conditional
//!    requests, a freshness window, an offline mode and a snapshot fallback that say how old
//!    the copy is) or from a file, read under fixed bounds ([`document`]).
//! 2. [`resolve`]: choose how an entry runs on this platform (binary, npx, uvx, in an order
//!    the caller can change), with the exact arguments and environment and why other kinds
//!    were passed over; an unknown id gets the nearest ids.
//! 3. [`install`]: download over https only, with status checks, size caps and deadlines;
//!    verify the pinned `sha256` ([`PinPolicy`] for entries without one); unpack with
//!    traversal, link, duplicate, bomb and special-file refusals ([`archive`]); assemble the
//!    install aside and rename it into the cache ([`store`]) as the last step, under a lock,
//!    so nothing partially unpacked is ever found or run. npx and uvx packages are
//!    pre-installed into the cache at the pinned version.
//! 4. [`launch`]: the command with the registry's `args` and `env` applied, stdio left to the
//!    caller.
//!
//! [`skill_index`] is the vocabulary of the indexes skill clients read (the well-known skills
//! discovery index, both versions, and Claude Code plugin marketplaces); [`skills`] fetches
//! and verifies skills from a site or a marketplace.
//!
//! [`age`] tells when a pinned npm or `PyPI` version was published (for release-age
//! cooldowns); [`lifecycle`] reads the registry's `lifecycle.json` (deprecated and disabled
//! entries, publish times and release histories, loaded by [`registry::Registry::lifecycle`])
//! and picks the version a cooldown allows; [`platform`] holds the format's vocabulary (platform keys, kinds, archive
//! formats). The HTTP client ([`Client`], configured by [`NetConfig`]) refuses plain http and
//! non-public addresses (a mirror on a private network is named in
//! [`NetConfig::private_hosts`]).
//!
//! # Example
//!
//! Resolve an agent, install it unless the cache already holds it, and start it with piped
//! stdio (an editor then speaks ACP over the pipes):
//!
//! ```no_run
//! use std::process::Stdio;
//!
//! use acp_registry_client::install::{install, InstallOptions};
//! use acp_registry_client::registry::{Registry, RegistryOptions, Source};
//! use acp_registry_client::resolve::ResolveOptions;
//! use acp_registry_client::store::Store;
//! use acp_registry_client::{Client, NetConfig};
//!
//! # async fn start() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new(NetConfig::default())?;
//! let store = Store::open(Store::default_root().ok_or("no cache folder")?)?;
//! let options = RegistryOptions::new(Source::default(), store.root().to_path_buf());
//! let registry = Registry::load(&client, &options).await?;
//! for warning in &registry.warnings {
//!     eprintln!("warning: {warning}");
//! }
//! let resolution = registry.resolve("claude-acp", &ResolveOptions::default())?;
//! let installed = match store.find(&resolution) {
//!     Some(installed) => installed,
//!     None => install(&store, &client, &resolution, &InstallOptions::default()).await?,
//! };
//! let agent = installed
//!     .command(&[])
//!     .stdin(Stdio::piped())
//!     .stdout(Stdio::piped())
//!     .spawn()?;
//! # drop(agent);
//! # Ok(())
//! # }
//! ```
//!
//! The functions that ask the network are `async` and need a tokio runtime.

pub mod age;
pub mod archive;
pub mod document;
pub mod install;
pub mod launch;
pub mod lifecycle;
// The HTTP client is shared with the `acp-registry` tool, which uses more of it than a client
// needs; clients use the three items re-exported below.
#[doc(hidden)]
pub mod net;
pub mod platform;
pub mod registry;
pub mod resolve;
pub mod skill_index;
pub mod skills;
pub mod store;

pub use install::PinPolicy;
pub use net::{Client, NetConfig, NetError};
