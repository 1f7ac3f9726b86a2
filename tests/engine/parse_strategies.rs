//! Every parsing strategy against real tool output (`fixtures/captures`, see its README) and
//! against small hand-made outputs for the corners captures do not reach. Gates are built through
//! the real configuration path, and the expected values were checked against the source files.

use std::path::{Path, PathBuf};

use qgates::core::config::{ConfigSource, DEFAULT_CONFIG, Gate, parse_config};
use qgates::core::parse::{ParseContext, ParseError, Parsed, ToolOutput, parse_output};
use qgates::core::violation::{Edit, Fix, Severity, Violation};

// ---------- helpers ----------

fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/captures")
}

fn project() -> PathBuf {
    captures().join("project")
}

fn js_project() -> PathBuf {
    captures().join("js")
}

/// A capture with its path placeholders pointing at the sample projects in this checkout.
fn capture(name: &str) -> Vec<u8> {
    let raw = std::fs::read_to_string(captures().join(name))
        .unwrap_or_else(|e| panic!("reading {name}: {e}"));
    raw.replace("/JSPROJECT", &js_project().to_string_lossy())
        .replace("/PROJECT", &project().to_string_lossy())
        .into_bytes()
}

fn gate_from(yaml: &str, id: &str) -> Gate {
    let config = parse_config(yaml, ConfigSource::File("quality.yaml".into()))
        .unwrap_or_else(|e| panic!("the test configuration is invalid:\n{e}"));
    config
        .gate(id)
        .unwrap_or_else(|| panic!("no gate {id}"))
        .clone()
}

fn default_gate(id: &str) -> Gate {
    let config = parse_config(DEFAULT_CONFIG, ConfigSource::Embedded)
        .expect("the default configuration is valid");
    config.gate(id).expect("a default gate").clone()
}

/// A gate with the given `parsing:` block (YAML, indented by six spaces) and extra gate keys.
fn custom(parsing: &str, extra: &str) -> Gate {
    let yaml =
        format!("version: 1\ngates:\n  g:\n    command: [tool]\n{extra}    parsing:\n{parsing}");
    gate_from(&yaml, "g")
}

fn run_in(gate: &Gate, root: &Path, stdout: &[u8], stderr: &[u8]) -> Result<Parsed, ParseError> {
    let ctx = ParseContext {
        gate,
        root,
        cwd: root,
        log_hint: ".qgates/runs/1/g.stdout",
        diff: None,
    };
    parse_output(
        &ctx,
        ToolOutput {
            stdout,
            stderr,
            exit_code: Some(1),
        },
    )
}

fn run(gate: &Gate, root: &Path, stdout: &[u8]) -> Parsed {
    run_in(gate, root, stdout, b"").unwrap_or_else(|e| panic!("parse failed: {e}"))
}

fn v(
    gate: &str,
    file: &str,
    pos: (u32, u32, u32, u32),
    code: &str,
    severity: Severity,
    message: &str,
) -> Violation {
    Violation {
        file: Some(file.into()),
        line: Some(pos.0),
        column: Some(pos.1),
        end_line: Some(pos.2),
        end_column: Some(pos.3),
        code: Some(code.into()),
        message: message.into(),
        severity,
        fixable: false,
        url: None,
        fix: None,
        gate: gate.into(),
        new: None,
    }
}

fn fixable(mut v: Violation) -> Violation {
    v.fixable = true;
    v
}

fn url(mut v: Violation, rule: &str) -> Violation {
    v.url = Some(format!("https://docs.astral.sh/ruff/rules/{rule}").into());
    v
}

fn fix(mut v: Violation, title: &str, edits: &[(u32, u32, u32, u32, &str)]) -> Violation {
    v.fix = Some(Box::new(Fix {
        title: title.to_string(),
        edits: edits
            .iter()
            .map(|&(line, column, end_line, end_column, content)| Edit {
                line,
                column,
                end_line,
                end_column,
                content: content.to_string(),
            })
            .collect(),
    }));
    v
}

fn no_end(mut v: Violation) -> Violation {
    v.end_line = None;
    v.end_column = None;
    v
}

// ---------- ruff check (json_violations, default gate) ----------

/// The seven findings in `ruff_check.json` as a gate `id` should report them; `sarif` says whether
/// they came from the SARIF capture (which has no applicability, so every fix counts as fixable,
/// and reports the level).
fn ruff_findings(id: &str, sarif: bool) -> Vec<Violation> {
    use Severity::Error;
    let e = |file: &str, pos, code: &str, msg: &str| v(id, file, pos, code, Error, msg);
    let unsafe_fix = |v: Violation| if sarif { fixable(v) } else { v };
    vec![
        fixable(fix(
            url(
                e(
                    "src/app/cli.py",
                    (1, 1, 1, 12),
                    "I001",
                    "Import block is un-sorted or un-formatted",
                ),
                "unsorted-imports",
            ),
            "Organize imports",
            &[(1, 1, 2, 1, "import json\n\n\n")],
        )),
        url(
            e(
                "src/app/cli.py",
                (5, 12, 5, 26),
                "F821",
                "Undefined name `undefined_name`",
            ),
            "undefined-name",
        ),
        fixable(fix(
            url(
                e(
                    "src/app/models.py",
                    (2, 8, 2, 10),
                    "F401",
                    "`os` imported but unused",
                ),
                "unused-import",
            ),
            "Remove unused import: `os`",
            &[(2, 1, 3, 1, "")],
        )),
        fixable(fix(
            url(
                e(
                    "src/app/models.py",
                    (3, 8, 3, 11),
                    "F401",
                    "`sys` imported but unused",
                ),
                "unused-import",
            ),
            "Remove unused import: `sys`",
            &[(3, 1, 4, 1, "")],
        )),
        url(
            e(
                "src/app/models.py",
                (4, 1, 4, 24),
                "UP035",
                "`typing.List` is deprecated, use `list` instead",
            ),
            "deprecated-import",
        ),
        // On the line with "Grüße": ruff counts characters, so `unused` starts at column 33.
        // Its fix is "unsafe": carried as an edit, but not auto-fixable.
        unsafe_fix(fix(
            url(
                e(
                    "src/app/models.py",
                    (9, 33, 9, 39),
                    "F841",
                    "Local variable `unused` is assigned to but never used",
                ),
                "unused-variable",
            ),
            "Remove assignment to unused variable `unused`",
            &[(9, 33, 9, 43, "")],
        )),
        fixable(fix(
            url(
                e(
                    "src/app/models.py",
                    (13, 18, 13, 22),
                    "UP006",
                    "Use `list` instead of `List` for type annotation",
                ),
                "non-pep585-annotation",
            ),
            "Replace with `list`",
            &[(13, 18, 13, 22, "list")],
        )),
    ]
}

