//! What the benchmarks share: deterministic, in-memory tool outputs shaped like the real thing,
//! and the configuration of a text gate with a mypy pattern.
//!
//! The shapes were copied from ruff 0.17 (`ruff check --output-format json --no-fix`: a
//! pretty-printed array, keys in alphabetical order, absolute file names, non-ASCII printed as is)
//! and mypy 2.x (`mypy --show-column-numbers`: `path:line:col: severity: message  [code]`).

use std::fmt::Write as _;

/// The fake workspace root the generated outputs name their files under.
pub const FAKE_ROOT: &str = "/qgates-bench/workspace";

/// Findings per file in the generated outputs (100,000 violations ⇒ 2,000 files).
const PER_FILE: usize = 50;

/// A text gate that reads mypy's classic output, one violation per line.
pub const MYPY_TEXT_GATE: &str = r#"  mypy_text:
    name: "Mypy (text)"
    kind: typecheck
    command: ["mypy", "--show-column-numbers", "--no-error-summary"]
    file_types: [".py", ".pyi"]
    parsing:
      strategy: text_violations
      pattern: '^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>\w+): (?P<message>.*?)(?:  \[(?P<code>[a-z-]+)\])?$'
"#;

/// The embedded default configuration with the text gate added (active as `mypy_text`), so the
/// default `ruff_lint` gate is benchmarked exactly as shipped.
pub fn config_with_text_gate() -> String {
    let default = qgates::core::config::DEFAULT_CONFIG;
    let active = "active_gates: [ruff_format, ruff_lint, mypy]";
    assert!(
        default.contains(active),
        "the default configuration changed its active_gates line; update benches/common"
    );
    let mut text = default.replace(
        active,
        "active_gates: [ruff_format, ruff_lint, mypy, mypy_text]",
    );
    if !text.ends_with('\n') {
        text.push('\n');
    }
    // `gates:` is the last top-level key of the default, so the new gate goes at the end.
    text.push_str(MYPY_TEXT_GATE);
    text
}

/// splitmix64: a tiny deterministic generator, so every run benchmarks the same bytes.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A root-relative module path: 40 packages of 50 modules.
pub fn module_path(file: usize) -> String {
    format!("src/pkg_{:02}/module_{:03}.py", file / 50, file % 50)
}

