//! Where a token stands on a line of source text, counted by the tests themselves in each unit a
//! position can use: position tests compare with this, never with a number a tool printed.

/// How a column is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Utf8,
    Utf16,
    CodePoint,
}

impl Unit {
    /// The unit of an LSP position encoding (`utf-8`, `utf-16`, `utf-32`).
    pub fn of_encoding(encoding: &str) -> Unit {
        match encoding {
            "utf-8" => Unit::Utf8,
            "utf-16" => Unit::Utf16,
            "utf-32" => Unit::CodePoint,
            other => panic!("unknown position encoding {other:?}"),
        }
    }

    pub fn len(self, text: &str) -> usize {
        match self {
            Unit::Utf8 => text.len(),
            Unit::Utf16 => text.encode_utf16().count(),
            Unit::CodePoint => text.chars().count(),
        }
    }
}

/// The 0-based start and end (exclusive) of the one occurrence of `token` on the 1-based `line`
/// of `text`.
pub fn token_span(text: &str, line: usize, token: &str, unit: Unit) -> (usize, usize) {
    let line_text = text.lines().nth(line - 1).expect("no such line");
    assert_eq!(
        line_text.matches(token).count(),
        1,
        "{token:?} should stand once on {line_text:?}"
    );
    let at = line_text.find(token).expect("token");
    let start = unit.len(&line_text[..at]);
    (start, start + unit.len(token))
}