#[test]
fn ruff_check_json_capture() {
    let gate = default_gate("ruff_lint");
    let parsed = run(&gate, &project(), &capture("ruff_check.json"));
    assert_eq!(parsed.outside_root, 0);
    assert_eq!(parsed.violations, ruff_findings("ruff_lint", false));
}

#[test]
fn ruff_absolute_paths_outside_the_root_are_counted() {
    // The capture's absolute paths point into `project/`; with `project/src` as the root,
    // `src/app/…` becomes `app/…`; with an unrelated root every finding is outside.
    let gate = default_gate("ruff_lint");
    let parsed = run(&gate, &project().join("src"), &capture("ruff_check.json"));
    assert_eq!(parsed.violations[0].file.as_deref(), Some("app/cli.py"));
    let parsed = run(&gate, &js_project(), &capture("ruff_check.json"));
    assert_eq!((parsed.violations.len(), parsed.outside_root), (0, 7));
}

// ---------- ruff format (json_violations, default gate) ----------

#[test]
fn ruff_format_capture() {
    let gate = default_gate("ruff_format");
    let parsed = run(&gate, &project(), &capture("ruff_format.jsonl"));
    // From the first changed character to the last, as ruff printed them.
    let format = |file: &str| Violation {
        file: Some(file.into()),
        line: Some(2),
        column: Some(1),
        end_line: Some(if file.ends_with("cli.py") { 4 } else { 9 }),
        end_column: Some(if file.ends_with("cli.py") { 26 } else { 32 }),
        code: Some("FORMAT".into()),
        message: format!("File requires formatting. Fix: ruff format {file}").into(),
        severity: Severity::Error,
        fixable: true,
        url: None,
        fix: None,
        gate: "ruff_format".into(),
        new: None,
    };
    assert_eq!(
        parsed.violations,
        vec![format("src/app/cli.py"), format("src/app/models.py")]
    );
}

#[test]
fn text_stream_stderr_and_both() {
    let stdout = capture("ruff_format.stdout");
    let stderr = capture("ruff_format.stderr");
    let parsing = |stream: &str| {
        format!(
            "      strategy: text_violations\n      stream: {stream}\n      pattern: '^(?P<message>\\d+ files? would be reformatted)|^--- (?P<file>\\S+)$'\n"
        )
    };
    let summary = |g: &Gate| {
        let parsed = run_in(g, &project(), &stdout, &stderr).expect("text never fails");
        parsed
            .violations
            .iter()
            .map(|v| (v.file.as_deref().map(str::to_string), v.message.to_string()))
            .collect::<Vec<_>>()
    };
    let stderr_only = custom(&parsing("stderr"), "");
    let file_msg = |f: &str| {
        (
            Some(f.to_string()),
            "g reported a problem without a message".to_string(),
        )
    };
    assert_eq!(
        summary(&stderr_only),
        [(None, "2 files would be reformatted".to_string())]
    );
    let both = custom(&parsing("both"), "");
    assert_eq!(
        summary(&both),
        [
            file_msg("src/app/cli.py"),
            file_msg("src/app/models.py"),
            (None, "2 files would be reformatted".to_string())
        ]
    );
}

// ---------- ruff SARIF ----------

#[test]
fn ruff_sarif_capture() {
    let gate = custom("      strategy: sarif\n", "");
    let parsed = run(&gate, &project(), &capture("ruff_check.sarif"));
    assert_eq!(parsed.violations, ruff_findings("g", true));
}

// ---------- mypy ----------

#[test]
fn mypy_jsonl_capture() {
    let gate = default_gate("mypy");
    // The default gate's mypy preset links each code to mypy's documentation.
    let expected: Vec<Violation> = mypy_findings("mypy", true)
        .into_iter()
        .map(|mut v| {
            let code = v.code.as_deref().unwrap_or_default();
            v.url = Some(
                format!("https://mypy.readthedocs.io/en/stable/_refs.html#code-{code}").into(),
            );
            v
        })
        .collect();
    let parsed = run(&gate, &project(), &capture("mypy.jsonl"));
    assert_eq!(parsed.violations, expected);
    // Blank lines (and a missing final newline) change nothing.
    let text = String::from_utf8(capture("mypy.jsonl")).expect("utf-8");
    let spaced = format!("\n{}\n   \n", text.trim_end().replace('\n', "\n\n"));
    assert_eq!(
        run(&gate, &project(), spaced.as_bytes()).violations,
        expected
    );
}

