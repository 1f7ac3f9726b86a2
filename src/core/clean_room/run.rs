//! A whole clean-room run for the servers (the agent server and the language server), which
//! run nothing a person has not trusted: the checkout is made, the configuration committed there
//! is read, and the caller's trust check sees exactly what would run in the checkout before
//! anything does.

use std::path::{Path, PathBuf};

use super::{CleanRoom, CleanRoomError};
use crate::core::config::{Config, Trigger};
use crate::core::engine::{RunRequest, execute};
use crate::core::report::Report;
use crate::core::trust::{FileHashes, Manifest};

/// Why a server's clean-room run did not give a report.
#[derive(Debug, Clone)]
pub enum ServerRunError {
    /// The checkout could not be made (a bad revision, git's message).
    CleanRoom(CleanRoomError),
    /// The configuration at the revision has errors.
    Config(String),
    /// The configuration at the revision runs what was not trusted: what differs.
    Untrusted(String),
    /// The engine refused the request (an unknown gate, a path not in the commit).
    Run(String),
}

/// Whether the clean room may run what `config` runs in the checkout at `checkout_root`, given
/// the manifest of the working tree's own runs, which the caller found trusted: the checkout
/// must run the same — the same commands, `env` and `cwd`, and the repository's scripts with the
/// same content. Programs installed in `.venv` or `node_modules` are compared by name only: a
/// fresh checkout has none until its `deps` gates install them, and those gates are among the
/// commands compared (see `trust::manifest`).
pub fn runs_as_trusted(
    config: &Config,
    checkout_root: &Path,
    trusted: &Manifest,
) -> Result<(), String> {
    let manifest = Manifest::of(config, checkout_root, &FileHashes::default());
    if manifest.portable_hash == trusted.portable_hash {
        Ok(())
    } else {
        Err(manifest.portable_differences(trusted))
    }
}

/// Makes the clean room, reads its configuration, asks `permits` (given the configuration and the
/// checkout's root) whether it may run, runs the gates and removes the checkout. Dropped before
/// its end (a cancelled call), it stops the gates and removes the checkout all the same.
/// `request` is the run as it would be in the workspace (its root, scope, gates and kinds);
/// `config_path` the server's `--config`, if any.
pub async fn run_for_server(
    request: RunRequest,
    rev: String,
    config_path: Option<PathBuf>,
    permits: impl FnOnce(&Config, &Path) -> Result<(), String>,
) -> Result<Report, ServerRunError> {
    let root = request.root.clone();
    let clean_room = tokio::task::spawn_blocking(move || CleanRoom::open(&root, &rev, false))
        .await
        .map_err(|e| ServerRunError::Run(format!("the clean room could not be made: {e}")))?
        .map_err(ServerRunError::CleanRoom)?;
    let outcome = async {
        let config = clean_room
            .load_config(config_path.as_deref())
            .map_err(|e| ServerRunError::Config(e.to_string()))?;
        permits(&config, clean_room.root()).map_err(ServerRunError::Untrusted)?;
        let mut engine_request = clean_room
            .request(request.scope, request.gates, Trigger::Command)
            .map_err(|e| ServerRunError::Run(e.to_string()))?;
        engine_request.kinds = request.kinds;
        execute(&config, &engine_request, None)
            .await
            .map_err(|e| ServerRunError::Run(e.to_string()))
    }
    .await;
    // Removing the worktree is git's work on disk: off the server's thread, whatever the outcome.
    tokio::task::spawn_blocking(move || Ok(clean_room.finish(outcome?)))
        .await
        .map_err(|e| ServerRunError::Run(format!("the clean room could not be removed: {e}")))?
}
