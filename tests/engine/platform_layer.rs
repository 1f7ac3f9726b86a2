//! The engine reaches the operating system only through `src/core/platform/`: a port to
//! another system (docs/platforms.md) is that module, not a search through the code base. Unit
//! tests (`#[cfg(test)]` code, `tests.rs` files) may use Unix APIs directly: they run on Linux.

use std::path::{Path, PathBuf};

/// What only Unix has: its std extensions, the C library, tokio's Unix signals, process groups.
const UNIX_ONLY: &[&str] = &[
    "std::os::unix",
    "libc::",
    "tokio::signal::unix",
    ".process_group(",
];

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The part of a source file that is built outside tests: all of it up to its first
/// `#[cfg(test)]` (unit tests sit at the end of a module), none of a `tests.rs` or a module's
/// `<name>_tests.rs`.
fn built_code(path: &Path, text: &str) -> String {
    if path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with("tests.rs"))
    {
        return String::new();
    }
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

#[test]
fn only_the_platform_module_uses_unix_apis() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let platform = src.join("core/platform");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "the sources were not found under {src:?}");
    let mut misplaced = Vec::new();
    for path in files.iter().filter(|p| !p.starts_with(&platform)) {
        let code = built_code(path, &std::fs::read_to_string(path).unwrap());
        for (n, line) in code.lines().enumerate() {
            if UNIX_ONLY.iter().any(|api| line.contains(api)) {
                let rel = path.strip_prefix(&src).unwrap().display();
                misplaced.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        misplaced.is_empty(),
        "Unix-only calls outside src/core/platform/ (add a function there, named for the need, with its Windows counterpart in its doc comment, and list it in docs/platforms.md):\n{}",
        misplaced.join("\n")
    );
}

#[test]
fn every_platform_function_names_its_windows_counterpart_and_is_listed() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(repo.join("src/core/platform/mod.rs")).unwrap();
    let table = std::fs::read_to_string(repo.join("docs/platforms.md")).unwrap();
    let mut doc = String::new();
    let mut functions = 0;
    for line in text.lines() {
        let line = line.trim();
        if let Some(comment) = line.strip_prefix("///") {
            doc.push_str(comment);
        } else if let Some(rest) = line.strip_prefix("pub fn ") {
            functions += 1;
            let name = rest.split(['(', '<']).next().unwrap();
            assert!(
                doc.contains("Windows"),
                "platform::{name} names no Windows counterpart"
            );
            assert!(
                doc.contains("macOS"),
                "platform::{name} says nothing of macOS"
            );
            assert!(
                table.contains(&format!("`{name}`")),
                "platform::{name} is missing from the table in docs/platforms.md"
            );
            doc.clear();
        } else if !line.starts_with("#[") {
            doc.clear();
        }
    }
    assert!(
        functions >= 20,
        "only {functions} functions found in platform/mod.rs"
    );
}