/// mypy's four findings. In JSON the column is 0-based and the end exclusive (+1 by the default
/// gate); the text configuration below captures no end (mypy prints it inclusive).
fn mypy_findings(id: &str, with_end: bool) -> Vec<Violation> {
    use Severity::{Error, Info};
    let all = vec![
        v(
            id,
            "src/app/models.py",
            (16, 25, 16, 28),
            "operator",
            Error,
            "Unsupported operand types for + (\"int\" and \"str\")",
        ),
        v(
            id,
            "src/app/models.py",
            (20, 18, 20, 28),
            "assignment",
            Error,
            "Incompatible types in assignment (expression has type \"int | None\", variable has type \"int\")",
        ),
        v(
            id,
            "src/app/notes.py",
            (3, 13, 3, 26),
            "misc",
            Info,
            "Revealed type is \"int\"",
        ),
        v(
            id,
            "src/app/notes.py",
            (4, 14, 4, 21),
            "assignment",
            Error,
            "Incompatible types in assignment (expression has type \"str\", variable has type \"int\")",
        ),
    ];
    if with_end {
        return all;
    }
    all.into_iter()
        .map(|mut v| {
            if v.code.as_deref() == Some("misc") {
                v.code = None; // the text output prints no code for notes
            }
            no_end(v)
        })
        .collect()
}

const MYPY_TEXT: &str = r#"      strategy: text_violations
      pattern: '^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+):(?:\d+:\d+:)? (?P<severity>error|warning|note): (?P<message>.*?)(?:  \[(?P<code>[^\]\n]+)\])?$'
"#;

#[test]
fn mypy_text_capture() {
    let gate = custom(MYPY_TEXT, "");
    let parsed = run(&gate, &project(), &capture("mypy.txt"));
    assert_eq!(parsed.violations, mypy_findings("g", false));
}

#[test]
fn text_reads_invalid_utf8_lossily() {
    let gate = custom(MYPY_TEXT, "");
    let out = b"caf\xe9.py:3:1: error: Name \"x\" is not defined  [name-defined]\nok.py:4:2: warning: W\n";
    let parsed = run(&gate, Path::new("/ws"), out);
    assert_eq!(parsed.violations.len(), 2);
    assert_eq!(parsed.violations[0].file.as_deref(), Some("caf\u{fffd}.py"));
    assert_eq!(parsed.violations[0].code.as_deref(), Some("name-defined"));
    assert_eq!(
        (parsed.violations[1].line, parsed.violations[1].severity),
        (Some(4), Severity::Warning)
    );
}

// ---------- pyright (0-based, UTF-16 columns) ----------

const PYRIGHT: &str = r#"version: 1
gates:
  pyright:
    command: [pyright, --outputjson]
    column_unit: utf16
    parsing:
      strategy: json_violations
      violations_path: /generalDiagnostics
      line_offset: 1
      column_offset: 1
      field_map: { file: file, line: range/start/line, column: range/start/character,
                   end_line: range/end/line, end_column: range/end/character,
                   code: rule, message: message, severity: severity }
      defaults: { code: "pyright-{severity}" }
"#;

#[test]
fn pyright_capture() {
    use Severity::{Error, Info};
    let gate = gate_from(PYRIGHT, "pyright");
    let parsed = run(&gate, &project(), &capture("pyright.json"));
    let p = |file, pos, code, sev, msg| v("pyright", file, pos, code, sev, msg);
    // pyright indents the lines of a message with no-break spaces (U+00A0).
    let expected = vec![
        p(
            "src/app/cli.py",
            (5, 12, 5, 26),
            "reportUndefinedVariable",
            Error,
            "\"undefined_name\" is not defined",
        ),
        // `😀` is two UTF-16 units: pyright's 0-based 33..38 are characters 33..38 once 1-based.
        p(
            "src/app/emoji.py",
            (2, 33, 2, 38),
            "reportAssignmentType",
            Error,
            "Type \"Literal['😀 é']\" is not assignable to declared type \"int\"\n\u{a0}\u{a0}\"Literal['😀 é']\" is not assignable to \"int\"",
        ),
        p(
            "src/app/models.py",
            (16, 12, 16, 28),
            "reportOperatorIssue",
            Error,
            "Operator \"+\" not supported for types \"int\" and \"Literal['1']\"",
        ),
        p(
            "src/app/models.py",
            (20, 18, 20, 28),
            "reportAssignmentType",
            Error,
            "Type \"int | None\" is not assignable to declared type \"int\"\n\u{a0}\u{a0}Type \"int | None\" is not assignable to type \"int\"\n\u{a0}\u{a0}\u{a0}\u{a0}\"None\" is not assignable to \"int\"",
        ),
        // No `rule`: the default code is rendered from the severity.
        p(
            "src/app/notes.py",
            (3, 13, 3, 26),
            "pyright-information",
            Info,
            "Type of \"total([1, 2])\" is \"int\"",
        ),
        p(
            "src/app/notes.py",
            (4, 14, 4, 21),
            "reportAssignmentType",
            Error,
            "Type \"Literal['three']\" is not assignable to declared type \"int\"\n\u{a0}\u{a0}\"Literal['three']\" is not assignable to \"int\"",
        ),
    ];
    assert_eq!(parsed.violations, expected);
}

