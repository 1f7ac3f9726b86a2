//! `strategy: junit`: JUnit XML test reports (pytest `--junitxml`, vitest's `junit` reporter,
//! jest-junit, go-junit-report, cargo-nextest). Every `<testcase>` counts; one with a
//! `<failure>` or `<error>` is a violation, one with `<skipped>` is counted only. Read as a
//! stream of events, so a report of many thousands of tests is never held as a tree.
//!
//! A report that is not one (bad XML, cut off, another root element, no test at all) is an
//! error naming the file: a test gate must never pass because its report could not be read.

use std::borrow::Cow;
use std::collections::HashSet;

use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, BytesStart, Event};

use super::junit_message::failure_message;
use super::junit_place::{Place, place_of, test_id};
use super::{Normalizer, ParseContext, ParseError, RawViolation};

pub use crate::core::report::TestCounts;

/// The failure text kept per test to find its place: the innermost frames are near its end for
/// Python and near its start for JavaScript, so a long text keeps both ends.
const MAX_TEXT: usize = 64 * 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Passed,
    Failed,
    Errored,
}

/// One `<testcase>` while it is read.
struct Case {
    classname: String,
    name: String,
    file: Option<String>,
    line: Option<i64>,
    outcome: Outcome,
    skipped: bool,
    message: Option<String>,
    kind: Option<String>,
    text: String,
}

/// A failed test's violation, held until the whole report is read: a Go test that failed only
/// because a subtest did (`TestRates` for `TestRates/high`) says nothing of its own, and its
/// subtest may come before or after it.
struct Failed {
    classname: String,
    name: String,
    /// Neither a message nor a failure text of its own.
    hollow: bool,
    violation: RawViolation<'static>,
}

/// Reads `xml`, a JUnit report named `shown` in messages, pushing one violation per failed or
/// errored test into `norm`, and returns the counts.
pub(super) fn parse(
    xml: &[u8],
    shown: &str,
    ctx: &ParseContext,
    norm: &mut Normalizer,
) -> Result<TestCounts, ParseError> {
    let bad = |what: String| ParseError::Report {
        file: shown.to_string(),
        what,
    };
    let text = report_text(xml).map_err(bad)?;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut report = Reading::new(ctx);
    loop {
        let event = reader.read_event().map_err(|e| {
            let (line, column) = line_column(xml, reader.error_position() as usize);
            bad(format!(
                "is not well-formed XML at line {line}, column {column}: {e}"
            ))
        })?;
        match event {
            Event::Start(ref e) => report.open(e, false).map_err(bad)?,
            Event::Empty(ref e) => report.open(e, true).map_err(bad)?,
            Event::End(e) => report.close(AsRef::<str>::as_ref(&e.local_name())),
            Event::Text(t) if report.in_problem => report.keep(&t.xml10_content()),
            Event::CData(t) if report.in_problem => report.keep(&t.xml10_content()),
            Event::GeneralRef(r) if report.in_problem => report.keep(&resolved(&r)),
            Event::Eof => break,
            _ => {}
        }
    }
    let (counts, failed) = report.end_of_report(xml).map_err(bad)?;
    push_failures(&failed, norm);
    Ok(counts)
}

/// The report as text, or why it cannot be one.
fn report_text(xml: &[u8]) -> Result<&str, String> {
    if xml.iter().all(u8::is_ascii_whitespace) {
        return Err("is empty: the tool wrote no test results".to_string());
    }
    std::str::from_utf8(xml).map_err(|e| {
        let (line, column) = line_column(xml, e.valid_up_to());
        format!("is not UTF-8 text (line {line}, column {column}), so it is no JUnit XML report")
    })
}

/// What an entity or character reference in a failure's text stands for (nothing when unknown).
fn resolved<'r>(r: &'r BytesRef) -> Cow<'r, str> {
    match r.resolve_char_ref() {
        Ok(Some(c)) => Cow::Owned(c.to_string()),
        _ => Cow::Borrowed(resolve_predefined_entity(&r.xml10_content()).unwrap_or("")),
    }
}

