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
        read_parallel(spec, &groups, &text, &mut found);
    }
    found
}

/// Below this size a single thread is quicker than starting others.
const PARALLEL_MIN_BYTES: usize = 2 << 20;

/// Reads large outputs on several threads when the pattern cannot cross a line: the text is cut
/// just before line feeds (which no match can contain), so `^` and `$` see the same neighbours
/// as in one pass and the matches, in order, are exactly those of one pass.
fn read_parallel(spec: &TextSpec, groups: &Groups, text: &str, found: &mut Vec<RawViolation>) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if !spec.line_local || threads < 2 || text.len() < PARALLEL_MIN_BYTES {
        return read(spec, groups, text, found);
    }
    let mut pieces = Vec::with_capacity(threads);
    let mut start = 0;
    for i in 1..threads {
        let target = (text.len() * i / threads).max(start);
        match text[target..].find('\n') {
            Some(off) => {
                pieces.push(&text[start..target + off]);
                start = target + off + 1;
            }
            None => break,
        }
    }
    pieces.push(&text[start..]);
    let results: Vec<Vec<RawViolation>> = std::thread::scope(|scope| {
        let handles: Vec<_> = pieces
            .iter()
            .map(|piece| {
                scope.spawn(move || {
                    let mut part = Vec::new();
                    read(spec, groups, piece, &mut part);
                    part
                })
            })
            .collect();
        // A panic is carried on (the gate then reports an error), never turned into "no findings".
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    for part in results {
        found.extend(part);
    }
}

fn read(spec: &TextSpec, groups: &Groups, text: &str, found: &mut Vec<RawViolation>) {
    let mut locs = spec.regex.capture_locations();
    let mut start = 0;
    let mut last_end = None;
    let next_char = |at: usize| at + text[at..].chars().next().map_or(1, char::len_utf8);
    // `captures_read_at` reuses one set of capture slots for every match, where `captures_iter`
    // would allocate per match.
    while start <= text.len() {
        let Some(m) = spec.regex.captures_read_at(&mut locs, text, start) else {
            break;
        };
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
        for f in [
            &mut v.file,
            &mut v.code,
            &mut v.message,
            &mut v.severity,
            &mut v.url,
        ] {
            if f.as_deref().is_some_and(str::is_empty) {
                *f = None;
            }
        }
        apply_defaults(&mut v, &spec.defaults);
        found.push(v);
        // An empty match must not be found again at the same place: step over one character.
        start = if m.is_empty() {
            next_char(m.end())
        } else {
            m.end()
        };
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
            regex: RegexBuilder::new(pattern)
                .multi_line(true)
                .build()
                .expect("valid regex"),
            line_local: crate::core::config::pattern_is_line_local(pattern),
            stream,
            defaults: Defaults::default(),
            line_offset: 0,
            column_offset: 0,
        }
    }

    fn out<'a>(stdout: &'a [u8], stderr: &'a [u8]) -> ToolOutput<'a> {
        ToolOutput {
            stdout,
            stderr,
            exit_code: Some(1),
        }
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
        let pairs: Vec<(Option<String>, Option<String>)> =
            found.into_iter().map(|v| (v.file, v.message)).collect();
        assert_eq!(
            pairs,
            [
                (Some("a".into()), Some("b".into())),
                (Some("d".into()), Some("e".into()))
            ]
        );
    }

    #[test]
    fn fixable_group_and_defaults() {
        let mut s = spec(
            r"^(?P<file>\S+) (?P<fixable>\[\*\])?(?P<code>\w*)$",
            OutputStream::Stdout,
        );
        s.defaults.code = Some(Template::parse("X-{file}"));
        let found = parse(&s, out(b"a.py [*]E1\nb.py \n", b""));
        assert_eq!(
            (found[0].fixable, found[0].code.as_deref()),
            (true, Some("E1"))
        );
        assert_eq!(
            (found[1].fixable, found[1].code.as_deref()),
            (false, Some("X-b.py"))
        );
    }

    #[test]
    fn parallel_reading_finds_exactly_what_one_pass_finds() {
        // Empty lines, empty matches and lines of every length around the cut points.
        let mut text = String::new();
        for i in 0..120_000 {
            match i % 5 {
                0 => text.push_str(&format!(
                    "src/m{i}.py:{i}:{}: error: broken [x]  [code-{i}]\n",
                    i % 80
                )),
                1 => text.push('\n'),
                2 => text.push_str("noise é 😀 line\n"),
                3 => text.push_str(&format!("src/m{i}.py:{i}:1: note: no code\n")),
                _ => text.push_str(&"z".repeat(i % 97)),
            }
        }
        for pattern in [
            r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>\w+): (?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$",
            r"^(?P<message>)$",
        ] {
            let s = spec(pattern, OutputStream::Stdout);
            assert!(s.line_local);
            assert!(text.len() > PARALLEL_MIN_BYTES);
            let groups = Groups::new(&s.regex);
            let (mut one, mut many) = (Vec::new(), Vec::new());
            read(&s, &groups, &text, &mut one);
            read_parallel(&s, &groups, &text, &mut many);
            assert!(!one.is_empty());
            assert_eq!(one, many, "pattern {pattern}");
        }
    }
}
