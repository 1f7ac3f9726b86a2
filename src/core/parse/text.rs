//! `text_violations`: one multi-line regex over a tool's text output; named groups fill the
//! Violation fields and `defaults` the rest.

use std::borrow::Cow;

use super::fill::apply_defaults;
use super::{Normalizer, Parsed, RawViolation, ToolOutput};
use crate::core::config::{OutputStream, TextSpec};

pub(super) fn parse(spec: &TextSpec, out: ToolOutput, mut norm: Normalizer) -> Parsed {
    let groups = Groups::new(spec.regex.capture_names());
    for bytes in selected(spec.stream, out.stdout, out.stderr) {
        // Tools print file names and source lines in whatever encoding they were given; one bad
        // byte must not hide every violation after it.
        let text = super::pointer::decode(bytes);
        read(spec, &groups, &text, &mut |v| norm.push(v));
    }
    norm.finish()
}

/// The streams the gate reads, in order. `both` reads each stream on its own, so a match can
/// never start in one and end in the other.
fn selected<T>(stream: OutputStream, stdout: T, stderr: T) -> Vec<T> {
    match stream {
        OutputStream::Stdout => vec![stdout],
        OutputStream::Stderr => vec![stderr],
        OutputStream::Both => vec![stdout, stderr],
    }
}

/// The violation of every match of the gate's regex in `text`, in order.
fn read<'t>(
    spec: &TextSpec,
    groups: &Groups,
    text: &'t str,
    emit: &mut impl FnMut(RawViolation<'t>),
) {
    let mut headers = Headers::new(spec, text);
    for caps in spec.regex.captures_iter(text) {
        let start = caps.get(0).map_or(0, |m| m.start());
        let said = headers.above(start);
        emit(violation(spec, groups, said, |i| {
            caps.get(i).map(|m| m.as_str())
        }));
    }
}

/// The violation of one match, from its groups' texts (by group index) and, for the groups it
/// leaves out, what the headers above it said.
fn violation<'t>(
    spec: &TextSpec,
    groups: &Groups,
    said: &Said<'_, 't>,
    group: impl Fn(usize) -> Option<&'t str>,
) -> RawViolation<'t> {
    // Groups that took part in the match but captured nothing count as absent, so that
    // headers and defaults fill them.
    let text = |i: Option<usize>, name: &str| {
        i.and_then(&group)
            .filter(|t| !t.is_empty())
            .or_else(|| said_of(said, name))
    };
    let string = |i: Option<usize>, name: &str| text(i, name).map(Cow::Borrowed);
    let int =
        |i: Option<usize>, name: &str| text(i, name).and_then(|s| s.trim().parse::<i64>().ok());
    let mut v = RawViolation {
        file: string(groups.file, "file"),
        line: int(groups.line, "line"),
        column: int(groups.column, "column"),
        end_line: int(groups.end_line, "end_line"),
        end_column: int(groups.end_column, "end_column"),
        code: string(groups.code, "code"),
        message: string(groups.message, "message"),
        severity: string(groups.severity, "severity"),
        url: string(groups.url, "url"),
        fixable: match groups.fixable.and_then(&group) {
            Some(text) => !text.is_empty(),
            None => spec.defaults.fixable.unwrap_or(false),
        },
        fix: None,
    };
    if let (Some(dir), Some(file)) = (text(groups.dir, "dir"), &v.file)
        && !std::path::Path::new(file.as_ref()).is_absolute()
    {
        v.file = Some(Cow::Owned(format!("{}/{file}", dir.trim_end_matches('/'))));
    }
    apply_defaults(&mut v, &spec.defaults);
    v
}

/// What the headers said up to a place in the output: each group's latest text.
type Said<'s, 't> = Vec<(&'s str, &'t str)>;

/// The headers' matches in the output, taken in order as the findings' matches are reached.
struct Headers<'s, 't> {
    /// Where each header match starts, with a group it captured and the text of it.
    marks: Vec<(usize, &'s str, &'t str)>,
    next: usize,
    said: Said<'s, 't>,
}

impl<'s, 't> Headers<'s, 't> {
    fn new(spec: &'s TextSpec, text: &'t str) -> Self {
        let mut marks = Vec::new();
        for header in &spec.headers {
            for caps in header.captures_iter(text) {
                let start = caps.get(0).map_or(0, |m| m.start());
                let captured = header
                    .capture_names()
                    .zip(caps.iter())
                    .filter_map(|(name, m)| Some((name?, m?.as_str())))
                    .filter(|(_, t)| !t.is_empty());
                marks.extend(captured.map(|(name, t)| (start, name, t)));
            }
        }
        // Stable: two headers on one line apply in the order they are written.
        marks.sort_by_key(|m| m.0);
        Headers {
            marks,
            next: 0,
            said: Vec::new(),
        }
    }

    /// What the headers starting at or before `at` said; a header on the finding's own line
    /// counts.
    fn above(&mut self, at: usize) -> &Said<'s, 't> {
        while let Some(&(start, name, t)) = self.marks.get(self.next)
            && start <= at
        {
            match self.said.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = t,
                None => self.said.push((name, t)),
            }
            self.next += 1;
        }
        &self.said
    }
}

/// The latest text the headers gave the group `name`.
fn said_of<'t>(said: &Said<'_, 't>, name: &str) -> Option<&'t str> {
    said.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
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
    dir: Option<usize>,
}

