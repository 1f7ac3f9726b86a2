//! The output formats of `qgates check --format …` (text, markdown, sarif, github), the summary
//! line, the exit code and the compact JSON, rendered from reports built by hand.

use qgates::core::report::page::PageRequest;
use qgates::core::report::{
    FullReport, GateLog, GateResult, GateStatus, Report, ScopeInfo, github, markdown, sarif, text,
};
use qgates::core::violation::{Edit, Fix, Severity, Violation};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Building reports

const RUN_DIR: &str = ".qgates/runs/20261122-101500-1";
/// A file name with a space and non-ASCII letters: URIs must encode it, columns count characters.
const ODD_FILE: &str = "src/data files/café ü.py";

fn v(
    gate: &str,
    file: Option<&str>,
    pos: [u32; 4],
    code: Option<&str>,
    message: &str,
) -> Violation {
    let n = |x: u32| (x > 0).then_some(x);
    Violation {
        file: file.map(Into::into),
        line: n(pos[0]),
        column: n(pos[1]),
        end_line: n(pos[2]),
        end_column: n(pos[3]),
        code: code.map(Into::into),
        message: message.into(),
        severity: Severity::Error,
        fixable: false,
        url: None,
        fix: None,
        gate: gate.into(),
        new: None,
    }
}

fn gate(id: &str, name: &str, status: GateStatus) -> GateResult {
    GateResult {
        id: id.to_string(),
        name: name.to_string(),
        status,
        skip_reason: None,
        error: None,
        allow_fail: false,
        violations: Vec::new(),
        fix_hint: None,
        files_checked: 0,
        outside_root: 0,
        exit_code: None,
        log: None,
        duration_ms: 0,
        cached_files: 0,
        coverage: None,
        tests: None,
        incomplete: false,
        warm: false,
        notes: Vec::new(),
    }
}

fn log(gate: &str) -> Option<GateLog> {
    Some(GateLog {
        stdout: format!("{RUN_DIR}/{gate}.stdout"),
        stderr: format!("{RUN_DIR}/{gate}.stderr"),
    })
}

fn scope(mode: &str, files: usize) -> ScopeInfo {
    ScopeInfo {
        mode: mode.to_string(),
        files_in_scope: files,
        files_checked: files,
        baseline_sha: None,
        note: None,
        files: Vec::new(),
    }
}

