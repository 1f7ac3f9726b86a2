//! The items array read in pieces (`json_split`) gives exactly what one pass gives: the same
//! violations in the same order, and the same error messages, for random documents in every
//! layout and with cuts anywhere (inside strings, nested values, items, other keys).

use std::cell::Cell;
use std::fmt::Write as _;

use proptest::prelude::*;

use super::json_split::{cut_guesses, is_cut};
use super::tests::{ONE_PASS, parse_using};
use super::{PARALLEL_MIN_BYTES, Threads};

thread_local! {
    /// How many documents this thread read in pieces, and how many it read again in one pass.
    static SPLITS: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// Counts a document read in pieces (`true`) or read again in one pass.
pub(super) fn note_split(read: bool) {
    SPLITS.with(|s| {
        let (done, redone) = s.get();
        s.set(if read {
            (done + 1, redone)
        } else {
            (done, redone + 1)
        });
    });
}

fn splits() -> (usize, usize) {
    SPLITS.with(Cell::get)
}

const SPLIT: Threads = Threads {
    document: 0,
    lines: 0,
    split: 2,
};

/// A JSON value that may repeat a key in an object (which `serde_json::Value` cannot hold).
#[derive(Debug, Clone)]
enum J {
    Null,
    Num(String),
    Str(String),
    Arr(Vec<J>),
    /// The items array: where each of its items but the first starts is noted when written.
    Items(Vec<J>),
    Obj(Vec<(String, J)>),
}

/// How a document is written: compact on one line, or pretty with an indentation unit.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Compact,
    Pretty(&'static str),
}

/// Writes `v`, noting in `starts` where each item after the first of the items array starts.
fn write(out: &mut String, starts: &mut Vec<usize>, v: &J, layout: Layout, depth: usize) {
    let newline = |out: &mut String, depth: usize| {
        if let Layout::Pretty(unit) = layout {
            out.push('\n');
            for _ in 0..depth {
                out.push_str(unit);
            }
        }
    };
    match v {
        J::Null => out.push_str("null"),
        J::Num(n) => out.push_str(n),
        J::Str(s) => out.push_str(&serde_json::Value::from(s.as_str()).to_string()),
        J::Arr(items) | J::Items(items) if items.is_empty() => out.push_str("[]"),
        J::Obj(entries) if entries.is_empty() => out.push_str("{}"),
        J::Arr(items) | J::Items(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                if i > 0 && matches!(v, J::Items(_)) {
                    starts.push(out.len());
                }
                write(out, starts, item, layout, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        J::Obj(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                let _ = write!(out, "{}:", serde_json::Value::from(k.as_str()));
                if matches!(layout, Layout::Pretty(_)) {
                    out.push(' ');
                }
                write(out, starts, v, layout, depth + 1);
            }
            newline(out, depth);
            out.push('}');
        }
    }
}

/// Text with what JSON must escape: quotes, backslashes, control characters, non-ASCII, and
/// characters that look like structure (`,\n  {` inside a string is no item start).
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,8}",
        Just("\"q\" \\ \t tab".to_string()),
        Just("line\nbreak,\n  {\"f\": 1}".to_string()),
        Just("café ☕ 𝄞".to_string()),
        Just("],[}{,".to_string()),
    ]
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..500).prop_map(|n| n.to_string()),
        Just("-3".to_string()),
        Just("2.5e1".to_string()),
        Just("\"7\"".to_string()),
    ]
}

/// Values the configuration does not read, nested a few levels (arrays of objects, like a fix's
/// edits, whose lines indent like items).
fn noise() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        Just(J::Null),
        number().prop_map(J::Num),
        text().prop_map(J::Str),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(J::Arr),
            prop::collection::vec(("[a-f]", inner), 0..4).prop_map(J::Obj),
        ]
    })
}

