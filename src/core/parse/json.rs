//! `json_violations`: violations from a tool's JSON (one document) or JSON Lines output.
//!
//! The output is never held as one tree of the whole document (see `pointer`): the containers
//! along `violations_path` are read one level deep and stay on a stack, each item is parsed on
//! its own (and dropped once it is read), and a field path that climbs with `..` (eslint's
//! `../../filePath`) looks into the stack, where an array counts as a level. When no path
//! climbs, the items array itself is not kept: its items are parsed as the array is read, so the
//! largest part of the output is read once.
//!
//! Decisions worth knowing when writing a configuration:
//! - Whitespace-only output is "no violations" (mypy prints nothing when it is clean).
//! - The value at the end of `violations_path` is a list of items when it is an array, and one
//!   item when it is anything else (a tool that prints a single object per finding); `null`
//!   there, or `null` items inside the array, are nothing.
//! - A key missing along the path is an error until the first `*`; after a `*` the elements may
//!   differ, and one without the key simply contributes nothing.
//! - Values are read leniently: numbers may be numeric strings, and a string field (code,
//!   message, url…) may be a number or a boolean, which is written out.

use std::borrow::Cow;
use std::fmt;

use serde::de::{SeqAccess, Visitor};

use super::fill::apply_defaults;
use super::pointer::{Kind, Node, Shallow, error_message, kind_of};
use super::{Normalizer, ParseContext, ParseError, RawEdit, RawFix, RawViolation, ToolOutput};
use crate::core::config::{
    CompareOp, Condition, Extract, FieldPath, FixEditsSpec, JsonFormat, JsonSpec, PointerStep,
};

/// Reads the violations of `out` into `norm`, one item at a time.
pub(super) fn parse(
    spec: &JsonSpec,
    out: ToolOutput,
    ctx: &ParseContext,
    norm: &mut Normalizer,
) -> Result<(), ParseError> {
    let decoded = super::pointer::decode(out.stdout);
    // PowerShell-era tools prefix a byte-order mark, which JSON does not allow.
    let text = decoded.strip_prefix('\u{feff}').unwrap_or(&decoded);
    if text.trim().is_empty() {
        return Ok(());
    }
    let (body, line_base) = match spec.extract {
        Some(Extract::Fenced) => {
            fenced(text, |c| is_json(c, spec.format)).ok_or_else(|| ParseError::NoFence {
                stream: "stdout",
                log: ctx.log_hint.to_string(),
            })?
        }
        Some(Extract::Prefixed) | None => (text, 0),
    };
    let prefixed = spec.extract == Some(Extract::Prefixed);
    let fix = spec.fix_edits.as_ref();
    let climbs = (spec.field_map.entries().map(|(_, path)| path))
        .chain(spec.fixable_when.as_ref().map(|c| &c.path))
        .chain(fix.map(|f| &f.path))
        .chain(fix.and_then(|f| f.title.as_ref()))
        .any(|path| path.up > 0);
    let mut reader = Reader { spec, norm, climbs };
    let error = |what: WalkError, line: Option<(usize, &str)>| match what {
        WalkError::Syntax(e) => ParseError::NotJson {
            stream: "stdout",
            detail: match line {
                Some((line_no, line)) => format!(
                    "line {line_no}, column {}: {}{}",
                    e.column(),
                    error_message(&e),
                    starts_with(line)
                ),
                None => syntax_detail(&e, line_base, body),
            },
            log: ctx.log_hint.to_string(),
        },
        WalkError::Shape(what) => ParseError::Shape {
            what: match line {
                Some((line_no, _)) => format!("line {line_no}: {what}"),
                None => what,
            },
            log: ctx.log_hint.to_string(),
        },
    };
    match spec.format {
        JsonFormat::Json if body.trim().is_empty() => Ok(()),
        JsonFormat::Json => reader.document(body).map_err(|e| error(e, None)),
        // One document a line; `line_base` lines of the output come before `body`.
        JsonFormat::Jsonl => {
            for (n, line) in body.lines().enumerate() {
                let line = match line.find('{') {
                    Some(start) if prefixed => &line[start..],
                    None if prefixed => continue,
                    _ => line,
                };
                if !line.trim().is_empty() {
                    let line_no = n + 1 + line_base;
                    reader
                        .document(line)
                        .map_err(|e| error(e, Some((line_no, line))))?;
                }
            }
            Ok(())
        }
    }
}