/// A report while it is read, element by element.
struct Reading<'c> {
    ctx: &'c ParseContext<'c>,
    counts: TestCounts,
    /// The elements open around the current event, innermost last.
    open: Vec<String>,
    case: Option<Case>,
    /// Per open `<testsuite>`: whether pytest wrote it (see `new_case`).
    suites: Vec<bool>,
    failed: Vec<Failed>,
    /// Inside a `<failure>` or `<error>` of the current case: its text is kept.
    in_problem: bool,
    root_seen: bool,
}

impl<'c> Reading<'c> {
    fn new(ctx: &'c ParseContext<'c>) -> Self {
        Reading {
            ctx,
            counts: TestCounts::default(),
            open: Vec::new(),
            case: None,
            suites: Vec::new(),
            failed: Vec::new(),
            in_problem: false,
            root_seen: false,
        }
    }

    /// An opening tag, or a whole element when `empty` (`<testcase … />`).
    fn open(&mut self, e: &BytesStart, empty: bool) -> Result<(), String> {
        let name = AsRef::<str>::as_ref(&e.local_name()).to_string();
        if !self.root_seen {
            self.root_seen = true;
            if name != "testsuites" && name != "testsuite" {
                return Err(format!(
                    "is not a JUnit report: its root element is <{name}>, not <testsuites> or <testsuite>"
                ));
            }
        }
        match (name.as_str(), self.case.as_mut()) {
            ("testsuite", None) if !empty => {
                self.suites
                    .push(attribute(e, "name").as_deref() == Some(PYTEST_SUITE));
            }
            ("testcase", None) => {
                let c = new_case(e, self.suites.last() == Some(&true));
                if empty {
                    self.finish(c);
                } else {
                    self.case = Some(c);
                }
            }
            ("failure" | "error", Some(c)) if c.outcome == Outcome::Passed => {
                c.outcome = if name == "failure" {
                    Outcome::Failed
                } else {
                    Outcome::Errored
                };
                c.message = attribute(e, "message");
                c.kind = attribute(e, "type");
                self.in_problem = !empty;
            }
            ("skipped", Some(c)) => c.skipped = true,
            _ => {}
        }
        if !empty {
            self.open.push(name);
        }
        Ok(())
    }

    fn close(&mut self, name: &str) {
        self.open.pop();
        match name {
            "failure" | "error" => self.in_problem = false,
            "testsuite" if self.case.is_none() => {
                self.suites.pop();
            }
            "testcase" => {
                if let Some(c) = self.case.take() {
                    self.finish(c);
                }
                self.in_problem = false;
            }
            _ => {}
        }
    }

    /// Counts a test case that has been read, and keeps its violation when it failed.
    fn finish(&mut self, c: Case) {
        self.counts.total += 1;
        match c.outcome {
            Outcome::Passed => {
                if c.skipped {
                    self.counts.skipped += 1;
                }
                return;
            }
            Outcome::Failed => self.counts.failed += 1,
            Outcome::Errored => self.counts.errored += 1,
        }
        let Place { file, line, column } =
            place_of(&c.file, c.line, &c.text, &c.classname, self.ctx);
        let said = failure_message(c.message.as_deref(), &c.text);
        let hollow = said.is_none();
        let message = said
            .or(c.kind.clone().filter(|k| !k.trim().is_empty()))
            .unwrap_or_else(|| match c.outcome {
                Outcome::Errored => "the test could not run".to_string(),
                _ => "the test failed".to_string(),
            });
        self.failed.push(Failed {
            violation: RawViolation {
                file: file.map(Cow::Owned),
                line,
                column,
                code: Some(Cow::Owned(test_id(&c.classname, &c.name, self.ctx))),
                message: Some(Cow::Owned(message)),
                severity: Some(Cow::Borrowed("error")),
                ..RawViolation::default()
            },
            classname: c.classname,
            name: c.name,
            hollow,
        });
    }

