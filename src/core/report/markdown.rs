//! `--format markdown`: a numbered checklist, one item per violation, for a pull-request comment, a job summary or an agent's task.
//!
//! `1. [ ] **error** `src/a.py:12:5` — message (`F401`, Ruff Lint) — Fix: …`, grouped by gate and
//! numbered 1..n across the whole document, so "item 7" means one thing. Gates that could not run
//! or were skipped follow with their reasons. Tool text is escaped so that no message can end
//! the list, open a heading, a table or a link, or swallow the rest of the line in a code span.

use std::fmt::Write as _;

use super::{GateResult, GateStatus, Report, by_position, count, position, scope_line, visible};
use crate::core::violation::Violation;

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## {}\n", inline(&report.summary_line()));
    let _ = writeln!(out, "{}.", scope_line(&report.scope, code_span, inline));
    for w in &report.warnings {
        let _ = writeln!(out, "\n⚠️ {}.", inline(w.trim_end_matches('.')));
    }
    for g in &report.gates {
        if let Some(coverage) = &g.coverage {
            let _ = writeln!(
                out,
                "\nCoverage ({}): {}.",
                gate_heading(g),
                inline(&coverage.long())
            );
        }
    }
    if write_violations(&mut out, report) == 0 {
        out.push_str(match report.novelty {
            Some(_) => "\nNo new violations.\n",
            None => "\nNo violations.\n",
        });
    }
    write_could_not_run(&mut out, report);
    write_skipped(&mut out, report);
    write_passed(&mut out, report);
    out
}

/// A section per gate with violations, its items numbered on from the previous gate's; returns
/// how many items there are.
fn write_violations(out: &mut String, report: &Report) -> usize {
    let mut n = 0;
    let mut unlisted = 0;
    for g in report.gates.iter().filter(|g| !g.violations.is_empty()) {
        let (listed, left): (Vec<&Violation>, Vec<&Violation>) = by_position(&g.violations)
            .into_iter()
            .partition(|v| report.lists(v, false));
        unlisted += left.len();
        if listed.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {} — {}\n", gate_heading(g), status(g));
        let mut hint_everywhere = true;
        for v in listed {
            n += 1;
            let (text, hint_shown) = item(g, v);
            let _ = writeln!(out, "{n}. [ ] {text}");
            hint_everywhere &= hint_shown;
        }
        write_gate_notes(out, g, hint_everywhere);
    }
    if unlisted > 0 {
        let _ = writeln!(
            out,
            "\n{} not listed: they were there at the reference commit.",
            count(unlisted, "pre-existing violation")
        );
    }
    n
}

/// What follows a gate's items: its fix hint where the items did not all show it, and what the
/// items leave out.
fn write_gate_notes(out: &mut String, g: &GateResult, hint_everywhere: bool) {
    // Where some items showed a fix of their own or none, the gate's hint is still worth a line.
    if let (false, Some(hint)) = (hint_everywhere, &g.fix_hint) {
        let _ = writeln!(out, "\nGate fix hint: {}", inline(hint));
    }
    if g.incomplete {
        let _ = writeln!(
            out,
            "\nStopped early: {} did not check every file it was given; fix these first, then the rest are checked.",
            inline(&g.name)
        );
    }
    if g.outside_root > 0 {
        let _ = writeln!(
            out,
            "\nLeft out: {} in files outside the workspace root.",
            count(g.outside_root, "violation")
        );
    }
}

fn write_could_not_run(out: &mut String, report: &Report) {
    let errored = report
        .gates
        .iter()
        .filter(|g| g.status == GateStatus::Error);
    let lines = errored.map(|g| {
        let error = g.error.as_deref().unwrap_or("no reason recorded");
        let mut line = format!("{}: {}", gate_label(g), inline(error));
        if g.allow_fail {
            line.push_str(" (allowed to fail)");
        }
        if let Some(log) = &g.log {
            let _ = write!(
                line,
                " — logs: {}, {}",
                code_span(&log.stdout),
                code_span(&log.stderr)
            );
        }
        line
    });
    write_list(out, "Could not run", lines);
}

fn write_skipped(out: &mut String, report: &Report) {
    let skipped = report
        .gates
        .iter()
        .filter(|g| g.status == GateStatus::Skipped);
    let lines = skipped.map(|g| {
        let reason = g.skip_reason.as_deref().unwrap_or("no reason given");
        format!("{}: {}", gate_label(g), inline(reason))
    });
    write_list(out, "Skipped", lines);
}

