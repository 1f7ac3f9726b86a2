//! One test per configuration mistake: each asserts the file, line and column, that the
//! place really holds the offending key or value, and that the message says what is wrong and
//! how to fix it.

use std::path::{Path, PathBuf};

use qgates::core::config::{ConfigError, ConfigProblem, ConfigSource, load_file, parse_config};

const FILE: &str = "quality.yaml";

/// A gate header; bodies below are indented four spaces.
const HEAD: &str = "version: 1\ngates:\n  a:\n";

fn problems(yaml: &str) -> Vec<ConfigProblem> {
    match parse_config(yaml, ConfigSource::File(PathBuf::from(FILE))) {
        Ok(_) => panic!("expected configuration problems, the file loaded:\n{yaml}"),
        Err(ConfigError { problems }) => {
            for p in &problems {
                assert_readable(p);
            }
            problems
        }
    }
}

/// The only problem in `yaml`.
fn one(yaml: &str) -> ConfigProblem {
    let mut list = problems(yaml);
    assert_eq!(
        list.len(),
        1,
        "expected one problem, got:\n{}",
        ConfigError {
            problems: list.clone()
        }
    );
    list.remove(0)
}

/// Library noise never reaches the user, and each message is one or two sentences that end.
fn assert_readable(p: &ConfigProblem) {
    let m = &p.message;
    for noise in [
        "at line",
        "expected one of",
        "DuplicateKeyPolicy",
        "expected sequence",
        "expected mapping",
        "serde",
        "error:",
    ] {
        assert!(!m.contains(noise), "library noise {noise:?} in: {m}");
    }
    assert!(
        m.ends_with('.') || m.ends_with('?'),
        "message does not end a sentence: {m}"
    );
    let sentences = m.matches(". ").count() + m.matches("? ").count() + 1;
    assert!(sentences <= 3, "too long ({sentences} sentences): {m}");
    assert!(!m.contains('\n'), "message spans lines: {m}");
}

/// The text of `yaml` from `line:column` (1-based, in characters) to the end of that line.
fn text_at(yaml: &str, line: u32, column: u32) -> String {
    let l = yaml
        .lines()
        .nth(line as usize - 1)
        .unwrap_or_else(|| panic!("no line {line} in:\n{yaml}"));
    l.chars().skip(column as usize - 1).collect()
}

/// Asserts the problem's place, that the file there starts with `token`, and that the message
/// contains every fragment.
#[track_caller]
fn check(p: &ConfigProblem, yaml: &str, line: u32, column: u32, token: &str, fragments: &[&str]) {
    assert_eq!(p.file, Path::new(FILE));
    assert_eq!(
        (p.line, p.column),
        (line, column),
        "wrong place for: {}",
        p.message
    );
    let there = text_at(yaml, line, column);
    assert!(
        there.starts_with(token),
        "{line}:{column} holds {there:?}, not {token:?}"
    );
    for f in fragments {
        assert!(p.message.contains(f), "{f:?} missing from: {}", p.message);
    }
}

// ---- YAML syntax ----

#[test]
fn yaml_syntax_error_unclosed_bracket() {
    let y = format!("{HEAD}    command: [ruff, check\n    parsing: {{ strategy: exit_code }}\n");
    let p = one(&y);
    check(
        &p,
        &y,
        4,
        14,
        "[ruff",
        &[
            "invalid YAML",
            "this `[` is never closed",
            "Close it with `]`",
        ],
    );
}

#[test]
fn yaml_syntax_error_bad_indentation() {
    let y = "version: 1\ngates:\n  a:\n   command: [x]\n    parsing: {}\n";
    let p = one(y);
    check(&p, y, 5, 5, "parsing", &["invalid YAML", "indentation"]);
}

#[test]
fn yaml_tab_is_found_where_it_is() {
    let y = "version: 1\ngates:\n\ta: {}\n";
    let p = one(y);
    check(&p, y, 3, 1, "\t", &["tab", "spaces"]);
}

// ---- unknown keys ----

#[test]
fn unknown_key_at_top_level() {
    let y = "version: 1\nactive_gate: [a]\ngates:\n  a: { command: [x], parsing: { strategy: exit_code } }\n";
    let p = one(y);
    check(
        &p,
        y,
        2,
        1,
        "active_gate",
        &[
            "unknown key `active_gate`",
            "at the top level",
            "did you mean `active_gates`?",
        ],
    );
}