/// A run with something of everything: three failed gates (ruff-like formatting and lint
/// findings with fixes, mypy-like findings with a multi-line note and a file-less warning), an
/// `allow_fail` gate with awkward text, a gate that timed out, a skipped gate and a passed one.
fn full_report() -> Report {
    let mut ruff_format = gate("ruff_format", "Ruff Format", GateStatus::Failed);
    ruff_format.violations.push(Violation {
        fixable: true,
        ..v(
            "ruff_format",
            Some(ODD_FILE),
            [0; 4],
            Some("FORMAT"),
            &format!("File requires formatting. Fix: ruff format {ODD_FILE}"),
        )
    });
    ruff_format.fix_hint = Some(format!("Run: ruff format '{ODD_FILE}'"));
    ruff_format.files_checked = 3;
    ruff_format.exit_code = Some(1);
    ruff_format.log = log("ruff_format");

    let mut ruff_lint = gate("ruff_lint", "Ruff Lint", GateStatus::Failed);
    ruff_lint.violations = vec![
        Violation {
            fixable: true,
            url: Some("https://docs.astral.sh/ruff/rules/unused-import".into()),
            fix: Some(Box::new(Fix {
                title: "Remove unused import: `os`".into(),
                edits: vec![Edit {
                    line: 3,
                    column: 1,
                    end_line: 4,
                    end_column: 1,
                    content: String::new(),
                }],
            })),
            ..v(
                "ruff_lint",
                Some("src/app/main.py"),
                [3, 8, 3, 10],
                Some("F401"),
                "`os` imported but unused",
            )
        },
        Violation {
            url: Some("https://docs.astral.sh/ruff/rules/printf-string-formatting".into()),
            ..v(
                "ruff_lint",
                Some("src/app/main.py"),
                [20, 11, 20, 38],
                Some("UP031"),
                "Use format specifiers instead of percent format: `\"%s, %d%%\" % (name, n)`",
            )
        },
        Violation {
            severity: Severity::Warning,
            url: Some("https://docs.astral.sh/ruff/rules/ambiguous-variable-name".into()),
            ..v(
                "ruff_lint",
                Some(ODD_FILE),
                [12, 5, 12, 6],
                Some("E741"),
                "Ambiguous variable name: `l`",
            )
        },
        Violation {
            fixable: true,
            url: Some("https://docs.astral.sh/ruff/rules/unsorted-imports".into()),
            fix: Some(Box::new(Fix {
                title: "Organize imports".into(),
                edits: vec![Edit {
                    line: 1,
                    column: 1,
                    end_line: 3,
                    end_column: 1,
                    content: "import sys\nfrom pathlib import Path\n".into(),
                }],
            })),
            ..v(
                "ruff_lint",
                Some("src/app/main.py"),
                [1, 1, 2, 25],
                Some("I001"),
                "Import block is un-sorted or un-formatted",
            )
        },
    ];
    ruff_lint.fix_hint = Some("Run: ruff check --fix src/app/main.py".into());
    ruff_lint.files_checked = 3;
    ruff_lint.exit_code = Some(1);
    ruff_lint.log = log("ruff_lint");

    let mut mypy = gate("mypy", "Mypy", GateStatus::Failed);
    mypy.violations = vec![
        v(
            "mypy",
            Some("src/app/main.py"),
            [20, 12, 20, 25],
            Some("arg-type"),
            "Argument 1 to \"greet\" has incompatible type \"int\"; expected \"str\"",
        ),
        Violation {
            severity: Severity::Info,
            ..v(
                "mypy",
                Some(ODD_FILE),
                [7, 1, 0, 0],
                Some("no-redef"),
                "Name \"x\" already defined on line 3\nSee https://mypy.rtfd.io/en/stable/_refs.html#code-no-redef for more info",
            )
        },
        Violation {
            severity: Severity::Warning,
            ..v(
                "mypy",
                None,
                [0; 4],
                None,
                "unused section(s) in mypy.ini: [mypy-yaml.*]",
            )
        },
    ];
    mypy.files_checked = 2;
    mypy.exit_code = Some(1);
    mypy.outside_root = 1;
    mypy.log = log("mypy");

    // A TODO scanner whose findings never block; its text tries every markdown and annotation trap.
    let mut todo = gate("todo", "TODO, FIXME", GateStatus::Failed);
    todo.allow_fail = true;
    todo.violations = vec![
        Violation {
            severity: Severity::Hint,
            ..v(
                "todo",
                Some("src/app/main.py"),
                [42, 5, 0, 0],
                Some("TODO"),
                "# TODO: 100% broken | handle `a`b` case, then *ship* [it] <soon>\r\n2. done",
            )
        },
        Violation {
            severity: Severity::Hint,
            ..v(
                "todo",
                Some("README.md"),
                [1, 1, 0, 0],
                Some("TODO"),
                "- write docs_",
            )
        },
    ];
    todo.exit_code = Some(1);

    let mut pytest = gate("pytest", "Pytest", GateStatus::Error);
    pytest.error = Some("`pytest` timed out after 120 s; its process group was killed".into());
    pytest.log = log("pytest");

    let mut docs = gate("docs", "Docs", GateStatus::Skipped);
    docs.skip_reason = Some("no matching files".into());

    let mut yaml = gate("yamllint", "yamllint", GateStatus::Passed);
    yaml.files_checked = 1;

    let scope = ScopeInfo {
        mode: "auto".into(),
        files_in_scope: 4,
        files_checked: 4,
        baseline_sha: Some("4f2a9c1d0b7e6a5f4c3b2a19087f6e5d4c3b2a10".into()),
        note: None,
        files: Vec::new(),
    };
    let mut report = Report::new(
        scope,
        vec![ruff_format, ruff_lint, mypy, todo, pytest, docs, yaml],
        1840,
        Some(RUN_DIR.into()),
    );
    report.config = "quality.yaml".into();
    report.full_report = Some(FullReport {
        path: format!("/ws/{RUN_DIR}/report.json").into(),
        display: format!("{RUN_DIR}/report.json"),
    });
    report
}

/// Three gates that all passed.
fn green_report() -> Report {
    let gates = ["ruff_format", "ruff_lint", "mypy"]
        .map(|id| GateResult {
            files_checked: 42,
            ..gate(id, id, GateStatus::Passed)
        })
        .to_vec();
    Report::new(scope("auto", 42), gates, 900, None)
}

// ---------------------------------------------------------------------------------------------
// text

#[test]
fn text_snapshot() {
    insta::assert_snapshot!("text", text::render(&full_report(), false, false));
}

#[test]
fn text_snapshot_color() {
    insta::assert_snapshot!(
        "text_color",
        text::render(&full_report(), true, false).replace('\x1b', "<ESC>")
    );
}

