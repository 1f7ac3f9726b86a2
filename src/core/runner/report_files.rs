//! The report files of one batch: the `{report_dir}` folder made fresh for it, a workspace
//! `output_file` removed before the tool runs (so a stale report is never read), and after the
//! run each report read and kept in the run's log folder, where `qgates parse` finds it again.
//!
//! A workspace path comes with the repository, so it is walked from the root one folder at a
//! time and never through a symbolic link: a link planted at `reports/` could otherwise make
//! qgates delete or read a file outside the workspace. A link at the file itself is removed
//! (the link, not what it points to) before the run, and refused after it.

use std::ffi::OsString;
use std::fs::Metadata;
use std::io::{ErrorKind, Read};
use std::path::{Component, Path, PathBuf};

use crate::core::config::Gate;
use crate::core::config::report_dir::{OutputPlace, expand, mentions_report_dir, output_place};
use crate::core::workspace::paths::lexical_clean;
use crate::core::workspace::run_logs::RunDir;
use crate::core::workspace::safe_fs;

/// One batch's report files, per reader (0 the gate's own, then those of `parsing.also`).
#[derive(Clone)]
pub struct ReportPlan {
    /// The batch's `{report_dir}`, when the gate names it.
    dir: Option<PathBuf>,
    readers: Vec<Option<Planned>>,
}

#[derive(Clone)]
struct Planned {
    /// The folder the path starts from: the report folder, or the workspace root.
    base: PathBuf,
    /// Below `base`.
    rel: PathBuf,
    /// As shown in messages.
    shown: String,
    /// Where a workspace report is kept after the run (`None`: it is in the log folder already).
    copy: Option<PathBuf>,
}

/// A report read after the run: its bytes and its name in messages (the kept copy).
pub type Collected = Vec<Option<(Vec<u8>, String)>>;

impl ReportPlan {
    /// Makes the batch's report folder if the gate names it, and removes the workspace report
    /// files left by an earlier run. `stem` names the batch's logs (`pytest`, `pytest.2`).
    pub fn prepare(
        gate: &Gate,
        root: &Path,
        run_dir: &RunDir,
        stem: &str,
    ) -> Result<ReportPlan, String> {
        let files: Vec<Option<&String>> = std::iter::once(&gate.parser)
            .chain(&gate.also)
            .map(|r| r.output_file.as_ref())
            .collect();
        let named = gate.command.iter().any(|a| mentions_report_dir(a))
            || files.iter().flatten().any(|f| mentions_report_dir(f));
        let dir = named.then(|| run_dir.path.join(reports_folder(stem)));
        if let Some(dir) = &dir {
            std::fs::create_dir(dir).map_err(|e| {
                format!(
                    "cannot make the report folder {}: {e}",
                    run_dir.display_path(dir)
                )
            })?;
        }
        let cwd = gate.cwd.clone().unwrap_or_default();
        let plan = |i: usize, file: &String| match output_place(file) {
            OutputPlace::ReportDir(rel) => {
                let base = dir.clone().unwrap_or_default();
                Ok(Planned {
                    shown: run_dir.display_path(&base.join(rel)),
                    base,
                    rel: PathBuf::from(rel),
                    copy: None,
                })
            }
            OutputPlace::Workspace(rel) => {
                let rel = lexical_clean(&cwd.join(rel));
                remove_stale(root, &rel)?;
                Ok(Planned {
                    shown: rel.to_string_lossy().into_owned(),
                    base: root.to_path_buf(),
                    copy: Some(run_dir.path.join(copy_name(stem, i, &rel))),
                    rel,
                })
            }
        };
        let readers = files
            .into_iter()
            .enumerate()
            .map(|(i, file)| file.map(|file| plan(i, file)).transpose())
            .collect::<Result<_, String>>()?;
        Ok(ReportPlan { dir, readers })
    }

    /// The command's fixed arguments with `{report_dir}` filled in (and `\{` made a literal
    /// brace).
    pub fn args(&self, fixed: &[String]) -> Vec<OsString> {
        let dir = self
            .dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        fixed
            .iter()
            .map(|a| OsString::from(expand(a, &dir)))
            .collect()
    }