#[test]
fn unknown_key_in_a_gate_suggests_the_right_one() {
    let y = format!("{HEAD}    comand: [ruff, check]\n    parsing: {{ strategy: exit_code }}\n");
    let p = one(&y);
    check(
        &p,
        &y,
        4,
        5,
        "comand",
        &[
            "unknown key `comand` in gate `a`",
            "did you mean `command`?",
            "qgates schema",
        ],
    );
    // Not the library's list of twenty expected keys.
    assert!(!p.message.contains("file_types"), "{}", p.message);
}

#[test]
fn unknown_key_in_parsing() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: text_violations\n      patern: '(?P<message>.+)'\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        7,
        "patern",
        &[
            "unknown key `patern` in `parsing` of gate `a`",
            "did you mean `pattern`?",
        ],
    );
}

#[test]
fn unknown_key_in_field_map() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: json_violations\n      field_map: {{ file: filename, mesage: text }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        36,
        "mesage",
        &[
            "unknown key `mesage` in `parsing.field_map` of gate `a`",
            "did you mean `message`?",
        ],
    );
}

#[test]
fn unknown_key_without_a_close_match_lists_the_few_choices() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing: {{ strategy: exit_code }}\n    success: {{ exit_ok: [0] }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        6,
        16,
        "exit_ok",
        &[
            "unknown key `exit_ok` in `success` of gate `a`",
            "exit_codes_ok, exit_codes_findings",
        ],
    );
}

#[test]
fn parsing_key_written_in_the_gate_says_where_it_goes() {
    let y = format!("{HEAD}    command: [x]\n    strategy: exit_code\n");
    let p = one(&y);
    check(
        &p,
        &y,
        5,
        5,
        "strategy",
        &["`strategy`", "gate `a`", "under the gate's `parsing:`"],
    );
}

// ---- wrong types ----

#[test]
fn command_written_as_a_string_where_a_list_is_wanted() {
    let y = format!(
        "{HEAD}    command: \"ruff check --fix\"\n    parsing: {{ strategy: exit_code }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        4,
        14,
        "\"ruff check --fix\"",
        &[
            "`command` in gate `a` must be a list of strings (argv)",
            "[\"ruff\", \"check\", \"--fix\"]",
            "shell",
        ],
    );
}

#[test]
fn number_where_a_bool_is_wanted() {
    let y = format!(
        "{HEAD}    command: [x]\n    optional: 3\n    parsing: {{ strategy: exit_code }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        5,
        15,
        "3",
        &["`optional` in gate `a` must be true or false"],
    );
}

#[test]
fn word_where_a_number_is_wanted() {
    let y = format!(
        "{HEAD}    command: [x]\n    timeout_s: soon\n    parsing: {{ strategy: exit_code }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        5,
        16,
        "soon",
        &[
            "`timeout_s` in gate `a` must be a positive number of seconds",
            "e.g. 300",
        ],
    );
}

#[test]
fn string_where_a_mapping_is_wanted() {
    let y = format!("{HEAD}    command: [x]\n    parsing: exit_code\n");
    let p = one(&y);
    check(
        &p,
        &y,
        5,
        14,
        "exit_code",
        &[
            "`parsing` in gate `a` must be a mapping",
            "{ strategy: exit_code }",
        ],
    );
}

#[test]
fn scalar_where_a_list_of_numbers_is_wanted() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing: {{ strategy: exit_code }}\n    success: {{ exit_codes_ok: 0 }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        6,
        31,
        "0",
        &[
            "`success.exit_codes_ok` in gate `a` must be a list of whole numbers",
            "[0]",
        ],
    );
}

#[test]
fn list_item_of_the_wrong_type() {
    let y = format!("{HEAD}    command: [ruff, [check]]\n    parsing: {{ strategy: exit_code }}\n");
    let p = one(&y);
    check(
        &p,
        &y,
        4,
        21,
        "[check]",
        &["each item of `command` in gate `a` must be one string"],
    );
}

#[test]
fn key_without_a_value() {
    let y = format!("{HEAD}    command:\n    parsing: {{ strategy: exit_code }}\n");
    let p = one(&y);
    assert_eq!(
        (p.line, p.column),
        (4, 12),
        "the colon: an empty value has no text of its own"
    );
    assert!(
        p.message.contains("`command` in gate `a` has no value"),
        "{}",
        p.message
    );
}

