//! What a configuration will run, as a person is asked to trust it: every gate's and fixer's
//! argv, `env` and `cwd`; the program each command names, as it resolves now; and each file
//! inside the workspace a command runs (the program, or the script an interpreter is given), with
//! its content. The trust store records the SHA-256 of all that (docs/trust.md).
//!
//! Programs outside the workspace are recorded only as "outside" (a repository cannot put files
//! there, and the editor's, an agent's and a terminal's `PATH`s differ). A program in a tool
//! folder (`.venv`, `node_modules`) that git does not track is recorded by path: an upgrade must
//! not ask again. The `portable` hash leaves those out, so a clean checkout, which has no tool
//! folders until its `deps` gates make them, can be compared with what was trusted.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::core::config::{Config, ConfigSource, Gate};
use crate::core::runner::process::resolve_program;
use crate::core::runner::tool_folders::TOOL_FOLDERS;
use crate::core::workspace::paths::{lexical_clean, relative_posix};
use crate::core::workspace::stamp::{Stamped, racy_reference};
use crate::core::workspace::tracked;

/// Programs whose first non-option argument is the script they run; the first `SHELLS` are shells.
const SHELLS: usize = 6;
const INTERPRETERS: [&str; 16] = [
    "sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python3", "node", "deno", "bun", "perl",
    "ruby", "php", "lua", "Rscript",
];

/// What a configuration will run, and its hash.
#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    /// `quality.yaml`, `.qgates/quality.yaml` or the built-in default.
    pub source: String,
    pub commands: Vec<Command>,
    /// The shared result cache the configuration names (`cache.remote`): whoever can write it
    /// decides the results shown, so it is part of what is trusted. Absent from the hash when
    /// none is named, so the trust given before shared caches existed holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_cache: Option<String>,
    /// SHA-256 (hex) of everything above.
    #[serde(skip)]
    pub hash: String,
    /// SHA-256 (hex) of the same without the programs installed in tool folders.
    #[serde(skip)]
    pub portable_hash: String,
}

/// One command a gate or a fixer runs.
#[derive(Debug, Clone, Serialize)]
pub struct Command {
    /// `gate ruff_lint`, `fixer of ruff_format`.
    pub role: String,
    /// As configured; a gate that is given files gets them after these.
    pub argv: Vec<String>,
    pub pass_files: bool,
    /// Arguments added when a place is set (`args_when`), as configured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args_when: Vec<(String, Vec<String>)>,
    pub env: BTreeMap<String, String>,
    /// Root-relative, `.` for the root.
    pub cwd: String,
    /// The program `argv[0]` names now (its real path when that differs), or why none is
    /// found; shown, and recorded through `local` when it lies in the workspace.
    #[serde(skip)]
    pub program: Result<Program, String>,
    /// Files inside the workspace this command runs.
    pub local: Vec<LocalFile>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Program {
    pub path: PathBuf,
    /// Where a link leads, when `path` is one.
    pub real: Option<PathBuf>,
}

/// A file inside the workspace that a command runs.
#[derive(Debug, Clone, Serialize)]
pub struct LocalFile {
    /// Root-relative, as the command names it.
    pub path: String,
    /// Where it leads, when it is a link: root-relative when inside the workspace, so a
    /// checkout of the same commit elsewhere says the same.
    pub link: Option<PathBuf>,
    /// Of its content; `None` for a program installed in a tool folder (named by path only).
    pub sha256: Option<String>,
}

impl Manifest {
    /// The manifest of a configuration, as things are on disk now.
    pub fn of(config: &Config, root: &Path, hashes: &FileHashes) -> Manifest {
        let mut commands = Vec::new();
        for gate in &config.gates {
            let mut run = command(
                format!("gate {}", gate.id),
                &gate.command,
                gate,
                root,
                hashes,
            );
            run.pass_files = gate.pass_files;
            run.args_when = gate.args_when.clone();
            commands.push(run);
            if let Some(fix) = &gate.fix {
                let role = format!("fixer of {}", gate.id);
                commands.push(command(role, &fix.command, gate, root, hashes));
            }
            // The daemon the faces keep warm, and what asks it (`core::warm`).
            if let Some(warm) = &gate.warm {
                for (what, argv) in warm.commands() {
                    let role = format!("{what} of {}", gate.id);
                    commands.push(command(role, argv, gate, root, hashes));
                }
            }
        }
        let source = match &config.source {
            ConfigSource::Embedded => crate::core::config::embedded_label(config).to_string(),
            ConfigSource::File(p) => {
                relative_posix(root, p).unwrap_or_else(|| p.display().to_string())
            }
        };
        let mut manifest = Manifest {
            source,
            commands,
            shared_cache: config.cache.remote.as_ref().map(ToString::to_string),
            hash: String::new(),
            portable_hash: String::new(),
        };
        manifest.hash = hash_of(&manifest);
        manifest.portable_hash = hash_of(&manifest.portable());
        manifest
    }