/// "line L, column C: message", with L counted in the whole output, plus how the output starts
/// when the very first character is wrong (HTML error pages, a Python traceback…).
fn syntax_detail(e: &serde_json::Error, line_base: usize, body: &str) -> String {
    let hint = if e.line() == 1 && e.column() <= 1 {
        starts_with(body)
    } else {
        String::new()
    };
    format!(
        "line {}, column {}: {}{hint}",
        e.line() + line_base,
        e.column(),
        error_message(e)
    )
}

/// `; it starts with "…"`: the first line of the output, shortened.
fn starts_with(text: &str) -> String {
    let first = text.trim_start().lines().next().unwrap_or_default();
    let mut short: String = first.chars().take(40).collect();
    if short.len() < first.len() {
        short.push('…');
    }
    format!("; it starts with {short:?}")
}

enum WalkError {
    Syntax(serde_json::Error),
    Shape(String),
}

impl From<serde_json::Error> for WalkError {
    fn from(e: serde_json::Error) -> Self {
        WalkError::Syntax(e)
    }
}

struct Reader<'s, 'n, 'c> {
    spec: &'s JsonSpec,
    /// Where each item goes as soon as it is read.
    norm: &'n mut Normalizer<'c>,
    /// Whether some field path climbs out of the item with `..`.
    climbs: bool,
}

impl Reader<'_, '_, '_> {
    fn document(&mut self, text: &str) -> Result<(), WalkError> {
        self.walk(text, 0, false, &mut Vec::new())
    }

    /// Follows `violations_path` from step `i` at `text`; `stack` holds the containers above.
    /// `flattened` once a `*` was passed: a missing key is then nothing rather than an error.
    fn walk<'a>(
        &mut self,
        text: &'a str,
        i: usize,
        flattened: bool,
        stack: &mut Vec<Shallow<'a>>,
    ) -> Result<(), WalkError> {
        let steps = &self.spec.violations_path;
        let Some(step) = steps.get(i) else {
            return self.target(text, stack);
        };
        let container = match Shallow::parse(text) {
            Some(parsed) => parsed?,
            None if kind_of(text) == Kind::Null => {
                // Validate it all the same, so `null garbage` is still reported as not JSON.
                serde_json::from_str::<serde::de::IgnoredAny>(text)?;
                return Ok(());
            }
            None => {
                return Err(WalkError::Shape(format!(
                    "violations_path {}: the value at {} is {}, not an object or array",
                    pointer_text(steps),
                    at_text(&steps[..i]),
                    describe(&Node::parse(text)?)
                )));
            }
        };
        let children = match step {
            PointerStep::Key(key) => match container.get(key) {
                Some(child) => vec![child],
                None if flattened => return Ok(()),
                None => {
                    return Err(WalkError::Shape(format!(
                        "violations_path {}: the {} at {} has no `{key}`. Check the path against the tool's output",
                        pointer_text(steps),
                        match container {
                            Shallow::Arr(_) => "array",
                            Shallow::Obj(_) => "object",
                        },
                        at_text(&steps[..i]),
                    )));
                }
            },
            PointerStep::Each => container.children(),
        };
        let flattened = flattened || matches!(step, PointerStep::Each);
        stack.push(container);
        let read = children
            .into_iter()
            .try_for_each(|child| self.walk(child.get(), i + 1, flattened, stack));
        stack.pop();
        read
    }

    /// The value at the end of the path: an array of items, or one item.
    fn target<'a>(&mut self, text: &'a str, stack: &mut Vec<Shallow<'a>>) -> Result<(), WalkError> {
        match kind_of(text) {
            Kind::Array if !self.climbs => {
                let mut de = serde_json::Deserializer::from_str(text);
                serde::Deserializer::deserialize_seq(&mut de, Items(self))?;
                Ok(de.end()?)
            }
            Kind::Array => {
                let items: Shallow = serde_json::from_str(text)?;
                let children = items.children();
                stack.push(items);
                let read = children
                    .into_iter()
                    .filter(|child| kind_of(child.get()) != Kind::Null)
                    .try_for_each(|child| self.item(child.get(), stack));
                stack.pop();
                read
            }
            Kind::Null => {
                serde_json::from_str::<serde::de::IgnoredAny>(text)?;
                Ok(())
            }
            Kind::Object | Kind::Scalar => self.item(text, stack),
        }
    }

    /// Reads one violation item from its text; `ancestors` are the containers above it.
    fn item<'a>(&mut self, text: &'a str, ancestors: &[Shallow<'a>]) -> Result<(), WalkError> {
        self.push(&Node::parse(text)?, ancestors);
        Ok(())
    }

    /// Turns one item into a violation.
    fn push<'a>(&mut self, node: &Node<'a>, ancestors: &[Shallow<'a>]) {
        let spec = self.spec;
        let fm = &spec.field_map;
        let find = |path: Option<&FieldPath>| find(node, ancestors, path?);
        let text = |path: Option<&FieldPath>| match find(path)? {
            Cow::Borrowed(n) => n.to_text(),
            Cow::Owned(n) => n.to_text().map(|t| Cow::Owned(t.into_owned())),
        };
        let int = |path: Option<&FieldPath>| find(path).and_then(|n| n.to_int());
        let holds = |c: &Condition| {
            let equal = Node::equals_text(find(Some(&c.path)).as_deref(), &c.value);
            (c.op == CompareOp::Eq) == equal
        };
        if spec.filter.as_ref().is_some_and(|c| !holds(c)) {
            return;
        }
        let mut v = RawViolation {
            file: text(fm.file.as_ref()),
            line: int(fm.line.as_ref()),
            column: int(fm.column.as_ref()),
            end_line: int(fm.end_line.as_ref()),
            end_column: int(fm.end_column.as_ref()),
            code: text(fm.code.as_ref()),
            message: text(fm.message.as_ref()),
            severity: text(fm.severity.as_ref()),
            url: text(fm.url.as_ref()),
            fixable: match &spec.fixable_when {
                Some(c) => holds(c),
                None => spec.defaults.fixable.unwrap_or(false),
            },
            fix: None,
        };
        if let Some(fe) = &spec.fix_edits {
            let edits = find(Some(&fe.path)).and_then(|n| edits(&n, fe));
            v.fix = edits.map(|edits| RawFix {
                title: text(fe.title.as_ref()),
                edits,
            });
        }
        apply_defaults(&mut v, &spec.defaults);
        self.norm.push(v);
    }
}

