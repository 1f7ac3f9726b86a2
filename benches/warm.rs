//! Warm processes (docs/warm.md) against the tool run cold, the two sides interleaved in one
//! run.
//!
//! (a) mypy on a real typed project: the mypy 1.13.0 sdist (downloaded once into
//!     `target/bench-data/`, or `QGATES_BENCH_MYPY_SDIST`) as a git repository with one gate,
//!     `preset: mypy`. Each sample adds a module-level line with a type error to
//!     `mypy/checker.py` (a change to the module's interface); the language server's save →
//!     diagnostics of that version (dmypy kept warm) is timed against the cold `mypy` of the file
//!     as the gate runs it, its cache warm. Target: ≤ 0.3 × cold. The first save, which starts
//!     the daemon, and the daemon's memory are reported apart.
//!
//! (b) basedpyright through its language server, on the same repository and edits, against the
//!     cold `basedpyright --outputjson` of the file. Target: ≤ 0.3 × cold.
//! (c) (b) with `mypy/errors.py` edited, a module of a typical size (1 341 lines against
//!     `checker.py`'s 8 653).
//!
//! (d) ESLint on a real TypeScript project: the rxjs 7.8.2 package's `src/` (251 `.ts` files,
//!     its npm tarball kept in `target/bench-data/`) linted with typescript-eslint's
//!     `recommended` rules, eslint 9.39.5, typescript-eslint 8.73.0 and typescript 6.0.3
//!     installed beside it (typescript-eslint does not take the tools' typescript 7). Each sample
//!     adds a line with an `any` to `src/internal/Observable.ts`; the save → diagnostics (ESLint's
//!     language server kept warm) is timed against the cold `eslint --format json` of the file.
//!     Target: ≤ 0.4 × cold.
//! (e) (d) with the type-aware `recommendedTypeChecked` rules (typescript-eslint's project
//!     service), where the cold run builds the TypeScript program on every run.
//! (f) (b) with pyright itself.
//!
//! `QGATES_BENCH_RUNS` sets the samples (default 5, after 3 to warm up); `QGATES_BENCH_ONLY`
//! the parts.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/process.rs"]
mod process;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::lsp::{LspClient, TrustAnswer};
use common::lsp_wire::frame;
use process::{Tools, median, ms, parts_from_env, runs_from_env, timed, verdict};
use serde_json::{Value, json};

const SDIST: &str = "mypy-1.13.0";
const RXJS: &str = "rxjs-7.8.2";
/// What the ESLint parts lint with, installed beside the project (`npm install`).
const ESLINT_PACKAGES: [&str; 3] = [
    "eslint@9.39.5",
    "typescript-eslint@8.73.0",
    "typescript@6.0.3",
];
const WAIT: Duration = Duration::from_secs(300);

/// The real project a part edits.
#[derive(Clone, Copy)]
enum Project {
    /// The mypy sdist, Python.
    Mypy,
    /// The rxjs package's TypeScript sources with this `eslint.config.mjs`.
    Rxjs { eslint_config: &'static str },
}

/// One tool measured: its preset, and its cold run as the gate runs it.
struct Part {
    part: char,
    preset: &'static str,
    project: Project,
    /// The program and its arguments before the file.
    program: &'static str,
    args: &'static [&'static str],
    /// The finding's code on the added line.
    code: &'static str,
    warm: &'static str,
    /// The module edited.
    edited: &'static str,
    language_id: &'static str,
    /// The module with `rev`'s line added, and that line's number.
    with_line: fn(&str, usize) -> (String, usize),
    /// Whether the cold run's output flags the added line (its number, the value put there).
    flags_cold: fn(&str, usize, usize) -> bool,
    /// The target: warm at most this share of cold.
    target: f64,
}

const MYPY: Part = Part {
    part: 'a',
    preset: "mypy",
    project: Project::Mypy,
    program: "mypy",
    // presets/mypy.yaml
    args: &[
        "--no-native-parser",
        "--output",
        "json",
        "--no-error-summary",
        "--hide-error-context",
    ],
    code: "assignment",
    warm: "dmypy",
    edited: "mypy/checker.py",
    language_id: "python",
    with_line: python_line,
    flags_cold: |out, line, _| out.contains(&format!("\"line\": {line},")),
    target: 0.3,
};