#[test]
fn text_has_no_escape_codes_without_color_even_from_tool_messages() {
    let mut report = full_report();
    // Tools that colour their output when they think they are on a terminal.
    report.gates[1].violations[0].message = "\x1b[1m`os`\x1b[0m imported but unused".into();
    report.gates[4].error = Some("crashed:\x1b[31m Traceback\x1b[0m".into());
    let plain = text::render(&report, false, false);
    assert!(!plain.contains('\x1b'), "{plain}");
    assert!(
        plain.contains("\\u{1b}[1m`os`"),
        "the escape is shown, not dropped: {plain}"
    );
    let colored = text::render(&report, true, false);
    assert!(
        colored.contains("\x1b[31merror\x1b[0m"),
        "severity is coloured"
    );
    assert!(
        colored.contains("\x1b[1msrc/app/main.py\x1b[0m"),
        "file names are bold"
    );
    // Colour codes only ever come from us: the tool's escape is still neutralised.
    assert!(colored.contains("\\u{1b}[1m`os`"));
}

#[test]
fn text_groups_by_file_and_orders_by_position() {
    let out = text::render(&full_report(), false, false);
    let main = out.find("\nsrc/app/main.py\n").expect("file heading");
    let odd = out
        .find(&format!("\n{ODD_FILE}\n"))
        .expect("odd file heading");
    let readme = out.find("\nREADME.md\n").expect("README heading");
    assert!(readme < main && main < odd, "files sorted: {out}");
    // Within src/app/main.py, gates are merged and rows follow line then column.
    let block = &out[main..];
    let rows: Vec<&str> = block
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with("  "))
        .collect();
    // Continuation lines of a multi-line message are indented further; they start no row.
    let first: Vec<&str> = rows
        .iter()
        .filter(|r| !r[2..].starts_with(' '))
        .filter_map(|r| r.split_whitespace().next())
        .collect();
    assert_eq!(first, ["1:1", "3:8", "20:11", "20:12", "42:5"], "{out}");
    assert!(
        out.contains("  3:8    error  F401      `os` imported but unused  (Ruff Lint) [fixable]"),
        "{out}"
    );
    // The file-less mypy warning sits under its gate.
    let mypy = out.find("Mypy (mypy): failed").expect("mypy block");
    assert!(
        out[mypy..]
            .lines()
            .nth(1)
            .unwrap()
            .contains("unused section(s) in mypy.ini"),
        "{out}"
    );
}

// ---------------------------------------------------------------------------------------------
// markdown

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!("markdown", markdown::render(&full_report()));
}

#[test]
fn markdown_numbering_is_one_to_n_without_gaps() {
    let report = full_report();
    let out = markdown::render(&report);
    let numbers: Vec<usize> = out
        .lines()
        .filter(|l| l.contains(". [ ] "))
        .map(|l| {
            l.split_once(". [ ] ")
                .unwrap()
                .0
                .parse()
                .expect("a number starts the item")
        })
        .collect();
    let total = report
        .gates
        .iter()
        .map(|g| g.violations.len())
        .sum::<usize>();
    assert_eq!(numbers, (1..=total).collect::<Vec<_>>(), "{out}");
    // Every line that starts with a digit is one of ours: no message started a list item of its own.
    let starts_with_digit = out
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(starts_with_digit, total, "{out}");
    // No message opened a heading or a bullet, and no `\r` survived.
    assert!(
        out.lines()
            .all(|l| !l.starts_with("# ") && !l.starts_with("- write")),
        "{out}"
    );
    assert!(!out.contains('\r'));
}

#[test]
fn markdown_item_shape() {
    let out = markdown::render(&full_report());
    assert!(
        out.contains(
            "1. [ ] **error** `src/data files/café ü.py` — File requires formatting. Fix: ruff format src/data files/café ü.py (`FORMAT`, Ruff Format) — Fix: Run: ruff format 'src/data files/café ü.py'"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "**error** `src/app/main.py:3:8` — `os` imported but unused ([`F401`](<https://docs.astral.sh/ruff/rules/unused-import>), Ruff Lint) — Fix: Remove unused import: `os`"
        ),
        "{out}"
    );
    // The unpaired backtick is escaped, the pair after it kept as code; `#`, `|`, `*`, `[`, `<` escaped.
    assert!(
        out.contains(r"— \# TODO: 100% broken \| handle `a`b\` case, then \*ship\* \[it\] \<soon\><br>2. done"),
        "{out}"
    );
}

// ---------------------------------------------------------------------------------------------
// sarif

/// The SARIF output with the version this crate happens to have replaced, so the snapshot does
/// not change on every release.
fn sarif_for_snapshot(report: &Report) -> String {
    let out = sarif::render(report);
    let mut log: Value = serde_json::from_str(&out).expect("SARIF is JSON");
    assert_eq!(
        out,
        format!("{}\n", serde_json::to_string_pretty(&log).unwrap()),
        "pretty-printed, key order kept"
    );
    let version = &mut log["runs"][0]["tool"]["driver"]["version"];
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    *version = Value::from("[version]");
    serde_json::to_string_pretty(&log).unwrap()
}