/// Reads the items array at the end of the path, an item at a time.
struct Items<'r, 's, 'n, 'c>(&'r mut Reader<'s, 'n, 'c>);

impl<'de> Visitor<'de> for Items<'_, '_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(node) = seq.next_element::<Node<'de>>()? {
            if !matches!(node, Node::Null) {
                self.0.push(&node, &[]);
            }
        }
        Ok(())
    }
}

/// The value at a configured path: inside the item, or `path.up` containers above it (the
/// innermost container is one level up).
fn find<'n, 'a>(
    item: &'n Node<'a>,
    ancestors: &[Shallow<'a>],
    path: &FieldPath,
) -> Option<Cow<'n, Node<'a>>> {
    if path.up == 0 {
        return item.at(&path.keys).map(Cow::Borrowed);
    }
    let container = ancestors.get(ancestors.len().checked_sub(path.up)?)?;
    let (first, rest) = path.keys.split_first()?;
    let node = Node::parse(container.get(first)?.get()).ok()?;
    node.at(rest).cloned().map(Cow::Owned)
}

/// The edits of one fix; `None` (the fix is dropped) when any edit lacks a field (or there are
/// none), since a partial edit would corrupt the file.
fn edits(node: &Node<'_>, fe: &FixEditsSpec) -> Option<Vec<RawEdit<'static>>> {
    let list = match node {
        Node::Arr(items) => items.as_slice(),
        Node::Obj(_) => std::slice::from_ref(node),
        _ => return None,
    };
    // Paths inside an edit stay inside it: there is nothing of interest above an edit.
    fn at<'n, 'a>(edit: &'n Node<'a>, p: &FieldPath) -> Option<&'n Node<'a>> {
        if p.up == 0 { edit.at(&p.keys) } else { None }
    }
    let int = |edit: &Node<'_>, p: &FieldPath| at(edit, p).and_then(Node::to_int);
    let out: Option<Vec<RawEdit>> = list
        .iter()
        .map(|edit| {
            Some(RawEdit {
                line: int(edit, &fe.line)?,
                column: int(edit, &fe.column)?,
                end_line: int(edit, &fe.end_line)?,
                end_column: int(edit, &fe.end_column)?,
                content: match at(edit, &fe.content)? {
                    // `null` content is a deletion for some tools.
                    Node::Null => Cow::Borrowed(""),
                    n => Cow::Owned(n.to_text()?.into_owned()),
                },
            })
        })
        .collect();
    out.filter(|e| !e.is_empty())
}

/// Whether a fence's content is what `format` promises (for bare ``` fences).
fn is_json(content: &str, format: JsonFormat) -> bool {
    match format {
        JsonFormat::Json => serde_json::from_str::<serde::de::IgnoredAny>(content).is_ok(),
        JsonFormat::Jsonl => {
            let mut lines = content.lines().filter(|l| !l.trim().is_empty()).peekable();
            lines.peek().is_some()
                && lines.all(|l| serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok())
        }
    }
}

/// The content of the first ```` ```json ```` fence in prose, else of the first bare ```` ``` ````
/// fence whose content `accept`s, with the number of lines before the content (for messages).
/// A fence left open at the end (an answer cut off) runs to the end of the text.
fn fenced(text: &str, accept: impl Fn(&str) -> bool) -> Option<(&str, usize)> {
    struct Fence<'t> {
        info: &'t str,
        start: usize,
        end: usize,
        line: usize,
    }
    let mut fences = Vec::new();
    // The open fence and how many backticks close it.
    let mut open: Option<(usize, Fence)> = None;
    let mut pos = 0;
    for (n, raw_line) in text.split_inclusive('\n').enumerate() {
        let line = raw_line.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let ticks = trimmed.bytes().take_while(|b| *b == b'`').count();
        let rest = &trimmed[ticks..];
        if open.is_none() && ticks >= 3 && indent <= 3 && !rest.contains('`') {
            let fence = Fence {
                info: rest.split_whitespace().next().unwrap_or(""),
                start: pos + raw_line.len(),
                end: text.len(),
                line: n + 1,
            };
            open = Some((ticks, fence));
        } else if let Some((_, fence)) =
            open.take_if(|(need, _)| ticks >= *need && rest.trim().is_empty())
        {
            fences.push(Fence { end: pos, ..fence });
        }
        pos += raw_line.len();
    }
    fences.extend(open.map(|(_, fence)| fence));
    let content = |f: &Fence<'_>| (&text[f.start.min(f.end)..f.end], f.line);
    fences
        .iter()
        .find(|f| f.info.eq_ignore_ascii_case("json"))
        .map(content)
        .or_else(|| {
            fences
                .iter()
                .filter(|f| f.info.is_empty())
                .map(content)
                .find(|(c, _)| accept(c))
        })
}

fn pointer_text(steps: &[PointerStep]) -> String {
    if steps.is_empty() {
        return "\"\"".to_string();
    }
    steps
        .iter()
        .map(|s| match s {
            PointerStep::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
            PointerStep::Each => "/*".to_string(),
        })
        .collect()
}

fn at_text(steps: &[PointerStep]) -> String {
    if steps.is_empty() {
        "the root".to_string()
    } else {
        pointer_text(steps)
    }
}

fn describe(node: &Node) -> &'static str {
    match node {
        Node::Null => "null",
        Node::Bool(_) => "a boolean",
        Node::Int(_) | Node::UInt(_) | Node::Float(_) => "a number",
        Node::Str(_) => "a string",
        Node::Arr(_) => "an array",
        Node::Obj(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_prefers_json_info() {
        let text = "intro\n```\n[1]\n```\nmore\n```json\n{\"a\": 1}\n```\n";
        assert_eq!(fenced(text, |_| true), Some(("{\"a\": 1}\n", 6)));
    }

    #[test]
    fn bare_fence_only_when_it_is_json() {
        let text = "```\nnot json\n```\n```\n[2]\n```";
        assert_eq!(
            fenced(text, |c| is_json(c, JsonFormat::Json)),
            Some(("[2]\n", 4))
        );
        assert_eq!(
            fenced("```python\nx = 1\n```\n", |c| is_json(c, JsonFormat::Json)),
            None
        );
        assert_eq!(fenced("no fence at all", |_| true), None);
    }

    #[test]
    fn fence_cut_off_runs_to_the_end() {
        assert_eq!(
            fenced("answer:\n  ```JSON\n{\"a\":", |_| true),
            Some(("{\"a\":", 2))
        );
    }

    #[test]
    fn longer_fences_close_only_with_as_many_ticks() {
        let text = "````json\n[\"```\"]\n```\n````\n";
        assert_eq!(fenced(text, |_| true), Some(("[\"```\"]\n```\n", 1)));
    }

    #[test]
    fn pointer_text_escapes() {
        let steps = vec![
            PointerStep::Key("a/b".into()),
            PointerStep::Each,
            PointerStep::Key("~".into()),
        ];
        assert_eq!(pointer_text(&steps), "/a~1b/*/~0");
        assert_eq!(pointer_text(&[]), "\"\"");
    }
}
