//! Which text a report's findings were computed on: each file with findings is named by its git
//! blob id as the run ended (`Report::contents`). An answer given later (the agent's
//! `last_summary`, the editor's `qgates.summary`) checks the files again, so findings about a
//! file that has changed since are never presented as current.

use std::collections::BTreeMap;
use std::path::Path;

use super::Report;
use crate::core::workspace::content_id::blob_id;

/// Files larger than this are not named by their content: reading them for every answer would
/// cost more than the answer.
const LARGEST: u64 = 16 << 20;

/// Records the content of every file with findings.
pub fn record(report: &mut Report, root: &Path) {
    let files: std::collections::BTreeSet<&str> = (report.gates.iter())
        .flat_map(|g| g.violations.iter().filter_map(|v| v.file.as_deref()))
        .collect();
    let contents: BTreeMap<String, String> = (files.into_iter())
        .filter_map(|f| Some((f.to_string(), content_of(root, f)?)))
        .collect();
    report.contents = contents;
}

/// The files whose content is not what the report's findings were computed on (changed or
/// gone), sorted.
pub fn changed_since(report: &Report, root: &Path) -> Vec<String> {
    (report.contents.iter())
        .filter(|(file, id)| content_of(root, file).as_ref() != Some(*id))
        .map(|(file, _)| file.clone())
        .collect()
}

/// The blob id of the file now; `None` when it cannot be read or is too large.
fn content_of(root: &Path, file: &str) -> Option<String> {
    let path = root.join(file);
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > LARGEST {
        return None;
    }
    blob_id(&std::fs::read(&path).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::report::GateResult;
    use crate::core::violation::Violation;

    #[test]
    fn a_file_changed_or_removed_after_the_run_is_named() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["a.py", "b.py", "c.py"] {
            std::fs::write(dir.path().join(f), format!("{f}\n")).unwrap();
        }
        let mut gate: GateResult =
            serde_json::from_value(serde_json::json!({"id": "g", "name": "g", "status": "failed"}))
                .unwrap();
        for f in ["a.py", "b.py", "c.py"] {
            let mut v = Violation::message_only("g", "m");
            v.file = Some(f.into());
            gate.violations.push(v);
        }
        let mut report = Report::new(Default::default(), vec![gate], 0, None);
        record(&mut report, dir.path());
        assert_eq!(report.contents["a.py"], blob_id(b"a.py\n").unwrap());
        assert!(changed_since(&report, dir.path()).is_empty());

        std::fs::write(dir.path().join("b.py"), "edited\n").unwrap();
        std::fs::remove_file(dir.path().join("c.py")).unwrap();
        assert_eq!(changed_since(&report, dir.path()), ["b.py", "c.py"]);
    }
}
