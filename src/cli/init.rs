//! `qgates init`: writes a `quality.yaml` of the presets the repository uses (see
//! `crate::core::detect`), one line per gate with its reason, and says which tools are missing
//! and how to install them. `--dry-run` prints the file instead. Where nothing is detected it
//! writes nothing and says what it looked for: a file with no gate would check nothing, and a
//! guess (the Python default in a repository without Python) would be wrong.

use std::fmt::Write as _;
use std::path::Path;

use super::agent_setup;
use super::args::InitArgs;
use super::hook::Agent;
use super::output::{print_stderr, print_stdout, usage};
use super::workspace::find_root;
use crate::core::config;
use crate::core::detect::{self, Detection, MAX_FILES};
use crate::core::report::exit;

pub fn init(a: InitArgs) -> i32 {
    let root = find_root(a.root.as_deref(), Path::new("."));
    let root = if a.root.is_some() {
        root
    } else {
        std::env::current_dir().unwrap_or(root)
    };
    let existing = config::discover(&root);
    if let Some(agent) = a.agent {
        if let Some(existing) = existing.as_ref().filter(|_| !a.force) {
            print_stdout(&format!("Kept {}.\n", existing.display()));
            return set_up_agent(agent, &root);
        }
        let code = write_config(&a, &root, existing.as_deref());
        return match code {
            exit::GREEN => set_up_agent(agent, &root),
            code => code,
        };
    }
    write_config(&a, &root, existing.as_deref())
}

/// `--agent`: the agent's hook and MCP server entries, and what was written.
fn set_up_agent(agent: Agent, root: &Path) -> i32 {
    match agent_setup::set_up(agent, root) {
        Ok(said) => {
            let lines: String = said.iter().map(|l| format!("  {l}\n")).collect();
            print_stdout(&format!(
                "{} is set up in {}:\n{lines}Its hooks run `qgates hook {}`; the workspace must be trusted (`qgates trust`) before they check anything. See docs/agents.md.\n",
                agent.name(),
                root.display(),
                agent.arg()
            ));
            exit::GREEN
        }
        Err(e) => usage(&e),
    }
}

/// Writes `quality.yaml` from what the repository uses.
fn write_config(a: &InitArgs, root: &Path, existing: Option<&Path>) -> i32 {
    if !a.force
        && !a.dry_run
        && let Some(existing) = &existing
    {
        return usage(&format!(
            "{} already exists; nothing was written. Use --force to overwrite it, or --dry-run to see what qgates init would write.",
            existing.display()
        ));
    }
    let detection = detect::detect(root);
    // With --dry-run stdout carries the file alone (`qgates init --dry-run > quality.yaml`).
    let say = |s: &str| {
        if a.dry_run {
            print_stderr(s);
        } else {
            print_stdout(s);
        }
    };
    let Some(text) = detect::init_file(&detection) else {
        say(&nothing_found(root, &detection));
        return exit::GREEN;
    };
    let target = root.join("quality.yaml");
    let head = if a.dry_run {
        print_stdout(&text);
        let mut head = "qgates init --dry-run: nothing was written".to_string();
        if let Some(existing) = &existing {
            let _ = write!(head, " ({} exists)", existing.display());
        }
        head
    } else {
        if let Err(e) = std::fs::write(&target, &text) {
            return usage(&format!("cannot write {}: {e}", target.display()));
        }
        format!("Wrote {}", target.display())
    };
    let done = if a.dry_run {
        ""
    } else {
        "Run `qgates check` to use it; edit it freely.\n"
    };
    let n = detection.gates().len();
    say(&format!(
        "{head}: {n} gate{}, from what was found in {}:\n{}{done}",
        if n == 1 { "" } else { "s" },
        root.display(),
        explain(root, &detection)
    ));
    exit::GREEN
}

/// The gates chosen and why, what the walk could not see, and which tools are missing.
fn explain(root: &Path, detection: &Detection) -> String {
    let gates = detection.gates();
    let width = gates.iter().map(|p| p.gate_id().len()).max().unwrap_or(0);
    let mut out = String::new();
    for p in &gates {
        let _ = writeln!(out, "  {:<width$}  {}", p.gate_id(), p.why);
    }
    out.push_str(&notes(detection));
    // One line per program and advice: ruff_format and ruff_lint need the same ruff, while
    // backend/ and frontend/ may install theirs apart.
    let mut missing: Vec<(String, Vec<String>, detect::Advice)> = Vec::new();
    for p in &gates {
        let Some(status) = detect::tool_status(root, p) else {
            continue;
        };
        if status.found.is_ok() {
            continue;
        }
        match missing
            .iter_mut()
            .find(|(program, _, advice)| *program == status.program && *advice == status.install)
        {
            Some((_, ids, _)) => ids.push(p.gate_id()),
            None => missing.push((status.program, vec![p.gate_id()], status.install)),
        }
    }
    if !missing.is_empty() {
        out.push_str(
            "Not installed (looked in the gate's folder's and the root's .venv/bin, venv/bin and node_modules/.bin, then PATH); these gates fail until they are:\n",
        );
    }
    for (program, ids, advice) in missing {
        let folder = match advice.folder.as_deref() {
            Some(dir) if !dir.is_empty() => format!(" (in {dir}/)"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {program} ({}): {}{folder}",
            ids.join(", "),
            advice.command
        );
    }
    out
}

/// What the detection could not read or see, and what it found that this build has no preset for.
fn notes(detection: &Detection) -> String {
    let mut out = String::new();
    for note in &detection.notes {
        let _ = writeln!(out, "Note: {note}.");
    }
    if detection.truncated {
        let _ = writeln!(
            out,
            "Note: only the first {MAX_FILES} files were looked at; kinds of files past them may be missing."
        );
    }
    let gates = detection.gates();
    let unknown: Vec<String> = detection
        .proposals
        .iter()
        .filter(|p| !gates.iter().any(|g| g.preset == p.preset))
        .map(|p| format!("{} ({})", p.preset, p.why))
        .collect();
    if !unknown.is_empty() {
        let _ = writeln!(
            out,
            "Note: also found, with no preset in this qgates: {}.",
            unknown.join(", ")
        );
    }
    out
}

fn nothing_found(root: &Path, detection: &Detection) -> String {
    format!(
        "qgates init found no tool to propose in {}, so nothing was written. It looks for tools' \
         configuration files and sections, dependencies, package.json scripts and pre-commit hooks, \
         and for Python, Rust, Go, shell, Dockerfile and GitHub workflow files.\n{}\
         Write the gates yourself (`qgates presets` lists the tools qgates knows; a gate is one \
         line, e.g. `gates: {{ lint: {{ preset: shellcheck }} }}`), or run `qgates init` again \
         once the repository has code or a tool's configuration.\n",
        root.display(),
        notes(detection)
    )
}
