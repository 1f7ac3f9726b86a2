//! `--format sarif`: SARIF 2.1.0, for code-scanning uploads and SARIF viewers.
//!
//! One run whose driver is qgates itself: each gate is not a SARIF tool of its own because the
//! gates ran as one invocation, share one exit code and one summary. Rules are one per gate and
//! code (`ruff_lint/F401`, or the gate id for a gate without codes), results keep the report
//! order, and a gate that could not run becomes a tool-execution notification.
//!
//! Violation columns count Unicode scalar values and `end_column` is exclusive, which is exactly
//! SARIF's `columnKind: unicodeCodePoints` with its exclusive `endColumn`: numbers pass through.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::{GateResult, GateStatus, Report, known};
use crate::core::violation::{Edit, Severity, Violation};

/// The schema the output follows (the OASIS errata01 one, vendored for the tests).
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Where relative artifact URIs are rooted: GitHub code scanning and SARIF viewers resolve
/// `%SRCROOT%` to the checkout, which is the workspace root the paths are relative to.
const SRCROOT: &str = "%SRCROOT%";

pub fn render(report: &Report) -> String {
    let mut rules = Rules::default();
    let mut results: Vec<Value> = Vec::new();

    for g in &report.gates {
        for v in &g.violations {
            let (id, index) = rules.of(g, v);
            let fix = v.file.as_ref().zip(v.fix.as_ref());
            let fixes = fix.and_then(|(file, f)| sarif_fix(file, &f.title, &f.edits));
            results.push(without_nulls(json!({
                "ruleId": id,
                "ruleIndex": index,
                "level": level(v.severity),
                "message": { "text": message_text(&v.message) },
                "locations": locations(v),
                "fixes": fixes.map(|fix| json!([fix])),
                // Against the run's reference (`core::novelty`), when it was compared.
                "baselineState": v.new.map(|new| if new { "new" } else { "unchanged" }),
                "properties": without_nulls(json!({
                    "gate": g.id,
                    "allowFail": g.allow_fail.then_some(true),
                })),
            })));
        }
    }

    // The reference's findings that are gone: as they were there.
    let fixed = report.novelty.iter().flat_map(|n| &n.fixed_violations);
    for v in fixed {
        let Some(g) = report.gates.iter().find(|g| *g.id == *v.gate) else {
            continue;
        };
        let (id, index) = rules.of(g, v);
        results.push(without_nulls(json!({
            "ruleId": id,
            "ruleIndex": index,
            "level": level(v.severity),
            "message": { "text": message_text(&v.message) },
            "locations": locations(v),
            "baselineState": "absent",
            "properties": { "gate": g.id },
        })));
    }

    let warnings = report.warnings.iter().map(|w| {
        json!({
            "level": "warning",
            "message": { "text": w },
        })
    });
    let notifications: Vec<Value> = report
        .gates
        .iter()
        .filter(|g| g.status == GateStatus::Error)
        .map(|g| {
            let error = g.error.as_deref().unwrap_or("no reason recorded");
            let log = g.log.as_ref();
            json!({
                "level": if g.allow_fail { "warning" } else { "error" },
                "message": { "text": format!("{} ({}) could not run: {error}", g.name, g.id) },
                "properties": without_nulls(json!({
                    "gate": g.id,
                    "stdout": log.map(|l| &l.stdout),
                    "stderr": log.map(|l| &l.stderr),
                })),
            })
        })
        .chain(warnings)
        .collect();

    let invocation = without_nulls(json!({
        "executionSuccessful": !report.gates.iter().any(|g| g.status == GateStatus::Error),
        "exitCode": report.exit_code(),
        "toolExecutionNotifications": (!notifications.is_empty()).then_some(notifications),
    }));
    let driver = without_nulls(json!({
        "name": "qgates",
        "informationUri": information_uri(),
        "version": env!("CARGO_PKG_VERSION"),
        "rules": rules.rules,
    }));

    let log = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": driver },
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    format!("{log:#}\n")
}

/// The run's rules, one per gate and code, in the order results first name them.
#[derive(Default)]
struct Rules {
    rules: Vec<Value>,
    index: HashMap<String, usize>,
}

impl Rules {
    /// The rule id of `v` (of gate `g`) and its index, the rule added the first time.
    fn of(&mut self, g: &GateResult, v: &Violation) -> (String, usize) {
        // An empty code is no code: `ruff_lint/` would name nothing.
        let code = v.code.as_deref().filter(|c| !c.trim().is_empty());
        let id = match code {
            Some(code) => format!("{}/{code}", g.id),
            None => g.id.clone(),
        };
        // Keyed by the rule id itself, so `ruleId` and `rules[ruleIndex].id` can never disagree.
        let rules = &mut self.rules;
        let index = *self.index.entry(id.clone()).or_insert_with(|| {
            rules.push(rule(&id, code, &g.name, v.url.as_deref()));
            rules.len() - 1
        });
        // A later violation may carry the documentation link the first one lacked.
        if let (Some(url), Some(Value::Object(r))) = (v.url.as_deref(), rules.get_mut(index))
            && !r.contains_key("helpUri")
            && absolute_uri(url)
        {
            r.insert("helpUri".into(), json!(url));
        }
        (id, index)
    }
}

