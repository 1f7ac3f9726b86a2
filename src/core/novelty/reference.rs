//! The reference's findings: the gates that ran, run again over the reference versions of the
//! files they checked, in a clean checkout of the reference commit with the working tree's
//! configuration (see the module above).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Earlier;
use crate::core::cache::{KeyMaker, ResultCache};
use crate::core::clean_room::CleanRoom;
use crate::core::config::{CachePolicy, Config};
use crate::core::engine::{Run, RunRequest, execute};
use crate::core::report::GateStatus;
use crate::core::scope::ScopeRequest;
use crate::core::scope::changed_lines::{EarlierFile, at_commit};
use crate::core::trust::{FileHashes, Manifest};
use crate::core::violation::Violation;
use crate::core::workspace::content_id::blob_id;

/// The findings of `run`'s gates at `commit`, over the reference versions of the files it
/// checked: from `cache` when it has them all, else from a run in a checkout, whose results go
/// into `cache`.
pub(super) async fn findings(
    config: &Config,
    request: &RunRequest,
    run: &Run,
    commit: &str,
    cache: Option<&Arc<ResultCache>>,
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
    if let Some(findings) = cache.and_then(|c| cached(config, request, run, &files, &gates, c)) {
        return Ok(Earlier { findings, files });
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
    // The reference's own cache, not the working tree's (`ResultCache::load_reference`).
    req.cache = cache.cloned();
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

/// The reference's findings as `cache` holds them, when it holds every one: only gates that
/// check file by file, whose result for a file is keyed by that file's content (the reference
/// version's blob id) and by what the working tree holds beside it (the gate, its configuration
/// files, the program), as the run in a checkout with the working tree's configuration keys it.
fn cached(
    config: &Config,
    request: &RunRequest,
    run: &Run,
    files: &HashMap<String, EarlierFile>,
    gates: &[String],
    cache: &ResultCache,
) -> Option<HashMap<String, Vec<Violation>>> {
    let keys = KeyMaker::new(&request.root, config).with_stamps(request.cache.as_deref());
    let mut found = HashMap::new();
    for id in gates {
        let gate = run.gates().iter().find(|g| &g.id == id)?;
        if !gate.pass_files || gate.cache != CachePolicy::PerFile {
            return None;
        }
        let mut all = Vec::new();
        for earlier in files.values().filter(|e| gate.applies_to(&e.path)) {
            let content = blob_id(earlier.text.as_ref()?.as_bytes())?;
            let key = keys.key_with_content(gate, &content);
            all.extend(cache.peek(&gate.id, &earlier.path, &key)?);
        }
        found.insert(id.clone(), all);
    }
    tracing::debug!("the reference's findings came from the cache");
    Some(found)
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
