//! What a YAML syntax error is about, said for people: where the unclosed bracket or the tab
//! is, and what to check.

use serde_saphyr::{Error, MessageFormatter, UserMessageFormatter};

use super::tree::Pos;

/// The innermost `[` or `{` still open at `until`, if it was opened on an earlier line.
/// A bracket counts only where a flow collection can start (after `:`, `-`, `,`, an opener, or
/// at the start of a line), so `pattern: ^[a-z]` is not mistaken for one; quotes and comments
/// are skipped.
pub(super) fn unclosed_flow(text: &str, until: Pos) -> Option<(Pos, char)> {
    let mut open: Vec<(Pos, char)> = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .take(usize::try_from(until.line).ok()?)
    {
        let line_no = u32::try_from(i + 1).ok()?;
        let mut quote: Option<char> = None;
        let mut prev = ' ';
        let mut value_start = true;
        for (j, c) in line.chars().enumerate() {
            let here = Pos {
                line: line_no,
                column: u32::try_from(j + 1).ok()?,
            };
            if here >= until {
                break;
            }
            match (quote, c) {
                (Some(q), c) if c == q && !(q == '"' && prev == '\\') => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') if value_start => quote = Some(c),
                (None, '#') if prev == ' ' || j == 0 => break,
                (None, '[' | '{') if value_start => open.push((here, c)),
                (None, ']' | '}') if !open.is_empty() => {
                    open.pop();
                }
                _ => {}
            }
            if !c.is_whitespace() {
                value_start = matches!(c, ':' | '-' | ',' | '[' | '{');
            }
            prev = c;
        }
    }
    open.pop().filter(|(p, _)| p.line < until.line)
}

/// The scanner reports a tab where the scalar before it started (`version: 1` on line 1 for a tab
/// that indents line 2); the tab itself is what the user must find.
pub(super) fn first_tab(text: &str, from: Pos) -> Option<Pos> {
    let skip = usize::try_from(from.line).ok()?.saturating_sub(1);
    text.lines().enumerate().skip(skip).find_map(|(i, line)| {
        let column = line.chars().position(|c| c == '\t')?;
        Some(Pos {
            line: u32::try_from(i + 1).ok()?,
            column: u32::try_from(column + 1).ok()?,
        })
    })
}

/// The library's user-facing sentence for an error, without its place (we print that first).
pub(super) fn library_text(e: &Error) -> String {
    let text = UserMessageFormatter.format_message(e).into_owned();
    let text = text.split(" at line ").next().unwrap_or_default();
    text.trim().trim_end_matches('.').to_string()
}

pub(super) fn syntax(e: &Error) -> String {
    let text = library_text(e);
    let lower = text.to_ascii_lowercase();
    let hint = if lower.contains("tab") {
        "YAML indents with spaces, never tabs: replace the tab with spaces."
    } else if lower.contains("unclosed bracket")
        || lower.contains("flow sequence")
        || lower.contains("flow mapping")
    {
        "Close the bracket, and separate items with commas."
    } else if lower.contains("quoted") || lower.contains("quote") {
        "A quoted value is not closed, or goes on over a line that is not indented: close the quote."
    } else if lower.contains("expected key")
        || lower.contains("indent")
        || lower.contains("mapping values")
    {
        "Check the indentation: keys of one mapping start in the same column, and `key:` needs a space after the colon."
    } else if lower.contains("unknown value") || lower.contains("anchor") {
        "Define the anchor (`&name`) before the alias that uses it (`*name`)."
    } else if lower.contains("end of file") || lower.contains("end of stream") {
        "The file ends in the middle of a value: close what was opened."
    } else {
        "Fix the YAML syntax here (indentation, quotes, brackets, a missing `:`)."
    };
    format!("invalid YAML: {text}. {hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unclosed_flow_finds_the_opener_and_ignores_brackets_inside_values() {
        let text = "a: [x, y\nb: 1\n";
        assert_eq!(
            unclosed_flow(text, Pos { line: 2, column: 2 }),
            Some((Pos { line: 1, column: 4 }, '['))
        );
        let text = "p: ^[a-z]+\nq: '[' # [\nr: {s: [1]}\nt: : x\n";
        assert_eq!(unclosed_flow(text, Pos { line: 4, column: 4 }), None);
    }
}
