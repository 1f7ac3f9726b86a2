//! Gates that leave a trace: every command appends a line to a marker file outside the
//! workspace, so a test tells whether, and how often, a command started, and that none did.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::git;

/// A folder of marker files, `marker-<name>`, outside every workspace.
pub struct Markers {
    dir: tempfile::TempDir,
}

impl Default for Markers {
    fn default() -> Markers {
        Markers::new()
    }
}

impl Markers {
    pub fn new() -> Markers {
        Markers {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("marker-{name}"))
    }

    /// How many times the commands of `name` started.
    pub fn count(&self, name: &str) -> usize {
        std::fs::read_to_string(self.path(name)).map_or(0, |s| s.lines().count())
    }

    pub fn exists(&self, name: &str) -> bool {
        self.path(name).exists()
    }

    /// Waits until a command of `name` has started.
    pub fn wait_for(&self, name: &str) {
        let deadline = Instant::now() + super::lsp::WAIT;
        while !self.exists(name) {
            assert!(
                Instant::now() < deadline,
                "marker {name} did not appear within {:?}",
                super::lsp::WAIT
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The shell line that records one start of `name`.
    fn record(&self, name: &str) -> String {
        format!("echo run >> '{}'", self.path(name).display())
    }

    /// A gate's argv (a YAML flow list) that records its start, prints nothing and passes.
    pub fn gate_argv(&self, name: &str) -> String {
        serde_json::json!(["sh", "-c", self.record(name), name]).to_string()
    }

    /// A gate's argv (a YAML flow list) that records its start with its arguments (see
    /// `arguments`) and where it ran (`arguments_in`), prints `output` and exits with `code`.
    pub fn reporting_argv(&self, name: &str, output: &str, code: i32) -> String {
        let script = format!(
            "echo \"run $*\" >> '{}'; echo \"$PWD\trun $*\" >> '{}'; printf '%s' '{output}'; exit {code}",
            self.path(name).display(),
            self.path(&format!("{name}.where")).display()
        );
        serde_json::json!(["sh", "-c", script, name]).to_string()
    }

    /// `arguments`, of the starts in the folder `dir` only (not, say, in a checkout of the
    /// reference that findings are compared with).
    pub fn arguments_in(&self, name: &str, dir: &Path) -> Vec<String> {
        let dir = dir.canonicalize().expect("dir");
        std::fs::read_to_string(self.path(&format!("{name}.where")))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(at, _)| Path::new(at).canonicalize().ok().as_deref() == Some(dir.as_path()))
            .map(|(_, l)| l.strip_prefix("run").unwrap_or(l).trim().to_string())
            .collect()
    }

    /// The arguments of each start of `name`'s commands that record them, in order.
    pub fn arguments(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.path(name))
            .unwrap_or_default()
            .lines()
            .map(|l| l.strip_prefix("run").unwrap_or(l).trim().to_string())
            .collect()
    }

    /// A whole-file fixer's argv that records its start and prints its input unchanged.
    pub fn fixer_argv(&self, name: &str) -> String {
        serde_json::json!(["sh", "-c", format!("{}; cat", self.record(name))]).to_string()
    }

    /// A script that records its start, prints nothing and passes.
    pub fn script(&self, name: &str) -> String {
        format!("#!/bin/sh\n{}\n", self.record(name))
    }

    /// A whole-file fixer script that records its start and prints its input unchanged.
    pub fn fixer_script(&self, name: &str) -> String {
        format!("#!/bin/sh\n{}\ncat\n", self.record(name))
    }
}

/// A `quality.yaml` whose one gate, `lint`, runs `command` (a YAML flow list) over `.py` files,
/// with whole-file fixer `fix` if given. No cache: every run starts the command.
pub fn gate_config(command: &str, fix: Option<&str>) -> String {
    let fix = fix.map_or(String::new(), |f| format!("    fix: {{ command: {f} }}\n"));
    format!(
        "version: 1\nactive_gates: [lint]\ngates:\n  lint:\n    name: Lint\n    command: {command}\n    file_types: [.py]\n    cache: none\n{fix}    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.+)$'\n"
    )
}

/// Makes `root` a git repository with everything in it committed (tools' folders ignored).
pub fn commit_all(root: &Path) {
    super::write(root, ".gitignore", ".qgates/\n.venv/\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "start"]);
}