    /// Reads every report after the run, keeping a copy of each workspace one in the run's log
    /// folder; a report missing, empty or not a plain file is an error that names it.
    pub fn collect(&self, run_dir: &RunDir) -> Result<Collected, String> {
        let collect = |p: &Planned| {
            let bytes = read_report(&p.base, &p.rel, &p.shown)?;
            if bytes.is_empty() {
                return Err(format!("its report {} is empty", p.shown));
            }
            let shown = match &p.copy {
                Some(copy) => match safe_fs::create_nofollow(copy)
                    .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
                {
                    Ok(()) => run_dir.display_path(copy),
                    Err(e) => {
                        tracing::warn!("the report {} could not be kept: {e}", p.shown);
                        p.shown.clone()
                    }
                },
                None => p.shown.clone(),
            };
            Ok((bytes, shown))
        };
        self.readers
            .iter()
            .map(|planned| planned.as_ref().map(collect).transpose())
            .collect()
    }
}

/// The batch `stem`'s `{report_dir}`, in the run's log folder.
fn reports_folder(stem: &str) -> String {
    format!("{stem}.reports")
}

/// The name of the copy of reader `reader`'s workspace report `rel` in the run's log folder.
fn copy_name(stem: &str, reader: usize, rel: &Path) -> String {
    let name = rel.file_name().unwrap_or_default().to_string_lossy();
    match reader {
        0 => format!("{stem}.{name}"),
        n => format!("{stem}.also{n}.{name}"),
    }
}

/// Where a run kept reader `reader`'s report (`output_file`, of a gate whose `cwd` is `cwd`)
/// for the batch `stem`, in its log folder `run_dir`: what `qgates parse` reads again.
pub fn kept_report(
    run_dir: &Path,
    stem: &str,
    reader: usize,
    output_file: &str,
    cwd: &Path,
) -> PathBuf {
    match output_place(output_file) {
        OutputPlace::ReportDir(rel) => run_dir.join(reports_folder(stem)).join(rel),
        OutputPlace::Workspace(rel) => {
            let rel = lexical_clean(&cwd.join(rel));
            run_dir.join(copy_name(stem, reader, &rel))
        }
    }
}

/// The run's log folder and the batch's stem of a file a run kept: reader 0's report when it
/// has an `output_file` (see `kept_report`), else the batch's `<stem>.stdout` log. `None` when
/// `kept` is not where a run would have put it (a copy made elsewhere).
pub fn batch_of(kept: &Path, output_file: Option<&str>, cwd: &Path) -> Option<(PathBuf, String)> {
    let (run_dir, stem) = match output_file.map(output_place) {
        None => {
            let name = kept.file_name()?.to_str()?;
            (kept.parent()?, name.strip_suffix(".stdout")?.to_string())
        }
        Some(OutputPlace::ReportDir(rel)) => {
            let depth = Path::new(rel).components().count();
            let folder = kept.ancestors().nth(depth)?;
            let name = folder.file_name()?.to_str()?;
            (folder.parent()?, name.strip_suffix(".reports")?.to_string())
        }
        Some(OutputPlace::Workspace(rel)) => {
            let rel = lexical_clean(&cwd.join(rel));
            let suffix = format!(".{}", rel.file_name()?.to_str()?);
            let name = kept.file_name()?.to_str()?;
            (kept.parent()?, name.strip_suffix(&suffix)?.to_string())
        }
    };
    // Only what the run would have written there: a name that merely ends the same way is not.
    let again = match output_file {
        None => run_dir.join(format!("{stem}.stdout")),
        Some(file) => kept_report(run_dir, &stem, 0, file, cwd),
    };
    (!stem.is_empty() && again == kept).then(|| (run_dir.to_path_buf(), stem))
}