    /// The manifest without the programs installed in tool folders (see the module's notes).
    fn portable(&self) -> Manifest {
        Manifest {
            commands: self.commands.iter().map(Command::portable).collect(),
            ..self.clone()
        }
    }

    /// What `self` (a checkout's manifest) runs that `trusted` does not, and what `trusted`
    /// runs that `self` no longer does, compared as `portable_hash` compares them: for a person
    /// to see why a clean room was refused.
    pub fn portable_differences(&self, trusted: &Manifest) -> String {
        let mine = self.portable();
        let theirs = trusted.portable();
        let same = |a: &Command, b: &Command| hash_of(a) == hash_of(b);
        let mut out = String::new();
        if mine.shared_cache != theirs.shared_cache {
            out.push_str(&format!(
                "• the shared cache is {} here, {} in what was trusted\n",
                mine.shared_cache.as_deref().unwrap_or("none"),
                theirs.shared_cache.as_deref().unwrap_or("none")
            ));
        }
        if mine.source != theirs.source {
            out.push_str(&format!(
                "• the configuration is {} here, {} in what was trusted\n",
                mine.source, theirs.source
            ));
        }
        for (i, c) in mine.commands.iter().enumerate() {
            if !theirs.commands.iter().any(|t| same(c, t)) {
                out.push_str(&describe_commands(std::slice::from_ref(&self.commands[i])));
            }
        }
        for t in &theirs.commands {
            if !mine.commands.iter().any(|c| c.role == t.role) {
                out.push_str(&format!("• {} no longer runs\n", t.role));
            }
        }
        out
    }