/// One item: an object with the read keys in any order (some repeated, some missing), a fix
/// with edits, and noise; or `null`, a string, a number.
fn item() -> impl Strategy<Value = J> {
    let edit = (text(), number(), number()).prop_map(|(content, l, c)| {
        J::Obj(vec![
            ("content".into(), J::Str(content)),
            (
                "at".into(),
                J::Arr(vec![J::Num(l.clone()), J::Num(c.clone())]),
            ),
            ("to".into(), J::Arr(vec![J::Num(l), J::Num(c)])),
        ])
    });
    let fix = prop::collection::vec(edit, 0..3)
        .prop_map(|edits| J::Obj(vec![("edits".into(), J::Arr(edits))]));
    let entry = prop_oneof![
        text().prop_map(|t| ("f".to_string(), J::Str(t))),
        number().prop_map(|n| ("l".to_string(), J::Num(n))),
        text().prop_map(|t| ("m".to_string(), J::Str(t))),
        fix.prop_map(|f| ("fix".to_string(), f)),
        noise().prop_map(|n| ("noise".to_string(), n)),
    ];
    prop_oneof![
        6 => prop::collection::vec(entry, 0..6).prop_map(J::Obj),
        1 => Just(J::Null),
        1 => text().prop_map(J::Str),
        1 => number().prop_map(J::Num),
    ]
}

/// A document: the items array under `keys`, with other keys (and maybe the path's key once
/// more, with more items) before and after it at each level.
fn document() -> impl Strategy<Value = (Vec<String>, J)> {
    let keys = prop::collection::vec(
        prop_oneof![
            Just("a".to_string()),
            Just("é k".to_string()),
            Just("q\"t".to_string())
        ],
        0..3,
    );
    (
        keys,
        prop::collection::vec(item(), 0..40),
        prop::collection::vec(item(), 0..4),
        noise(),
        noise(),
        any::<bool>(),
    )
        .prop_map(|(keys, items, more, before, after, again)| {
            let mut value = J::Items(items);
            for key in keys.iter().rev() {
                let mut entries = vec![
                    ("before".to_string(), before.clone()),
                    (key.clone(), value),
                    ("after".to_string(), after.clone()),
                ];
                if again {
                    entries.push((key.clone(), J::Arr(more.clone())));
                }
                value = J::Obj(entries);
            }
            (keys, value)
        })
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::Compact),
        Just(Layout::Pretty("  ")),
        Just(Layout::Pretty("    ")),
        Just(Layout::Pretty("\t")),
    ]
}

fn parsing(keys: &[String]) -> String {
    let path: String = keys
        .iter()
        .map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
        .collect();
    format!(
        "      violations_path: '{path}'\n      field_map: {{ file: f, line: l, message: m }}\n      fix_edits: {{ path: fix/edits, content: content, line: at/0, column: at/1, end_line: to/0, end_column: to/1 }}\n"
    )
}

/// Cuts at item starts picked by `fractions` of `starts`, and at the same fractions of the text
/// moved to the next position that looks like an item start (any `,` followed by a value), plus
/// the guesses for two and three pieces.
fn cuts_for(text: &str, starts: &[usize], fractions: &[f64]) -> Vec<usize> {
    let b = text.as_bytes();
    let mut cuts: Vec<usize> = fractions
        .iter()
        .filter_map(|f| {
            let from = (text.len() as f64 * f) as usize;
            (from..text.len()).find(|&at| is_cut(b, at))
        })
        .collect();
    cuts.extend(
        fractions
            .iter()
            .filter_map(|f| starts.get((starts.len() as f64 * f) as usize)),
    );
    cuts.extend(cut_guesses(text, 2));
    cuts.extend(cut_guesses(text, 3));
    cuts
}

