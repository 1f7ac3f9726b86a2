//! `text_violations`: one multi-line regex over a tool's text output; named groups fill the
//! Violation fields and `defaults` the rest.

use regex::Regex;

use super::json::apply_defaults;
use super::{RawViolation, ToolOutput};
use crate::core::config::{OutputStream, TextSpec};

pub(super) fn parse(spec: &TextSpec, out: ToolOutput) -> Vec<RawViolation> {
    let groups = Groups::new(&spec.regex);
    let mut found = Vec::new();
    // `both` reads each stream on its own, so a match can never start in one and end in the other.
    let streams: &[&[u8]] = match spec.stream {
        OutputStream::Stdout => &[out.stdout],
        OutputStream::Stderr => &[out.stderr],
        OutputStream::Both => &[out.stdout, out.stderr],
    };
    for bytes in streams {
        // Tools print file names and source lines in whatever encoding they were given; one bad
        // byte must not hide every violation after it.
        let text = super::pointer::decode(bytes);
        read(spec, &groups, &text, &mut found);
    }
    found
}

fn read(spec: &TextSpec, groups: &Groups, text: &str, found: &mut Vec<RawViolation>) {
    let mut locs = spec.regex.capture_locations();
    let mut start = 0;
    let mut last_end = None;
    let next_char = |at: usize| at + text[at..].chars().next().map_or(1, char::len_utf8);
    // `captures_read_at` reuses one set of capture slots for every match, where `captures_iter`
    // would allocate per match.
    while start <= text.len() {
        let Some(m) = spec.regex.captures_read_at(&mut locs, text, start) else { break };
        if m.is_empty() && last_end == Some(m.end()) {
            // As `captures_iter` does: no empty match right where the previous match ended.
            start = next_char(m.end());
            continue;
        }
        last_end = Some(m.end());
        let group = |i: Option<usize>| i.and_then(|i| locs.get(i)).map(|(s, e)| &text[s..e]);
        let string = |i: Option<usize>| group(i).map(str::to_string);
        let int = |i: Option<usize>| group(i).and_then(|s| s.trim().parse::<i64>().ok());
        let mut v = RawViolation {
            file: string(groups.file),
            line: int(groups.line),
            column: int(groups.column),
            end_line: int(groups.end_line),
            end_column: int(groups.end_column),
            code: string(groups.code),
            message: string(groups.message),
            severity: string(groups.severity),
            url: string(groups.url),
            fixable: match group(groups.fixable) {
                Some(text) => !text.is_empty(),
                None => spec.defaults.fixable.unwrap_or(false),
            },
            fix: None,
        };
        // Groups that took part in the match but captured nothing count as absent, so that
        // defaults fill them.
        for f in [&mut v.file, &mut v.code, &mut v.message, &mut v.severity, &mut v.url] {
            if f.as_deref().is_some_and(str::is_empty) {
                *f = None;
            }
        }
        apply_defaults(&mut v, &spec.defaults);
        found.push(v);
        // An empty match must not be found again at the same place: step over one character.
        start = if m.is_empty() { next_char(m.end()) } else { m.end() };
    }
}

/// The capture group index of each Violation field, looked up once per parse.
struct Groups {
    file: Option<usize>,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    code: Option<usize>,
    message: Option<usize>,
    severity: Option<usize>,
    url: Option<usize>,
    fixable: Option<usize>,
}

impl Groups {
    fn new(re: &Regex) -> Self {
        let find = |name: &str| re.capture_names().position(|n| n == Some(name));
        Groups {
            file: find("file"),
            line: find("line"),
            column: find("column"),
            end_line: find("end_line"),
            end_column: find("end_column"),
            code: find("code"),
            message: find("message"),
            severity: find("severity"),
            url: find("url"),
            fixable: find("fixable"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::{Defaults, Template};
    use regex::RegexBuilder;

    fn spec(pattern: &str, stream: OutputStream) -> TextSpec {
        TextSpec {
            regex: RegexBuilder::new(pattern).multi_line(true).build().expect("valid regex"),
            stream,
            defaults: Defaults::default(),
            line_offset: 0,
            column_offset: 0,
        }
    }

    fn out<'a>(stdout: &'a [u8], stderr: &'a [u8]) -> ToolOutput<'a> {
        ToolOutput { stdout, stderr, exit_code: Some(1) }
    }

    #[test]
    fn empty_matches_advance() {
        let s = spec(r"(?P<code>x*)", OutputStream::Stdout);
        // Like `captures_iter`: "" at 0, "xx" at 1, not "" at 3 (where "xx" ended), "" at 5.
        let found = parse(&s, out("axxé".as_bytes(), b""));
        let codes: Vec<Option<String>> = found.into_iter().map(|v| v.code).collect();
        assert_eq!(codes, [None, Some("xx".into()), None]);
    }

    #[test]
    fn both_streams_never_join() {
        let s = spec(r"^(?P<file>\w+)\n(?P<message>\w+)$", OutputStream::Both);
        let found = parse(&s, out(b"a\nb\nc", b"d\ne"));
        let pairs: Vec<(Option<String>, Option<String>)> = found.into_iter().map(|v| (v.file, v.message)).collect();
        assert_eq!(pairs, [(Some("a".into()), Some("b".into())), (Some("d".into()), Some("e".into()))]);
    }

    #[test]
    fn fixable_group_and_defaults() {
        let mut s = spec(r"^(?P<file>\S+) (?P<fixable>\[\*\])?(?P<code>\w*)$", OutputStream::Stdout);
        s.defaults.code = Some(Template::parse("X-{file}"));
        let found = parse(&s, out(b"a.py [*]E1\nb.py \n", b""));
        assert_eq!((found[0].fixable, found[0].code.as_deref()), (true, Some("E1")));
        assert_eq!((found[1].fixable, found[1].code.as_deref()), (false, Some("X-b.py")));
    }
}