/// A `### title` section listing `lines`, left out when there is none.
fn write_list(out: &mut String, title: &str, lines: impl Iterator<Item = String>) {
    let mut lines = lines.peekable();
    if lines.peek().is_some() {
        let _ = writeln!(out, "\n### {title}\n");
    }
    for line in lines {
        let _ = writeln!(out, "- {line}");
    }
}

fn write_passed(out: &mut String, report: &Report) {
    let passed: Vec<String> = report
        .gates
        .iter()
        .filter(|g| g.status == GateStatus::Passed && g.violations.is_empty())
        .map(gate_label)
        .collect();
    if !passed.is_empty() {
        let _ = writeln!(out, "\nPassed: {}.", passed.join(", "));
    }
}

/// `**Ruff Lint** (`ruff_lint`)`, or just `**mypy**` when the name is the id.
fn gate_label(g: &GateResult) -> String {
    format!("**{}**{}", inline(&g.name), id_suffix(g))
}

/// `Ruff Lint (`ruff_lint`)`: a heading is bold already.
fn gate_heading(g: &GateResult) -> String {
    format!("{}{}", inline(&g.name), id_suffix(g))
}

fn id_suffix(g: &GateResult) -> String {
    if g.name == g.id {
        String::new()
    } else {
        format!(" ({})", code_span(&g.id))
    }
}

fn status(g: &GateResult) -> String {
    let word = match g.status {
        GateStatus::Error => "could not run",
        status => status.as_str(),
    };
    let mut s = format!("{word}, {}", count(g.violations.len(), "violation"));
    if g.allow_fail {
        s.push_str(" (allowed to fail)");
    }
    s
}

/// `**error** `src/a.py:12:5` — message (`F401`, Ruff Lint) — Fix: …`, and whether the fix
/// shown was the gate's hint.
///
/// The fix is the tool's own (its title) or else the gate's `fix_hint`, but the hint only on a
/// violation it can fix: on a gate that marks some violations fixable (ruff), `ruff check --fix`
/// next to a finding it will not touch would send the reader the wrong way. A gate that marks
/// none fixable gets its hint everywhere: there it is general advice (`Run: mypy src`).
fn item(g: &GateResult, v: &Violation) -> (String, bool) {
    let mut s = format!("**{}**", v.severity.as_str());
    if v.new == Some(false) {
        s.push_str(" (pre-existing)");
    }
    if let Some(pos) = position(v) {
        let _ = write!(s, " {}", code_span(&pos));
    }
    let _ = write!(s, " — {} (", inline(&v.message));
    if let Some(code) = &v.code {
        match v.url.as_deref().filter(|u| linkable(u)) {
            Some(url) => {
                let _ = write!(s, "[{}](<{url}>), ", code_span(code));
            }
            None => {
                let _ = write!(s, "{}, ", code_span(code));
            }
        }
    }
    let _ = write!(s, "{})", inline(&g.name));
    let own = v
        .fix
        .as_ref()
        .map(|f| f.title.as_str())
        .filter(|t| !t.trim().is_empty());
    let hint_applies = v.fixable || !g.violations.iter().any(|v| v.fixable);
    let hint = g
        .fix_hint
        .as_deref()
        .filter(|_| own.is_none() && hint_applies);
    if let Some(fix) = own.or(hint) {
        let _ = write!(s, " — Fix: {}", inline(fix));
    }
    (s, hint.is_some())
}

/// A URL that can stand in `<…>` as a link destination and is worth a click.
fn linkable(url: &str) -> bool {
    (url.starts_with("https://") || url.starts_with("http://"))
        && !url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '<' | '>'))
}