const BASEDPYRIGHT: Part = Part {
    part: 'b',
    preset: "basedpyright",
    program: "basedpyright",
    args: &["--outputjson"],
    code: "reportAssignmentType",
    warm: "its language server",
    flags_cold: |out, _, rev| out.contains(&format!("Literal['{rev}']")),
    ..MYPY
};

/// (b) with pyright itself, whose server basedpyright's is a fork of.
const PYRIGHT: Part = Part {
    part: 'f',
    preset: "pyright",
    program: "pyright",
    ..BASEDPYRIGHT
};

/// (b) on a module of a typical size rather than the largest.
const BASEDPYRIGHT_TYPICAL: Part = Part {
    part: 'c',
    edited: "mypy/errors.py",
    ..BASEDPYRIGHT
};

const ESLINT: Part = Part {
    part: 'd',
    preset: "eslint",
    project: Project::Rxjs {
        eslint_config: "import tseslint from \"typescript-eslint\";\n\
                        export default tseslint.config(...tseslint.configs.recommended);\n",
    },
    program: "eslint",
    // presets/eslint.yaml
    args: &["--format", "json", "--no-warn-ignored"],
    code: "@typescript-eslint/no-explicit-any",
    warm: "its language server",
    edited: "src/internal/Observable.ts",
    language_id: "typescript",
    with_line: |original, rev| {
        let text = format!("{original}\nexport const warmBench{rev}: any = {rev};\n");
        let line = text.lines().count();
        (text, line)
    },
    flags_cold: |out, line, _| out.contains(&format!("\"line\":{line},")),
    target: 0.4,
};

/// (d) with the rules that need types.
const ESLINT_TYPED: Part = Part {
    part: 'e',
    project: Project::Rxjs {
        eslint_config: "import tseslint from \"typescript-eslint\";\n\
                        export default tseslint.config(...tseslint.configs.recommendedTypeChecked, {\n\
                        \x20 languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },\n\
                        });\n",
    },
    ..ESLINT
};

fn main() {
    let tools = Tools::find();
    let n = runs_from_env(5);
    let mut report = String::new();
    let parts = parts_from_env("abcdef");
    for p in [
        &MYPY,
        &BASEDPYRIGHT,
        &BASEDPYRIGHT_TYPICAL,
        &ESLINT,
        &ESLINT_TYPED,
        &PYRIGHT,
    ]
    .into_iter()
    .filter(|p| parts.contains(p.part))
    {
        match Source::get(&tools, p.project) {
            Ok(source) => report.push_str(&bench(&tools, &source, n, p)),
            Err(why) => report.push_str(&format!("({}) skipped: {why}\n", p.part)),
        }
    }
    println!("\n== Results ==\n{report}");
}

fn bench_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data")
}

/// A project's tarball, and where the ESLint parts' packages are installed.
struct Source {
    project: Project,
    tarball: PathBuf,
    node_modules: Option<PathBuf>,
}

impl Source {
    /// Given, kept from an earlier run, or downloaded (mypy's with the tools' pip, rxjs and the
    /// ESLint packages with npm).
    fn get(tools: &Tools, project: Project) -> Result<Source, String> {
        let data = bench_data();
        let run = |cmd: &mut Command| cmd.status().is_ok_and(|s| s.success());
        match project {
            Project::Mypy => {
                let tarball = std::env::var_os("QGATES_BENCH_MYPY_SDIST")
                    .map_or_else(|| data.join(format!("{SDIST}.tar.gz")), PathBuf::from);
                if !tarball.is_file() {
                    run(Command::new(tools.mypy.with_file_name("pip"))
                        .args(["download", "--no-deps", "--no-binary", ":all:", "-q", "-d"])
                        .arg(&data)
                        .arg(SDIST.replacen('-', "==", 1)));
                }
                tarball
                    .is_file()
                    .then_some(Source {
                        project,
                        tarball,
                        node_modules: None,
                    })
                    .ok_or(format!("the {SDIST} sdist could not be downloaded"))
            }
            Project::Rxjs { .. } => {
                let tarball = data.join(format!("{RXJS}.tgz"));
                if !tarball.is_file() {
                    std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
                    run(Command::new("npm")
                        .args(["pack", "-q", "--pack-destination"])
                        .arg(&data)
                        .arg(RXJS.replacen('-', "@", 1)));
                }
                let install = data.join("eslint-ts");
                let node_modules = install.join("node_modules");
                if !node_modules.join(".bin/eslint").is_file() {
                    std::fs::create_dir_all(&install).map_err(|e| e.to_string())?;
                    std::fs::write(install.join("package.json"), "{\"private\": true}\n")
                        .map_err(|e| e.to_string())?;
                    run(Command::new("npm")
                        .args(["install", "-q", "--no-audit", "--no-fund"])
                        .args(ESLINT_PACKAGES)
                        .current_dir(&install));
                }
                if !tarball.is_file() || !node_modules.join(".bin/eslint").is_file() {
                    return Err(format!(
                        "npm could not fetch {RXJS} or {}",
                        ESLINT_PACKAGES.join(", ")
                    ));
                }
                Ok(Source {
                    project,
                    tarball,
                    node_modules: Some(node_modules),
                })
            }
        }
    }