#[test]
fn sarif_snapshot() {
    insta::assert_snapshot!("sarif", sarif_for_snapshot(&full_report()));
}

#[test]
fn sarif_content() {
    let report = full_report();
    let log: Value = serde_json::from_str(&sarif::render(&report)).unwrap();
    let run = &log["runs"][0];
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    assert_eq!(run["tool"]["driver"]["name"], "qgates");

    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "ruff_format/FORMAT",
            "ruff_lint/F401",
            "ruff_lint/UP031",
            "ruff_lint/E741",
            "ruff_lint/I001",
            "mypy/arg-type",
            "mypy/no-redef",
            "mypy",
            "todo/TODO"
        ]
    );
    assert_eq!(
        rules[1]["helpUri"],
        "https://docs.astral.sh/ruff/rules/unused-import"
    );

    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), report.summary.total_violations);
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            r["ruleId"], rules[index]["id"],
            "ruleIndex points at the rule"
        );
    }
    let levels: Vec<&str> = results
        .iter()
        .map(|r| r["level"].as_str().unwrap())
        .collect();
    assert_eq!(
        levels,
        [
            "error", "error", "error", "warning", "error", "error", "note", "warning", "note",
            "note"
        ]
    );

    let odd = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(
        odd["artifactLocation"]["uri"],
        "src/data%20files/caf%C3%A9%20%C3%BC.py"
    );
    assert_eq!(odd["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    assert!(
        odd.get("region").is_none(),
        "a whole-file finding has no region"
    );

    let f401 = &results[1];
    assert_eq!(
        f401["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({"startLine": 3, "startColumn": 8, "endLine": 3, "endColumn": 10})
    );
    let change = &f401["fixes"][0]["artifactChanges"][0];
    assert_eq!(change["artifactLocation"]["uri"], "src/app/main.py");
    assert_eq!(
        change["replacements"][0],
        serde_json::json!({"deletedRegion": {"startLine": 3, "startColumn": 1, "endLine": 4, "endColumn": 1}})
    );
    assert_eq!(f401["properties"]["gate"], "ruff_lint");

    let file_less = results.iter().find(|r| r["ruleId"] == "mypy").unwrap();
    assert!(file_less.get("locations").is_none(), "no file, no location");

    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert_eq!(invocation["exitCode"], 3);
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0]["message"]["text"]
            .as_str()
            .unwrap()
            .contains("timed out after 120 s")
    );
    assert_eq!(
        notes[0]["properties"]["stderr"],
        format!("{RUN_DIR}/pytest.stderr")
    );
}

#[test]
fn sarif_uri_encoding() {
    assert_eq!(sarif::encode_uri_path("src/a.py"), "src/a.py");
    assert_eq!(
        sarif::encode_uri_path("a b/ü€😀.py"),
        "a%20b/%C3%BC%E2%82%AC%F0%9F%98%80.py"
    );
    assert_eq!(sarif::encode_uri_path("c:x#1?%.py"), "c%3Ax%231%3F%25.py");
    assert_eq!(
        sarif::encode_uri_path("a[1]/b{c}\\d.py"),
        "a%5B1%5D/b%7Bc%7D%5Cd.py"
    );
    assert_eq!(
        sarif::encode_uri_path("it's (ok)+=,;@!$&*.py"),
        "it's (ok)+=,;@!$&*.py".replace(' ', "%20")
    );
}

/// The vendored official schema (see fixtures/schemas/README.md).
fn sarif_schema() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/schemas/sarif-schema-2.1.0.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("vendored SARIF schema")).unwrap()
}

/// Validators for the schema: under draft-04, which it declares, and under draft-07, because the
/// validator checks the `uri-reference` format (artifact URIs) only from draft 6 on. The schema
/// uses no keyword whose meaning differs between the two. The crate is built without its HTTP and
/// file resolvers, so a `$ref` outside the file would fail here instead of being fetched.
fn sarif_validators() -> Vec<jsonschema::Validator> {
    let schema = sarif_schema();
    [jsonschema::Draft::Draft4, jsonschema::Draft::Draft7]
        .into_iter()
        .map(|draft| {
            jsonschema::options()
                .with_draft(draft)
                .should_validate_formats(true)
                .build(&schema)
                .expect("the SARIF schema compiles offline")
        })
        .collect()
}