    /// What will run, for a person to read before trusting it: one paragraph per command.
    pub fn describe(&self) -> String {
        let mut out = describe_commands(&self.commands);
        if let Some(url) = &self.shared_cache {
            out.push_str(&format!(
                "• results are read from and written to the shared cache {url}\n"
            ));
        }
        out
    }
}

impl Command {
    /// Without the programs installed in tool folders (recorded by path, not content).
    fn portable(&self) -> Command {
        Command {
            local: self
                .local
                .iter()
                .filter(|f| f.sha256.is_some())
                .cloned()
                .collect(),
            ..self.clone()
        }
    }
}

fn hash_of(value: &impl Serialize) -> String {
    hex::encode(Sha256::digest(
        serde_json::to_vec(value).unwrap_or_default(),
    ))
}

fn describe_commands(commands: &[Command]) -> String {
    let mut out = String::new();
    for c in commands {
        let files = if c.pass_files { " FILES…" } else { "" };
        out.push_str(&format!("• {}: {}{files}\n", c.role, shell_words(&c.argv)));
        for (place, args) in &c.args_when {
            out.push_str(&format!(
                "    and {} when {place} is set\n",
                shell_words(args)
            ));
        }
        match &c.program {
            Ok(p) => {
                out.push_str(&format!("    program: {}", p.path.display()));
                if let Some(real) = &p.real {
                    out.push_str(&format!(" → {}", real.display()));
                }
                out.push('\n');
            }
            Err(why) => out.push_str(&format!("    program: not found ({why})\n")),
        }
        for f in &c.local {
            let link = f
                .link
                .as_ref()
                .map(|l| format!(" (a link to {})", l.display()))
                .unwrap_or_default();
            match &f.sha256 {
                Some(h) => out.push_str(&format!(
                    "    runs {}{link} from this repository (sha256 {})\n",
                    f.path,
                    &h[..h.len().min(12)]
                )),
                None => out.push_str(&format!(
                    "    runs {}{link} installed in this workspace\n",
                    f.path
                )),
            }
        }
        if c.cwd != "." {
            out.push_str(&format!("    in {}\n", c.cwd));
        }
        for (k, v) in &c.env {
            out.push_str(&format!("    env {k}={v}\n"));
        }
    }
    out
}

/// A command of `gate` (its own or its fixer's), without file arguments nor `args_when`.
fn command(
    role: String,
    argv: &[String],
    gate: &Gate,
    root: &Path,
    hashes: &FileHashes,
) -> Command {
    let cwd = gate.cwd_in(root);
    let program = argv
        .first()
        .ok_or_else(|| "empty command".to_string())
        .and_then(|name| resolve_program(name, root, &cwd));
    let mut run: Vec<PathBuf> = program.iter().cloned().collect();
    if let Some(script) = script_argument(argv) {
        run.push(cwd.join(script));
    }
    let local = run
        .iter()
        .filter_map(|p| hashes.local_file(p, root))
        .collect();
    let program = program.map(|path| {
        let real = path.canonicalize().ok().filter(|r| *r != path);
        Program { path, real }
    });
    Command {
        role,
        argv: argv.to_vec(),
        pass_files: false,
        args_when: Vec::new(),
        env: gate.env.clone(),
        cwd: gate
            .cwd
            .as_ref()
            .map_or_else(|| ".".to_string(), |c| c.display().to_string()),
        program,
        local,
    }
}

/// The script an interpreter is told to run: its first argument that is not an option (`bash
/// scripts/lint.sh`, `python tools/check.py`). Code given inline (`sh -c`, `python -m module`,
/// `node -e`) names no file.
fn script_argument(argv: &[String]) -> Option<&str> {
    let name = Path::new(argv.first()?).file_name()?.to_str()?;
    let interpreter = INTERPRETERS
        .iter()
        .position(|i| name == *i || name.strip_prefix(i).is_some_and(is_version))?;
    // For shells `-e` means "stop at the first error"; for the others it is inline code.
    let inline: &[&str] = if interpreter < SHELLS {
        &["-c"]
    } else {
        &["-c", "-m", "-e", "--eval"]
    };
    let first = argv[1..]
        .iter()
        .find(|a| !a.starts_with('-') || a.as_str() == "-")?;
    let inline_code = argv[1..]
        .iter()
        .take_while(|a| *a != first)
        .any(|a| inline.contains(&a.as_str()));
    (!inline_code && first != "-" && !first.contains('{')).then_some(first.as_str())
}

/// `3`, `3.12`: the version suffix of `python3.12`.
fn is_version(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// Quotes words with spaces or shell characters, for reading only.
fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| crate::core::report::fix_hint::shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Content hashes of the files manifests cover, reused while a file keeps its `Stamp` (checked
/// before every run, so an unchanged script is not read again).
#[derive(Default)]
pub struct FileHashes {
    known: Mutex<HashMap<PathBuf, Stamped<String>>>,
}

impl FileHashes {
    /// How a file a command runs is recorded, when the command names it inside the workspace.
    fn local_file(&self, path: &Path, root: &Path) -> Option<LocalFile> {
        let rel = lexical_clean(path).strip_prefix(root).ok()?.to_path_buf();
        let real = path.canonicalize().ok()?;
        if !real.is_file() {
            return None;
        }
        let in_tool_folder = rel
            .components()
            .any(|c| TOOL_FOLDERS.iter().any(|t| c.as_os_str() == *t));
        let sha256 = if in_tool_folder && !tracked::tracks(root, &rel.to_string_lossy()) {
            None
        } else {
            Some(self.content(&real).unwrap_or_else(|| "unreadable".into()))
        };
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let inside = |base: &Path| real.strip_prefix(base).ok().map(Path::to_path_buf);
        let link = is_link.then(|| {
            inside(root)
                .or_else(|| inside(&root.canonicalize().ok()?))
                .unwrap_or_else(|| real.clone())
        });
        Some(LocalFile {
            link,
            path: rel.to_string_lossy().into_owned(),
            sha256,
        })
    }

    fn content(&self, path: &Path) -> Option<String> {
        if let Some(hash) = lock(&self.known).get(path).and_then(Stamped::get) {
            return Some(hash.clone());
        }
        let reference = racy_reference();
        let hash = hex::encode(Sha256::digest(std::fs::read(path).ok()?));
        if let Some(known) = Stamped::new(hash.clone(), vec![path.to_path_buf()], reference) {
            lock(&self.known).insert(path.to_path_buf(), known);
        }
        Some(hash)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config;
    use std::os::unix::fs::PermissionsExt;

    /// Whether a path is an executable file (for tests of programs appearing).
    fn executable(p: &Path) -> bool {
        std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    }

    fn workspace(yaml: &str) -> (tempfile::TempDir, Config) {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("quality.yaml"), yaml).unwrap();
        let config = config::load_for_workspace(tmp.path(), None).unwrap();
        (tmp, config)
    }

    fn script(path: &Path, body: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(executable(path));
    }

    const SCRIPT_GATE: &str = "version: 1\ngates:\n  lint:\n    command: [\"./scripts/lint.sh\"]\n    parsing: {strategy: exit_code}\n";

    #[test]
    fn a_script_the_gate_runs_is_covered_by_content() {
        let (tmp, config) = workspace(SCRIPT_GATE);
        let lint = tmp.path().join("scripts/lint.sh");
        script(&lint, "#!/bin/sh\necho one\n");
        let hashes = FileHashes::default();
        let before = Manifest::of(&config, tmp.path(), &hashes);
        assert_eq!(before.commands[0].local[0].path, "scripts/lint.sh");
        assert!(
            before
                .describe()
                .contains("runs scripts/lint.sh from this repository")
        );
        assert_eq!(before.hash, Manifest::of(&config, tmp.path(), &hashes).hash);
        script(&lint, "#!/bin/sh\necho two\n");
        assert_ne!(before.hash, Manifest::of(&config, tmp.path(), &hashes).hash);
    }

    #[test]
    fn an_interpreters_script_is_covered_and_a_module_is_not_a_file() {
        let yaml = "version: 1\ngates:\n  a:\n    command: [\"bash\", \"-e\", \"tools/a.sh\", \"x\"]\n    parsing: {strategy: exit_code}\n  b:\n    command: [\"python3\", \"-m\", \"tools.a\"]\n    parsing: {strategy: exit_code}\n";
        let (tmp, config) = workspace(yaml);
        std::fs::create_dir_all(tmp.path().join("tools")).unwrap();
        std::fs::write(tmp.path().join("tools/a.sh"), "echo a\n").unwrap();
        let m = Manifest::of(&config, tmp.path(), &FileHashes::default());
        assert_eq!(m.commands[0].local.len(), 1);
        assert_eq!(m.commands[0].local[0].path, "tools/a.sh");
        assert!(m.commands[1].local.is_empty());
    }

    #[test]
    fn a_program_appearing_in_the_venv_changes_the_manifest_and_is_named() {
        let yaml = "version: 1\ngates:\n  lint:\n    command: [\"sh\", \"-c\", \"true\"]\n    parsing: {strategy: exit_code}\n";
        let (tmp, config) = workspace(yaml);
        let hashes = FileHashes::default();
        let before = Manifest::of(&config, tmp.path(), &hashes);
        script(&tmp.path().join(".venv/bin/sh"), "#!/bin/sh\necho local\n");
        let after = Manifest::of(&config, tmp.path(), &hashes);
        assert_ne!(before.hash, after.hash);
        let described = after.describe();
        assert!(
            described.contains(".venv/bin/sh installed in this workspace"),
            "{described}"
        );
        // Named by path: an upgrade of what is installed there does not ask again.
        script(
            &tmp.path().join(".venv/bin/sh"),
            "#!/bin/sh\necho upgraded\n",
        );
        assert_eq!(after.hash, Manifest::of(&config, tmp.path(), &hashes).hash);
    }

    #[test]
    fn the_portable_hash_leaves_out_installed_programs_and_nothing_else() {
        let yaml = "version: 1\ngates:\n  lint:\n    command: [\"lint\"]\n    parsing: {strategy: exit_code}\n  setup:\n    command: [\"sh\", \"setup.sh\"]\n    parsing: {strategy: exit_code}\n";
        let (tmp, config) = workspace(yaml);
        std::fs::write(tmp.path().join("setup.sh"), "echo one\n").unwrap();
        let hashes = FileHashes::default();
        let bare = Manifest::of(&config, tmp.path(), &hashes);
        script(&tmp.path().join(".venv/bin/lint"), "#!/bin/sh\n");
        let installed = Manifest::of(&config, tmp.path(), &hashes);
        assert_ne!(bare.hash, installed.hash);
        assert_eq!(bare.portable_hash, installed.portable_hash);
        assert_eq!(installed.portable_differences(&bare), "");

        std::fs::write(tmp.path().join("setup.sh"), "echo two\n").unwrap();
        let changed = Manifest::of(&config, tmp.path(), &FileHashes::default());
        assert_ne!(changed.portable_hash, installed.portable_hash);
        let differences = changed.portable_differences(&installed);
        assert!(
            differences.starts_with("• gate setup: sh setup.sh FILES…\n"),
            "{differences}"
        );
        assert!(!differences.contains("gate lint"), "{differences}");
    }

    #[test]
    fn a_linked_script_reads_the_same_in_two_checkouts() {
        let hash = || {
            let (tmp, config) = workspace(SCRIPT_GATE);
            script(&tmp.path().join("tools/lint.sh"), "#!/bin/sh\n");
            std::fs::create_dir_all(tmp.path().join("scripts")).unwrap();
            let link = tmp.path().join("scripts/lint.sh");
            std::os::unix::fs::symlink("../tools/lint.sh", link).unwrap();
            let m = Manifest::of(&config, tmp.path(), &FileHashes::default());
            assert_eq!(
                m.commands[0].local[0].link,
                Some(PathBuf::from("tools/lint.sh"))
            );
            m.portable_hash
        };
        assert_eq!(hash(), hash());
    }

    #[test]
    fn env_cwd_and_argv_are_covered() {
        let base = "version: 1\ngates:\n  lint:\n    command: [\"sh\", \"-c\", \"true\"]\n    parsing: {strategy: exit_code}\n";
        let hash = |yaml: &str| {
            let (tmp, config) = workspace(yaml);
            std::fs::create_dir_all(tmp.path().join("sub")).unwrap();
            Manifest::of(&config, tmp.path(), &FileHashes::default()).hash
        };
        let plain = hash(base);
        assert_eq!(plain, hash(base));
        assert_ne!(plain, hash(&format!("{base}    env: {{A: \"1\"}}\n")));
        assert_ne!(plain, hash(&format!("{base}    cwd: sub\n")));
        assert_ne!(plain, hash(&base.replace("true", "false")));
        // Arguments added when a file is there are run too.
        let when = |args: &str| hash(&format!("{base}    args_when: {{ x.toml: [{args}] }}\n"));
        assert_ne!(plain, when("-c, x.toml"));
        assert_ne!(when("-c, x.toml"), when("--exec, evil"));
        // What is not run (how output is read) does not ask again.
        assert_eq!(plain, hash(&format!("{base}    timeout_s: 5\n")));
        // The shared cache decides the results shown: naming one, or another, asks again;
        // how long to wait for it does not.
        let shared = |url: &str| hash(&format!("cache:\n  remote: {url}\n{base}"));
        assert_ne!(plain, shared("redis://a:6379"));
        assert_ne!(shared("redis://a:6379"), shared("redis://b:6379"));
        assert_eq!(plain, hash(&format!("cache:\n  timeout_ms: 100\n{base}")));
    }

    #[test]
    fn the_built_in_default_names_its_commands() {
        let tmp = tempfile::tempdir().unwrap();
        let config = config::load_for_workspace(tmp.path(), None).unwrap();
        let m = Manifest::of(&config, tmp.path(), &FileHashes::default());
        let described = m.describe();
        assert!(
            described.contains("gate mypy: mypy --no-native-parser"),
            "{described}"
        );
        assert!(
            described.contains("fixer of ruff_format: ruff format"),
            "{described}"
        );
        assert_eq!(m.source, "the built-in Python default");
    }
}