    /// The program a part runs cold: the ESLint installed beside the project, or the tools'
    /// (the first on their PATH).
    fn program(&self, tools: &Tools, name: &str) -> PathBuf {
        match &self.node_modules {
            Some(modules) => modules.join(".bin").join(name),
            None => std::env::split_paths(&tools.path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
                .unwrap_or_else(|| panic!("`{name}` is not on the tools' PATH")),
        }
    }
}

/// The project unpacked as a committed git repository with one gate, trusted.
fn repository(tools: &Tools, source: &Source, preset: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let ok = Command::new("tar")
        .args(["xzf"])
        .arg(&source.tarball)
        .args(["--strip-components=1", "-C"])
        .arg(ws.path())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "tar xzf {}", source.tarball.display());
    let root = ws.path();
    common::write(
        root,
        "quality.yaml",
        &format!("version: 1\ngates:\n  {preset}: {{ preset: {preset} }}\n"),
    );
    common::write(root, ".gitignore", ".qgates/\n.mypy_cache/\nnode_modules\n");
    if let (Project::Rxjs { eslint_config }, Some(modules)) = (source.project, &source.node_modules)
    {
        // The package's built copies are not the project's sources.
        std::fs::remove_dir_all(root.join("dist")).unwrap();
        common::write(root, "eslint.config.mjs", eslint_config);
        std::os::unix::fs::symlink(modules, root.join("node_modules")).unwrap();
    }
    common::git(root, &["init", "-q", "-b", "main"]);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-qm", "sources"]);
    let trusted = tools
        .command(&tools.qgates, root)
        .args(["trust", "--yes", "."])
        .env("QGATES_TRUST_FILE", root.join(".qgates-trust.json"))
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(trusted, "qgates trust");
    ws
}

