//! Which of a file's findings were there at the reference: the findings of one gate in one file
//! now, matched against that gate's findings in the reference version of the file
//! (docs/design.md, "New and pre-existing findings").
//!
//! A finding is known by its fingerprint: its code, its message with the numbers in it blurred
//! (a message that names a line or a count keeps its identity when they move), and the text of
//! the line it flags with its spacing blurred (a re-indented line is the same line). Line numbers
//! are not part of it: lines added or removed above a finding do not make it new.
//!
//! Two findings with one fingerprint (the same mistake on two identical lines) are told apart
//! by place: the lines both versions share (a line diff of the two texts) pair a reference
//! finding with the one on the same line now first; what is left pairs in file order (code
//! moved within the file). A finding left unpaired now is new; one left at the reference is
//! fixed.

use std::collections::HashMap;

use similar::{DiffOp, TextDiff};

use crate::core::violation::Violation;

/// The outcome for one file: per finding now, whether it is new; and which of the reference's
/// findings are gone (their indices, in order).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileMatch {
    pub new: Vec<bool>,
    pub fixed: Vec<usize>,
}

/// Matches `now` (the findings in the file's current text `now_text`) against `then` (those in
/// its reference text `then_text`). A text that is missing (a binary file, a file the reference
/// lacks) counts as empty.
pub fn match_file(
    now: &[&Violation],
    now_text: Option<&str>,
    then: &[&Violation],
    then_text: Option<&str>,
) -> FileMatch {
    let now_lines: Vec<&str> = now_text.map_or_else(Vec::new, |t| t.lines().collect());
    let then_lines: Vec<&str> = then_text.map_or_else(Vec::new, |t| t.lines().collect());
    let moved = match now_text == then_text {
        // An unchanged file: every line is where it was (no diff to take).
        true => (1..=now_lines.len() as u32).map(|l| (l, l)).collect(),
        false => line_map(then_text.unwrap_or(""), now_text.unwrap_or("")),
    };
    let key = |v: &Violation, lines: &[&str]| fingerprint(v, lines);
    // The reference's findings by fingerprint, in file order, each taken at most once.
    // Each with its index in `then`, its line and whether it is taken.
    let mut open: HashMap<String, Vec<(usize, Option<u32>, bool)>> = HashMap::new();
    for (index, v) in then.iter().enumerate() {
        open.entry(key(v, &then_lines))
            .or_default()
            .push((index, v.line, false));
    }
    let keys: Vec<String> = now.iter().map(|v| key(v, &now_lines)).collect();
    let mut new = vec![true; now.len()];
    // Same fingerprint on the same line (through the lines both texts share).
    for (i, v) in now.iter().enumerate() {
        let Some(candidates) = open.get_mut(&keys[i]) else {
            continue;
        };
        let here = |line: Option<u32>| match (line, v.line) {
            (Some(then), Some(now)) => moved.get(&then) == Some(&now),
            (None, None) => true,
            _ => false,
        };
        if let Some(slot) = candidates
            .iter_mut()
            .find(|(_, l, taken)| !taken && here(*l))
        {
            slot.2 = true;
            new[i] = false;
        }
    }
    // Same fingerprint elsewhere in the file, in order.
    for i in 0..now.len() {
        if !new[i] {
            continue;
        }
        if let Some(slot) = open
            .get_mut(&keys[i])
            .and_then(|c| c.iter_mut().find(|(_, _, taken)| !taken))
        {
            slot.2 = true;
            new[i] = false;
        }
    }
    let mut fixed: Vec<usize> = (open.values().flatten())
        .filter(|(_, _, taken)| !taken)
        .map(|(index, _, _)| *index)
        .collect();
    fixed.sort_unstable();
    FileMatch { new, fixed }
}

/// The fingerprint of a finding in a text cut into `lines`.
fn fingerprint(v: &Violation, lines: &[&str]) -> String {
    let line_text = v
        .line
        .and_then(|l| lines.get((l as usize).checked_sub(1)?))
        .map_or_else(String::new, |l| blur_spacing(l));
    format!(
        "{}\0{}\0{line_text}",
        v.code.as_deref().unwrap_or(""),
        blur_numbers(&v.message)
    )
}

/// Runs of digits become `#`: "line 12" and "line 14" are one message.
fn blur_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut in_number = false;
    for c in message.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
}

