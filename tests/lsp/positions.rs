//! Every default gate that reports columns (ruff_lint, mypy) puts its findings on the token, on
//! lines where `é`, CJK, an emoji or a tab stands before the finding. The expected places are
//! found in the source text by the tests themselves (never a number a tool printed), and checked
//! through `qgates check --format json` (1-based code points, docs/design.md) and through the
//! language server in each position encoding a client can declare.

use crate::common;

use common::lsp::{LspClient, TrustAnswer};
use common::places::{Unit, token_span};
use common::{check_json, gate, workspace};
use serde_json::{Value, json};

const FILE: &str = "src/lines.py";

/// The bundled example's rules: ruff 0.17's own default set leaves out E702 (the `;` of the
/// screenshot line).
const PYPROJECT: &str = "[tool.ruff.lint]\nselect = [\"E4\", \"E7\", \"E9\", \"F\"]\n";

/// Each finding line puts one kind of text before the token: `é`, CJK, an emoji, a tab, then all
/// of them; then the README's screenshot line, and a finding whose fix replaces its token.
const SOURCE: &str = "def f(a: str, b: int) -> None:
    pass


f(\"café\", \"3\")
f(\"名前\", \"3\")
f(\"😀\", \"3\")
f(\"x\",\t\"3\")
f(\"é名😀\",\t\"3\")
print(\"café\", undefined_a)
print(\"名前\", undefined_b)
print(\"😀\", undefined_c)
print(\"x\",\tundefined_d)
print(\"é名😀\",\tundefined_e)
label = \"café ☕\"; count: int = \"3\"
print(\"é名😀\",\tf\"x\")
";

/// (gate, code, 1-based line, the token the finding is about) for every finding with columns.
const FINDINGS: &[(&str, &str, usize, &str)] = &[
    ("mypy", "arg-type", 5, "\"3\""),
    ("mypy", "arg-type", 6, "\"3\""),
    ("mypy", "arg-type", 7, "\"3\""),
    ("mypy", "arg-type", 8, "\"3\""),
    ("mypy", "arg-type", 9, "\"3\""),
    ("mypy", "name-defined", 10, "undefined_a"),
    ("mypy", "name-defined", 11, "undefined_b"),
    ("mypy", "name-defined", 12, "undefined_c"),
    ("mypy", "name-defined", 13, "undefined_d"),
    ("mypy", "name-defined", 14, "undefined_e"),
    ("mypy", "assignment", 15, "\"3\""),
    ("ruff_lint", "F821", 10, "undefined_a"),
    ("ruff_lint", "F821", 11, "undefined_b"),
    ("ruff_lint", "F821", 12, "undefined_c"),
    ("ruff_lint", "F821", 13, "undefined_d"),
    ("ruff_lint", "F821", 14, "undefined_e"),
    ("ruff_lint", "E702", 15, ";"),
    ("ruff_lint", "F541", 16, "f\"x\""),
];

/// The line of the F541 finding, whose fix replaces its token with this.
const FIX_LINE: usize = 16;
const FIX_TOKEN: &str = "f\"x\"";
const FIXED: &str = "\"x\"";

/// (gate or diagnostic source, code, line, start column, end line, end column), sorted.
type Row = (String, String, usize, usize, usize, usize);

/// The expected rows, with lines and columns counted from `base` (1 for the CLI, 0 for LSP).
fn expected(unit: Unit, base: usize, name: fn(&str) -> &str) -> Vec<Row> {
    let mut rows: Vec<Row> = FINDINGS
        .iter()
        .map(|(g, code, line, token)| {
            let (start, end) = token_span(SOURCE, *line, token, unit);
            let l = line - 1 + base;
            (
                name(g).into(),
                code.to_string(),
                l,
                start + base,
                l,
                end + base,
            )
        })
        .collect();
    rows.sort();
    rows
}

fn num(v: &Value) -> usize {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}")) as usize
}

#[test]
fn check_json_columns_are_the_tokens_code_points() {
    let ws = workspace(&[(FILE, SOURCE), ("pyproject.toml", PYPROJECT)]);
    let (code, r) = check_json(ws.path(), &["--scope", "project", "--no-state"]);
    assert_eq!(code, 1, "{r}");
    let mut rows: Vec<Row> = Vec::new();
    for id in ["ruff_lint", "mypy"] {
        for v in gate(&r, id)["violations"].as_array().expect("violations") {
            rows.push((
                id.into(),
                v["code"].as_str().unwrap_or_default().into(),
                num(&v["line"]),
                num(&v["column"]),
                num(&v["end_line"]),
                num(&v["end_column"]),
            ));
        }
    }
    rows.sort();
    assert_eq!(rows, expected(Unit::CodePoint, 1, |g| g), "{r}");
    // The fix replaces exactly its token.
    let f541 = gate(&r, "ruff_lint")["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["code"] == "F541")
        .expect("F541");
    let (start, end) = token_span(SOURCE, FIX_LINE, FIX_TOKEN, Unit::CodePoint);
    assert_eq!(
        f541["fix"]["edits"],
        json!([{"line": FIX_LINE, "column": start + 1, "end_line": FIX_LINE,
                "end_column": end + 1, "content": FIXED}])
    );
    // ruff format's finding starts at the first character it would change, as ruff prints it
    // (characters from 1).
    let format = &gate(&r, "ruff_format")["violations"][0];
    assert_eq!(&format["file"], &json!(FILE));
    let own = std::process::Command::new(common::tools_bin().join("ruff"))
        .args(["format", "--check", "--output-format", "json-lines", FILE])
        .current_dir(ws.path())
        .output()
        .unwrap();
    let own: Value = serde_json::from_slice(&own.stdout).unwrap();
    assert_eq!(
        (&format["line"], &format["column"]),
        (&own["location"]["row"], &own["location"]["column"])
    );
}

fn source_name(gate: &str) -> &str {
    match gate {
        "ruff_lint" => "Ruff Lint",
        "mypy" => "Mypy",
        other => panic!("no source name for {other}"),
    }
}

/// A language server whose client declares only `encoding`: the server must answer in it (or
/// in UTF-16, which every client supports), and every finding starts and ends on its token in
/// the encoding the server announced.
fn lsp_places_tokens_in(encoding: &str) {
    let ws = workspace(&[(FILE, SOURCE), ("pyproject.toml", PYPROJECT)]);
    let trust = tempfile::tempdir().unwrap();
    let mut c = LspClient::spawn(ws.path(), &trust.path().join("t.json"), TrustAnswer::NotNow);
    let init = c.initialize_with(json!({"trusted": true}), json!([encoding]));
    let announced = init["capabilities"]["positionEncoding"]
        .as_str()
        .unwrap_or("utf-16")
        .to_string();
    assert_eq!(
        announced, encoding,
        "the server takes the one encoding offered: {init}"
    );
    let unit = Unit::of_encoding(&announced);
    c.open(FILE);
    let uri = c.uri(FILE);
    // The publication that holds both tools' findings.
    let msg = c.wait_for(
        |m| {
            let diags = m["params"]["diagnostics"].as_array();
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && ["Mypy", "Ruff Lint"]
                    .iter()
                    .all(|s| diags.is_some_and(|d| d.iter().any(|d| d["source"] == *s)))
        },
        common::lsp::WAIT,
    );
    let mut rows: Vec<Row> = msg["params"]["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] != "FORMAT")
        .map(|d| {
            let r = &d["range"];
            (
                d["source"].as_str().unwrap_or_default().into(),
                d["code"].as_str().unwrap_or_default().into(),
                num(&r["start"]["line"]),
                num(&r["start"]["character"]),
                num(&r["end"]["line"]),
                num(&r["end"]["character"]),
            )
        })
        .collect();
    rows.sort();
    assert_eq!(rows, expected(unit, 0, source_name), "{announced}");
    // mypy's findings came from its warm daemon (the preset's warm process), not a cold run.
    let answer = c
        .request(
            "workspace/executeCommand",
            json!({"command": "qgates.summary", "arguments": [{}]}),
        )
        .expect("summary");
    assert_eq!(
        common::gate(&answer["report"], "mypy")["warm"],
        true,
        "{answer}"
    );
    // The quick fix replaces exactly its token.
    let f541 = msg["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "F541")
        .expect("F541")
        .clone();
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": f541["range"], "context": {"diagnostics": [f541]}}),
        )
        .expect("code actions");
    let edit = actions
        .as_array()
        .expect("actions")
        .iter()
        .filter_map(|a| a["edit"]["changes"][&uri].as_array())
        .flatten()
        .find(|e| e["newText"] == FIXED)
        .unwrap_or_else(|| panic!("no edit to {FIXED} in {actions}"));
    let (start, end) = token_span(SOURCE, FIX_LINE, FIX_TOKEN, unit);
    let l = FIX_LINE - 1;
    assert_eq!(
        edit["range"],
        json!({"start": {"line": l, "character": start}, "end": {"line": l, "character": end}}),
        "{announced}"
    );
    c.shutdown();
}

#[test]
fn lsp_utf8_client_gets_the_tokens_bytes() {
    lsp_places_tokens_in("utf-8");
}

#[test]
fn lsp_utf16_client_gets_the_tokens_utf16_units() {
    lsp_places_tokens_in("utf-16");
}

#[test]
fn lsp_utf32_client_gets_the_tokens_code_points() {
    lsp_places_tokens_in("utf-32");
}