fn notification(method: &str, params: Value) -> Vec<u8> {
    frame(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

/// `rev`'s line: a module-level name with a type error, so every version has a finding of its
/// own on its own line.
fn python_line(original: &str, rev: usize) -> (String, usize) {
    let text = format!("{original}\nWARM_BENCH_{rev}: int = \"{rev}\"\n");
    let line = text.lines().count();
    (text, line)
}

fn flags(diags: &[Value], line: usize, code: &str) -> bool {
    diags
        .iter()
        .any(|d| d["range"]["start"]["line"] == line - 1 && d["code"] == code)
}

/// The resident memory of the warm process's group (a language server's wrapper and server),
/// as `qgates status` reads it.
fn daemon_memory_mb(root: &Path, gate: &str) -> Option<f64> {
    let state =
        std::fs::read_to_string(root.join(format!(".qgates/warm/{gate}/state.json"))).ok()?;
    let state: Value = serde_json::from_str(&state).ok()?;
    let pgid = i32::try_from(state["daemon_pid"].as_u64()?).ok()?;
    let bytes = qgates::core::platform::group_resident_bytes(pgid)?;
    Some(bytes as f64 / (1024.0 * 1024.0))
}

impl Project {
    fn name(self) -> &'static str {
        match self {
            Project::Mypy => SDIST,
            Project::Rxjs { .. } => RXJS,
        }
    }

    /// The folder of its sources and their extension.
    fn sources(self) -> (&'static str, &'static str) {
        match self {
            Project::Mypy => ("mypy", "py"),
            Project::Rxjs { .. } => ("src", "ts"),
        }
    }
}

fn bench(tools: &Tools, source: &Source, n: usize, p: &Part) -> String {
    let ws = repository(tools, source, p.preset);
    let root = ws.path();
    let original = std::fs::read_to_string(root.join(p.edited)).unwrap();
    let (folder, ext) = p.project.sources();
    let modules = count_files(&root.join(folder), ext);
    let program = source.program(tools, p.program);
    let project = p.project.name();
    println!(
        "({}) {}: {project} ({modules} .{ext} files under {folder}/), {} edited, under {}",
        p.part,
        p.preset,
        p.edited,
        root.display()
    );
    let cold = |line: usize, rev: usize| {
        let mut cmd = tools.command(&program, root);
        cmd.args(p.args).arg(p.edited);
        let (d, out) = timed(&mut cmd);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            (p.flags_cold)(&text, line, rev),
            "cold {} flags the line of {rev}",
            p.program
        );
        d
    };
    // The cold side's cache, as a user's would be.
    let _ = tools
        .command(&program, root)
        .args(p.args)
        .arg(p.edited)
        .output();

    let mut cmd = tools.command(&tools.qgates, root);
    cmd.arg("lsp")
        .env("QGATES_TRUST_FILE", root.join(".qgates-trust.json"));
    let mut c = LspClient::spawn_command(cmd, root, TrustAnswer::NotNow);
    c.initialize(json!({}));
    let uri = c.uri(p.edited);
    c.send_bytes(&notification(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": p.language_id, "version": 1, "text": original}}),
    ));
    // The first save starts the daemon, which checks the program whole.
    let (text, line) = (p.with_line)(&original, 0);
    std::fs::write(root.join(p.edited), &text).unwrap();
    let (first, diags) = c.change_and_save_timed(p.edited, &text, 2, WAIT);
    assert!(
        flags(&diags, line, p.code),
        "the first save's finding: {diags:?}"
    );
    let started_mb = daemon_memory_mb(root, p.preset);
    assert!(
        root.join(format!(".qgates/warm/{}/state.json", p.preset))
            .is_file(),
        "{}'s warm process did not start (are its programs on PATH or in QGATES_BENCH_TOOLS?)",
        p.preset
    );

    let (mut warm_t, mut cold_t) = (Vec::new(), Vec::new());
    let warmup = 3;
    let mut version = 2;
    for i in 0..warmup + n {
        let (text, line) = (p.with_line)(&original, i + 1);
        std::fs::write(root.join(p.edited), &text).unwrap();
        // Who goes first alternates.
        for side in [i % 2, 1 - i % 2] {
            if side == 0 {
                cold_t.push(cold(line, i + 1));
            } else {
                version += 1;
                let (d, diags) = c.change_and_save_timed(p.edited, &text, version, WAIT);
                assert!(
                    flags(&diags, line, p.code),
                    "save {i}: the finding on line {line}"
                );
                warm_t.push(d);
            }
        }
        if i + 1 == warmup {
            warm_t.clear();
            cold_t.clear();
        }
    }
    let after_mb = daemon_memory_mb(root, p.preset);
    c.shutdown();
    let _ = tools
        .command(&tools.qgates, root)
        .args(["daemon", "stop"])
        .output();

    let (w, k) = (ms(median(&warm_t)), ms(median(&cold_t)));
    let mb = |m: Option<f64>| m.map_or("unknown".into(), |m| format!("{m:.0} MB"));
    let mut s = format!(
        "({}) {}, {project}, one module's interface edited, median of {n}:\n",
        p.part, p.preset
    );
    s.push_str(&format!(
        "    cold `{} {}`                 {k:8.1} ms\n",
        p.program, p.edited
    ));
    s.push_str(&format!(
        "    qgates lsp save → diagnostics ({} warm)  {w:8.1} ms\n",
        p.warm
    ));
    s.push_str(&format!(
        "    warm / cold = {:.2}   target ≤ {}: {}\n",
        w / k,
        p.target,
        verdict(w <= p.target * k)
    ));
    s.push_str(&format!(
        "    first save (starts the daemon, checks everything): {:.1} ms\n",
        ms(first)
    ));
    s.push_str(&format!(
        "    daemon memory: {} after its start, {} after the saves\n",
        mb(started_mb),
        mb(after_mb)
    ));
    s
}

/// The files with this extension under `dir` (mypy's bundled typeshed left out).
fn count_files(dir: &Path, ext: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "typeshed") {
                count_files(&p, ext)
            } else {
                usize::from(p.extension().is_some_and(|x| x == ext))
            }
        })
        .sum()
}