#[test]
fn top_level_is_not_a_mapping() {
    let y = "- version: 1\n";
    let p = one(y);
    check(&p, y, 1, 1, "-", &["must be a YAML mapping", "qgates init"]);
}

// ---- missing keys ----

#[test]
fn missing_parsing_points_at_the_gate() {
    let y = format!("{HEAD}    command: [x]\n");
    let p = one(&y);
    check(
        &p,
        &y,
        3,
        3,
        "a:",
        &[
            "gate `a` has no `parsing`",
            "parsing: { strategy: exit_code }",
        ],
    );
}

#[test]
fn missing_strategy() {
    let y = format!("{HEAD}    command: [x]\n    parsing:\n      pattern: x\n");
    let p = one(&y);
    check(
        &p,
        &y,
        5,
        5,
        "parsing",
        &["`parsing` of gate `a` has no `strategy`", "exit_code"],
    );
}

#[test]
fn missing_version() {
    let y = "gates:\n  a: { command: [x], parsing: { strategy: exit_code } }\n";
    let p = one(y);
    check(&p, y, 1, 1, "gates", &["no `version`", "version: 1"]);
}

// ---- enum values ----

#[test]
fn unknown_strategy() {
    let y = format!("{HEAD}    command: [x]\n    parsing: {{ strategy: json_violation }}\n");
    let p = one(&y);
    check(
        &p,
        &y,
        5,
        26,
        "json_violation",
        &[
            "unknown strategy `json_violation` in gate `a`",
            "did you mean `json_violations`?",
            "json_violations, text_violations, sarif, exit_code",
        ],
    );
}

#[test]
fn unknown_kind_and_severity_words() {
    let y =
        format!("{HEAD}    command: [x]\n    kind: lnt\n    parsing: {{ strategy: exit_code }}\n");
    check(
        &one(&y),
        &y,
        5,
        11,
        "lnt",
        &["unknown gate kind `lnt`", "did you mean `lint`?"],
    );
    let y = format!(
        "{HEAD}    command: [x]\n    severity_map: {{ W: warn }}\n    parsing: {{ strategy: exit_code }}\n"
    );
    check(
        &one(&y),
        &y,
        5,
        24,
        "warn",
        &[
            "unknown severity `warn` for `W` in `severity_map`",
            "did you mean `warning`?",
        ],
    );
    let y = format!(
        "{HEAD}    command: [x]\n    run_on: [save, comand]\n    parsing: {{ strategy: exit_code }}\n"
    );
    check(
        &one(&y),
        &y,
        5,
        20,
        "comand",
        &[
            "unknown trigger `comand` in `run_on` of gate `a`",
            "did you mean `command`?",
        ],
    );
}

#[test]
fn columns_count_characters_not_bytes() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing: {{ defaults: {{ message: \"é😀\" }}, strategy: nope }}\n"
    );
    let p = one(&y);
    check(&p, &y, 5, 55, "nope", &["unknown strategy `nope`"]);
}

// ---- values the loader reads ----

#[test]
fn invalid_regex_points_at_the_character() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>[a-z+):'\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        27,
        "[a-z+):'",
        &[
            "gate `a`",
            "not a valid regex",
            "unclosed character class",
            "(?P<name>…)",
        ],
    );
}

#[test]
fn invalid_regex_in_a_block_scalar_points_at_the_pattern() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: text_violations\n      pattern: >-\n        (?P<file>x\n"
    );
    let p = one(&y);
    // A block scalar's value starts on the next line, where the pattern's text is.
    check(
        &p,
        &y,
        8,
        9,
        "(?P<file>x",
        &["not a valid regex", "unclosed group"],
    );
}

#[test]
fn json_pointer_that_is_not_one() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: json_violations\n      violations_path: results\n      field_map: {{ message: m }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        24,
        "results",
        &[
            "violations_path `results` is not a JSON Pointer",
            "Write `/results`",
        ],
    );
}

#[test]
fn json_pointer_with_a_bad_escape() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing: {{ strategy: json_violations, violations_path: /a~2b, defaults: {{ message: m }} }}\n"
    );
    let p = one(&y);
    check(&p, &y, 5, 60, "/a~2b", &["not a JSON Pointer", "`~0`"]);
}