// ---------- eslint (`*` flattening, `..` climbing, `!=`) ----------

const ESLINT: &str = r#"version: 1
gates:
  eslint:
    command: [eslint, -f, json]
    column_unit: utf16
    severity_map: { "1": warning, "2": error }
    parsing:
      strategy: json_violations
      violations_path: /*/messages
      field_map: { file: ../../filePath, line: line, column: column, end_line: endLine,
                   end_column: endColumn, code: ruleId, message: message, severity: severity }
      fixable_when: "fix != null"
"#;

#[test]
fn eslint_capture() {
    use Severity::{Error, Warning};
    let gate = gate_from(ESLINT, "eslint");
    let parsed = run(&gate, &js_project(), &capture("eslint.json"));
    let e = |file, pos, code, sev, msg| v("eslint", file, pos, code, sev, msg);
    let expected = vec![
        // Suggestions are not fixes: only `fix` makes a message fixable.
        e(
            "app.js",
            (2, 7, 2, 13),
            "no-unused-vars",
            Error,
            "'unused' is assigned a value but never used.",
        ),
        e(
            "app.js",
            (4, 12, 4, 14),
            "eqeqeq",
            Warning,
            "Expected '===' and instead saw '=='.",
        ),
        e(
            "app.js",
            (5, 24, 5, 27),
            "no-undef",
            Error,
            "'nme' is not defined.",
        ),
        e(
            "app.js",
            (7, 3, 7, 12),
            "no-debugger",
            Error,
            "Unexpected 'debugger' statement.",
        ),
        fixable(e(
            "util.js",
            (1, 1, 1, 11),
            "no-var",
            Error,
            "Unexpected var, use let or const instead.",
        )),
        e(
            "util.js",
            (2, 1, 2, 2),
            "no-unused-vars",
            Error,
            "'x' is assigned a value but never used.",
        ),
        e(
            "util.js",
            (2, 1, 2, 2),
            "no-useless-assignment",
            Error,
            "The value assigned to 'x' is not used in subsequent statements.",
        ),
        e(
            "util.js",
            (2, 5, 2, 6),
            "no-self-assign",
            Error,
            "'x' is assigned to itself.",
        ),
    ];
    assert_eq!(parsed.violations, expected);
}

/// ESLint's `stylish` layout: each file named once above its findings, read through `headers`.
const ESLINT_STYLISH: &str = r#"version: 1
gates:
  eslint:
    command: [eslint, -f, stylish]
    column_unit: utf16
    parsing:
      strategy: text_violations
      pattern: '^ +(?P<line>\d+):(?P<column>\d+) +(?P<severity>\w+) +(?P<message>.+?) +(?P<code>\S+)$'
      headers: ['^(?P<file>\S.*)$']
"#;

#[test]
fn eslint_stylish_capture_names_each_file_once() {
    use Severity::{Error, Warning};
    let gate = gate_from(ESLINT_STYLISH, "eslint");
    let parsed = run(&gate, &js_project(), &capture("eslint.stylish"));
    let got: Vec<(&str, u32, u32, &str, Severity, &str)> = (parsed.violations.iter())
        .map(|v| {
            (
                v.file.as_deref().unwrap_or_default(),
                v.line.unwrap_or_default(),
                v.column.unwrap_or_default(),
                v.code.as_deref().unwrap_or_default(),
                v.severity,
                &*v.message,
            )
        })
        .collect();
    // The summary line below them (`✖ 7 problems`) names no finding.
    assert_eq!(
        got,
        [
            (
                "app.js",
                2,
                7,
                "no-unused-vars",
                Error,
                "'unused' is assigned a value but never used"
            ),
            (
                "app.js",
                4,
                12,
                "eqeqeq",
                Warning,
                "Expected '===' and instead saw '=='"
            ),
            ("app.js", 5, 24, "no-undef", Error, "'nme' is not defined"),
            (
                "app.js",
                7,
                3,
                "no-debugger",
                Error,
                "Unexpected 'debugger' statement"
            ),
            (
                "util.js",
                1,
                1,
                "no-var",
                Error,
                "Unexpected var, use let or const instead"
            ),
            (
                "util.js",
                2,
                1,
                "no-unused-vars",
                Error,
                "'x' is assigned a value but never used"
            ),
            (
                "util.js",
                2,
                5,
                "no-self-assign",
                Error,
                "'x' is assigned to itself"
            ),
        ]
    );
}

// ---------- a review agent's answer (seed 003) ----------

const REVIEW: &str = r#"version: 1
gates:
  review:
    command: [review-agent]
    pass_files: false
    severity_map: { CRITICAL: error, HIGH: error, MAJOR: warning, MEDIUM: warning,
                    LOW: info, MINOR: hint, SUGGESTION: hint }
    parsing:
      strategy: json_violations
      extract: fenced
      violations_path: /findings
      field_map: { file: file, line: line_number, code: category, message: description,
                   severity: severity }
      defaults: { code: "review-{severity}" }
"#;

#[test]
fn review_answer_capture() {
    use Severity::{Error, Hint, Warning};
    let gate = gate_from(REVIEW, "review");
    let parsed = run(&gate, &project(), &capture("review_answer.md"));
    let finding = |file: &str, line: Option<u32>, code: &str, severity, message: &str| Violation {
        file: Some(file.into()),
        line,
        column: None,
        end_line: None,
        end_column: None,
        code: Some(code.into()),
        message: message.into(),
        severity,
        fixable: false,
        url: None,
        fix: None,
        gate: "review".into(),
        new: None,
    };
    let expected = vec![
        finding(
            "src/app/models.py",
            Some(16),
            "correctness",
            Error,
            "`sum(items) + \"1\"` adds a str to an int and raises TypeError",
        ),
        // The line number arrives as the string "14".
        finding(
            "src/app/models.py",
            Some(14),
            "readability",
            Warning,
            "Comparison to None uses `==`",
        ),
        finding(
            "src/app/cli.py",
            None,
            "correctness",
            Error,
            "`main` returns `undefined_name`, which is never defined",
        ),
        finding(
            "src/app/models.py",
            Some(9),
            "review-SUGGESTION",
            Hint,
            "Two statements on one line; `unused` is never read",
        ),
    ];
    assert_eq!(parsed.violations, expected);
}

#[test]
fn fenced_without_a_fence_is_no_fence() {
    let gate = gate_from(REVIEW, "review");
    let err = run_in(
        &gate,
        &project(),
        b"Looks good to me.\n\n```python\nx = 1\n```\n",
        b"",
    )
    .expect_err("no fence");
    assert!(matches!(err, ParseError::NoFence { .. }), "{err:?}");
    // A bare fence is taken when its content is JSON.
    let bare =
        b"Findings:\n```\n{\"findings\": [{\"file\": \"a.py\", \"description\": \"d\", \"severity\": \"LOW\"}]}\n```\n";
    let parsed = run(&gate, &project(), bare);
    assert_eq!(parsed.violations[0].severity, Severity::Info);
    // A broken ```json fence is reported with the line in the whole answer.
    let err = run_in(
        &gate,
        &project(),
        b"Intro\n\n```json\n{\"findings\": [\n```\n",
        b"",
    )
    .expect_err("broken");
    match err {
        ParseError::NotJson { detail, .. } => assert!(detail.starts_with("line 5,"), "{detail}"),
        other => panic!("{other:?}"),
    }
}

// ---------- json_violations corners ----------

fn json_gate(parsing_extra: &str) -> Gate {
    custom(
        &format!("      strategy: json_violations\n{parsing_extra}"),
        "",
    )
}

#[test]
fn numbers_as_strings_and_strings_as_numbers() {
    let gate = json_gate(
        "      field_map: { file: f, line: l, column: c, code: code, message: m, url: u }\n",
    );
    let out = br#"[{"f": "a.py", "l": " 12 ", "c": 3.0, "code": 501, "m": true, "u": 1.5}]"#;
    let parsed = run(&gate, Path::new("/ws"), out);
    let got = &parsed.violations[0];
    assert_eq!((got.line, got.column), (Some(12), Some(3)));
    assert_eq!(
        (got.code.as_deref(), &*got.message, got.url.as_deref()),
        (Some("501"), "true", Some("1.5"))
    );
}

#[test]
fn escaped_strings_are_decoded() {
    let gate = json_gate("      field_map: { file: \"f\\u00e9\", message: m }\n");
    let out = br#"[{"f\u00e9": "dir\/caf\u00e9.py", "m": "tab\there \"quoted\" \ud83d\ude00"}]"#;
    let parsed = run(&gate, Path::new("/ws"), out);
    assert_eq!(parsed.violations[0].file.as_deref(), Some("dir/café.py"));
    assert_eq!(&*parsed.violations[0].message, "tab\there \"quoted\" 😀");
}

#[test]
fn defaults_fill_what_the_map_did_not_find() {
    let gate = json_gate(
        r#"      violations_path: /x
      field_map: { file: path, line: pos/0, code: id, message: text }
      defaults: { message: "{code} in {file} at line {line}", code: GENERIC, severity: warning, fixable: true }
"#,
    );
    let out = br#"{"x": [{"path": "a.py", "pos": [7, 2], "id": "X1"}, {"path": "b.py", "text": "own message"}]}"#;
    let parsed = run(&gate, Path::new("/ws"), out);
    let got: Vec<_> = parsed
        .violations
        .iter()
        .map(|v| {
            (
                v.file.as_deref(),
                v.line,
                v.code.as_deref(),
                &*v.message,
                v.severity,
                v.fixable,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                Some("a.py"),
                Some(7),
                Some("X1"),
                "X1 in a.py at line 7",
                Severity::Warning,
                true
            ),
            // No code: the default fills it. The message was found, so its default is unused.
            (
                Some("b.py"),
                None,
                Some("GENERIC"),
                "own message",
                Severity::Warning,
                true
            ),
        ]
    );
}

#[test]
fn a_single_object_is_one_item_and_null_is_none() {
    let gate = json_gate("      field_map: { message: msg }\n");
    assert_eq!(
        run(&gate, Path::new("/ws"), br#"{"msg": "one"}"#)
            .violations
            .len(),
        1
    );
    assert_eq!(run(&gate, Path::new("/ws"), b"null").violations.len(), 0);
    assert_eq!(
        run(&gate, Path::new("/ws"), b"[null, {\"msg\": \"x\"}]")
            .violations
            .len(),
        1
    );
    assert_eq!(run(&gate, Path::new("/ws"), b" \n\t ").violations.len(), 0);
}

#[test]
fn flattening_over_objects_and_climbing_through_arrays() {
    // `*` over an object's values; `..` counts the array as a level.
    let gate = json_gate(
        "      violations_path: /files/*/problems\n      field_map: { file: ../../name, message: text, code: ../../../../tool }\n",
    );
    let out = br#"{"tool": "T", "files": {"x": {"name": "a.py", "problems": [{"text": "p1"}, {"text": "p2"}]},
                                          "y": {"name": "b.py"},
                                          "z": {"name": "c.py", "problems": [{"text": "p3"}]}}}"#;
    let parsed = run(&gate, Path::new("/ws"), out);
    let got: Vec<(Option<&str>, &str, Option<&str>)> = parsed
        .violations
        .iter()
        .map(|v| (v.file.as_deref(), &*v.message, v.code.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            (Some("a.py"), "p1", Some("T")),
            (Some("a.py"), "p2", Some("T")),
            (Some("c.py"), "p3", Some("T"))
        ]
    );
}

