//! No parsing strategy panics, whatever a tool prints: arbitrary bytes, and arbitrary but valid
//! JSON (which reaches deeper into the strategies than random bytes do).

use std::path::Path;

use proptest::prelude::*;
use qgates::core::config::{ConfigSource, Gate, parse_config};
use qgates::core::parse::{ParseContext, ToolOutput, parse_output};

fn gate(extra: &str, parsing: &str) -> Gate {
    let yaml =
        format!("version: 1\ngates:\n  g:\n    command: [tool]\n{extra}    parsing:\n{parsing}");
    let config = parse_config(&yaml, ConfigSource::File("quality.yaml".into()))
        .unwrap_or_else(|e| panic!("the test configuration is invalid:\n{e}"));
    config.gates[0].clone()
}

/// One gate per strategy and shape worth shaking.
fn gates() -> Vec<Gate> {
    let json_map = "      field_map: { file: a/b, line: a/0, column: c, end_line: ../x, end_column: ../../y, code: d, message: m, severity: s, url: u }\n      fixable_when: \"f/g != 'x'\"\n      fix_edits: { path: e, title: t, content: c, line: l/0, column: l/1, end_line: n, end_column: o }\n      defaults: { message: \"{code} {line} {file}\", code: C, severity: hint, url: \"u{url}\" }\n";
    let flat_map = "      field_map: { file: a/b, line: a/0, column: c, code: d, message: m, severity: s }\n      fixable_when: \"f == 1\"\n";
    vec![
        gate("", &format!("      strategy: json_violations\n{json_map}")),
        gate(
            "",
            &format!("      strategy: json_violations\n      violations_path: /*/m\n{json_map}"),
        ),
        gate(
            "",
            &format!("      strategy: json_violations\n      violations_path: /*/m\n{flat_map}"),
        ),
        gate(
            "",
            &format!("      strategy: json_violations\n      violations_path: /a/*/0\n{flat_map}"),
        ),
        gate(
            "    column_unit: utf16\n",
            &format!("      strategy: json_violations\n      format: jsonl\n{json_map}"),
        ),
        gate(
            "",
            &format!("      strategy: json_violations\n      format: jsonl\n{flat_map}"),
        ),
        gate(
            "",
            &format!("      strategy: json_violations\n      extract: fenced\n{json_map}"),
        ),
        gate(
            "",
            &format!(
                "      strategy: json_violations\n      extract: fenced\n      format: jsonl\n{flat_map}"
            ),
        ),
        gate(
            "",
            "      strategy: text_violations\n      stream: both\n      pattern: '^(?P<file>[^:\\n]+):(?P<line>\\d+):(?P<column>\\d+)?:? (?P<severity>\\w+): (?P<message>.*?)(?:  \\[(?P<code>[^\\]\\n]+)\\])?$'\n",
        ),
        gate(
            "",
            "      strategy: text_violations\n      pattern: '(?P<code>x*)(?P<fixable>y?)'\n      defaults: { message: \"m {code}\", fixable: true }\n",
        ),
        gate(
            "    column_unit: byte\n",
            "      strategy: text_violations\n      stream: stderr\n      pattern: '^--- (?P<file>.+)\\n\\+\\+\\+ (?P<line>-?\\d*)'\n      defaults: { message: \"fmt {file}\" }\n",
        ),
        gate("", "      strategy: sarif\n"),
        gate("    column_unit: utf16\n", "      strategy: sarif\n"),
        gate("", "      strategy: exit_code\n"),
    ]
}

fn shake(gates: &[Gate], stdout: &[u8], stderr: &[u8]) {
    // Relative paths resolve against a root that does not exist: column conversion must cope.
    let root = Path::new("/nonexistent-qgates-root");
    for gate in gates {
        let ctx = ParseContext {
            gate,
            root,
            cwd: root,
            log_hint: "log",
            diff: None,
        };
        for exit_code in [Some(1), None] {
            let _ = parse_output(
                &ctx,
                ToolOutput {
                    stdout,
                    stderr,
                    exit_code,
                },
            );
        }
    }
}

/// Arbitrary JSON, biased towards the keys the gates above and SARIF read.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let key = prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("m".to_string()),
        Just("e".to_string()),
        Just("l".to_string()),
        Just("runs".to_string()),
        Just("results".to_string()),
        Just("locations".to_string()),
        Just("physicalLocation".to_string()),
        Just("artifactLocation".to_string()),
        Just("uri".to_string()),
        Just("uriBaseId".to_string()),
        Just("originalUriBaseIds".to_string()),
        Just("region".to_string()),
        Just("startLine".to_string()),
        Just("startColumn".to_string()),
        Just("ruleIndex".to_string()),
        Just("tool".to_string()),
        Just("driver".to_string()),
        Just("rules".to_string()),
        Just("fixes".to_string()),
        Just("artifactChanges".to_string()),
        Just("replacements".to_string()),
        Just("deletedRegion".to_string()),
        Just("message".to_string()),
        Just("text".to_string()),
        Just("arguments".to_string()),
        "[a-z]{0,3}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-3i64..40).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,8}".prop_map(Value::String),
        "(file:///|%|\\{[0-9]\\}|[0-9]){0,4}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(stdout in prop::collection::vec(any::<u8>(), 0..300),
                                   stderr in prop::collection::vec(any::<u8>(), 0..100)) {
        shake(&gates(), &stdout, &stderr);
    }

    #[test]
    fn json_like_text_never_panics(stdout in "[\\[\\]{}\",:0-9a-z\\n `\\\\]{0,120}") {
        // Near-JSON is where a parser's error paths live.
        shake(&gates(), stdout.as_bytes(), stdout.as_bytes());
    }

    #[test]
    fn valid_json_never_panics(value in json_value()) {
        let gates = gates();
        let compact = value.to_string();
        shake(&gates, compact.as_bytes(), b"");
        let pretty = serde_json::to_string_pretty(&value).unwrap_or_default();
        shake(&gates, pretty.as_bytes(), b"");
        // The same value inside prose, as a review agent would answer, and as JSON Lines.
        shake(&gates, format!("Findings:\n```json\n{pretty}\n```\nDone.").as_bytes(), b"");
        let lines = match &value {
            serde_json::Value::Array(items) => items.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("\n"),
            other => other.to_string(),
        };
        shake(&gates, lines.as_bytes(), b"");
    }
}