#[test]
fn active_gate_with_no_definition() {
    let y = "version: 1\nactive_gates: [ruff_lint, mypy]\ngates:\n  ruff-lint: { command: [x], parsing: { strategy: exit_code } }\n  mypy: { command: [x], parsing: { strategy: exit_code } }\n";
    let p = one(y);
    check(
        &p,
        y,
        2,
        16,
        "ruff_lint",
        &[
            "active gate `ruff_lint` has no definition under `gates`",
            "did you mean `ruff-lint`?",
        ],
    );
    let y = "version: 1\nactive_gates: [mypy, pytest]\ngates:\n  mypy: { command: [x], parsing: { strategy: exit_code } }\n";
    check(
        &one(y),
        y,
        2,
        22,
        "pytest",
        &[
            "`pytest` has no definition",
            "remove it from active_gates",
            "defined: mypy",
        ],
    );
}

#[test]
fn placeholder_with_no_matching_group_text() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: text_violations\n      pattern: '^(?P<file>\\S+): (?P<message>.+)$'\n      defaults: {{ code: 'X-{{rule}}' }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        8,
        25,
        "'X-{rule}'",
        &[
            "defaults.code uses `{rule}`",
            "the pattern's named groups",
            "file, message",
        ],
    );
}

#[test]
fn placeholder_with_no_mapped_field_json() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: json_violations\n      field_map: {{ file: path, message: text }}\n      defaults: {{ message: 'see {{fle}}' }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        8,
        28,
        "'see {fle}'",
        &[
            "defaults.message uses `{fle}`",
            "field_map keys",
            "did you mean `{file}`?",
        ],
    );
}

#[test]
fn empty_command() {
    let y = format!("{HEAD}    command: []\n    parsing: {{ strategy: exit_code }}\n");
    let p = one(&y);
    check(
        &p,
        &y,
        4,
        14,
        "[]",
        &["gate `a` has an empty command", "[\"ruff\", \"check\"]"],
    );
}

#[test]
fn command_written_as_one_shell_string_in_a_list() {
    let y = format!(
        "{HEAD}    command: [\"ruff check --fix\"]\n    parsing: {{ strategy: exit_code }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        4,
        14,
        "[\"ruff check",
        &[
            "one string with spaces",
            "never go through a shell",
            "[\"ruff\", \"check\", \"--fix\"]",
        ],
    );
}

#[test]
fn unsupported_version() {
    let y = "version: 2\ngates:\n  a: { command: [x], parsing: { strategy: exit_code } }\n";
    let p = one(y);
    check(
        &p,
        y,
        1,
        10,
        "2",
        &["version 2 is not supported", "version: 1"],
    );
}

#[test]
fn duplicate_active_gate() {
    let y = "version: 1\nactive_gates: [a, b, a]\ngates:\n  a: { command: [x], parsing: { strategy: exit_code } }\n  b: { command: [x], parsing: { strategy: exit_code } }\n";
    let p = one(y);
    check(
        &p,
        y,
        2,
        22,
        "a]",
        &["`a` is listed twice in active_gates", "Remove one"],
    );
}

#[test]
fn duplicate_gate_definition() {
    let y = "version: 1\ngates:\n  a: { command: [x], parsing: { strategy: exit_code } }\n  a: { command: [y], parsing: { strategy: exit_code } }\n";
    let p = one(y);
    check(
        &p,
        y,
        4,
        3,
        "a:",
        &["gate `a` is defined twice", "Rename or remove one"],
    );
}

#[test]
fn duplicate_key_in_a_gate() {
    let y = format!(
        "{HEAD}    command: [x]\n    command: [y]\n    parsing: {{ strategy: exit_code }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        5,
        5,
        "command",
        &["`command` is written twice in gate `a`"],
    );
}

#[test]
fn exit_code_in_both_success_lists() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing: {{ strategy: exit_code }}\n    success:\n      exit_codes_ok: [0, 1]\n      exit_codes_findings: [1, 2]\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        8,
        29,
        "1, 2]",
        &[
            "exit code 1 is in both success.exit_codes_ok and success.exit_codes_findings",
            "one list",
        ],
    );
}

#[test]
fn exit_code_overlap_with_the_default_findings_list() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing: {{ strategy: exit_code }}\n    success: {{ exit_codes_ok: [0, 1] }}\n"
    );
    let p = one(&y);
    // The findings list is the default [1], written nowhere: point at `success`.
    assert_eq!((p.line, p.column), (6, 5), "{p:?}");
    assert!(p.message.contains("exit code 1"), "{}", p.message);
}

