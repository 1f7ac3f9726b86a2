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
    for caps in spec.regex.captures_iter(text) {
        emit(violation(spec, groups, |i| caps.get(i).map(|m| m.as_str())));
    }
}

/// The violation of one match, from its groups' texts (by group index).
fn violation<'t>(
    spec: &TextSpec,
    groups: &Groups,
    group: impl Fn(usize) -> Option<&'t str>,
) -> RawViolation<'t> {
    let group = |i: Option<usize>| i.and_then(&group);
    // Groups that took part in the match but captured nothing count as absent, so that
    // defaults fill them.
    let string = |i: Option<usize>| group(i).filter(|t| !t.is_empty()).map(Cow::Borrowed);
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
    apply_defaults(&mut v, &spec.defaults);
    v
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