/// What is at `base/rel`, reached without following a link: `Ok(None)` when nothing is.
fn walk(base: &Path, rel: &Path, shown: &str) -> Result<Option<Metadata>, String> {
    let mut at = base.to_path_buf();
    let parts: Vec<Component> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        let Component::Normal(name) = part else {
            return Err(format!(
                "the report path {shown} must stay inside its folder"
            ));
        };
        at.push(name);
        let meta = match std::fs::symlink_metadata(&at) {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot look at {shown}: {e}")),
        };
        if i + 1 == parts.len() {
            return Ok(Some(meta));
        }
        let folder = at.strip_prefix(base).unwrap_or(&at).display();
        if meta.is_symlink() {
            return Err(format!(
                "the report {shown} lies under a symbolic link ({folder}): qgates neither deletes nor reads through links in the workspace, which could point outside it. Make it a real folder, or write the report to `{{report_dir}}`"
            ));
        }
        if !meta.is_dir() {
            return Err(format!(
                "the report path {shown} passes through {folder}, which is not a folder"
            ));
        }
    }
    Ok(None)
}

/// Removes a report an earlier run left in the workspace (a link there: the link only).
fn remove_stale(root: &Path, rel: &Path) -> Result<(), String> {
    let shown = rel.display().to_string();
    match walk(root, rel, &shown)? {
        None => Ok(()),
        Some(meta) if meta.is_dir() => Err(format!(
            "its output_file {shown} is a folder; name the file the tool writes"
        )),
        Some(_) => std::fs::remove_file(root.join(rel))
            .map_err(|e| format!("cannot remove the old report {shown} before the run: {e}")),
    }
}

/// Reads a report: a plain file, opened without following a link and without waiting on a
/// named pipe.
fn read_report(base: &Path, rel: &Path, shown: &str) -> Result<Vec<u8>, String> {
    match walk(base, rel, shown)? {
        None => {
            return Err(format!(
                "it wrote no report at {shown}: check that its command writes its report there (the gate's `output_file`)"
            ));
        }
        Some(meta) if meta.is_symlink() => {
            return Err(format!(
                "its report {shown} is a symbolic link: qgates does not read through links in the workspace, which could point outside it. Have the tool write a plain file, or write the report to `{{report_dir}}`"
            ));
        }
        Some(meta) if !meta.is_file() => {
            return Err(format!("its report {shown} is not a plain file"));
        }
        Some(_) => {}
    }
    let mut file = crate::core::platform::open_read_no_follow_no_wait(&base.join(rel))
        .map_err(|e| format!("cannot read its report {shown}: {e}"))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(format!("its report {shown} is not a plain file"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read its report {shown}: {e}"))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_file_gives_back_its_run_folder_and_batch() {
        let run = Path::new(".qgates/runs/r1");
        let cwd = Path::new("web");
        for (file, kept) in [
            ("{report_dir}/sub/j.xml", "t.2.reports/sub/j.xml"),
            ("out/j.xml", "t.2.j.xml"),
        ] {
            assert_eq!(kept_report(run, "t.2", 0, file, cwd), run.join(kept));
            assert_eq!(
                batch_of(&run.join(kept), Some(file), cwd),
                Some((run.to_path_buf(), "t.2".to_string()))
            );
        }
        assert_eq!(
            kept_report(run, "t", 2, "out/c.json", cwd),
            run.join("t.also2.c.json")
        );
        assert_eq!(
            batch_of(&run.join("t.stdout"), None, cwd),
            Some((run.to_path_buf(), "t".to_string()))
        );
        // Not where a run puts the report: no folder `<stem>.reports`, no name to take apart.
        assert_eq!(
            batch_of(Path::new("j.xml"), Some("{report_dir}/j.xml"), cwd),
            None
        );
        assert_eq!(
            batch_of(
                Path::new("x/sub/j.xml"),
                Some("{report_dir}/sub/j.xml"),
                cwd
            ),
            None
        );
        assert_eq!(batch_of(Path::new("j.xml"), Some("j.xml"), cwd), None);
        assert_eq!(batch_of(Path::new("out.txt"), None, cwd), None);
    }
}