    /// Adds failure text to the current case, keeping the first and last `MAX_TEXT / 2` bytes.
    fn keep(&mut self, more: &str) {
        let Some(c) = &mut self.case else {
            return;
        };
        c.text.push_str(more);
        if c.text.len() > MAX_TEXT {
            let half = MAX_TEXT / 2;
            let head = c.text.floor_char_boundary(half);
            let tail = c.text.ceil_char_boundary(c.text.len() - half);
            c.text.replace_range(head..tail, "\n…\n");
        }
    }

    /// The counts and the failed tests once the whole report is read, or why it is no report:
    /// `xml` places the end of one that was cut off.
    fn end_of_report(self, xml: &[u8]) -> Result<(TestCounts, Vec<Failed>), String> {
        if let Some(inside) = self.open.last() {
            let (line, column) = line_column(xml, xml.len());
            return Err(format!(
                "ends at line {line}, column {column} before <{inside}> is closed: it was cut off (the tool stopped while writing it?)"
            ));
        }
        if !self.root_seen {
            return Err("holds no XML element, so it is no JUnit report".to_string());
        }
        if self.counts.total == 0 {
            return Err("has no tests: the tool found none to run (check its configuration and the test files' names)".to_string());
        }
        Ok((self.counts, self.failed))
    }
}

/// Pushes the failed tests' violations, but not twice the same, nor a Go test's that failed
/// only through a subtest.
fn push_failures(failed: &[Failed], norm: &mut Normalizer) {
    let failed_parents = failed_parents(failed);
    // jest-junit writes a test file that cannot load twice (an `<error>` with jest's text, then
    // a `<failure>` with the same error as JSON): both count, the second adds no violation.
    let mut seen = HashSet::new();
    for f in failed {
        let v = &f.violation;
        let repeated = !seen.insert((v.code.clone(), v.file.clone(), v.line, v.column));
        let through_subtest =
            f.hollow && failed_parents.contains(&(f.classname.as_str(), f.name.as_str()));
        if !repeated && !through_subtest {
            norm.push(v.clone());
        }
    }
}

/// Each `(classname, TestX)` with a failed subtest `TestX/…` (at any depth), found once so a
/// report of many failures is not compared pairwise.
fn failed_parents(failed: &[Failed]) -> HashSet<(&str, &str)> {
    let mut parents = HashSet::new();
    for f in failed {
        for (at, _) in f.name.match_indices('/') {
            parents.insert((f.classname.as_str(), &f.name[..at]));
        }
    }
    parents
}

/// The `name` pytest gives its `<testsuite>` (its `junit_suite_name` option, left at its default).
const PYTEST_SUITE: &str = "pytest";

/// A `<testcase>`'s attributes. pytest's `line` (its xunit1 family) is the 0-based line of the
/// test's `def`, where every other runner's is 1-based: in a suite pytest wrote it is moved to
/// the 1-based line the test starts at.
fn new_case(e: &BytesStart, by_pytest: bool) -> Case {
    let line: Option<i64> = attribute(e, "line").and_then(|l| l.trim().parse().ok());
    Case {
        classname: attribute(e, "classname").unwrap_or_default(),
        name: attribute(e, "name").unwrap_or_default(),
        file: attribute(e, "file").filter(|f| !f.trim().is_empty()),
        line: line.map(|l| if by_pytest { l.saturating_add(1) } else { l }),
        outcome: Outcome::Passed,
        skipped: false,
        message: None,
        kind: None,
        text: String::new(),
    }
}

/// An attribute's value with entities resolved (`&#10;` stays a line break), `None` when absent.
fn attribute(e: &BytesStart, key: &str) -> Option<String> {
    let attr = e.try_get_attribute(key).ok().flatten()?;
    Some(
        attr.normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map(Cow::into_owned)
            .unwrap_or_else(|_| attr.value.clone().into_owned()),
    )
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}