struct RuffRule {
    code: &'static str,
    name: &'static str,
    message: &'static str,
    /// `(applicability, title, content)`; the title and content may use `{}` for the subject.
    fix: Option<(&'static str, &'static str, &'static str)>,
    /// Two edits instead of one (B006 rewrites the default and the body).
    two_edits: bool,
}

/// Real ruff rules with their real wording; `{}` is replaced by a subject name.
const RUFF_RULES: [RuffRule; 12] = [
    RuffRule {
        code: "F401",
        name: "unused-import",
        message: "`{}` imported but unused",
        fix: Some(("safe", "Remove unused import: `{}`", "")),
        two_edits: false,
    },
    RuffRule {
        code: "E501",
        name: "line-too-long",
        message: "Line too long (112 > 88)",
        fix: None,
        two_edits: false,
    },
    RuffRule {
        code: "F841",
        name: "unused-variable",
        message: "Local variable `{}` is assigned to but never used",
        fix: Some(("unsafe", "Remove assignment to unused variable `{}`", "")),
        two_edits: false,
    },
    RuffRule {
        code: "E711",
        name: "none-comparison",
        message: "Comparison to `None` should be `cond is None`",
        fix: Some(("unsafe", "Replace with `cond is None`", "is")),
        two_edits: false,
    },
    RuffRule {
        code: "UP006",
        name: "non-pep585-annotation",
        message: "Use `list` instead of `List` for type annotation",
        fix: Some(("safe", "Replace with `list`", "list")),
        two_edits: false,
    },
    RuffRule {
        code: "RUF001",
        name: "ambiguous-unicode-character-string",
        message: "String contains ambiguous `а` (CYRILLIC SMALL LETTER A). Did you mean `a` (LATIN SMALL LETTER A)?",
        fix: None,
        two_edits: false,
    },
    RuffRule {
        code: "F821",
        name: "undefined-name",
        message: "Undefined name `{}`",
        fix: None,
        two_edits: false,
    },
    RuffRule {
        code: "W291",
        name: "trailing-whitespace",
        message: "Trailing whitespace",
        fix: Some(("safe", "Remove trailing whitespace", "")),
        two_edits: false,
    },
    RuffRule {
        code: "I001",
        name: "unsorted-imports",
        message: "Import block is un-sorted or un-formatted",
        fix: Some((
            "safe",
            "Organize imports",
            "import os\nimport sys\n\nfrom café import {}\n",
        )),
        two_edits: false,
    },
    RuffRule {
        code: "B006",
        name: "mutable-argument-default",
        message: "Do not use mutable data structures for argument defaults",
        fix: Some((
            "unsafe",
            "Replace with `None`; initialize within function",
            "None",
        )),
        two_edits: true,
    },
    RuffRule {
        code: "E741",
        name: "ambiguous-variable-name",
        message: "Ambiguous variable name: `l`",
        fix: None,
        two_edits: false,
    },
    RuffRule {
        code: "RUF003",
        name: "ambiguous-unicode-character-comment",
        message: "Comment contains ambiguous `’` (RIGHT SINGLE QUOTATION MARK). Did you mean ``` ` ``` (GRAVE ACCENT)?",
        fix: None,
        two_edits: false,
    },
];

const SUBJECTS: [&str; 8] = [
    "os",
    "sys",
    "résultat",
    "naïve_total",
    "typing.List",
    "größe",
    "helper",
    "données_brutes",
];

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serializes")
}

fn location(out: &mut String, indent: &str, key: &str, row: u64, column: u64) {
    let _ = write!(
        out,
        "{indent}\"{key}\": {{\n{indent}  \"column\": {column},\n{indent}  \"row\": {row}\n{indent}}}"
    );
}

/// `ruff check --output-format json --no-fix` output with `n` violations, sorted by file and
/// row as ruff prints them, about 40% with a fix object (safe or unsafe), some non-ASCII.
pub fn ruff_json(n: usize) -> String {
    let mut rng = Rng::new(0x5EED_0001);
    let mut out = String::with_capacity(n * 700);
    out.push('[');
    let mut row = 1;
    for i in 0..n {
        let file = i / PER_FILE;
        if i % PER_FILE == 0 {
            row = 1;
        }
        row += 1 + rng.below(6);
        let rule = &RUFF_RULES[rng.below(RUFF_RULES.len() as u64) as usize];
        let subject = SUBJECTS[rng.below(SUBJECTS.len() as u64) as usize];
        let col = 1 + rng.below(40);
        let end_col = col + 1 + rng.below(20);
        let filename = format!("{FAKE_ROOT}/{}", module_path(file));
        out.push_str(if i == 0 { "\n  {\n" } else { ",\n  {\n" });
        out.push_str("    \"cell\": null,\n");
        let _ = writeln!(out, "    \"code\": \"{}\",", rule.code);
        location(&mut out, "    ", "end_location", row, end_col);
        out.push_str(",\n");
        let _ = writeln!(out, "    \"filename\": {},", json_str(&filename));
        match rule.fix {
            None => out.push_str("    \"fix\": null,\n"),
            Some((applicability, title, content)) => {
                let _ = writeln!(
                    out,
                    "    \"fix\": {{\n      \"applicability\": \"{applicability}\",\n      \"edits\": ["
                );
                let edits: &[(u64, u64, u64, u64)] = if rule.two_edits {
                    &[(row, col, row, end_col), (row + 1, 5, row + 1, 5)]
                } else {
                    &[(row, col, row, end_col)]
                };
                for (k, &(l, c, el, ec)) in edits.iter().enumerate() {
                    out.push_str(if k == 0 {
                        "        {\n"
                    } else {
                        ",\n        {\n"
                    });
                    let _ = writeln!(
                        out,
                        "          \"content\": {},",
                        json_str(&content.replace("{}", subject))
                    );
                    location(&mut out, "          ", "end_location", el, ec);
                    out.push_str(",\n");
                    location(&mut out, "          ", "location", l, c);
                    out.push_str("\n        }");
                }
                let _ = writeln!(
                    out,
                    "\n      ],\n      \"message\": {}\n    }},",
                    json_str(&title.replace("{}", subject))
                );
            }
        }
        location(&mut out, "    ", "location", row, col);
        out.push_str(",\n");
        let _ = writeln!(
            out,
            "    \"message\": {},",
            json_str(&rule.message.replace("{}", subject))
        );
        let _ = writeln!(out, "    \"name\": \"{}\",", rule.name);
        let _ = writeln!(out, "    \"noqa_row\": {row},");
        out.push_str("    \"severity\": \"error\",\n");
        let _ = write!(
            out,
            "    \"url\": \"https://docs.astral.sh/ruff/rules/{}\"\n  }}",
            rule.name
        );
    }
    out.push_str(if n == 0 { "]\n" } else { "\n]\n" });
    out
}

