//! The smallest line-aligned edits that turn one text into another, for fixers that print the
//! whole fixed file: applying every edit to `old` gives `new`, and unchanged lines are untouched
//! (the editor keeps cursors, folds and undo history there).

use similar::{DiffTag, TextDiff};

/// A replacement of the lines `start_line..end_line` (0-based, end exclusive) of the old text.
/// `end_line` may equal the old text's line count (an edit that reaches its end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineEdit {
    pub start_line: u32,
    pub end_line: u32,
    pub new_text: String,
}

/// Edits from `old` to `new`, in order, not overlapping. Lines keep their endings, so a change of
/// the last line's ending is an edit of that line.
pub fn line_edits(old: &str, new: &str) -> Vec<LineEdit> {
    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(old, new);
    // The same tokens `diff_lines` compares: lines with their endings.
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let mut edits: Vec<LineEdit> = Vec::new();
    for op in diff.ops() {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        let text: String = new_lines[new_range].concat();
        match edits.last_mut() {
            // Adjacent operations (a delete next to an insert) become one edit.
            Some(last) if last.end_line as usize == old_range.start => {
                last.end_line = old_range.end as u32;
                last.new_text.push_str(&text);
            }
            _ => edits.push(LineEdit {
                start_line: old_range.start as u32,
                end_line: old_range.end as u32,
                new_text: text,
            }),
        }
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Applies line edits to `old` (what an editor does with them).
    fn apply_line_edits(old: &str, edits: &[LineEdit]) -> String {
        let lines: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::with_capacity(old.len());
        let mut at = 0usize;
        for e in edits {
            out.extend(lines[at..e.start_line as usize].iter().copied());
            out.push_str(&e.new_text);
            at = e.end_line as usize;
        }
        out.extend(lines[at.min(lines.len())..].iter().copied());
        out
    }

    #[test]
    fn unchanged_text_needs_no_edit() {
        assert!(line_edits("a\nb\n", "a\nb\n").is_empty());
    }

    #[test]
    fn one_changed_line_is_one_edit() {
        let edits = line_edits("a\nb = 1\nc\n", "a\nb=1\nc\n");
        assert_eq!(
            edits,
            vec![LineEdit {
                start_line: 1,
                end_line: 2,
                new_text: "b=1\n".into()
            }]
        );
    }

    #[test]
    fn a_missing_final_newline_is_added_to_the_last_line() {
        let edits = line_edits("x = 1", "x = 1\n");
        assert_eq!(apply_line_edits("x = 1", &edits), "x = 1\n");
        assert_eq!(edits.len(), 1);
        assert_eq!((edits[0].start_line, edits[0].end_line), (0, 1));
    }

    proptest! {
        #[test]
        fn applying_the_edits_gives_the_new_text(
            old in proptest::collection::vec("[ab\u{e9}\u{1F600} ]{0,3}\n?", 0..12),
            new in proptest::collection::vec("[ab\u{e9}\u{1F600} ]{0,3}\n?", 0..12),
        ) {
            let (old, new) = (old.concat(), new.concat());
            let edits = line_edits(&old, &new);
            prop_assert_eq!(apply_line_edits(&old, &edits), new);
        }
    }
}
