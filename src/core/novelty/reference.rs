//! The reference's findings: the gates that ran, run again over the reference versions of the
//! files they checked, in a clean checkout of the reference commit with the working tree's
//! configuration (see the module above). Their results are cached like the working tree's: a
//! file-by-file gate's by the reference version's content, a gate that reads the whole workspace
//! by the reference commit and what was copied into the checkout (`workspace_identity`); so the
//! cache, local or shared, answers them without a checkout the next time.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::core::cache::remote::Session;
use crate::core::cache::{KeyMaker, ResultCache, WHOLE_WORKSPACE};
use crate::core::clean_room::CleanRoom;
use crate::core::config::{CachePolicy, Config, Gate, Trigger};
use crate::core::engine::lookup::{Lookup, read_shared};
use crate::core::engine::{Run, execute};
use crate::core::report::GateStatus;
use crate::core::scope::ScopeRequest;
use crate::core::scope::changed_lines::{EarlierFile, at_commit};
use crate::core::trust::{FileHashes, Manifest};
use crate::core::violation::Violation;
use crate::core::workspace::content_id::blob_id;

/// What a run's findings are compared with: the reference commit, the reference versions of
/// the files the run checked (by their current paths), and the gates that ran.
#[derive(Clone)]
pub struct Wanted {
    pub(super) commit: String,
    pub(super) files: HashMap<String, EarlierFile>,
    /// The files (current paths) that are as they were there, under the same path.
    pub(super) unchanged: HashSet<String>,
    pub(super) gates: Vec<Gate>,
}

impl Wanted {
    /// For `run`, whose changes were taken from `commit`.
    pub(super) async fn of(root: &Path, run: &Run, commit: &str) -> Result<Wanted, String> {
        let (root, at) = (root.to_path_buf(), commit.to_owned());
        let checked = run.report().scope.files.clone();
        let files = tokio::task::spawn_blocking(move || at_commit(&root, &at, &checked))
            .await
            .map_err(|e| format!("reading the reference failed: {e}"))?
            .map_err(|e| e.to_string())?;
        let unchanged = (files.iter())
            .filter(|(now, then)| then.unchanged && **now == then.path)
            .map(|(now, _)| now.clone())
            .collect();
        let ran: Vec<&str> = run
            .report()
            .gates
            .iter()
            .filter(|g| g.status != GateStatus::Skipped)
            .map(|g| g.id.as_str())
            .collect();
        let gates = run
            .gates()
            .iter()
            .filter(|g| ran.contains(&g.id.as_str()))
            .cloned()
            .collect();
        Ok(Wanted {
            commit: commit.to_owned(),
            files,
            unchanged,
            gates,
        })
    }

    /// What sets this reference apart (the commit, the gates, the files and their content):
    /// a second look for the same one finds what the first found.
    pub fn identity(&self) -> String {
        let mut text = format!("{}\n", self.commit);
        for g in &self.gates {
            text.push_str(&format!("{}\0{}\n", g.id, g.definition_hash));
        }
        let mut files: Vec<(&String, &EarlierFile)> = self.files.iter().collect();
        files.sort_by_key(|(now, _)| *now);
        for (now, then) in files {
            let content = then.text.as_deref().map(|t| blob_id(t.as_bytes()));
            text.push_str(&format!("{now}\0{}\0{content:?}\n", then.path));
        }
        hex::encode(Sha256::digest(text.as_bytes()))
    }

    /// The reference files (current path → then) that a gate needs the reference's findings
    /// of: for a gate whose result for a file depends on that file alone (`per_file`), the
    /// changed ones; the findings in an unchanged one are the findings now.
    pub(super) fn to_check<'w>(
        &'w self,
        gate: &'w Gate,
    ) -> impl Iterator<Item = (&'w String, &'w EarlierFile)> {
        self.files.iter().filter(move |(now, then)| {
            gate.applies_to(&then.path) && !(per_file(gate) && self.unchanged.contains(*now))
        })
    }

    fn gate(&self, id: &str) -> Option<&Gate> {
        self.gates.iter().find(|g| g.id == id)
    }
}

/// The reference's findings of each of `gates` that the cache (the local one, then the shared
/// store the configuration names) answers whole.
pub(super) async fn cached(
    config: &Config,
    root: &Path,
    stamps: Option<&ResultCache>,
    wanted: &Wanted,
    gates: &[String],
    cache: &Arc<ResultCache>,
) -> HashMap<String, Vec<Violation>> {
    // Only a gate that reads the whole workspace keys by it (the scripts are hashed to know it).
    let whole = gates
        .iter()
        .filter_map(|id| wanted.gate(id))
        .any(|g| !per_file(g));
    let identity = whole.then(|| workspace_identity(&wanted.commit, &local_scripts(config, root)));
    let keys = KeyMaker::new(root, config)
        .with_stamps(stamps)
        .with_workspace_identity(identity);
    let mut lookups: Vec<(&Gate, Lookup)> = Vec::new();
    for gate in gates.iter().filter_map(|id| wanted.gate(id)) {
        if !KeyMaker::caches(gate) {
            continue;
        }
        let keyed: Option<Vec<(String, String)>> = if gate.pass_files {
            (wanted.to_check(gate))
                .map(|(_, e)| {
                    let content = blob_id(e.text.as_ref()?.as_bytes())?;
                    Some((e.path.clone(), keys.key_with_content(gate, &content)))
                })
                .collect()
        } else {
            Some(vec![(
                WHOLE_WORKSPACE.to_string(),
                keys.key_with_content(gate, ""),
            )])
        };
        if let Some(keyed) = keyed {
            lookups.push((gate, Lookup::of_keys(cache, gate, keyed)));
        }
    }
    if lookups.iter().any(|(_, l)| !l.misses.is_empty())
        && let Some(mut remote) = Session::start(cache, &config.cache)
    {
        let asking = lookups.iter_mut().map(|(g, l)| (*g, l)).collect();
        read_shared(&mut remote, asking).await;
    }
    for (gate, l) in &lookups {
        tracing::debug!(
            "reference of {}: {} from the cache, {} not",
            gate.id,
            l.hits.len(),
            l.misses.len()
        );
    }
    lookups
        .into_iter()
        .filter(|(_, l)| l.misses.is_empty())
        .map(|(gate, l)| {
            let found = l.hits.into_iter().flat_map(|(_, v)| v).collect();
            (gate.id.clone(), found)
        })
        .collect()
}

