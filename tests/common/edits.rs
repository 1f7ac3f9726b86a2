//! Edits as an editor applies them, and what ruff makes of a text, for the language server tests
//! that compare a quick fix or a format with the tool's own result.

use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

/// Applies LSP text edits to a text, positions counted in `encoding`.
pub fn apply(text: &str, edits: &[Value], encoding: &str) -> String {
    let offset = |p: &Value| -> usize {
        let (line, ch) = (
            p["line"].as_u64().unwrap() as usize,
            p["character"].as_u64().unwrap() as usize,
        );
        let mut at = 0;
        for (i, l) in text.split_inclusive('\n').enumerate() {
            if i == line {
                let mut units = 0;
                for (b, c) in l.char_indices() {
                    if units >= ch {
                        return at + b;
                    }
                    units += match encoding {
                        "utf-8" => c.len_utf8(),
                        "utf-16" => c.len_utf16(),
                        _ => 1,
                    };
                }
                return at + l.len();
            }
            at += l.len();
        }
        text.len()
    };
    let mut edits: Vec<&Value> = edits.iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse(offset(&e["range"]["start"])));
    let mut out = text.to_string();
    for e in edits {
        let (a, b) = (offset(&e["range"]["start"]), offset(&e["range"]["end"]));
        out.replace_range(a..b, e["newText"].as_str().unwrap());
    }
    out
}

/// What ruff prints for `text` piped through it with `args` (the file named `rel`).
pub fn ruff_stdin(root: &Path, args: &[&str], rel: &str, text: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new(super::tools_bin().join("ruff"))
        .args(args)
        .args(["--stdin-filename", rel, "-"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
}
