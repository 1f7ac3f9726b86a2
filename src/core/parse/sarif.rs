//! `sarif`: SARIF 2.1.0 logs (`runs[].results[]`), which many tools can print.
//!
//! Read like `json_violations`: the log and each run are read one level deep and each result is
//! parsed on its own. What is taken from a result:
//! - code: `ruleId`, else `rule.id`, else the id of the rule `ruleIndex` names;
//! - severity word: `level`; absent, it is `none` for a result whose `kind` is not `fail`, else
//!   the rule's `defaultConfiguration.level`, else `warning`;
//! - message: `message.text` (with `{0}` arguments filled), `message.markdown`, the rule's
//!   `messageStrings[message.id]`, or the rule's short or full description;
//! - place: the first location with a `physicalLocation`; its `artifactLocation` (or the run
//!   artifact its `index` names) resolved through `run.originalUriBaseIds`, `file://` stripped and
//!   percent-escapes decoded; `region` start and end (end line defaults to the start line);
//! - url: the rule's `helpUri`;
//! - fix: the first of `fixes[]` whose replacements on the result's own file all have a full
//!   `deletedRegion`; such a result counts as fixable.
//!
//! Results that are not findings are skipped: `kind` `pass` or `notApplicable`, a suppression
//! that is accepted, and `baselineState: absent` (the finding has gone).
//!
//! SARIF counts columns in UTF-16 code units unless a run says `columnKind: unicodeCodePoints`;
//! the gate's `column_unit` says which unit the conversion starts from, so a tool that keeps the
//! SARIF default wants `column_unit: utf16`.

use std::borrow::Cow;
use std::collections::HashMap;

use super::pointer::{Kind, Node, Shallow, error_message, kind_of};
use super::{Normalizer, ParseContext, ParseError, RawEdit, RawFix, RawViolation, ToolOutput};

/// Reads the results of `out` into `norm`, one at a time.
pub(super) fn parse(
    out: ToolOutput,
    ctx: &ParseContext,
    norm: &mut Normalizer,
) -> Result<(), ParseError> {
    let decoded = super::pointer::decode(out.stdout);
    let text = decoded.strip_prefix('\u{feff}').unwrap_or(&decoded);
    if text.trim().is_empty() {
        return Ok(());
    }
    let log = || ctx.log_hint.to_string();
    let not_json = |e: serde_json::Error| ParseError::NotJson {
        stream: "stdout",
        detail: format!(
            "line {}, column {}: {}",
            e.line(),
            e.column(),
            error_message(&e)
        ),
        log: log(),
    };
    let not_sarif = |why: &str| ParseError::Shape {
        what: format!("its stdout is not a SARIF log: {why}"),
        log: log(),
    };
    let root = match Shallow::parse(text) {
        Some(parsed) => parsed.map_err(not_json)?,
        None => {
            serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(not_json)?;
            return Err(not_sarif("it is not a JSON object"));
        }
    };
    let Shallow::Obj(_) = root else {
        return Err(not_sarif("it is a JSON array, not an object with `runs`"));
    };
    let runs = match root.get("runs").map(|r| Shallow::parse(r.get())) {
        Some(Some(Ok(runs @ Shallow::Arr(_)))) => runs,
        _ => return Err(not_sarif("it has no `runs` array")),
    };
    for run in runs.children() {
        // A run that is not an object holds no results; other runs still count.
        let Some(Ok(run @ Shallow::Obj(_))) = Shallow::parse(run.get()) else {
            continue;
        };
        let node = |key: &str| {
            run.get(key)
                .and_then(|raw| Node::parse(raw.get()).ok())
                .unwrap_or(Node::Null)
        };
        let tool = node("tool");
        let base_ids = node("originalUriBaseIds");
        let artifacts = node("artifacts");
        let run_ctx = Run::new(&tool, &base_ids, &artifacts);
        let Some(Some(Ok(results))) = run.get("results").map(|r| Shallow::parse(r.get())) else {
            continue;
        };
        let results = results.children().into_iter();
        results
            .filter(|raw| kind_of(raw.get()) != Kind::Null)
            .filter_map(|raw| Node::parse(raw.get()).ok())
            .filter_map(|result| run_ctx.violation(&result))
            .for_each(|v| norm.push(v));
    }
    Ok(())
}

/// What a run shares among its results.
struct Run<'n, 'a> {
    rules: &'n [Node<'a>],
    rule_ids: HashMap<&'n str, usize>,
    base_ids: &'n Node<'a>,
    artifacts: &'n Node<'a>,
}

fn text<'n>(node: &'n Node, keys: &[&str]) -> Option<&'n str> {
    match node.at(keys)? {
        Node::Str(s) => Some(s.as_ref()),
        _ => None,
    }
}