/// Whether a gate's result for a file depends on that file alone (and what every key holds):
/// then an unchanged file's findings at the reference are its findings now.
pub(super) fn per_file(gate: &Gate) -> bool {
    gate.pass_files && gate.cache == CachePolicy::PerFile
}

/// Where the gates run for the reference, and what with.
pub(super) struct Checkout<'a> {
    pub config: &'a Config,
    pub root: &'a Path,
    pub trigger: Trigger,
    /// Where the results go (the reference's cache: `ResultCache::load_reference`).
    pub cache: Option<&'a Arc<ResultCache>>,
}

/// The reference's findings of `gates`, from a run in a clean checkout of the reference commit
/// whose results go into the cache. A gate that could not run there (or stopped early) is left
/// out: its findings now are not compared.
pub(super) async fn checked_out(
    at: Checkout<'_>,
    wanted: &Wanted,
    gates: Vec<String>,
) -> Result<HashMap<String, Vec<Violation>>, String> {
    let (root, commit) = (at.root.to_path_buf(), wanted.commit.clone());
    let room = tokio::task::spawn_blocking(move || CleanRoom::open(&root, &commit, false))
        .await
        .map_err(|e| format!("checking out the reference failed: {e}"))?
        .map_err(|e| e.to_string())?;
    // The gates' configuration files, and the workspace's scripts the commands run: the
    // reference run runs what the working tree would (what was trusted), over older code.
    let scripts = local_scripts(at.config, at.root);
    let inputs = gates
        .iter()
        .filter_map(|id| wanted.gate(id))
        .flat_map(|g| &g.cache_inputs);
    for rel in inputs.chain(scripts.iter().map(|(path, _)| path)) {
        copy_over(&at.root.join(rel), &room.root().join(rel))?;
    }
    // The files the gates need: only the changed ones when every gate checks file by file.
    let all = gates
        .iter()
        .filter_map(|id| wanted.gate(id))
        .any(|g| !per_file(g));
    let paths: Vec<PathBuf> = (wanted.files.iter())
        .filter(|(now, _)| all || !wanted.unchanged.contains(*now))
        .map(|(_, f)| at.root.join(&f.path))
        .collect();
    let mut req = room
        .request(ScopeRequest::Files(paths), Some(gates), at.trigger)
        .map_err(|e| e.to_string())?;
    req.cache = at.cache.cloned();
    req.workspace_identity = Some(workspace_identity(&wanted.commit, &scripts));
    let earlier = execute(at.config, &req, None)
        .await
        .map_err(|e| e.to_string())?;
    for g in &earlier.report().gates {
        tracing::debug!(
            "reference run of {}: {:?}{} ({} findings) {:?}",
            g.id,
            g.status,
            if g.incomplete { ", incomplete" } else { "" },
            g.violations.len(),
            g.error
        );
    }
    // Not finished: a reference run records no state and keeps no report.
    let findings = (earlier.report().gates.iter())
        .filter(|g| matches!(g.status, GateStatus::Passed | GateStatus::Failed) && !g.incomplete)
        .map(|g| (g.id.clone(), g.violations.clone()))
        .collect();
    drop(earlier);
    drop(room);
    Ok(findings)
}

/// The workspace's scripts that the gates' commands run (root-relative, with their SHA-256),
/// which the reference run runs as the working tree has them.
fn local_scripts(config: &Config, root: &Path) -> Vec<(String, String)> {
    let manifest = Manifest::of(config, root, &FileHashes::default());
    let mut scripts: Vec<(String, String)> = (manifest.commands.iter())
        .flat_map(|c| &c.local)
        .filter_map(|l| Some((l.path.clone(), l.sha256.clone()?)))
        .collect();
    scripts.sort();
    scripts.dedup();
    scripts
}

/// The reference checkout's content for the cache keys of gates that read the whole workspace:
/// the commit, and the scripts copied over it (the gates' configuration files are in every key).
fn workspace_identity(commit: &str, scripts: &[(String, String)]) -> String {
    let scripts: Vec<String> = (scripts.iter())
        .map(|(path, sha)| format!("{path}={sha}"))
        .collect();
    format!("reference {commit} {}", scripts.join(" "))
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