/// A code span that shows `s` exactly: the fence is one backtick longer than the longest run
/// inside, padded with a space when `s` starts or ends with a backtick (CommonMark strips one
/// space each side). Newlines become spaces, since a line break could end the list item.
fn code_span(s: &str) -> String {
    let s = visible(s).replace('\n', " ");
    if s.is_empty() {
        // "``" would be two literal backticks, not an empty span.
        return "` `".to_string();
    }
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`')
        || s.ends_with('`')
        || (s.starts_with(' ') && s.ends_with(' ') && !s.trim().is_empty())
    {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// Tool text made safe to stand inside one list item or heading.
///
/// Backtick pairs are kept as code spans (ruff writes ``"`os` imported but unused"``); an
/// unpaired backtick is escaped so it cannot pair with one later on the line. Outside code
/// spans, characters that would start emphasis, links, HTML, tables, strikethrough or math are
/// escaped, a leading `#`, `>`, `-` or `+` cannot start a block, and a newline becomes `<br>`,
/// because a real line break could end the item or start a new one (`2. …`, `# …`).
fn inline(text: &str) -> String {
    let text = visible(text);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            let run = chars[i..].iter().take_while(|&&c| c == '`').count();
            if let Some(end) = closing_run(&chars, i + run, run) {
                let inner: String = chars[i + run..end].iter().collect();
                // Inside a code span nothing is interpreted, but a newline would still end the line.
                let _ = write!(
                    out,
                    "{}{}{}",
                    "`".repeat(run),
                    inner.replace('\n', " "),
                    "`".repeat(run)
                );
                i = end + run;
            } else {
                out.push_str(&"\\`".repeat(run));
                i += run;
            }
            continue;
        }
        // A bare URL stays as it is, so GitHub still links it: `\_` would cut the link short.
        if chars[i..].starts_with(&['h', 't', 't', 'p']) && url_len(&chars[i..]) > 0 {
            let len = url_len(&chars[i..]);
            out.extend(&chars[i..i + len]);
            i += len;
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        match c {
            '\n' => out.push_str("<br>"),
            '\\' | '*' | '[' | ']' | '<' | '>' | '|' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            // An underscore between two letters cannot open or close emphasis; leave `snake_case` readable.
            '_' if prev.is_some_and(char::is_alphanumeric)
                && next.is_some_and(char::is_alphanumeric) =>
            {
                out.push('_')
            }
            '_' => out.push_str("\\_"),
            // `&amp;` and friends would turn into the character they name.
            '&' if next.is_some_and(|n| n.is_ascii_alphanumeric() || n == '#') => {
                out.push_str("\\&")
            }
            '#' | '-' | '+' if out.is_empty() => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// Where the backtick run of exactly `len` that closes a code span opened before `from` starts.
fn closing_run(chars: &[char], from: usize, len: usize) -> Option<usize> {
    let mut j = from;
    while j < chars.len() {
        if chars[j] == '`' {
            let run = chars[j..].iter().take_while(|&&c| c == '`').count();
            if run == len {
                return Some(j);
            }
            j += run;
        } else {
            j += 1;
        }
    }
    None
}

/// The length of the `http://` or `https://` URL at the start of `chars`, up to the first
/// character that needs escaping in Markdown or cannot be part of a bare link; 0 if none.
fn url_len(chars: &[char]) -> usize {
    let start: String = chars.iter().take(8).collect();
    let Some(scheme) = ["https://", "http://"]
        .into_iter()
        .find(|s| start.starts_with(s))
    else {
        return 0;
    };
    let scheme = scheme.len();
    let rest = chars[scheme..]
        .iter()
        .take_while(|c| {
            !c.is_whitespace() && !matches!(c, '<' | '>' | '`' | '|' | '[' | ']' | '\\' | '"' | '$')
        })
        .count();
    if rest == 0 { 0 } else { scheme + rest }
}

#[cfg(test)]
mod tests {
    use super::{code_span, inline};

    #[test]
    fn code_spans_show_their_text_exactly() {
        assert_eq!(code_span("src/a.py:1:2"), "`src/a.py:1:2`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a``"), "``` `a`` ```");
        assert_eq!(code_span("two\nlines"), "`two lines`");
        assert_eq!(code_span(""), "` `");
    }

    #[test]
    fn inline_text_cannot_break_the_item() {
        assert_eq!(
            inline("`os` imported"),
            "`os` imported",
            "a pair stays a code span"
        );
        assert_eq!(
            inline("a `b"),
            "a \\`b",
            "a lone backtick cannot pair with a later one"
        );
        assert_eq!(inline("``x` y``"), "``x` y``", "runs pair by length");
        assert_eq!(
            inline("`a|*b*`"),
            "`a|*b*`",
            "nothing is escaped inside a code span"
        );
        assert_eq!(inline("# x"), "\\# x");
        assert_eq!(
            inline("a | b *c* [d](e) <f> ~g~ $h$"),
            "a \\| b \\*c\\* \\[d\\](e) \\<f\\> \\~g\\~ \\$h\\$"
        );
        assert_eq!(inline("snake_case _em_"), "snake_case \\_em\\_");
        assert_eq!(inline("&amp; & b"), "\\&amp; & b");
        assert_eq!(inline("one\ntwo\r\n3. three"), "one<br>two<br>3. three");
        assert_eq!(
            inline("see https://x.io/a_b_(c)*d for more"),
            "see https://x.io/a_b_(c)*d for more",
            "a bare URL stays clickable"
        );
        assert_eq!(
            inline("x \u{1b}[31m"),
            "x \\\\u{1b}\\[31m",
            "control characters are shown, not sent"
        );
    }
}