fn int(node: &Node, keys: &[&str]) -> Option<i64> {
    node.at(keys).and_then(Node::to_int)
}

impl<'n, 'a> Run<'n, 'a> {
    fn new(tool: &'n Node<'a>, base_ids: &'n Node<'a>, artifacts: &'n Node<'a>) -> Self {
        let rules = match tool.at(&["driver", "rules"]) {
            Some(Node::Arr(rules)) => rules.as_slice(),
            _ => &[],
        };
        let mut rule_ids = HashMap::new();
        for (i, rule) in rules.iter().enumerate() {
            if let Some(id) = text(rule, &["id"]) {
                rule_ids.entry(id).or_insert(i);
            }
        }
        Run {
            rules,
            rule_ids,
            base_ids,
            artifacts,
        }
    }

    fn violation(&self, r: &Node) -> Option<RawViolation<'static>> {
        let kind = text(r, &["kind"]);
        if matches!(kind, Some("pass" | "notApplicable"))
            || text(r, &["baselineState"]) == Some("absent")
        {
            return None;
        }
        if let Some(Node::Arr(sups)) = r.get("suppressions")
            && sups
                .iter()
                .any(|s| matches!(text(s, &["status"]), None | Some("accepted")))
        {
            return None;
        }
        let id = text(r, &["ruleId"]).or_else(|| text(r, &["rule", "id"]));
        let index = int(r, &["ruleIndex"]).or_else(|| int(r, &["rule", "index"]));
        let rule = index
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.rules.get(i))
            .or_else(|| {
                id.and_then(|id| self.rule_ids.get(id))
                    .and_then(|i| self.rules.get(*i))
            });
        let code = id.or_else(|| rule.and_then(|r| text(r, &["id"])));
        let level = text(r, &["level"]).or(match kind {
            Some(k) if k != "fail" => Some("none"),
            _ => rule
                .and_then(|r| text(r, &["defaultConfiguration", "level"]))
                .or(Some("warning")),
        });
        let mut v = RawViolation {
            code: code.map(owned),
            severity: level.map(owned),
            message: message(r, rule).map(Cow::Owned),
            url: rule.and_then(|r| text(r, &["helpUri"])).map(owned),
            ..RawViolation::default()
        };
        let location = match r.get("locations") {
            Some(Node::Arr(locs)) => locs.iter().find_map(|l| l.get("physicalLocation")),
            _ => None,
        };
        if let Some(loc) = location {
            v.file = loc
                .get("artifactLocation")
                .and_then(|a| self.uri(a))
                .map(Cow::Owned);
            if let Some(region) = loc.get("region") {
                v.line = int(region, &["startLine"]);
                v.column = int(region, &["startColumn"]);
                v.end_column = int(region, &["endColumn"]);
                v.end_line =
                    int(region, &["endLine"]).or(v.line.filter(|_| v.end_column.is_some()));
            }
        }
        if let Some(Node::Arr(fixes)) = r.get("fixes") {
            v.fix = fixes.iter().find_map(|f| self.fix(f, v.file.as_deref()?));
        }
        v.fixable = v.fix.is_some();
        Some(v)
    }

    /// The fix's replacements on `file`; `None` when there are none or one cannot be read.
    fn fix(&self, fix: &Node, file: &str) -> Option<RawFix<'static>> {
        let Some(Node::Arr(changes)) = fix.get("artifactChanges") else {
            return None;
        };
        let mut edits = Vec::new();
        for change in changes {
            if change
                .get("artifactLocation")
                .and_then(|a| self.uri(a))
                .as_deref()
                != Some(file)
            {
                continue;
            }
            let Some(Node::Arr(reps)) = change.get("replacements") else {
                return None;
            };
            for rep in reps {
                let region = rep.get("deletedRegion")?;
                let line = int(region, &["startLine"])?;
                edits.push(RawEdit {
                    line,
                    // A region without a start column starts at the beginning of its line.
                    column: int(region, &["startColumn"]).unwrap_or(1),
                    end_line: int(region, &["endLine"]).unwrap_or(line),
                    end_column: int(region, &["endColumn"])?,
                    content: owned(text(rep, &["insertedContent", "text"]).unwrap_or_default()),
                });
            }
        }
        (!edits.is_empty()).then(|| RawFix {
            title: text(fix, &["description", "text"]).map(owned),
            edits,
        })
    }

    /// The file an `artifactLocation` names, as a path (absolute, or relative to the tool's cwd).
    fn uri(&self, loc: &Node) -> Option<String> {
        let artifact = int(loc, &["index"])
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.artifacts.get(&i.to_string()))
            .and_then(|a| a.get("location"));
        let (mut uri, mut base) = match text(loc, &["uri"]) {
            Some(u) => (u.to_string(), text(loc, &["uriBaseId"])),
            None => {
                let a = artifact?;
                (text(a, &["uri"])?.to_string(), text(a, &["uriBaseId"]))
            }
        };
        // Base ids may chain (`SRC` relative to `REPO`); the bound stops a cycle.
        for _ in 0..8 {
            let Some(id) = base.filter(|_| !is_absolute(&uri)) else {
                break;
            };
            let Some(entry) = self.base_ids.get(id) else {
                break;
            };
            if let Some(prefix) = text(entry, &["uri"]) {
                uri = if prefix.ends_with('/') {
                    format!("{prefix}{uri}")
                } else {
                    format!("{prefix}/{uri}")
                };
            }
            base = text(entry, &["uriBaseId"]);
        }
        Some(uri_to_path(&uri))
    }
}

