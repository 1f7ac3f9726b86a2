//! `qgates completions SHELL` and `qgates man`: the completion script completes in a real bash,
//! and the manual pages render with the system's `man`.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::qgates;

fn stdout_of(dir: &Path, args: &[&str]) -> String {
    let out = qgates(dir).args(args).output().expect("run qgates");
    assert!(out.status.success(), "qgates {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// What bash offers after `words` (the last one being completed), with qgates' script loaded.
fn bash_completes(script: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let current = words.len() - 1;
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={current}; _qgates qgates {} {}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        quoted[current],
        quoted[current - 1],
    );
    let out = Command::new("bash")
        .args(["--norc", "-c", &program])
        .output()
        .expect("bash");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_commands_options_and_their_values() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("qgates.bash");
    std::fs::write(&script, stdout_of(dir.path(), &["completions", "bash"])).unwrap();
    assert_eq!(bash_completes(&script, &["qgates", "ch"]), ["check"]);
    assert!(
        bash_completes(&script, &["qgates", "check", "--clean"])
            .contains(&"--clean-room".to_string())
    );
    assert_eq!(
        bash_completes(&script, &["qgates", "check", "--scope", ""]),
        ["auto", "branch", "project", "files"]
    );
    assert_eq!(
        bash_completes(&script, &["qgates", "completions", "f"]),
        ["fish"]
    );
}

#[test]
fn zsh_and_fish_scripts_name_every_command() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let script = stdout_of(dir.path(), &["completions", shell]);
        for word in ["check", "init", "trust", "clean-room", "completions", "man"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    let out = qgates(dir.path())
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("possible values: bash"));
}

fn rendered(page: &Path) -> String {
    let out = Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANWIDTH", "100")
        .env("MANPAGER", "cat")
        .output()
        .expect("man");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_manual_renders_and_has_a_page_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("qgates.1");
    std::fs::write(&page, stdout_of(dir.path(), &["man"])).unwrap();
    let text = rendered(&page);
    assert!(
        text.contains("qgates - Run a repository's quality gates"),
        "{text}"
    );
    assert!(text.contains("qgates-check(1)"), "{text}");
    assert!(text.contains("Exit codes: 0 green, 1 violations"), "{text}");

    let pages = dir.path().join("man1");
    qgates(dir.path())
        .args(["man", "--out-dir"])
        .arg(&pages)
        .assert()
        .success();
    let check = rendered(&pages.join("qgates-check.1"));
    assert!(check.contains("--clean-room"), "{check}");
    assert!(pages.join("qgates-baseline-reset.1").is_file());

    // A folder that cannot be made: exit 2, saying which.
    std::fs::write(dir.path().join("file"), "").unwrap();
    let out = qgates(dir.path())
        .args(["man", "--out-dir", "file/man1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("could not be written to file/man1"), "{err}");
}