fn schema_errors(validators: &[jsonschema::Validator], log: &Value) -> Vec<String> {
    validators
        .iter()
        .flat_map(|v| {
            v.iter_errors(log)
                .map(|e| format!("{e} at {}", e.instance_path))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn sarif_is_valid_against_the_official_schema() {
    let validators = sarif_validators();
    let empty = Report::new(scope("auto", 0), Vec::new(), 0, None);
    for report in [full_report(), green_report(), empty] {
        let log: Value = serde_json::from_str(&sarif::render(&report)).unwrap();
        let errors = schema_errors(&validators, &log);
        assert!(errors.is_empty(), "{errors:#?}");
    }
}

#[test]
fn sarif_schema_check_has_teeth() {
    // The validation above would be worthless if it accepted anything: break the log in ways the
    // schema forbids and expect complaints.
    let validators = sarif_validators();
    let mut log: Value = serde_json::from_str(&sarif::render(&full_report())).unwrap();
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
        Value::from("src/data files/a b.py");
    assert!(
        !schema_errors(&validators, &log).is_empty(),
        "a raw space is not a URI reference"
    );
    let mut log: Value = serde_json::from_str(&sarif::render(&full_report())).unwrap();
    log["runs"][0]["results"][0]["level"] = Value::from("info");
    assert!(
        !schema_errors(&validators, &log).is_empty(),
        "`info` is not a SARIF level"
    );
    let mut log: Value = serde_json::from_str(&sarif::render(&full_report())).unwrap();
    log["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        Value::from(0);
    assert!(
        !schema_errors(&validators, &log).is_empty(),
        "lines start at 1"
    );
}

#[test]
fn sarif_drops_impossible_positions() {
    let mut report = full_report();
    let lint = &mut report.gates[1];
    // An end before the start, and an edit at column 0: neither may reach a SARIF consumer.
    lint.violations[1].end_line = Some(19);
    lint.violations[0].fix.as_mut().unwrap().edits[0].column = 0;
    let report = Report::new(report.scope.clone(), report.gates.clone(), 0, None);
    let log: Value = serde_json::from_str(&sarif::render(&report)).unwrap();
    let results = &log["runs"][0]["results"];
    assert_eq!(
        results[2]["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({"startLine": 20, "startColumn": 11})
    );
    assert!(results[1].get("fixes").is_none());
    assert!(schema_errors(&sarif_validators(), &log).is_empty());
}

// ---------------------------------------------------------------------------------------------
// github

#[test]
fn github_snapshot() {
    insta::assert_snapshot!("github", github::render(&full_report()));
}

/// The runner's side of the escaping: a workflow command parsed back into its name, properties
/// and message, the way actions/runner's `ActionCommand.TryParseV2` reads it.
fn parse_command(line: &str) -> (String, Vec<(String, String)>, String) {
    fn unescape(s: &str) -> String {
        s.replace("%0D", "\r")
            .replace("%0A", "\n")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    }
    let rest = line.strip_prefix("::").expect("a command");
    let (head, data) = rest.split_once("::").expect("`::` ends the properties");
    let (name, props) = head.split_once(' ').unwrap_or((head, ""));
    let props = props
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').expect("key=value");
            (k.to_string(), unescape(v))
        })
        .collect();
    (name.to_string(), props, unescape(data))
}

#[test]
fn github_escaping_round_trips() {
    let report = full_report();
    let out = github::render(&report);
    let lines: Vec<&str> = out.lines().collect();
    let commands: Vec<_> = lines
        .iter()
        .filter(|l| l.starts_with("::"))
        .map(|l| parse_command(l))
        .collect();
    // One annotation per violation, one per gate that could not run; then the summary, plain.
    assert_eq!(commands.len(), report.summary.total_violations + 1);
    assert_eq!(lines.last().copied(), Some(report.summary_line().as_str()));
    assert_eq!(
        lines.len(),
        commands.len() + 1,
        "nothing else, and no message spilled onto a line of its own"
    );

    let violations: Vec<(&GateResult, &Violation)> = report
        .gates
        .iter()
        .flat_map(|g| g.violations.iter().map(move |v| (g, v)))
        .collect();
    for ((name, props, message), (g, v)) in commands.iter().zip(&violations) {
        let expected_name = match v.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info | Severity::Hint => "notice",
        };
        assert_eq!(name, expected_name);
        let prop = |k: &str| {
            props
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(prop("file"), v.file.as_deref());
        assert_eq!(prop("line"), v.line.map(|l| l.to_string()).as_deref());
        assert!(prop("title").unwrap().starts_with(&g.name), "{props:?}");
        assert!(
            message.starts_with(&*v.message),
            "{message:?} vs {:?}",
            v.message
        );
    }
    // The TODO gate's name has a comma, its message `%`, `|`, a CRLF: all came back intact.
    let (_, props, message) = &commands[8];
    assert_eq!(
        props.last().unwrap(),
        &(
            "title".to_string(),
            "TODO, FIXME TODO (allowed to fail)".to_string()
        )
    );
    assert_eq!(
        message,
        "# TODO: 100% broken | handle `a`b` case, then *ship* [it] <soon>\r\n2. done"
    );
    let (name, props, message) = commands.last().unwrap();
    assert_eq!(name, "error");
    assert_eq!(
        props,
        &[("title".to_string(), "Pytest could not run".to_string())]
    );
    assert!(message.contains("timed out after 120 s") && message.contains("pytest.stderr"));
}

#[test]
fn github_columns_only_on_one_line() {
    let out = github::render(&full_report());
    // I001 spans lines 1–2: GitHub takes no columns for that.
    assert!(
        out.contains("::error file=src/app/main.py,line=1,endLine=2,title=Ruff Lint I001::"),
        "{out}"
    );
    assert!(
        out.contains("::error file=src/app/main.py,line=3,col=8,endLine=3,endColumn=10,title=Ruff Lint F401::`os` imported but unused%0AFix: Remove unused import: `os`"),
        "{out}"
    );
    assert!(
        out.contains("::warning title=Mypy::unused section(s) in mypy.ini: [mypy-yaml.*]"),
        "{out}"
    );
}

// ---------------------------------------------------------------------------------------------
// summary line, exit code, compact JSON (docs/cli.md)

fn failing(id: &str, violations: usize, fixable: usize) -> GateResult {
    let mut g = gate(id, id, GateStatus::Failed);
    g.violations = (0..violations)
        .map(|i| Violation {
            fixable: i < fixable,
            ..v(
                id,
                Some("src/a.py"),
                [i as u32 + 1, 1, 0, 0],
                Some("X1"),
                "bad",
            )
        })
        .collect();
    g
}

#[test]
fn summary_line_all_green() {
    let report = green_report();
    assert_eq!(
        report.summary_line(),
        "✅ 3/3 gates passed — 42 files checked (auto)"
    );
    assert_eq!(report.exit_code(), 0);
    assert!(report.overall_pass);
}

#[test]
fn summary_line_failures_with_auto_fixable_count() {
    let gates = vec![
        failing("ruff_format", 3, 3),
        failing("ruff_lint", 11, 5),
        gate("mypy", "Mypy", GateStatus::Passed),
    ];
    let report = Report::new(scope("auto", 14), gates, 0, None);
    assert_eq!(
        report.summary_line(),
        "❌ 2/3 gates failed — 14 violations (8 auto-fixable): ruff_format, ruff_lint"
    );
    assert_eq!(report.exit_code(), 1);
}

#[test]
fn summary_line_nothing_in_scope_says_why() {
    let gates = ["ruff_format", "ruff_lint", "mypy"]
        .map(|id| GateResult {
            skip_reason: Some("no matching files".into()),
            ..gate(id, id, GateStatus::Skipped)
        })
        .to_vec();
    let mut s = scope("auto", 0);
    s.note = Some("no changes since baseline".into());
    let report = Report::new(s, gates.clone(), 0, None);
    assert_eq!(
        report.summary_line(),
        "⏭️ 0 files in scope — nothing to check (auto, no changes since baseline)"
    );
    assert_eq!(report.exit_code(), 0);
    let report = Report::new(scope("branch", 0), gates.clone(), 0, None);
    assert_eq!(
        report.summary_line(),
        "⏭️ 0 files in scope — nothing to check (branch)"
    );
    // Files in scope, but none of the gates' types: say so rather than "0 files in scope".
    let mut s = scope("project", 0);
    s.files_in_scope = 3;
    let report = Report::new(s, gates, 0, None);
    assert_eq!(
        report.summary_line(),
        "⏭️ nothing to check — no gate applies to the 3 files in scope (project)"
    );
}

#[test]
fn summary_line_errors() {
    let mut crashed = gate("mypy", "Mypy", GateStatus::Error);
    crashed.error = Some("mypy was not found — is it installed and on PATH?".into());
    let gates = vec![
        gate("ruff_lint", "Ruff Lint", GateStatus::Passed),
        crashed.clone(),
    ];
    let report = Report::new(scope("auto", 2), gates, 0, Some(RUN_DIR.into()));
    assert_eq!(
        report.summary_line(),
        format!("💥 1/2 gates could not run: mypy — see {RUN_DIR}")
    );
    assert_eq!(report.exit_code(), 3);
    assert!(!report.overall_pass);

    // Failures and errors together: both named, and a gate that could not run wins the exit code.
    let report = Report::new(
        scope("auto", 2),
        vec![failing("ruff_lint", 2, 1), crashed],
        0,
        None,
    );
    assert_eq!(
        report.summary_line(),
        "❌ 1/2 gates failed, 1 could not run — 2 violations (1 auto-fixable): ruff_lint; could not run: mypy"
    );
    assert_eq!(report.exit_code(), 3);
}

#[test]
fn summary_line_allow_fail() {
    let mut bandit = failing("bandit", 1, 0);
    bandit.allow_fail = true;
    let gates = vec![
        gate("ruff_lint", "Ruff Lint", GateStatus::Passed),
        bandit.clone(),
    ];
    let report = Report::new(scope("auto", 5), gates, 0, None);
    assert!(report.overall_pass, "allow_fail findings never block");
    assert_eq!(report.exit_code(), 0);
    assert_eq!(
        report.summary_line(),
        "✅ 1/2 gates passed, bandit allowed to fail (1 violation, 0 auto-fixable) — 5 files checked (auto)"
    );

    // An allow_fail gate that could not run does not block either.
    let mut broken = gate("bandit", "Bandit", GateStatus::Error);
    broken.allow_fail = true;
    let report = Report::new(
        scope("auto", 5),
        vec![gate("ruff_lint", "Ruff Lint", GateStatus::Passed), broken],
        0,
        None,
    );
    assert_eq!(report.exit_code(), 0);
    assert!(report.overall_pass);
}

/// Every null, empty array, empty object and `"fixable": false` anywhere in the JSON.
fn clutter(value: &Value, path: &str, found: &mut Vec<String>) {
    match value {
        Value::Null => found.push(format!("{path}: null")),
        Value::Array(items) if items.is_empty() => found.push(format!("{path}: []")),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, item)| clutter(item, &format!("{path}/{i}"), found)),
        Value::Object(map) => {
            for (k, item) in map {
                if k == "fixable" && item == &Value::Bool(false) {
                    found.push(format!("{path}/{k}: false"));
                }
                clutter(item, &format!("{path}/{k}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn compact_json_leaves_out_nulls_empty_arrays_and_fixable_false() {
    let report = full_report();
    let json = report.to_json();
    assert!(!json.contains('\n'), "compact: one line");
    let value: Value = serde_json::from_str(&json).unwrap();
    let mut found = Vec::new();
    clutter(&value, "", &mut found);
    assert!(found.is_empty(), "{found:#?}");
    // What stays: the verdict, the counts, and the fields a finding has.
    assert_eq!(value["overall_pass"], false);
    assert_eq!(value["summary"]["total_violations"], 10);
    assert_eq!(value["summary"]["auto_fixable"], 3);
    assert_eq!(value["gates"][1]["violations"][0]["fixable"], true);
    assert!(value["gates"][1]["violations"][1].get("fixable").is_none());
    assert!(
        value["gates"][5].get("violations").is_none(),
        "the skipped gate has none"
    );
    assert!(
        value["gates"][1]["violations"][0].get("gate").is_none(),
        "the gate is implied by the section"
    );
    assert!(value["scope"].get("note").is_none());

    let summary = report.to_summary_format();
    let (line, rest) = summary.split_once('\n').unwrap();
    assert_eq!(line, report.summary_line());
    assert_eq!(rest, format!("{json}\n"));
}

#[test]
fn quiet_runs_stay_quiet() {
    let green = green_report();
    assert_eq!(
        github::render(&green),
        format!("{}\n", green.summary_line()),
        "no annotation for a green run"
    );
    let md = markdown::render(&green);
    assert!(md.contains("No violations.") && !md.contains("[ ]"), "{md}");
    assert!(
        md.contains("Passed: **ruff_format**, **ruff_lint**, **mypy**."),
        "a name equal to the id is not repeated: {md}"
    );
    let text = text::render(&green, false, false);
    assert!(
        text.contains("\nmypy: passed (42 files checked)\n"),
        "{text}"
    );

    let mut s = scope("auto", 0);
    s.note = Some("no changes since baseline".into());
    let gates = vec![GateResult {
        skip_reason: Some("no matching files".into()),
        ..gate("mypy", "Mypy", GateStatus::Skipped)
    }];
    let nothing = Report::new(s, gates, 3, None);
    let md = markdown::render(&nothing);
    assert!(
        md.starts_with(
            "## ⏭️ 0 files in scope — nothing to check (auto, no changes since baseline)\n"
        ),
        "{md}"
    );
    assert!(
        md.contains("### Skipped\n\n- **Mypy** (`mypy`): no matching files\n"),
        "{md}"
    );
    assert!(
        text::render(&nothing, false, false).contains("Mypy (mypy): skipped — no matching files")
    );
    let log: Value = serde_json::from_str(&sarif::render(&nothing)).unwrap();
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
}

#[test]
fn summary_line_names_three_gates_and_counts_the_rest() {
    let mut gates: Vec<GateResult> = ["a", "b", "c", "d", "e"]
        .map(|id| failing(id, 1, 0))
        .to_vec();
    for id in ["w", "x", "y", "z"] {
        gates.push(gate(id, id, GateStatus::Error));
    }
    gates.push(gate("ok", "ok", GateStatus::Passed));
    let report = Report::new(scope("project", 3), gates, 0, None);
    assert_eq!(
        report.summary_line(),
        "❌ 5/10 gates failed, 4 could not run — 5 violations (0 auto-fixable): a, b, c +2 more; could not run: w, x, y +1 more"
    );
}

#[test]
fn summary_line_counts_severities_when_not_all_are_errors() {
    let mut lint = failing("lint", 4, 1);
    lint.violations[1].severity = Severity::Warning;
    lint.violations[2].severity = Severity::Info;
    lint.violations[3].severity = Severity::Info;
    let report = Report::new(scope("auto", 1), vec![lint], 0, None);
    assert_eq!(
        report.summary_line(),
        "❌ 1/1 gates failed — 4 violations: 1 error, 1 warning, 2 info (1 auto-fixable): lint"
    );
}

#[test]
fn summary_line_says_which_gates_the_cache_answered() {
    let cached = |id: &str, files: usize, from_cache: usize| GateResult {
        files_checked: files,
        cached_files: from_cache,
        coverage: None,
        ..gate(id, id, GateStatus::Passed)
    };
    let skipped = GateResult {
        skip_reason: Some("no matching files".into()),
        ..gate("docs", "docs", GateStatus::Skipped)
    };
    let gates = vec![
        cached("ruff", 4, 4),
        cached("mypy", 4, 1),
        cached("eslint", 2, 2),
        skipped.clone(),
    ];
    let report = Report::new(scope("auto", 6), gates, 0, None);
    assert_eq!(
        report.summary_line(),
        "✅ 3/4 gates passed, 1 skipped — 6 files checked (auto); from the cache: ruff, eslint"
    );
    let gates = vec![cached("ruff", 4, 4), cached("mypy", 4, 4), skipped];
    let report = Report::new(scope("auto", 4), gates, 0, None);
    assert!(
        report.summary_line().ends_with("; all from the cache"),
        "{}",
        report.summary_line()
    );
}

#[test]
fn a_page_shows_errors_first_and_cuts_visibly() {
    let report = full_report();
    let codes = |page: &qgates::core::report::page::ReportPage| -> Vec<String> {
        let mut shown = Vec::new();
        for g in &page.report.gates {
            shown.extend(
                g.violations
                    .iter()
                    .map(|v| v.code.as_deref().unwrap_or("").to_string()),
            );
        }
        shown
    };
    // The whole order, across gates: errors (file-less first, then by file and position), then
    // warnings, info, hints.
    let order: Vec<String> = qgates::core::report::page::reading_order(&report)
        .into_iter()
        .map(|(g, i)| {
            let code = report.gates[g].violations[i].code.as_deref();
            code.unwrap_or("").to_string()
        })
        .collect();
    assert_eq!(
        order,
        [
            "I001", "F401", "UP031", "arg-type", "FORMAT", "", "E741", "no-redef", "TODO", "TODO"
        ]
    );

    let page = report.page(PageRequest {
        max_violations: 3,
        offset: 0,
        include_existing: false,
    });
    assert_eq!((page.shown, page.total, page.next_offset), (3, 10, Some(3)));
    assert_eq!(codes(&page), ["I001", "F401", "UP031"]);
    let left: usize = page.left_out.values().sum();
    assert_eq!(left, 7);
    assert_eq!(page.left_out["ruff_lint"], 1);
    assert_eq!(
        page.summary_line(),
        format!(
            "{}; showing 3 of 10 violations; the rest: offset=3, or {RUN_DIR}/report.json",
            report.summary_line()
        )
    );
    // Only the gate that could not run keeps its log paths; the counts stay the whole run's.
    let logs: Vec<&str> = page
        .report
        .gates
        .iter()
        .filter(|g| g.log.is_some())
        .map(|g| g.id.as_str())
        .collect();
    assert_eq!(logs, ["pytest"]);
    assert_eq!(page.report.summary, report.summary);
    let json: Value = serde_json::from_str(&page.to_json()).unwrap();
    assert_eq!(json["full_report"], format!("{RUN_DIR}/report.json"));
    assert_eq!(json["next_offset"], 3);

    // The last page, then everything: no next offset, nothing left out.
    let last = report.page(PageRequest {
        max_violations: 50,
        offset: 8,
        include_existing: false,
    });
    assert_eq!((last.shown, last.next_offset), (2, None));
    assert_eq!(codes(&last), ["TODO", "TODO"]);
    let all = report.page(PageRequest::default());
    assert_eq!((all.shown, all.total), (10, 10));
    assert!(all.left_out.is_empty());
    assert_eq!(all.summary_line(), report.summary_line());
}