#[test]
fn exit_code_overlap_with_a_presets_list_names_the_preset() {
    let y = "version: 1\ngates:\n  lint: { preset: eslint, success: { exit_codes_ok: [0, 1] } }\n";
    let p = one(y);
    check(
        &p,
        y,
        3,
        57,
        "1]",
        &[
            "exit code 1 is in success.exit_codes_ok, and the preset `eslint` has it in success.exit_codes_findings. Set success.exit_codes_findings too",
        ],
    );
}

#[test]
fn invalid_glob() {
    let y = "version: 1\nproject_scope:\n  include_globs: [\"src/**/*.py\", \"src/[a.py\"]\ngates:\n  a: { command: [x], parsing: { strategy: exit_code }, scope: { exclude_globs: [\"{a,b\"] } }\n";
    let list = problems(y);
    assert_eq!(list.len(), 2, "{list:?}");
    check(
        &list[0],
        y,
        3,
        34,
        "\"src/[a.py\"",
        &["`src/[a.py` is not a valid glob", "`**`"],
    );
    check(
        &list[1],
        y,
        5,
        81,
        "\"{a,b\"",
        &["`{a,b` is not a valid glob"],
    );
}

#[test]
fn key_used_with_the_wrong_strategy() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: json_violations\n      field_map: {{ message: m }}\n      stream: stderr\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        8,
        7,
        "stream",
        &[
            "`parsing.stream` is not used by strategy json_violations",
            "only text_violations reads it",
            "change the strategy",
        ],
    );
}

#[test]
fn block_mapping_with_the_wrong_strategy_points_at_its_key() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: sarif\n      field_map:\n        message: m\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        7,
        "field_map",
        &["`parsing.field_map` is not used by strategy sarif"],
    );
}

#[test]
fn text_violations_without_pattern() {
    let y = format!("{HEAD}    command: [x]\n    parsing:\n      strategy: text_violations\n");
    let p = one(&y);
    check(
        &p,
        &y,
        6,
        17,
        "text_violations",
        &["needs `parsing.pattern`", "(?P<file>…)"],
    );
}

#[test]
fn json_violations_without_a_message() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: json_violations\n      field_map: {{ file: f }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        7,
        "field_map",
        &["needs `field_map.message`", "`defaults.message`"],
    );
}

#[test]
fn fixable_when_that_cannot_be_read() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: json_violations\n      field_map: {{ message: m }}\n      fixable_when: fix/applicability = 'safe'\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        8,
        21,
        "fix/applicability",
        &[
            "fixable_when `fix/applicability = 'safe'` cannot be read",
            "==",
            "fix/applicability == 'safe'",
        ],
    );
}

#[test]
fn field_path_with_dots_in_the_middle() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: json_violations\n      field_map: {{ message: m, file: a/../b }}\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        38,
        "a/../b",
        &[
            "field_map.file `a/../b` is not a field path",
            "`..` may only stand at the start",
        ],
    );
}

#[test]
fn zero_timeout_and_batch_size() {
    let y = format!(
        "{HEAD}    command: [x]\n    timeout_s: 0\n    max_files_per_run: 0\n    parsing: {{ strategy: exit_code }}\n"
    );
    let list = problems(&y);
    assert_eq!(list.len(), 2, "{list:?}");
    check(
        &list[0],
        &y,
        5,
        16,
        "0",
        &["timeout_s must be a positive number"],
    );
    check(
        &list[1],
        &y,
        6,
        24,
        "0",
        &["max_files_per_run must be at least 1"],
    );
}

#[test]
fn unknown_group_name_in_pattern() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: text_violations\n      pattern: '(?P<lin>\\d+) (?P<message>.+)'\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        16,
        "'(?P<lin>",
        &[
            "group `lin` is not a Violation field",
            "Did you mean `line`?",
        ],
    );
}

#[test]
fn a_header_names_its_groups_as_a_pattern_does() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: text_violations\n      pattern: '(?P<line>\\d+) (?P<message>.+)'\n      headers: ['^(?P<fil>\\S+)$']\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        8,
        17,
        "'^(?P<fil>",
        &[
            "headers[0]'s group `fil` is not a Violation field",
            "Did you mean `file`?",
        ],
    );
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: text_violations\n      pattern: '(?P<line>\\d+) (?P<message>.+)'\n      headers: ['^== .* ==$']\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        8,
        17,
        "'^== .*",
        &["headers[0] has no named groups", "(?P<file>…)"],
    );
}