/// Parses `text` in one pass and in pieces cut at `cuts` (all of them; each alone; and, when
/// given, the true item starts alone), and checks both give the same.
fn same_either_way(
    parsing: &str,
    text: &str,
    cuts: &[usize],
    starts: &[usize],
) -> Result<(), TestCaseError> {
    let one = parse_using(parsing, text, ONE_PASS, None);
    let mut sets: Vec<Vec<usize>> = vec![cuts.to_vec()];
    sets.extend(cuts.iter().map(|&c| vec![c]));
    sets.push(
        cuts.iter()
            .copied()
            .filter(|c| starts.contains(c))
            .collect(),
    );
    for set in sets {
        let split = parse_using(parsing, text, SPLIT, Some(&set));
        prop_assert_eq!(&one, &split, "cuts {:?} in {}", set, text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn pieces_read_what_one_pass_reads(
        (keys, doc) in document(),
        layout in layout(),
        fractions in prop::collection::vec(0.0f64..1.0, 0..3),
    ) {
        let (mut text, mut starts) = (String::new(), Vec::new());
        write(&mut text, &mut starts, &doc, layout, 0);
        let cuts = cuts_for(&text, &starts, &fractions);
        same_either_way(&parsing(&keys), &text, &cuts, &starts)?;
    }

    #[test]
    fn pieces_report_what_one_pass_reports(
        (keys, doc) in document(),
        layout in layout(),
        fractions in prop::collection::vec(0.0f64..1.0, 1..3),
        at in 0.0f64..1.0,
        damage in 0usize..6,
    ) {
        let (mut text, mut starts) = (String::new(), Vec::new());
        write(&mut text, &mut starts, &doc, layout, 0);
        let b = text.as_bytes();
        let at = (text.len() as f64 * at) as usize;
        let at = (at..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
        let broken = match damage {
            0 => text[..at].to_string(),
            1 => format!("{text} ]"),
            2 => match (at..b.len()).find(|&i| b[i] == b',') {
                Some(i) => format!("{};{}", &text[..i], &text[i + 1..]),
                None => format!("{text},"),
            },
            3 => match (at..b.len()).find(|&i| b[i] == b',') {
                Some(i) => format!("{}{}", &text[..i], &text[i + 1..]),
                None => format!("x{text}"),
            },
            // A raw line feed inside a string (where an escaped one was).
            4 => match text[at..].find("\\n") {
                Some(i) => format!("{}\n{}", &text[..at + i], &text[at + i + 2..]),
                None => format!("[\"a\nb\", {text}]"),
            },
            _ => match (at..b.len()).find(|&i| b[i] == b']') {
                Some(i) => format!("{},{}", &text[..i], &text[i..]),
                None => format!("{text}\n{text}"),
            },
        };
        // The item starts before the damage are still item starts.
        starts.retain(|&s| s < at);
        let cuts = cuts_for(&broken, &starts, &fractions);
        same_either_way(&parsing(&keys), &broken, &cuts, &starts)?;
    }
}

/// Ruff's layout: a pretty-printed root array of objects with a nested array of edits.
fn ruff_like(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "  {{\n    \"f\": \"/ws/m{}.py\",\n    \"fix\": {{\n      \"edits\": [\n        {{\n          \"at\": [{i}, 1],\n          \"content\": \"x\",\n          \"to\": [{i}, 2]\n        }},\n        {{\n          \"at\": [{i}, 3],\n          \"content\": \"\",\n          \"to\": [{i}, 4]\n        }}\n      ]\n    }},\n    \"l\": {i},\n    \"m\": \"message {i} ,\\n  {{\"\n  }}",
                i % 97
            )
        })
        .collect();
    format!("[\n{}\n]\n", items.join(",\n"))
}

#[test]
fn a_large_document_is_read_in_pieces_as_one_pass_reads_it() {
    let text = ruff_like(12_000);
    assert!(text.len() > PARALLEL_MIN_BYTES);
    let parsing = parsing(&[]);
    let one = parse_using(&parsing, &text, ONE_PASS, None).expect("valid");
    assert_eq!(one.violations.len(), 12_000);
    for pieces in [2, 3, 5] {
        let before = splits();
        let threads = Threads {
            split: pieces,
            ..ONE_PASS
        };
        let split = parse_using(&parsing, &text, threads, None).expect("valid");
        assert_eq!(splits().0, before.0 + 1, "{pieces} pieces were read");
        assert_eq!(one, split);
    }
    // Broken after the cut: the error is the one of one pass, found on reading it again.
    let at = text.len() * 3 / 4;
    let at = at + text[at..].find("\"l\": ").expect("an item");
    let broken = format!("{}\"l\" 1{}", &text[..at], &text[at + 5..]);
    let before = splits();
    let one = parse_using(&parsing, &broken, ONE_PASS, None).expect_err("broken");
    let split = parse_using(&parsing, &broken, SPLIT, None).expect_err("broken");
    assert_eq!(splits().1, before.1 + 1, "read again in one pass");
    assert_eq!(one, split);
}