/// Real mypy messages; `{}` is replaced by a subject name. `None` code: a `note:` line.
const MYPY_MESSAGES: [(&str, Option<&str>); 12] = [
    (
        "Incompatible types in assignment (expression has type \"str\", variable has type \"int\")",
        Some("assignment"),
    ),
    (
        "Argument 1 to \"{}\" has incompatible type \"int\"; expected \"str\"",
        Some("arg-type"),
    ),
    (
        "Incompatible return value type (got \"int | None\", expected \"int\")",
        Some("return-value"),
    ),
    (
        "Item \"None\" of \"Optional[Config]\" has no attribute \"{}\"",
        Some("union-attr"),
    ),
    ("Name \"{}\" is not defined", Some("name-defined")),
    (
        "Module \"pkg_01.module_002\" has no attribute \"{}\"",
        Some("attr-defined"),
    ),
    (
        "Function is missing a return type annotation",
        Some("no-untyped-def"),
    ),
    (
        "Unsupported operand types for + (\"int\" and \"str\")",
        Some("operator"),
    ),
    (
        "Missing positional argument \"{}\" in call to \"build\"",
        Some("call-arg"),
    ),
    ("Revealed type is \"builtins.list[builtins.str]\"", None),
    (
        "See https://mypy.readthedocs.io/en/stable/_refs.html#code-union-attr for more info",
        None,
    ),
    ("\"{}\" defined here", None),
];

/// `mypy --show-column-numbers` text output of `n` lines (errors with codes and `note:` lines
/// without), paths relative to the root as mypy prints them.
pub fn mypy_text(n: usize) -> String {
    let mut rng = Rng::new(0x5EED_0002);
    let mut out = String::with_capacity(n * 110);
    let mut line = 1;
    for i in 0..n {
        let file = i / PER_FILE;
        if i % PER_FILE == 0 {
            line = 1;
        }
        line += rng.below(5);
        let (message, code) = MYPY_MESSAGES[rng.below(MYPY_MESSAGES.len() as u64) as usize];
        let subject = SUBJECTS[rng.below(SUBJECTS.len() as u64) as usize];
        let column = 1 + rng.below(30);
        let severity = if code.is_some() { "error" } else { "note" };
        let _ = write!(
            out,
            "{}:{line}:{column}: {severity}: {}",
            module_path(file),
            message.replace("{}", subject)
        );
        if let Some(code) = code {
            let _ = write!(out, "  [{code}]");
        }
        out.push('\n');
    }
    out
}