#[test]
fn a_tool_counts_a_tab_one_way() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: sarif\n      tab_stops: 8\n      tab_width: 4\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        8,
        18,
        "4",
        &["tab_stops and tab_width both", "Keep the one it does"],
    );
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: sarif\n      tab_stops: 0\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        18,
        "0",
        &["tab_stops must be a number of columns from 1 to 64"],
    );
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: exit_code\n      tab_width: 4\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        7,
        "tab_width",
        &["`parsing.tab_width` is not used by strategy exit_code"],
    );
}

#[test]
fn headers_belong_to_text_violations() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing:\n      strategy: sarif\n      headers: ['^(?P<file>\\S+)$']\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        7,
        7,
        "headers",
        &[
            "`parsing.headers` is not used by strategy sarif",
            "text_violations",
        ],
    );
}

#[test]
fn fix_hint_with_an_unknown_placeholder() {
    let y = format!(
        "{HEAD}    command: [x]\n    parsing: {{ strategy: exit_code }}\n    fix_hint: 'Run: fix {{file}}'\n"
    );
    let p = one(&y);
    check(
        &p,
        &y,
        6,
        15,
        "'Run: fix {file}'",
        &["fix_hint uses `{file}`", "`{files}`"],
    );
}

// ---- the file itself ----

#[test]
fn no_gates_defined_points_at_the_empty_mapping() {
    let y = "version: 1\ngates: {}\n";
    let p = one(y);
    check(
        &p,
        y,
        2,
        8,
        "{}",
        &["no gates are defined", "under `gates:`"],
    );
}

#[test]
fn empty_file() {
    for y in ["", "\n  \n", "# just a comment\n"] {
        let p = one(y);
        assert_eq!((p.line, p.column), (1, 1));
        assert!(
            p.message.contains("the configuration is empty"),
            "{}",
            p.message
        );
        assert!(p.message.contains("qgates init"), "{}", p.message);
    }
}

#[test]
fn file_not_found() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("quality.yaml");
    let err = load_file(&path).expect_err("missing file");
    assert_eq!(err.problems.len(), 1);
    let p = &err.problems[0];
    assert_eq!(p.file, path);
    assert_eq!(
        (p.line, p.column),
        (0, 0),
        "a missing file has no place in it"
    );
    assert!(
        p.message.contains("does not exist") && p.message.contains("qgates init"),
        "{}",
        p.message
    );
    // No `:0:0:` in what the CLI prints.
    assert_eq!(
        err.to_string(),
        format!("{}: {}", path.display(), p.message)
    );
}

#[test]
fn non_utf8_file_reports_the_bad_byte() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("quality.yaml");
    // "# café" in Latin-1 on line 2: the é is one byte, 0xE9.
    std::fs::write(&path, b"version: 1\n# caf\xe9\ngates: {}\n").expect("write");
    let err = load_file(&path).expect_err("not UTF-8");
    let p = &err.problems[0];
    assert_eq!((p.line, p.column), (2, 6), "{p:?}");
    assert!(
        p.message.contains("not UTF-8")
            && p.message.contains("0xE9")
            && p.message.contains("Save the file as UTF-8")
    );
}

#[test]
fn utf16_file_is_named_as_such() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("quality.yaml");
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend("version: 1\n".encode_utf16().flat_map(u16::to_le_bytes));
    std::fs::write(&path, bytes).expect("write");
    let p = &load_file(&path).expect_err("UTF-16").problems[0];
    assert_eq!((p.line, p.column), (1, 1));
    assert!(p.message.contains("UTF-16"), "{}", p.message);
}

