//! Column units: tools count columns in characters, UTF-8 bytes or UTF-16 code units; editors
//! want one of those too. Converting needs the line's text, kept in a `LineIndex`. The one
//! converter for both directions: tool → engine (characters) in parsing, engine → client in the
//! language server.

use crate::core::config::{ColumnUnit, TabCount};

/// A file's lines, for converting columns between units.
#[derive(Debug, Clone)]
pub struct LineIndex {
    lines: Vec<String>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        LineIndex {
            lines: text
                .split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
                .collect(),
        }
    }

    /// The text of a 1-based line, without its line ending.
    pub fn line(&self, line: u32) -> Option<&str> {
        self.lines
            .get((line as usize).checked_sub(1)?)
            .map(String::as_str)
    }

    pub fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// The length of a 1-based line in `unit` (0 past the end).
    pub fn line_len(&self, line: u32, unit: ColumnUnit) -> u32 {
        self.line(line)
            .map_or(0, |t| t.chars().map(|c| unit_len(c, unit)).sum())
    }
}

/// Converts a 1-based column on a 1-based line from one unit to another. A column past the end
/// of the line keeps its distance beyond the end; a column inside a multi-unit character moves
/// to that character's start; an unknown line returns the column unchanged.
pub fn convert_column(
    index: &LineIndex,
    line: u32,
    column: u32,
    from: ColumnUnit,
    to: ColumnUnit,
) -> u32 {
    if from == to || column == 0 {
        return column;
    }
    let Some(text) = index.line(line) else {
        return column;
    };
    if text.is_ascii() {
        return column;
    }
    let target = column - 1;
    let (mut units, mut out) = (0u32, 0u32);
    for ch in text.chars() {
        let w = unit_len(ch, from);
        if units + w > target {
            return out + 1;
        }
        units += w;
        out += unit_len(ch, to);
    }
    out + (target - units) + 1
}

/// A tool's 1-based column on a 1-based line, in characters: the tool counts in `unit`, and a
/// tab as `tabs` says. Otherwise as `convert_column`.
pub fn tool_column_in_chars(
    index: &LineIndex,
    line: u32,
    column: u32,
    unit: ColumnUnit,
    tabs: TabCount,
) -> u32 {
    let with_tabs =
        (index.line(line)).filter(|t| tabs != TabCount::One && column > 0 && t.contains('\t'));
    let Some(text) = with_tabs else {
        return convert_column(index, line, column, unit, ColumnUnit::Char);
    };
    let target = column - 1;
    let (mut units, mut out) = (0u32, 0u32);
    for ch in text.chars() {
        let w = match (ch, tabs) {
            ('\t', TabCount::Stops(n)) => n - units % n,
            ('\t', TabCount::Width(n)) => n,
            _ => unit_len(ch, unit),
        };
        if units + w > target {
            return out + 1;
        }
        units += w;
        out += 1;
    }
    out + (target - units) + 1
}

fn unit_len(ch: char, unit: ColumnUnit) -> u32 {
    match unit {
        ColumnUnit::Char => 1,
        ColumnUnit::Byte => ch.len_utf8() as u32,
        ColumnUnit::Utf16 => ch.len_utf16() as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ColumnUnit::*;

    fn idx(s: &str) -> LineIndex {
        LineIndex::new(s)
    }

    #[test]
    fn ascii_is_unchanged() {
        let i = idx("x = 1\n");
        assert_eq!(convert_column(&i, 1, 5, Byte, Utf16), 5);
    }

    #[test]
    fn accented_letter() {
        // "é" is 1 char, 2 bytes, 1 UTF-16 unit; the `x` after it is char 3.
        let i = idx("aéx\n");
        assert_eq!(convert_column(&i, 1, 3, Char, Byte), 4);
        assert_eq!(convert_column(&i, 1, 4, Byte, Char), 3);
        assert_eq!(convert_column(&i, 1, 3, Char, Utf16), 3);
    }

    #[test]
    fn cjk_and_emoji() {
        // "中" is 3 bytes / 1 UTF-16 unit; "😀" is 4 bytes / 2 UTF-16 units.
        let i = idx("中😀y = 1\n");
        assert_eq!(convert_column(&i, 1, 3, Char, Byte), 8);
        assert_eq!(convert_column(&i, 1, 3, Char, Utf16), 4);
        assert_eq!(convert_column(&i, 1, 4, Utf16, Char), 3);
        assert_eq!(convert_column(&i, 1, 8, Byte, Utf16), 4);
    }

    #[test]
    fn inside_a_character_moves_to_its_start() {
        let i = idx("😀x");
        assert_eq!(convert_column(&i, 1, 2, Utf16, Char), 1);
        assert_eq!(convert_column(&i, 1, 3, Byte, Char), 1);
    }

    #[test]
    fn past_end_of_line_keeps_distance() {
        let i = idx("é");
        assert_eq!(convert_column(&i, 1, 2, Char, Byte), 3);
        assert_eq!(convert_column(&i, 1, 4, Char, Byte), 5);
    }

    #[test]
    fn a_tab_reaches_the_tool_s_next_stop() {
        // Checkstyle: "\tint é = 1;" with stops of 8; the `é` is character 6, column 13.
        let i = idx("\tint é = 1;\n\t\tx\nab\tc\n");
        assert_eq!(tool_column_in_chars(&i, 1, 13, Char, TabCount::Stops(8)), 6);
        assert_eq!(tool_column_in_chars(&i, 2, 17, Char, TabCount::Stops(8)), 3);
        // After two characters a tab reaches column 9, not 11.
        assert_eq!(tool_column_in_chars(&i, 3, 9, Char, TabCount::Stops(8)), 4);
        // Inside the tab's columns: the tab itself.
        assert_eq!(tool_column_in_chars(&i, 3, 5, Char, TabCount::Stops(8)), 3);
    }

    #[test]
    fn a_tab_of_a_fixed_width_counts_it_wherever_it_is() {
        // JSHint: UTF-16 columns, a tab as 4 of them; "😀" is two.
        let i = idx("ab\t😀x\n");
        assert_eq!(tool_column_in_chars(&i, 1, 9, Utf16, TabCount::Width(4)), 5);
        // A line without a tab, or a tool that counts a tab as one, converts as ever.
        let j = idx("😀x\n");
        assert_eq!(tool_column_in_chars(&j, 1, 3, Utf16, TabCount::Width(4)), 2);
        assert_eq!(tool_column_in_chars(&i, 1, 6, Utf16, TabCount::One), 5);
    }

    #[test]
    fn crlf_and_unknown_lines() {
        let i = idx("a\r\né\r\n");
        assert_eq!(i.line(2), Some("é"));
        assert_eq!(convert_column(&i, 9, 7, Char, Byte), 7);
    }
}
