//! `text_violations`: the pattern, its headers and its defaults, checked and compiled.

use regex::{Regex, RegexBuilder};
use serde_saphyr::Spanned;

use super::super::error::Problems;
use super::super::limits::{MAX_PATTERN_CHARS, MAX_REGEX_BYTES, MAX_REGEX_DFA_BYTES, size_text};
use super::super::model::{RawParsing, SpannedString, Strategy};
use super::super::spec::{OutputStream, TextSpec};
use super::super::suggest::closest;
use super::super::tree::Pos;
use super::{Fields, VIOLATION_FIELDS, compile_defaults, has_default_message};

/// The group a pattern or header may capture besides the Violation fields: the folder a relative
/// `file` is in.
const DIR: &str = "dir";

/// The pattern and its headers compiled, with every group name they capture (the fields that
/// `defaults` and `templates` may use).
pub(super) fn compile_text(
    id: &str,
    pr: &RawParsing,
    strategy: &Spanned<Strategy>,
    p: &mut Problems,
) -> Option<(TextSpec, Vec<String>)> {
    let Some(pattern) = &pr.pattern else {
        p.at(strategy.referenced, format!("gate `{id}`: text_violations needs `parsing.pattern`, a regex with named groups such as (?P<file>…) and (?P<line>…). Add one."));
        return None;
    };
    let regex = compile_regex(id, "the pattern", pattern, p)?;
    let mut groups = named_groups(id, "the pattern", &regex, pattern, p);
    if groups.is_empty() && !has_default_message(pr) {
        p.at(pattern.referenced, format!("gate `{id}`: the pattern has no named groups and there is no default message, so its matches say nothing. Capture (?P<message>…) or set `defaults.message`."));
    }
    let mut headers = Vec::new();
    for (i, header) in pr.headers.iter().flatten().enumerate() {
        let what = format!("headers[{i}]");
        let Some(regex) = compile_regex(id, &what, header, p) else {
            continue;
        };
        let named = named_groups(id, &what, &regex, header, p);
        if named.is_empty() {
            p.at(header.referenced, format!("gate `{id}`: {what} has no named groups, so it carries nothing to the findings after it. Capture what the lines below it leave out, e.g. (?P<file>…)."));
        }
        if named.iter().any(|g| g == "fixable") {
            p.at(header.referenced, format!("gate `{id}`: {what} captures `fixable`, which says something of one finding only. Capture it in the pattern."));
        }
        for g in named {
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        headers.push(regex);
    }
    let fields = Fields::new(id, &groups, "the pattern's named groups");
    let defaults = compile_defaults(pr.defaults.as_ref(), &fields, p);
    let spec = TextSpec {
        regex,
        headers,
        stream: pr.stream.as_ref().map_or(OutputStream::Stdout, |s| s.value),
        defaults,
        line_offset: pr.line_offset.as_ref().map_or(0, |s| s.value),
        column_offset: pr.column_offset.as_ref().map_or(0, |s| s.value),
    };
    Some((spec, groups))
}

/// The regex's group names; each one that is no Violation field (nor `dir`) is reported.
fn named_groups(
    id: &str,
    what: &str,
    regex: &Regex,
    written: &SpannedString,
    p: &mut Problems,
) -> Vec<String> {
    let groups: Vec<String> = regex
        .capture_names()
        .flatten()
        .map(str::to_string)
        .collect();
    let allowed = || VIOLATION_FIELDS.iter().copied().chain([DIR]);
    for g in groups
        .iter()
        .filter(|g| !allowed().any(|a| a == g.as_str()))
    {
        let hint = match closest(g, allowed()) {
            Some(best) => format!("Did you mean `{best}`?"),
            None => format!(
                "Rename it to one of: {}, or `dir` (the folder a relative file is in).",
                VIOLATION_FIELDS.join(", ")
            ),
        };
        p.at(
            written.referenced,
            format!("gate `{id}`: {what}'s group `{g}` is not a Violation field. {hint}"),
        );
    }
    groups
}

/// Compiles a pattern in multi-line mode; an error points at the offending character when the
/// pattern is written on one line as it is read (plain or single-quoted, no escapes).
fn compile_regex(id: &str, what: &str, pattern: &SpannedString, p: &mut Problems) -> Option<Regex> {
    let chars = pattern.value.chars().count();
    if chars > MAX_PATTERN_CHARS {
        p.at(pattern.referenced, format!("gate `{id}`: {what} is {chars} characters long; a pattern may be at most {MAX_PATTERN_CHARS}. Match less of each line: capture the fields and let `.*` skip the rest."));
        return None;
    }
    match RegexBuilder::new(&pattern.value)
        .multi_line(true)
        .size_limit(MAX_REGEX_BYTES)
        .dfa_size_limit(MAX_REGEX_DFA_BYTES)
        .build()
    {
        Ok(r) => Some(r),
        Err(regex::Error::CompiledTooBig(_)) => {
            p.at(pattern.referenced, format!("gate `{id}`: {what} compiles to more than {} (the limit), usually from a large repetition such as `\\w{{1000}}` or `(…){{500}}`. Use `+` or `*`, or a smaller count.", size_text(MAX_REGEX_BYTES)));
            None
        }
        Err(e) => {
            let text = e.to_string();
            let detail = text.lines().last().unwrap_or_default().trim();
            let detail = detail.strip_prefix("error: ").unwrap_or(detail);
            let start = Pos::from(pattern.referenced);
            let at = regex_error_offset(&text, &pattern.value)
                .and_then(|offset| p.tree.place_in_scalar(start, &pattern.value, offset))
                .unwrap_or(start);
            p.at(at, format!("gate `{id}`: {what} is not a valid regex: {detail}. Fix it; named groups are written (?P<name>…)."));
            None
        }
    }
}

/// The character offset the regex crate's caret (`^`) points at, for a one-line pattern.
fn regex_error_offset(rendered: &str, pattern: &str) -> Option<usize> {
    let lines: Vec<&str> = rendered.lines().collect();
    let shown = lines
        .iter()
        .position(|l| l.strip_prefix("    ") == Some(pattern))?;
    let caret = lines.get(shown + 1)?.strip_prefix("    ")?;
    caret.chars().position(|c| c == '^')
}
