//! Workspace trust: a `quality.yaml` comes with the repository, so an editor or an agent must not
//! run its commands until a person has trusted them. What is trusted is the `Manifest`: every
//! command the configuration would run, with its environment, folder, the program each name
//! resolves to and the content of the files in the workspace it runs. The user's decisions are
//! kept in the `TrustStore`. See docs/trust.md.

mod manifest;
mod store;

pub use manifest::{FileHashes, Manifest};
pub use store::TrustStore;

use std::path::Path;

use crate::core::config::{self, Config};

/// Why a face that runs on its own (the agent server, an agent's hook) runs nothing.
pub enum Refusal {
    /// The configuration has errors (the message says which).
    Config(String),
    /// No person trusted what it runs, or it changed since: this is what it runs.
    Untrusted(Manifest),
}

/// The workspace's configuration and what it runs, when a person trusted that.
pub fn trusted_config(
    root: &Path,
    config_path: Option<&Path>,
    hashes: &FileHashes,
) -> Result<(Config, Manifest), Refusal> {
    let config = config::load_for_workspace(root, config_path)
        .map_err(|e| Refusal::Config(e.to_string()))?;
    let manifest = Manifest::of(&config, root, hashes);
    if TrustStore::for_user().is_some_and(|s| s.is_trusted(root, &manifest.hash)) {
        Ok((config, manifest))
    } else {
        Err(Refusal::Untrusted(manifest))
    }
}
