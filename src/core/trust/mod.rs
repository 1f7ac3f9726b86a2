//! Workspace trust: a `quality.yaml` comes with the repository, so an editor or an agent must not
//! run its commands until a person has trusted them. What is trusted is the `Manifest`: every
//! command the configuration would run, with its environment, folder, the program each name
//! resolves to and the content of the files in the workspace it runs. The user's decisions are
//! kept in the `TrustStore`. See docs/trust.md.

mod manifest;
mod store;

pub use manifest::{FileHashes, Manifest};
pub use store::TrustStore;
