//! The reference's findings: the gates that ran, run again over the reference versions of the
//! files they checked, in a clean checkout of the reference commit with the working tree's
//! configuration (see the module above).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::Earlier;
use crate::core::clean_room::CleanRoom;
use crate::core::config::Config;
use crate::core::engine::{Run, RunRequest, execute};
use crate::core::report::GateStatus;
use crate::core::scope::ScopeRequest;
use crate::core::scope::changed_lines::at_commit;
use crate::core::trust::{FileHashes, Manifest};

/// The findings of `run`'s gates at `commit`, over the reference versions of the files it
/// checked.
pub(super) async fn findings(
    config: &Config,
    request: &RunRequest,
    run: &Run,
    commit: &str,
) -> Result<Earlier, String> {
    let root = request.root.clone();
    let checked = run.report().scope.files.clone();
    let at = commit.to_owned();
    let files = tokio::task::spawn_blocking(move || at_commit(&root, &at, &checked))
        .await
        .map_err(|e| format!("reading the reference failed: {e}"))?
        .map_err(|e| e.to_string())?;
    let gates: Vec<String> = run
        .report()
        .gates
        .iter()
        .filter(|g| g.status != GateStatus::Skipped)
        .map(|g| g.id.clone())
        .collect();
    if files.is_empty() || gates.is_empty() {
        // Every file the run checked is new since the reference: nothing to run there.
        return Ok(Earlier {
            findings: HashMap::new(),
            files,
        });
    }
    let (root, at) = (request.root.clone(), commit.to_owned());
    let room = tokio::task::spawn_blocking(move || CleanRoom::open(&root, &at, false))
        .await
        .map_err(|e| format!("checking out the reference failed: {e}"))?
        .map_err(|e| e.to_string())?;
    // The gates' configuration files, and the workspace's scripts the commands run: the
    // reference run runs what the working tree would (what was trusted), over older code.
    let manifest = Manifest::of(config, &request.root, &FileHashes::default());
    let scripts = manifest
        .commands
        .iter()
        .flat_map(|c| &c.local)
        .filter(|l| l.sha256.is_some())
        .map(|l| &l.path);
    for rel in run
        .gates()
        .iter()
        .flat_map(|g| &g.cache_inputs)
        .chain(scripts)
    {
        copy_over(&request.root.join(rel), &room.root().join(rel))?;
    }
    let paths: Vec<PathBuf> = files.values().map(|f| request.root.join(&f.path)).collect();
    let mut req = room
        .request(ScopeRequest::Files(paths), Some(gates), request.trigger)
        .map_err(|e| e.to_string())?;
    // Not the working tree's cache: it keeps one result per gate and file, and the reference
    // version under the same path would replace the current one each time.
    req.cache = None;
    let earlier = execute(config, &req, None)
        .await
        .map_err(|e| e.to_string())?;
    // Not finished: a reference run records no state and keeps no report.
    let findings = earlier
        .report()
        .gates
        .iter()
        .map(|g| (g.id.clone(), g.violations.clone()))
        .collect();
    drop(earlier);
    drop(room);
    Ok(Earlier { findings, files })
}

/// The working tree's version of a configuration file over the checkout's; one the working tree
/// lacks is removed there too.
fn copy_over(from: &Path, to: &Path) -> Result<(), String> {
    let copied = if from.is_file() {
        to.parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::copy(from, to).map(|_| ()))
    } else {
        match std::fs::remove_file(to) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    };
    copied.map_err(|e| {
        format!(
            "{} could not be copied into the reference: {e}",
            from.display()
        )
    })
}