impl Groups {
    /// From the pattern's group names, by group index.
    fn new<'n>(names: impl Iterator<Item = Option<&'n str>> + Clone) -> Self {
        let find = |name: &str| names.clone().position(|n| n == Some(name));
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
            dir: find("dir"),
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
            headers: Vec::new(),
            stream,
            defaults: Defaults::default(),
            line_offset: 0,
            column_offset: 0,
        }
    }

    /// What the gate reads of the output, with owned texts.
    fn read_all(s: &TextSpec, stdout: &[u8], stderr: &[u8]) -> Vec<RawViolation<'static>> {
        let groups = Groups::new(s.regex.capture_names());
        let mut found = Vec::new();
        for bytes in selected(s.stream, stdout, stderr) {
            let text = std::str::from_utf8(bytes).expect("test output is UTF-8");
            read(s, &groups, text, &mut |v| found.push(owned(v)));
        }
        found
    }

    fn owned(v: RawViolation<'_>) -> RawViolation<'static> {
        let own = |c: Option<Cow<'_, str>>| c.map(|c| Cow::Owned(c.into_owned()));
        RawViolation {
            file: own(v.file),
            line: v.line,
            column: v.column,
            end_line: v.end_line,
            end_column: v.end_column,
            code: own(v.code),
            message: own(v.message),
            severity: own(v.severity),
            url: own(v.url),
            fixable: v.fixable,
            fix: None,
        }
    }

    fn with_headers(mut s: TextSpec, headers: &[&str]) -> TextSpec {
        s.headers = headers
            .iter()
            .map(|h| {
                RegexBuilder::new(h)
                    .multi_line(true)
                    .build()
                    .expect("valid regex")
            })
            .collect();
        s
    }

    type Place<'a> = (Option<&'a str>, Option<i64>, Option<&'a str>);

    fn places<'a>(found: &'a [RawViolation<'a>]) -> Vec<Place<'a>> {
        found
            .iter()
            .map(|v| (v.file.as_deref(), v.line, v.message.as_deref()))
            .collect()
    }

    #[test]
    fn a_file_named_once_above_its_findings_is_each_one_s_file() {
        // ESLint's stylish layout: the file on a line of its own, its findings indented below.
        let s = with_headers(
            spec(
                r"^ +(?P<line>\d+):\d+ +(?P<message>.+)$",
                OutputStream::Stdout,
            ),
            &[r"^(?P<file>\S.*)$"],
        );
        let out = "  9:1  before any file\nsrc/ä.js\n  1:2  first\n  3:4  second\nlib/b.js\n  5:6  third\n";
        let found = read_all(&s, out.as_bytes(), b"");
        assert_eq!(
            places(&found),
            [
                (None, Some(9), Some("before any file")),
                (Some("src/ä.js"), Some(1), Some("first")),
                (Some("src/ä.js"), Some(3), Some("second")),
                (Some("lib/b.js"), Some(5), Some("third")),
            ]
        );
    }

    #[test]
    fn a_folder_header_joins_relative_files_and_the_finding_s_own_groups_win() {
        let s = with_headers(
            spec(
                r"^\| (?:(?P<file>\S+): )?(?P<message>\w+) \(L(?P<line>\d+)\)$",
                OutputStream::Stdout,
            ),
            &[r"^== (?P<dir>/.+/) ==$", r"^\| (?P<file>\S+) \(module\)$"],
        );
        let out =
            "== /r/src/ ==\n| a.py (module)\n| f (L1)\n| /abs/c.py: g (L2)\n| b/d.py: h (L3)\n";
        let found = read_all(&s, out.as_bytes(), b"");
        assert_eq!(
            places(&found),
            [
                (Some("/r/src/a.py"), Some(1), Some("f")),
                (Some("/abs/c.py"), Some(2), Some("g")),
                (Some("/r/src/b/d.py"), Some(3), Some("h")),
            ]
        );
    }

    #[test]
    fn a_header_on_the_finding_s_own_line_applies_to_it() {
        let s = with_headers(
            spec(r"^\| (?P<message>\S+) .*MISSED$", OutputStream::Stdout),
            &[r"^\| (?P<file>\S+) \(module\)"],
        );
        let found = read_all(&s, b"| x.py (module) MISSED\n| f (L1) MISSED\n", b"");
        assert_eq!(
            places(&found),
            [
                (Some("x.py"), None, Some("x.py")),
                (Some("x.py"), None, Some("f")),
            ]
        );
    }

    #[test]
    fn empty_matches_advance() {
        let s = spec(r"(?P<code>x*)", OutputStream::Stdout);
        // Like `captures_iter`: "" at 0, "xx" at 1, not "" at 3 (where "xx" ended), "" at 5.
        let found = read_all(&s, "axxé".as_bytes(), b"");
        let codes: Vec<Option<String>> = found
            .into_iter()
            .map(|v| v.code.map(Cow::into_owned))
            .collect();
        assert_eq!(codes, [None, Some("xx".into()), None]);
    }

    #[test]
    fn both_streams_never_join() {
        let s = spec(r"^(?P<file>\w+)\n(?P<message>\w+)$", OutputStream::Both);
        let found = read_all(&s, b"a\nb\nc", b"d\ne");
        let pairs: Vec<(Option<String>, Option<String>)> = found
            .into_iter()
            .map(|v| (v.file.map(Cow::into_owned), v.message.map(Cow::into_owned)))
            .collect();
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
        let found = read_all(&s, b"a.py [*]E1\nb.py \n", b"");
        assert_eq!(
            (found[0].fixable, found[0].code.as_deref()),
            (true, Some("E1"))
        );
        assert_eq!(
            (found[1].fixable, found[1].code.as_deref()),
            (false, Some("X-b.py"))
        );
    }
}