/// Where a violation is, when it names a file.
fn locations(v: &Violation) -> Option<Value> {
    v.file.as_ref().map(|file| {
        let region = region(v.line, v.column, v.end_line, v.end_column);
        json!([{ "physicalLocation": without_nulls(json!({
            "artifactLocation": artifact(file),
            "region": region,
        })) }])
    })
}

/// `object` without its null members: the fields that have no value are left out.
fn without_nulls(mut object: Value) -> Value {
    if let Value::Object(members) = &mut object {
        members.retain(|_, value| !value.is_null());
    }
    object
}

/// The project's home page from Cargo metadata, left out while the manifest names none: SARIF
/// wants an absolute URI here, and an invented one would be worse than none.
fn information_uri() -> Option<&'static str> {
    [env!("CARGO_PKG_REPOSITORY"), env!("CARGO_PKG_HOMEPAGE")]
        .into_iter()
        .find(|u| absolute_uri(u))
}

fn rule(id: &str, code: Option<&str>, gate_name: &str, url: Option<&str>) -> Value {
    let short = match code {
        Some(code) => format!("{gate_name} {code}"),
        None => gate_name.to_string(),
    };
    without_nulls(json!({
        "id": id,
        "name": code.unwrap_or(id),
        "shortDescription": { "text": short },
        "helpUri": url.filter(|u| absolute_uri(u)),
    }))
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Hint => "note",
    }
}

/// SARIF requires a non-empty message; a tool that gave none still produced a finding.
fn message_text(m: &str) -> &str {
    if m.trim().is_empty() {
        "(no message)"
    } else {
        m
    }
}

fn artifact(file: &str) -> Value {
    json!({ "uri": encode_uri_path(file), "uriBaseId": SRCROOT })
}

/// A SARIF region from 1-based positions, leaving out what is unknown (0 counts as unknown) or
/// inconsistent (an end before the start), since a wrong region misplaces the annotation.
fn region(
    line: Option<u32>,
    column: Option<u32>,
    end_line: Option<u32>,
    end_column: Option<u32>,
) -> Option<Value> {
    let start_line = known(line)?;
    let start_column = known(column);
    let end_line = known(end_line);
    let ends_after_start = end_line.is_none_or(|e| e >= start_line);
    let same_line = end_line.is_none_or(|e| e == start_line);
    let end_column = known(end_column)
        .filter(|&ec| ends_after_start && !(same_line && start_column.is_some_and(|sc| ec < sc)));
    Some(without_nulls(json!({
        "startLine": start_line,
        "startColumn": start_column,
        "endLine": end_line.filter(|_| ends_after_start),
        "endColumn": end_column,
    })))
}

/// A SARIF fix from the tool's edits, all in the violation's file. Left out whole if any edit
/// has an impossible position: applying part of a fix could break the file.
fn sarif_fix(file: &str, title: &str, edits: &[Edit]) -> Option<Value> {
    if edits.is_empty() {
        return None;
    }
    let mut replacements = Vec::with_capacity(edits.len());
    for e in edits {
        let valid = e.line > 0
            && e.column > 0
            && e.end_line > 0
            && e.end_column > 0
            && (e.end_line, e.end_column) >= (e.line, e.column);
        if !valid {
            return None;
        }
        // Without insertedContent a replacement is a pure deletion (SARIF §3.57.3).
        let inserted = (!e.content.is_empty()).then(|| json!({ "text": e.content }));
        replacements.push(without_nulls(json!({
            "deletedRegion": { "startLine": e.line, "startColumn": e.column, "endLine": e.end_line, "endColumn": e.end_column },
            "insertedContent": inserted,
        })));
    }
    let description = (!title.trim().is_empty()).then(|| json!({ "text": title }));
    Some(without_nulls(json!({
        "description": description,
        "artifactChanges": [{ "artifactLocation": artifact(file), "replacements": replacements }],
    })))
}

/// A relative POSIX path as an RFC 3986 relative reference: every byte outside the unreserved
/// set, `/` and the sub-delimiters is percent-encoded (UTF-8, upper-case hex). `:` is encoded
/// too, since in a first segment it would turn the path into a scheme (`c:x.py`); `%`, `?`, `#`,
/// spaces and non-ASCII characters cannot appear raw in a URI at all.
pub fn encode_uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
            || matches!(
                b,
                b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b'@'
            );
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether `u` is an absolute URI SARIF accepts for `helpUri`/`informationUri`: a scheme, then
/// no character that a URI cannot hold raw.
fn absolute_uri(u: &str) -> bool {
    let Some((scheme, rest)) = u.split_once(':') else {
        return false;
    };
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    scheme_ok
        && !rest.is_empty()
        && rest.chars().all(|c| {
            c.is_ascii_graphic()
                && !matches!(c, '"' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}')
        })
}