#[test]
fn several_problems_are_reported_together_in_line_order() {
    let y = "\
version: 3
active_gates: [lint, tests, nope]
gates:
  tests:
    command: [\"pytest -q\"]
    parsing: { strategy: exit_code }
  lint:
    command: [ruff]
    parsing:
      strategy: text_violations
      pattern: '(?P<file>['
      stream: both
";
    let list = problems(y);
    let places: Vec<(u32, u32)> = list.iter().map(|p| (p.line, p.column)).collect();
    assert_eq!(
        places,
        vec![(1, 10), (2, 29), (5, 14), (11, 26)],
        "{}",
        ConfigError {
            problems: list.clone()
        }
    );
    assert!(list[0].message.contains("version 3"));
    assert!(list[1].message.contains("`nope`"));
    assert!(list[2].message.contains("gate `tests`") && list[2].message.contains("shell"));
    assert!(list[3].message.contains("gate `lint`") && list[3].message.contains("regex"));
    // Printed one per line as file:line:column: message.
    let printed = ConfigError { problems: list }.to_string();
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(
        lines[0].starts_with("quality.yaml:1:10: version 3 is not supported"),
        "{}",
        lines[0]
    );
}

#[test]
fn a_broken_gate_that_is_not_active_is_still_reported() {
    let y = "version: 1\nactive_gates: [a]\ngates:\n  a: { command: [x], parsing: { strategy: exit_code } }\n  b: { command: [], parsing: { strategy: exit_code } }\n";
    let p = one(y);
    check(&p, y, 5, 17, "[]", &["gate `b` has an empty command"]);
}

#[test]
fn bad_gate_id() {
    let y =
        "version: 1\ngates:\n  \"ruff lint\": { command: [x], parsing: { strategy: exit_code } }\n";
    let p = one(y);
    check(
        &p,
        y,
        3,
        3,
        "\"ruff lint\"",
        &["gate id `ruff lint` may only use letters, digits, `_` and `-`"],
    );
}

#[test]
fn empty_active_gates_and_run_on() {
    let y = "version: 1\nactive_gates: []\ngates:\n  a: { command: [x], run_on: [], parsing: { strategy: exit_code } }\n";
    let list = problems(y);
    assert_eq!(list.len(), 2, "{list:?}");
    check(&list[0], y, 2, 15, "[]", &["active_gates is empty"]);
    check(&list[1], y, 4, 30, "[]", &["run_on is empty"]);
}

#[test]
fn an_empty_files_list_is_an_error_even_beside_a_preset() {
    let y = "version: 1\ngates:\n  sh: { preset: shellcheck, files: [] }\n";
    let p = one(y);
    check(
        &p,
        y,
        3,
        36,
        "[]",
        &["files is empty, so the gate would check no file"],
    );
}

#[test]
fn shape_problems_in_several_gates_are_reported_together() {
    let y = "\
version: 1
gates:
  lint:
    comand: [ruff, check]
    parsing: { strategy: exit_code }
  types:
    command: [mypy]
    parsing: { strategy: json_violation }
  tests:
    command: [pytest]
    parsing: { strategy: exit_code }
  format:
    command: \"ruff format\"
    parsing: { strategy: exit_code }
parent_branch: main
";
    let list = problems(y);
    let places: Vec<(u32, u32)> = list.iter().map(|p| (p.line, p.column)).collect();
    assert_eq!(
        places,
        vec![(4, 5), (8, 26), (13, 14)],
        "{}",
        ConfigError {
            problems: list.clone()
        }
    );
    assert!(list[0].message.contains("did you mean `command`?"));
    assert!(list[1].message.contains("did you mean `json_violations`?"));
    assert!(list[2].message.contains("gate `format`"));
}

#[test]
fn a_shape_problem_outside_the_gates_is_reported_alone() {
    // Blanking gates cannot help with a top-level mistake, and must not invent others.
    let y = "version: [1]\ngates:\n  a:\n    comand: [x]\n    parsing: { strategy: exit_code }\n";
    let p = one(y);
    check(&p, y, 1, 10, "[1]", &["`version` must be the number 1"]);
}

#[test]
fn absurd_timeout_is_a_problem_not_a_crash() {
    for value in ["1e300", ".inf", ".nan", "-5"] {
        let y = format!(
            "{HEAD}    command: [x]\n    timeout_s: {value}\n    parsing: {{ strategy: exit_code }}\n"
        );
        let p = one(&y);
        check(
            &p,
            &y,
            5,
            16,
            value,
            &["timeout_s must be a positive number of seconds"],
        );
    }
}

#[test]
fn anchors_and_merge_keys_load() {
    let y = "\
version: 1
gates:
  a: &base
    command: [x]
    optional: true
    parsing: { strategy: exit_code }
  b:
    <<: *base
    command: [y]
";
    let config = parse_config(y, ConfigSource::File(PathBuf::from(FILE))).expect("anchors load");
    let b = config.gate("b").expect("gate b");
    assert_eq!(b.command, ["y"]);
    assert!(b.optional);
}