/// The line without its leading and trailing spaces, inner runs of spaces made one.
fn blur_spacing(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reference line → current line (1-based), for the lines the two texts share.
fn line_map(then: &str, now: &str) -> HashMap<u32, u32> {
    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(then, now);
    let mut map = HashMap::new();
    for op in diff.ops() {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = *op
        {
            for k in 0..len {
                map.insert((old_index + k) as u32 + 1, (new_index + k) as u32 + 1);
            }
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(line: u32, code: &str, message: &str) -> Violation {
        let mut v = Violation::message_only("lint", message);
        v.file = Some("a.py".into());
        v.line = Some(line);
        v.code = Some(code.into());
        v
    }

    fn run(now: &[Violation], now_text: &str, then: &[Violation], then_text: &str) -> FileMatch {
        let now: Vec<&Violation> = now.iter().collect();
        let then: Vec<&Violation> = then.iter().collect();
        match_file(&now, Some(now_text), &then, Some(then_text))
    }

    #[test]
    fn lines_inserted_above_keep_a_finding_existing() {
        let then = "import os\nx = 1\n";
        let now = "\"\"\"Doc.\"\"\"\n\nimport os\nx = 1\n";
        let m = run(
            &[finding(3, "F401", "`os` imported but unused")],
            now,
            &[finding(1, "F401", "`os` imported but unused")],
            then,
        );
        assert_eq!(
            m,
            FileMatch {
                new: vec![false],
                fixed: vec![]
            }
        );
    }

    #[test]
    fn a_finding_on_a_new_line_is_new_and_one_on_a_removed_line_is_fixed() {
        let then = "import os\nx = 1\n";
        let now = "import sys\nx = 1\n";
        let m = run(
            &[finding(1, "F401", "`sys` imported but unused")],
            now,
            &[finding(1, "F401", "`os` imported but unused")],
            then,
        );
        assert_eq!(
            m,
            FileMatch {
                new: vec![true],
                fixed: vec![0]
            }
        );
    }

    #[test]
    fn of_two_identical_findings_on_identical_lines_the_one_left_is_existing() {
        let then = "import os\nimport os\ny = 2\n";
        let now = "import os\ny = 2\n";
        let f = |l| finding(l, "F811", "redefinition of unused `os`");
        let m = run(&[f(1)], now, &[f(1), f(2)], then);
        // The line diff keeps the first line and removes the second: its finding is the fixed one.
        assert_eq!(
            m,
            FileMatch {
                new: vec![false],
                fixed: vec![1]
            }
        );
        // And the other way: one more identical line makes one new finding, the added one.
        let m = run(
            &[f(1), f(2), f(3)],
            "import os\nimport os\nimport os\n",
            &[f(1), f(2)],
            then,
        );
        assert_eq!(m.new.iter().filter(|n| **n).count(), 1);
        assert_eq!(m.fixed, Vec::<usize>::new());
    }

    #[test]
    fn a_number_in_the_message_does_not_make_a_finding_new() {
        let then = "def f():\n    pass\n";
        let now = "# header\n\ndef f():\n    pass\n";
        let m = run(
            &[finding(3, "E", "Missing return at line 3")],
            now,
            &[finding(1, "E", "Missing return at line 1")],
            then,
        );
        assert_eq!(
            m,
            FileMatch {
                new: vec![false],
                fixed: vec![]
            }
        );
    }

    #[test]
    fn a_reindented_line_keeps_its_finding_and_an_edited_one_does_not() {
        let then = "if x:\n  y = f( 1 )\n";
        let now = "if x:\n    y = f( 1 )\n";
        let f = |l| finding(l, "E201", "Whitespace after '('");
        assert_eq!(run(&[f(2)], now, &[f(2)], then).new, [false]);
        let edited = "if x:\n  y = g( 1 )\n";
        assert_eq!(run(&[f(2)], edited, &[f(2)], then).new, [true]);
    }

    #[test]
    fn code_moved_within_the_file_keeps_its_finding() {
        let then = "import os\n\ndef a():\n    return 1\n";
        let now = "def a():\n    return 1\n\nimport os\n";
        let f = |l| finding(l, "F401", "`os` imported but unused");
        assert_eq!(
            run(&[f(4)], now, &[f(1)], then),
            FileMatch {
                new: vec![false],
                fixed: vec![]
            }
        );
    }

    #[test]
    fn a_finding_without_a_line_matches_by_code_and_message() {
        let mut v = Violation::message_only("lint", "3 files failed");
        v.file = Some("a.py".into());
        let mut w = v.clone();
        w.message = "4 files failed".into();
        let m = match_file(&[&w], None, &[&v], None);
        assert_eq!(
            m,
            FileMatch {
                new: vec![false],
                fixed: vec![]
            }
        );
    }
}