#[test]
fn a_missing_key_before_any_star_is_a_shape_error() {
    let gate = json_gate("      violations_path: /results\n      field_map: { message: m }\n");
    let err = run_in(&gate, Path::new("/ws"), br#"{"error": "crashed"}"#, b"").expect_err("shape");
    match err {
        ParseError::Shape { what, log } => {
            assert!(what.contains("has no `results`"), "{what}");
            assert_eq!(log, ".qgates/runs/1/g.stdout");
        }
        other => panic!("{other:?}"),
    }
    let err = run_in(&gate, Path::new("/ws"), br#""just a string""#, b"").expect_err("shape");
    assert!(matches!(err, ParseError::Shape { .. }), "{err:?}");
}

#[test]
fn fixable_when_equal_and_fix_edits_with_missing_fields_are_dropped() {
    let gate = json_gate(
        r#"      field_map: { message: m }
      fixable_when: "fix/applicability == safe"
      fix_edits: { path: fix/edits, title: fix/message, content: content, line: at/0, column: at/1,
                   end_line: to/0, end_column: to/1 }
"#,
    );
    let out = br#"[
        {"m": "a", "fix": {"applicability": "safe", "edits": [{"content": "x", "at": [1, 2], "to": [1, 4]}]}},
        {"m": "b", "fix": {"applicability": "unsafe", "message": "T", "edits": [{"content": null, "at": [2, 1], "to": ["3", "1"]}]}},
        {"m": "c", "fix": {"applicability": "safe", "edits": [{"content": "x", "at": [1, 2]}]}},
        {"m": "d", "fix": null}
    ]"#;
    let parsed = run(&gate, Path::new("/ws"), out);
    let got: Vec<(bool, Option<Fix>)> = parsed
        .violations
        .into_iter()
        .map(|v| (v.fixable, v.fix.map(|f| *f)))
        .collect();
    let edit = |line, column, end_line, end_column, content: &str| Edit {
        line,
        column,
        end_line,
        end_column,
        content: content.to_string(),
    };
    assert_eq!(
        got,
        [
            (
                true,
                Some(Fix {
                    title: "Apply the tool's fix".into(),
                    edits: vec![edit(1, 2, 1, 4, "x")]
                })
            ),
            (
                false,
                Some(Fix {
                    title: "T".into(),
                    edits: vec![edit(2, 1, 3, 1, "")]
                })
            ),
            (true, None),
            (false, None),
        ]
    );
}

#[test]
fn jsonl_bad_line_is_named() {
    let gate = default_gate("mypy");
    let out = b"{\"file\": \"a.py\", \"line\": 1, \"message\": \"m\"}\n\nTraceback (most recent call last):\n";
    match run_in(&gate, &project(), out, b"").expect_err("not json") {
        ParseError::NotJson {
            stream,
            detail,
            log,
        } => {
            assert_eq!(stream, "stdout");
            assert!(detail.starts_with("line 3, column 1:"), "{detail}");
            assert!(detail.contains("Traceback"), "{detail}");
            assert_eq!(log, ".qgates/runs/1/g.stdout");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn not_json_garbage_truncated_and_html() {
    let gate = default_gate("ruff_lint");
    let detail = |out: &[u8]| match run_in(&gate, &project(), out, b"") {
        Err(ParseError::NotJson { detail, .. }) => detail,
        other => panic!("{other:?}"),
    };
    let garbage = detail(b"error: ruff crashed\n");
    assert!(
        garbage.starts_with("line 1, column 1: expected value"),
        "{garbage}"
    );
    assert!(garbage.contains("error: ruff crashed"), "{garbage}");
    let truncated = capture("ruff_check.json");
    let truncated = detail(&truncated[..truncated.len() / 2]);
    assert!(truncated.contains("EOF while parsing"), "{truncated}");
    let html = detail(b"<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>");
    assert!(html.contains("<!DOCTYPE html>"), "{html}");
    let trailing = detail(b"[] []");
    assert!(trailing.contains("trailing characters"), "{trailing}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = "[".repeat(100_000);
    for gate in [
        default_gate("ruff_lint"),
        default_gate("mypy"),
        custom("      strategy: sarif\n", ""),
    ] {
        // Unclosed (EOF) or too deep (recursion limit): either way an error, never a crash.
        let err = run_in(&gate, &project(), deep.as_bytes(), b"").expect_err("too deep");
        assert!(matches!(err, ParseError::NotJson { .. }), "{err:?}");
        // Closed, it is valid JSON: skipped parts are skipped without recursion, and what is read
        // stops at serde_json's recursion limit.
        let closed = format!("{deep}{}", "]".repeat(100_000));
        match run_in(&gate, &project(), closed.as_bytes(), b"") {
            Ok(_) | Err(ParseError::Shape { .. }) => {}
            Err(ParseError::NotJson { detail, .. }) => {
                assert!(detail.contains("recursion limit"), "{detail}")
            }
            Err(other) => panic!("{other:?}"),
        }
    }
}

#[test]
fn mypy_paths_outside_the_root_are_dropped_and_counted() {
    let gate = default_gate("mypy");
    let out = br#"{"file": "/elsewhere/lib.py", "line": 1, "column": 0, "message": "m", "severity": "error"}
{"file": "../outside.py", "line": 1, "column": 0, "message": "m", "severity": "error"}
{"file": "./src/app/./models.py", "line": 1, "column": 0, "message": "m", "severity": "error"}
"#;
    let parsed = run(&gate, &project(), out);
    assert_eq!(parsed.outside_root, 2);
    assert_eq!(parsed.violations.len(), 1);
    assert_eq!(
        parsed.violations[0].file.as_deref(),
        Some("src/app/models.py")
    );
}

// ---------- column units (converted by the shared normalize step) ----------

#[test]
fn byte_and_utf16_columns_become_characters() {
    let root = tempfile::tempdir().expect("tempdir");
    // `x` is character 11 (1-based); "é" is 2 bytes and 1 UTF-16 unit, "😀" 4 bytes and 2 units,
    // so the tool says byte 15 or UTF-16 unit 12.
    std::fs::write(root.path().join("m.py"), "s = \"é😀\"; x = 1\n").expect("write");
    let gate_for = |unit: &str| {
        custom(
            "      strategy: json_violations\n      field_map: { file: f, line: l, column: c, end_line: l, end_column: e, message: m }\n      fix_edits: { path: fix, content: t, line: l, column: c, end_line: l, end_column: e }\n",
            &format!("    column_unit: {unit}\n"),
        )
    };
    let out = |c: u32, e: u32| {
        format!(
            r#"[{{"f": "m.py", "l": 1, "c": {c}, "e": {e}, "m": "x", "fix": [{{"t": "y", "l": 1, "c": {c}, "e": {e}}}]}}]"#
        )
    };
    for (unit, c, e) in [("byte", 15, 16), ("utf16", 12, 13), ("char", 11, 12)] {
        let parsed = run(&gate_for(unit), root.path(), out(c, e).as_bytes());
        let got = &parsed.violations[0];
        assert_eq!((got.column, got.end_column), (Some(11), Some(12)), "{unit}");
        let edit = &got.fix.as_ref().expect("fix").edits[0];
        assert_eq!((edit.column, edit.end_column), (11, 12), "{unit}");
    }
}

// ---------- SARIF corners ----------

#[test]
fn sarif_rules_levels_base_ids_and_skipped_results() {
    let gate = custom("      strategy: sarif\n", "");
    let log = r#"{
      "version": "2.1.0",
      "runs": [{
        "tool": {"driver": {"name": "t", "rules": [
          {"id": "R1", "defaultConfiguration": {"level": "note"}, "helpUri": "https://r1",
           "messageStrings": {"m": {"text": "{0} is bad"}}, "shortDescription": {"text": "short R1"}},
          {"id": "R2", "shortDescription": {"text": "short R2"}}
        ]}},
        "originalUriBaseIds": {"SRC": {"uri": "src/"}},
        "results": [
          {"ruleId": "R1", "message": {"id": "m", "arguments": ["x"]},
           "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a%20b.py", "uriBaseId": "SRC"},
                                                "region": {"startLine": 3, "startColumn": 2}}}]},
          {"ruleIndex": 1, "message": {}, "kind": "fail",
           "locations": [{"logicalLocations": []}, {"physicalLocation": {"artifactLocation": {"uri": "file:///ws/c.py"},
                                                "region": {"startLine": 5, "startColumn": 1, "endColumn": 4}}}]},
          {"ruleId": "R2", "level": "error", "message": {"text": "passed"}, "kind": "pass"},
          {"ruleId": "R2", "level": "error", "message": {"text": "suppressed"}, "suppressions": [{"kind": "inSource"}]},
          {"rule": {"id": "R3"}, "message": {"markdown": "**md**"}, "kind": "review"},
          {"ruleId": "R4", "message": {"text": "no rule"}}
        ]
      }]
    }"#;
    let parsed = run(&gate, Path::new("/ws"), log.as_bytes());
    let got: Vec<_> = parsed
        .violations
        .iter()
        .map(|v| {
            (
                v.file.as_deref(),
                v.line,
                v.column,
                v.end_column,
                v.code.as_deref(),
                v.severity,
                &*v.message,
                v.url.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                Some("src/a b.py"),
                Some(3),
                Some(2),
                None,
                Some("R1"),
                Severity::Info,
                "x is bad",
                Some("https://r1")
            ),
            (
                Some("c.py"),
                Some(5),
                Some(1),
                Some(4),
                Some("R2"),
                Severity::Warning,
                "short R2",
                None
            ),
            (
                None,
                None,
                None,
                None,
                Some("R3"),
                Severity::Hint,
                "**md**",
                None
            ),
            (
                None,
                None,
                None,
                None,
                Some("R4"),
                Severity::Warning,
                "no rule",
                None
            ),
        ]
    );
    assert_eq!(
        parsed.violations[1].end_line,
        Some(5),
        "the end line defaults to the start line"
    );
}

#[test]
fn sarif_that_is_not_sarif() {
    let gate = custom("      strategy: sarif\n", "");
    let err = |out: &[u8]| run_in(&gate, Path::new("/ws"), out, b"").expect_err("not sarif");
    assert!(matches!(
        err(b"Segmentation fault"),
        ParseError::NotJson { .. }
    ));
    assert!(matches!(err(b"{\"runs\": [}"), ParseError::NotJson { .. }));
    assert!(matches!(
        err(b"{\"version\": \"2.1.0\"}"),
        ParseError::Shape { .. }
    ));
    assert!(matches!(err(b"[1, 2]"), ParseError::Shape { .. }));
    assert!(matches!(err(b"42"), ParseError::Shape { .. }));
    assert_eq!(run(&gate, Path::new("/ws"), b"").violations.len(), 0);
    assert_eq!(
        run(
            &gate,
            Path::new("/ws"),
            br#"{"runs": [{"results": []}, 5, {}]}"#
        )
        .violations
        .len(),
        0
    );
}

#[test]
fn a_syntax_error_late_in_a_large_document_is_found_and_placed() {
    // Read as the array is streamed, and (a path climbs with `..`) with the array kept.
    for climb in ["", ", url: ../u"] {
        let gate = json_gate(&format!(
            "      field_map: {{ file: f, message: m{climb} }}\n"
        ));
        let mut out = String::from("[\n");
        for i in 0..60_000 {
            out.push_str(&format!(
                "  {{\"f\": \"m{i}.py\", \"m\": \"message number {i}\"}},\n"
            ));
        }
        let valid = format!("{}]", out.trim_end().trim_end_matches(','));
        assert_eq!(
            run(&gate, Path::new("/ws"), valid.as_bytes())
                .violations
                .len(),
            60_000
        );
        // Line 60 002: a missing comma between two items.
        out.push_str("  {\"f\": \"a.py\" \"m\": \"broken\"}\n]\n");
        assert!(out.len() > 2 << 20);
        let err = run_in(&gate, Path::new("/ws"), out.as_bytes(), b"").expect_err("not JSON");
        let text = err.to_string();
        assert!(
            text.contains("line 60002, column 16"),
            "the error names the place in the whole output ({climb:?}): {text}"
        );
    }
}

#[test]
fn large_json_lines_read_as_their_parts_do() {
    let gate = json_gate(
        "      format: jsonl\n      field_map: { file: file, line: line, column: column, code: code, message: message }\n",
    );
    let lines: Vec<String> = (0..40_000)
        .map(|i| match i % 11 {
            3 => String::new(),
            5 => format!("{{\"file\": \"caf\\u00e9/m{i}.py\", \"line\": {i}, \"message\": \"é ☕ \\\"{i}\\\"\"}}\r"),
            7 => "null".to_string(),
            _ => format!(
                "{{\"file\": \"pkg/m{i}.py\", \"line\": {i}, \"column\": {}, \"code\": \"c{i}\", \"message\": \"message number {i}\", \"hint\": null}}",
                i % 80
            ),
        })
        .collect();
    let large = lines.join("\n");
    assert!(large.len() > 2 << 20);
    let whole = run(&gate, Path::new("/ws"), large.as_bytes());
    let mut one_by_one = Vec::new();
    for chunk in lines.chunks(1_000) {
        one_by_one.extend(run(&gate, Path::new("/ws"), chunk.join("\n").as_bytes()).violations);
    }
    assert!(whole.violations.len() > 30_000);
    assert_eq!(whole.violations, one_by_one);

    // Two bad lines: the earlier one is reported, with its line number in the whole output.
    let mut bad = lines.clone();
    bad[31_234] = "{\"file\": \"a.py\",".to_string();
    bad[35_000] = "not json".to_string();
    let err = run_in(&gate, Path::new("/ws"), bad.join("\n").as_bytes(), b"").expect_err("bad");
    let text = err.to_string();
    assert!(text.contains("line 31235, column"), "{text}");
}

/// JSON Lines with a timestamp before each object, and start and summary lines without one (as
/// svelte-check's `--output machine-verbose` prints them): the JSON is read from each line's
/// first `{`, and an escaped quote in a message comes out unescaped.
#[test]
fn prefixed_json_lines_are_read_from_their_first_brace() {
    let gate = custom(
        "      { strategy: json_violations, format: jsonl, extract: prefixed,\n        field_map: { file: filename, line: start/line, code: code, message: message, severity: type } }\n",
        "    severity_map: { ERROR: error }\n",
    );
    let out = b"1795906235900 START \"/repo\"\n\
        1795906235903 {\"type\":\"ERROR\",\"filename\":\"a.ts\",\"start\":{\"line\":3},\"message\":\"Type \\\"x\\\" is wrong\",\"code\":2322}\n\
        1795906235990 COMPLETED 2 FILES 1 ERRORS 0 WARNINGS 1 FILES_WITH_PROBLEMS\n";
    let parsed = run(&gate, &project(), out);
    assert_eq!(parsed.violations.len(), 1, "{:?}", parsed.violations);
    let v = &parsed.violations[0];
    assert_eq!(v.file.as_deref(), Some("a.ts"));
    assert_eq!((v.line, v.code.as_deref()), (Some(3), Some("2322")));
    assert_eq!(&*v.message, "Type \"x\" is wrong");
    assert_eq!(v.severity, Severity::Error);

    // Without `format: jsonl` the configuration is refused, saying what to add.
    let yaml = "version: 1\ngates:\n  g:\n    command: [t]\n    parsing: { strategy: json_violations, extract: prefixed, field_map: { message: m } }\n";
    let err = parse_config(yaml, ConfigSource::Embedded).expect_err("prefixed without jsonl");
    assert!(err.to_string().contains("add `format: jsonl`"), "{err}");
}
