//! Positions: the engine counts columns in characters (1-based); LSP counts in the negotiated
//! encoding (0-based). The conversion is the engine's (`core::parse::columns`); this module
//! negotiates the encoding and shifts to LSP's 0-based counts.

use tower_lsp_server::ls_types::{Position, PositionEncodingKind, Range};

use crate::core::config::ColumnUnit;
use crate::core::parse::columns::{LineIndex, convert_column};

/// The position encoding agreed at `initialize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl Encoding {
    /// UTF-8 when the client offers it (no conversion cost for most text), else UTF-32 when
    /// offered (code points, as the engine counts), else UTF-16, which every client must support.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        let offered = offered.unwrap_or_default();
        if offered.contains(&PositionEncodingKind::UTF8) {
            Encoding::Utf8
        } else if offered.contains(&PositionEncodingKind::UTF32) {
            Encoding::Utf32
        } else {
            Encoding::Utf16
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    fn unit(self) -> ColumnUnit {
        match self {
            Encoding::Utf8 => ColumnUnit::Byte,
            Encoding::Utf16 => ColumnUnit::Utf16,
            Encoding::Utf32 => ColumnUnit::Char,
        }
    }
}

/// A file's text split into lines, for conversions; LSP lines and columns count from 0.
pub struct Lines {
    index: LineIndex,
}

impl Lines {
    pub fn new(text: &str) -> Self {
        Lines {
            index: LineIndex::new(text),
        }
    }

    /// The length of a 0-based line in the encoding (0 past the end).
    pub fn line_len(&self, line: u32, enc: Encoding) -> u32 {
        self.index.line_len(line + 1, enc.unit())
    }

    /// An engine position (1-based line, 1-based character column) as an LSP position. A column
    /// past the end of the line is clamped to the end (tools point one past the last character).
    pub fn to_lsp(&self, line: u32, column: u32, enc: Encoding) -> Position {
        let l = line.saturating_sub(1);
        let units = convert_column(
            &self.index,
            line,
            column.max(1),
            ColumnUnit::Char,
            enc.unit(),
        );
        Position::new(l, (units - 1).min(self.line_len(l, enc)))
    }

    #[cfg(test)]
    /// An LSP position as an engine character column (1-based) on its 1-based line. A position
    /// inside a character (a UTF-16 surrogate half, a UTF-8 continuation byte) moves to its start.
    pub fn to_engine(&self, pos: Position, enc: Encoding) -> (u32, u32) {
        let line = pos.line + 1;
        let chars = convert_column(
            &self.index,
            line,
            pos.character + 1,
            enc.unit(),
            ColumnUnit::Char,
        );
        (
            line,
            chars.min(self.index.line_len(line, ColumnUnit::Char) + 1),
        )
    }

    /// The whole 0-based line as a range (for findings without columns).
    pub fn line_range(&self, line: u32, enc: Encoding) -> Range {
        Range::new(
            Position::new(line, 0),
            Position::new(line, self.line_len(line, enc)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "x = 'é' + y\n漢字 = z\nprint('😀', q)\r\n";

    #[test]
    fn ascii_lines_map_columns_one_to_one() {
        let lines = Lines::new("abc = 1\n");
        assert_eq!(lines.to_lsp(1, 5, Encoding::Utf16), Position::new(0, 4));
        assert_eq!(lines.to_lsp(1, 5, Encoding::Utf8), Position::new(0, 4));
    }

    #[test]
    fn e_acute_is_one_utf16_unit_and_two_bytes() {
        let lines = Lines::new(TEXT);
        // `y` is the 11th character of line 1.
        assert_eq!(lines.to_lsp(1, 11, Encoding::Utf16), Position::new(0, 10));
        assert_eq!(lines.to_lsp(1, 11, Encoding::Utf8), Position::new(0, 11));
    }

    #[test]
    fn cjk_is_one_utf16_unit_and_three_bytes() {
        let lines = Lines::new(TEXT);
        // `z` is the 6th character of line 2.
        assert_eq!(lines.to_lsp(2, 6, Encoding::Utf16), Position::new(1, 5));
        assert_eq!(lines.to_lsp(2, 6, Encoding::Utf8), Position::new(1, 9));
    }

    #[test]
    fn emoji_is_two_utf16_units_and_four_bytes() {
        let lines = Lines::new(TEXT);
        // `q` is the 12th character of line 3; the emoji before it is one character.
        assert_eq!(lines.to_lsp(3, 12, Encoding::Utf16), Position::new(2, 12));
        assert_eq!(lines.to_lsp(3, 12, Encoding::Utf8), Position::new(2, 14));
        assert_eq!(lines.to_lsp(3, 12, Encoding::Utf32), Position::new(2, 11));
    }

    #[test]
    fn round_trip_and_positions_inside_a_character() {
        let lines = Lines::new(TEXT);
        for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
            for (line, col) in [(1, 11), (2, 6), (3, 12), (3, 1)] {
                let p = lines.to_lsp(line, col, enc);
                assert_eq!(lines.to_engine(p, enc), (line, col), "{enc:?} {line}:{col}");
            }
        }
        // Inside the emoji (after its first UTF-16 unit): its start, character 8.
        assert_eq!(
            lines.to_engine(Position::new(2, 8), Encoding::Utf16),
            (3, 8)
        );
    }

    #[test]
    fn columns_past_the_end_clamp_and_crlf_is_not_text() {
        let lines = Lines::new(TEXT);
        assert_eq!(lines.to_lsp(3, 99, Encoding::Utf16), Position::new(2, 14));
        assert_eq!(lines.line_len(2, Encoding::Utf8), 16);
        assert_eq!(lines.to_lsp(9, 3, Encoding::Utf8), Position::new(8, 0));
    }

    #[test]
    fn negotiation_prefers_utf8_only_when_offered() {
        let both = [PositionEncodingKind::UTF16, PositionEncodingKind::UTF8];
        assert_eq!(Encoding::negotiate(Some(&both)), Encoding::Utf8);
        assert_eq!(
            Encoding::negotiate(Some(&[PositionEncodingKind::UTF32])),
            Encoding::Utf32
        );
        assert_eq!(
            Encoding::negotiate(Some(&[PositionEncodingKind::UTF16])),
            Encoding::Utf16
        );
        assert_eq!(Encoding::negotiate(None), Encoding::Utf16);
    }
}