fn message(r: &Node, rule: Option<&Node>) -> Option<String> {
    let args: Vec<String> = match r.at(&["message", "arguments"]) {
        Some(Node::Arr(a)) => a
            .iter()
            .map(|n| n.to_text().unwrap_or_default().into_owned())
            .collect(),
        _ => Vec::new(),
    };
    if let Some(t) = text(r, &["message", "text"]).or_else(|| text(r, &["message", "markdown"])) {
        return Some(fill_arguments(t, &args));
    }
    let rule = rule?;
    if let Some(id) = text(r, &["message", "id"])
        && let Some(t) = text(rule, &["messageStrings", id, "text"])
    {
        return Some(fill_arguments(t, &args));
    }
    text(rule, &["shortDescription", "text"])
        .or_else(|| text(rule, &["fullDescription", "text"]))
        .map(str::to_string)
}

/// Replaces `{0}`, `{1}`… with the message's arguments; `{{` and `}}` are literal braces.
fn fill_arguments(template: &str, args: &[String]) -> String {
    if !template.contains(['{', '}']) {
        return template.to_string();
    }
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        let arg = tail[1..].find('}').and_then(|end| {
            let n: usize = tail[1..1 + end].parse().ok()?;
            Some((args.get(n)?, end + 2))
        });
        match arg {
            Some((a, len)) => {
                out.push_str(a);
                rest = &tail[len..];
            }
            None => {
                out.push_str(&tail[..1]);
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_absolute(uri: &str) -> bool {
    uri.starts_with('/') || uri.starts_with("file:") || uri.as_bytes().get(1..3) == Some(b":/")
}

/// `file:///a%20b/c.py` → `/a b/c.py`; other strings are percent-decoded paths already.
pub(crate) fn uri_to_path(uri: &str) -> String {
    let path = match uri.strip_prefix("file://") {
        // `file://localhost/x` names the local host; `file:///x` has an empty host.
        Some(rest) => rest.strip_prefix("localhost").unwrap_or(rest),
        None => uri.strip_prefix("file:").unwrap_or(uri),
    };
    let decoded = percent_decode(path);
    // `file:///C:/x` on Windows: the drive letter follows the slash.
    match decoded.as_bytes() {
        [b'/', d, b':', ..] if d.is_ascii_alphabetic() => decoded[1..].to_string(),
        _ => decoded,
    }
}

fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A text the violation keeps after the SARIF tree is dropped.
fn owned(text: &str) -> Cow<'static, str> {
    Cow::Owned(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_become_paths() {
        assert_eq!(
            uri_to_path("file:///home/me/a%20b/c%C3%A9.py"),
            "/home/me/a b/cé.py"
        );
        assert_eq!(uri_to_path("file://localhost/x.py"), "/x.py");
        assert_eq!(uri_to_path("file:///C:/src/x.py"), "C:/src/x.py");
        assert_eq!(uri_to_path("src/x%2.py"), "src/x%2.py");
    }

    #[test]
    fn message_arguments() {
        let args = vec!["x".to_string(), "y".to_string()];
        assert_eq!(
            fill_arguments("{0} is not {1}; {{0}} {2}", &args),
            "x is not y; {0} {2}"
        );
        assert_eq!(fill_arguments("}{", &args), "}{");
    }

    #[test]
    fn base_ids_chain() {
        let bases = Node::parse(
            r#"{"SRC": {"uri": "src/", "uriBaseId": "ROOT"}, "ROOT": {"uri": "file:///repo/"}}"#,
        )
        .expect("valid");
        let (tool, artifacts) = (Node::Null, Node::Null);
        let run = Run::new(&tool, &bases, &artifacts);
        let loc = Node::parse(r#"{"uri": "a.py", "uriBaseId": "SRC"}"#).expect("valid");
        assert_eq!(run.uri(&loc).as_deref(), Some("/repo/src/a.py"));
        let unknown = Node::parse(r#"{"uri": "a.py", "uriBaseId": "%SRCROOT%"}"#).expect("valid");
        assert_eq!(run.uri(&unknown).as_deref(), Some("a.py"));
    }
}
