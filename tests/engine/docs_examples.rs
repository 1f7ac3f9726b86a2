//! Every configuration example the documentation shows loads: a `yaml` code block with
//! `version:` in README.md, docs/*.md and the editor clients' READMEs is a whole `quality.yaml`,
//! and qgates reads it without a problem. An example that drifts from the model fails here.

use std::path::{Path, PathBuf};

use qgates::core::config::{ConfigSource, parse_config};

fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![root.join("README.md")];
    for dir in ["docs", "editors/vscode", "editors/nvim"] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            docs.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "md")),
            );
        }
    }
    docs.sort();
    docs
}

/// The `yaml` fenced blocks of a Markdown text, with the line each starts on.
fn yaml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        match &mut open {
            None if line.trim_start().starts_with("```yaml") => open = Some((n + 2, String::new())),
            Some(_) if line.trim_start().starts_with("```") => blocks.extend(open.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    blocks
}

#[test]
fn every_configuration_example_in_the_docs_loads() {
    let mut checked = 0;
    let mut broken = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("read the document");
        for (line, body) in yaml_blocks(&text) {
            if !body.lines().any(|l| l.starts_with("version:")) {
                continue;
            }
            checked += 1;
            if let Err(e) = parse_config(&body, ConfigSource::File(doc.clone())) {
                broken.push(format!("{}:{line}: {e}", doc.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "examples that do not load:\n{}",
        broken.join("\n")
    );
    assert!(checked >= 1, "no configuration example found in the docs");
}
