//! `json_violations`: violations from a tool's JSON (one document) or JSON Lines output.
//!
//! The output is never held as a tree of the whole document (see `pointer`). When no field path
//! climbs out of the item, the document is streamed in one pass: everything off
//! `violations_path` is skipped, and of each item only the keys the configuration reads are
//! kept, then dropped once the item is read. When a path climbs with `..` (eslint's
//! `../../filePath`), the containers along the path are read one level deep instead and stay on a
//! stack, each item is parsed on its own, and `..` looks into the stack.
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
use std::sync::atomic::{AtomicBool, Ordering};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::json_parallel::{self, Feeder};
use super::json_split;
use super::parallel::{self, PARALLEL_MIN_BYTES, PIECE_BYTES};

use super::item_slots::{ItemPlan, SlotPath, Slots};
use super::pointer::{Kind, Node, Shallow, error_message, kind_of};
use super::{Normalizer, ParseContext, ParseError, RawEdit, RawFix, RawViolation, ToolOutput};
use crate::core::config::{
    CompareOp, Extract, FieldPath, FixEditsSpec, JsonFormat, JsonSpec, PointerStep, Template,
};

/// A large document's items go to worker threads (when its items array cannot be read in pieces,
/// see `json_split`) only on a machine with this many threads: the streaming thread then skips
/// every item once more (about a quarter of the work of reading it), which pays only when three
/// workers or more run beside it. On two cores it was measured slower under load and barely
/// faster idle. JSON Lines have no such extra pass and use any count.
const DOCUMENT_POOL_MIN_THREADS: usize = 4;

/// How many threads a large output may use.
#[derive(Debug, Clone, Copy)]
struct Threads {
    /// For the items of one large document; below 2, none.
    document: usize,
    /// For the lines of large JSON Lines; below 2, none.
    lines: usize,
    /// How many pieces a large document's items array may be read in at once (see
    /// `json_split`); below 2, one.
    split: usize,
}

/// Reads the violations of `out` into `norm`, one item at a time.
pub(super) fn parse(
    spec: &JsonSpec,
    out: ToolOutput,
    ctx: &ParseContext,
    norm: &mut Normalizer,
) -> Result<(), ParseError> {
    let threads = parallel::threads();
    let document = if threads >= DOCUMENT_POOL_MIN_THREADS {
        threads
    } else {
        0
    };
    parse_with(
        spec,
        out,
        ctx,
        norm,
        Threads {
            document,
            lines: threads,
            split: threads,
        },
        None,
    )
}

fn parse_with(
    spec: &JsonSpec,
    out: ToolOutput,
    ctx: &ParseContext,
    norm: &mut Normalizer,
    threads: Threads,
    cuts: Option<&[usize]>,
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
        None => (text, 0),
    };
    let not_json = |detail: String| ParseError::NotJson {
        stream: "stdout",
        detail,
        log: ctx.log_hint.to_string(),
    };
    let reading = Reading::new(spec);
    let mut reader = Reader {
        pool: threads.document,
        split: threads.split,
        cuts,
        ..Reader::new(spec, &reading, norm)
    };
    match spec.format {
        JsonFormat::Json => {
            if body.trim().is_empty() {
                return Ok(());
            }
            reader.document(body).map_err(|e| match e {
                WalkError::Syntax(e) => not_json(syntax_detail(&e, line_base, body)),
                WalkError::Shape(what) => ParseError::Shape {
                    what,
                    log: ctx.log_hint.to_string(),
                },
            })?;
        }
        JsonFormat::Jsonl => {
            if threads.lines < 2 || body.len() < PARALLEL_MIN_BYTES {
                return read_lines(&mut reader, body, line_base, ctx);
            }
            return json_parallel::lines(
                body,
                line_base,
                threads.lines,
                reader.norm,
                |piece, first, norm| {
                    read_lines(&mut Reader::new(spec, &reading, norm), piece, first, ctx)
                },
            );
        }
    }
    Ok(())
}

/// Reads JSON Lines, one document a line; `line_base` lines of the output come before `text`.
fn read_lines(
    reader: &mut Reader,
    text: &str,
    line_base: usize,
    ctx: &ParseContext,
) -> Result<(), ParseError> {
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line_no = n + 1 + line_base;
        reader.document(line).map_err(|e| match e {
            WalkError::Syntax(e) => ParseError::NotJson {
                stream: "stdout",
                detail: format!(
                    "line {line_no}, column {}: {}{}",
                    e.column(),
                    error_message(&e),
                    starts_with(line)
                ),
                log: ctx.log_hint.to_string(),
            },
            WalkError::Shape(what) => ParseError::Shape {
                what: format!("line {line_no}: {what}"),
                log: ctx.log_hint.to_string(),
            },
        })?;
    }
    Ok(())
}

/// Which configured path: the field map's, the fixable condition's and the fix's.
#[derive(Debug, Clone, Copy)]
enum Which {
    File,
    Line,
    Column,
    EndLine,
    EndColumn,
    Code,
    Message,
    Severity,
    Url,
    Fixable,
    FixEdits,
    FixTitle,
}

impl Which {
    const ALL: [Which; 12] = [
        Which::File,
        Which::Line,
        Which::Column,
        Which::EndLine,
        Which::EndColumn,
        Which::Code,
        Which::Message,
        Which::Severity,
        Which::Url,
        Which::Fixable,
        Which::FixEdits,
        Which::FixTitle,
    ];

    fn path(self, spec: &JsonSpec) -> Option<&FieldPath> {
        let fm = &spec.field_map;
        match self {
            Which::File => fm.file.as_ref(),
            Which::Line => fm.line.as_ref(),
            Which::Column => fm.column.as_ref(),
            Which::EndLine => fm.end_line.as_ref(),
            Which::EndColumn => fm.end_column.as_ref(),
            Which::Code => fm.code.as_ref(),
            Which::Message => fm.message.as_ref(),
            Which::Severity => fm.severity.as_ref(),
            Which::Url => fm.url.as_ref(),
            Which::Fixable => spec.fixable_when.as_ref().map(|c| &c.path),
            Which::FixEdits => spec.fix_edits.as_ref().map(|f| &f.path),
            Which::FixTitle => spec.fix_edits.as_ref().and_then(|f| f.title.as_ref()),
        }
    }
}

/// What is read of each item, worked out once per parse: the slots of the paths that stay inside
/// the item (see [`ItemPlan`]) and where each configured path's value is kept.
struct Reading {
    plan: ItemPlan,
    at: [Option<SlotPath>; Which::ALL.len()],
    /// When the plan reads the fix's edits as records: where each edit's content, line, column,
    /// end line and end column are kept in a record.
    edit_at: [Option<SlotPath>; 5],
    /// Whether some path climbs out of the item with `..`.
    climbs: bool,
}

impl Reading {
    fn new(spec: &JsonSpec) -> Self {
        let inside = |p: &&FieldPath| p.up == 0;
        // The fix's edits, when their path stays inside the item, are read as a list of records.
        let list = spec.fix_edits.as_ref().filter(|fe| fe.path.up == 0);
        let edit_paths = list.map(|fe| {
            [
                &fe.content,
                &fe.line,
                &fe.column,
                &fe.end_line,
                &fe.end_column,
            ]
        });
        let plan = ItemPlan::new(
            Which::ALL
                .iter()
                .filter(|w| !(list.is_some() && matches!(w, Which::FixEdits)))
                .filter_map(|w| w.path(spec))
                .filter(inside)
                .map(|p| p.keys.as_slice()),
            list.zip(edit_paths).map(|(fe, paths)| {
                let keys = paths.into_iter().filter(inside).map(|p| p.keys.as_slice());
                (fe.path.keys.as_slice(), keys.collect())
            }),
        );
        let at = Which::ALL.map(|w| {
            w.path(spec)
                .filter(inside)
                .filter(|_| !(plan.lists() && matches!(w, Which::FixEdits)))
                .and_then(|p| plan.locate(&p.keys))
        });
        let edit_at = edit_paths.map_or([None, None, None, None, None], |paths| {
            paths.map(|p| {
                Some(p)
                    .filter(inside)
                    .and_then(|p| plan.locate_in_record(&p.keys))
            })
        });
        let climbs = Which::ALL
            .iter()
            .filter_map(|w| w.path(spec))
            .any(|p| p.up > 0);
        Reading {
            plan,
            at,
            edit_at,
            climbs,
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
    /// What to read of each item.
    reading: &'s Reading,
    /// Where each item goes as soon as it is read.
    norm: &'n mut Normalizer<'c>,
    /// A shape problem met while streaming (serde only carries it as an opaque error).
    shape: Option<String>,
    /// How many worker threads a large document may use (below 2, none).
    pool: usize,
    /// The worker threads reading the items of a large document.
    feeder: Option<&'n mut Feeder>,
    /// How many pieces a large document's items array may be read in (below 2, one).
    split: usize,
    /// Where to cut the items array instead of guessing (tests give any positions).
    cuts: Option<&'s [usize]>,
    /// Set when this reader streams a piece of the document that ends at a cut: the flag is set
    /// when another piece failed, to stop early.
    head: Option<&'n AtomicBool>,
    /// The stream ran out of input in the items array between two items, as it does when the
    /// cut is an item start.
    cut_reached: bool,
}

impl<'s, 'n, 'c> Reader<'s, 'n, 'c> {
    fn new(spec: &'s JsonSpec, reading: &'s Reading, norm: &'n mut Normalizer<'c>) -> Self {
        Reader {
            spec,
            reading,
            norm,
            shape: None,
            pool: 0,
            feeder: None,
            split: 0,
            cuts: None,
            head: None,
            cut_reached: false,
        }
    }

    fn document(&mut self, text: &str) -> Result<(), WalkError> {
        if self.reading.climbs {
            let mut stack = Vec::new();
            return self.walk(text, 0, false, &mut stack);
        }
        // Nothing climbs out of an item, so nothing above it must be kept: read the document in
        // one pass, keeping only the wanted parts of each item; a large one's items array is read
        // in pieces at once, or its items on worker threads.
        if self.split_read(text) {
            return Ok(());
        }
        if self.pool < 2 || self.feeder.is_some() || text.len() < PARALLEL_MIN_BYTES {
            return self.stream(text);
        }
        let (spec, reading) = (self.spec, self.reading);
        let (streamed, items) = json_parallel::with_pool(
            &reading.plan,
            text,
            self.norm,
            self.pool,
            |feeder, norm| {
                Reader {
                    feeder: Some(feeder),
                    ..Reader::new(spec, reading, norm)
                }
                .stream(text)
            },
            |slots, norm| push_item(spec, reading, norm, slots, &[]),
        );
        streamed.and(items.map_err(WalkError::Syntax))
    }

    /// Reads a large document whose `violations_path` is object keys with its items array cut in
    /// pieces, each read on a thread of its own (see `json_split`); `false`, with nothing read,
    /// when the document is not read so (too small, no likely cut, a cut that was not an item
    /// start, or anything one pass could read otherwise or report).
    fn split_read(&mut self, text: &str) -> bool {
        if self.feeder.is_some() || self.head.is_some() {
            return false;
        }
        // A key that is a number could also be an array's index; those are left to one pass.
        let mut keys = Vec::new();
        for step in &self.spec.violations_path {
            match step {
                PointerStep::Key(k) if k.is_empty() || !k.bytes().all(|b| b.is_ascii_digit()) => {
                    keys.push(k.as_str());
                }
                _ => return false,
            }
        }
        let cuts = match self.cuts {
            Some(given) => {
                let mut cuts: Vec<usize> = given
                    .iter()
                    .copied()
                    .filter(|&c| json_split::is_cut(text.as_bytes(), c))
                    .collect();
                cuts.sort_unstable();
                cuts.dedup();
                cuts
            }
            None if self.split >= 2 && text.len() >= PARALLEL_MIN_BYTES => {
                json_split::cut_guesses(text, self.split)
            }
            None => return false,
        };
        if cuts.is_empty() {
            return false;
        }
        let (spec, reading) = (self.spec, self.reading);
        let read = json_split::read_pieces(
            text,
            &cuts,
            &json_split::lead(&keys),
            // Tests, which give the cuts, read small chunks, so that chunks are cut in every
            // layout they try.
            if self.cuts.is_some() { 16 } else { PIECE_BYTES },
            self.norm,
            |piece, to_cut, failed, norm| {
                let mut reader = Reader {
                    head: to_cut.then_some(failed),
                    ..Reader::new(spec, reading, norm)
                };
                match reader.stream(piece) {
                    Ok(()) => !to_cut,
                    Err(WalkError::Syntax(e)) => to_cut && e.is_eof() && reader.cut_reached,
                    Err(WalkError::Shape(_)) => false,
                }
            },
        );
        if !read {
            // What the first piece read is read again in one pass.
            self.norm.take();
        }
        #[cfg(test)]
        split_props::note_split(read);
        read
    }

    /// Reads the document in one pass along `violations_path`.
    fn stream(&mut self, text: &str) -> Result<(), WalkError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let streamed = DeserializeSeed::deserialize(
            Step {
                reader: self,
                i: 0,
                flattened: false,
            },
            &mut de,
        )
        .and_then(|()| de.end());
        match (streamed, self.shape.take()) {
            (_, Some(what)) => Err(WalkError::Shape(what)),
            (Err(e), None) => Err(WalkError::Syntax(e)),
            (Ok(()), None) => Ok(()),
        }
    }

    fn missing_key_error(&self, i: usize, key: &str, in_array: bool) -> String {
        let steps = &self.spec.violations_path;
        format!(
            "violations_path {}: the {} at {} has no `{key}`. Check the path against the tool's output",
            pointer_text(steps),
            if in_array { "array" } else { "object" },
            at_text(&steps[..i]),
        )
    }

    fn not_container_error(&self, i: usize, what: &str) -> String {
        let steps = &self.spec.violations_path;
        format!(
            "violations_path {}: the value at {} is {what}, not an object or array",
            pointer_text(steps),
            at_text(&steps[..i])
        )
    }

    /// Follows `violations_path` from step `i` at `text`; `stack` holds the containers above.
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
                let node = Node::parse(text)?;
                return Err(WalkError::Shape(
                    self.not_container_error(i, describe(&node)),
                ));
            }
        };
        match step {
            PointerStep::Key(key) => match container.get(key) {
                Some(child) => {
                    stack.push(container);
                    let r = self.walk(child.get(), i + 1, flattened, stack);
                    stack.pop();
                    r
                }
                None if flattened => Ok(()),
                None => Err(WalkError::Shape(self.missing_key_error(
                    i,
                    key,
                    matches!(container, Shallow::Arr(_)),
                ))),
            },
            PointerStep::Each => {
                stack.push(container);
                let r =
                    self.each_child(stack, |me, child, stack| me.walk(child, i + 1, true, stack));
                stack.pop();
                r
            }
        }
    }

    /// The value at the end of the path: an array of items, or one item.
    fn target<'a>(&mut self, text: &'a str, stack: &mut Vec<Shallow<'a>>) -> Result<(), WalkError> {
        match kind_of(text) {
            Kind::Array => {
                let Some(parsed) = Shallow::parse(text) else {
                    return Ok(());
                };
                stack.push(parsed?);
                let r = self.each_child(stack, |me, child, stack| {
                    if kind_of(child) == Kind::Null {
                        Ok(())
                    } else {
                        me.item(child, stack)
                    }
                });
                stack.pop();
                r
            }
            Kind::Null => {
                serde_json::from_str::<serde::de::IgnoredAny>(text)?;
                Ok(())
            }
            Kind::Object | Kind::Scalar => self.item(text, stack),
        }
    }

    /// Calls `f` for each child of the container on top of `stack`, without copying the list
    /// (the root array of a large output holds every violation).
    fn each_child<'a>(
        &mut self,
        stack: &mut Vec<Shallow<'a>>,
        mut f: impl FnMut(&mut Self, &'a str, &mut Vec<Shallow<'a>>) -> Result<(), WalkError>,
    ) -> Result<(), WalkError> {
        let mut n = 0;
        loop {
            let child = match stack.last() {
                Some(Shallow::Arr(items)) => items.get(n).copied(),
                Some(Shallow::Obj(entries)) => entries.get(n).map(|(_, v)| *v),
                None => None,
            };
            let Some(child) = child else { return Ok(()) };
            f(self, child.get(), stack)?;
            n += 1;
        }
    }

    /// Reads one violation item from its text.
    fn item<'a>(&mut self, text: &'a str, ancestors: &[Shallow<'a>]) -> Result<(), WalkError> {
        let mut slots = self.reading.plan.slots();
        self.reading.plan.read(text, &mut slots)?;
        self.item_slots(&slots, ancestors);
        Ok(())
    }

    /// Turns one item read into slots into a violation, after the items handed to workers
    /// before it.
    fn item_slots<'a>(&mut self, slots: &Slots<'a>, ancestors: &[Shallow<'a>]) {
        if let Some(feeder) = self.feeder.as_deref_mut() {
            feeder.settle(self.norm);
        }
        push_item(self.spec, self.reading, self.norm, slots, ancestors);
    }

    /// An item that is a scalar.
    fn item_scalar(&mut self, node: Node<'_>) {
        let mut slots = self.reading.plan.slots();
        self.reading.plan.scalar(node, &mut slots);
        self.item_slots(&slots, &[]);
    }
}

/// Turns one item, read into slots, into a violation in `norm`.
fn push_item<'a>(
    spec: &JsonSpec,
    reading: &Reading,
    norm: &mut Normalizer,
    slots: &Slots<'a>,
    ancestors: &[Shallow<'a>],
) {
    let item = Item {
        spec,
        reading,
        slots,
        ancestors,
    };
    let int_of = |w: Which| item.lookup(w, |n| n.and_then(Node::to_int)).flatten();
    let mut v = RawViolation {
        file: item.text(Which::File),
        line: int_of(Which::Line),
        column: int_of(Which::Column),
        end_line: int_of(Which::EndLine),
        end_column: int_of(Which::EndColumn),
        code: item.text(Which::Code),
        message: item.text(Which::Message),
        severity: item.text(Which::Severity),
        url: item.text(Which::Url),
        fixable: false,
        fix: None,
    };
    v.fixable = match &spec.fixable_when {
        Some(c) => {
            let equal = item
                .lookup(Which::Fixable, |n| Node::equals_text(n, &c.value))
                .unwrap_or_else(|| Node::equals_text(None, &c.value));
            (c.op == CompareOp::Eq) == equal
        }
        None => spec.defaults.fixable.unwrap_or(false),
    };
    if let Some(fe) = &spec.fix_edits {
        v.fix = item.edits(fe).map(|edits| RawFix {
            title: item.text(Which::FixTitle),
            edits,
        });
    }
    apply_defaults(&mut v, &spec.defaults);
    norm.push(v);
}

/// Streams the document along `violations_path` from step `i`, skipping what is off the path.
struct Step<'r, 's, 'n, 'c> {
    reader: &'r mut Reader<'s, 'n, 'c>,
    i: usize,
    flattened: bool,
}

impl<'s, 'n, 'c> Step<'_, 's, 'n, 'c> {
    fn at_end(&self) -> bool {
        self.i >= self.reader.spec.violations_path.len()
    }

    fn next(&mut self, flattened: bool) -> Step<'_, 's, 'n, 'c> {
        Step {
            reader: self.reader,
            i: self.i + 1,
            flattened: flattened || self.flattened,
        }
    }

    /// Skips each item of the array at the end of the path (which checks its syntax) and hands
    /// it to the workers, which read it.
    fn hand_over<'de, A: SeqAccess<'de>>(
        &mut self,
        seq: &mut A,
        feeder: &mut Feeder,
    ) -> Result<(), A::Error> {
        let norm = &mut *self.reader.norm;
        while let Some(raw) = seq.next_element::<&RawValue>()? {
            if !feeder.push(raw.get(), norm) {
                return Err(de::Error::custom(
                    "an item that is not a slice of the output",
                ));
            }
        }
        Ok(())
    }

    /// Reads the items of the array at the end of the path up to the cut, where the text ends:
    /// notes whether the input ran out between two items (the cut is an item start) rather than
    /// inside one. Stops early when another piece failed.
    fn head_items<'de, A: SeqAccess<'de>>(
        &mut self,
        seq: &mut A,
        stop: &AtomicBool,
    ) -> Result<(), A::Error> {
        let plan = &self.reader.reading.plan;
        let mut slots = plan.slots();
        loop {
            let mut entered = false;
            let seed = Entered {
                seed: plan.item(&mut slots),
                entered: &mut entered,
            };
            match seq.next_element_seed(seed) {
                Ok(Some(true)) => {}
                Ok(Some(false)) => self.reader.item_slots(&slots, &[]),
                Ok(None) => return Ok(()),
                Err(e) => {
                    self.reader.cut_reached = !entered;
                    return Err(e);
                }
            }
            if stop.load(Ordering::Relaxed) {
                return Err(de::Error::custom("stopped: a piece could not be read"));
            }
        }
    }

    /// A scalar at the end of the path is one item; before it, a shape error.
    fn scalar<E: de::Error>(self, node: Node<'_>, what: &str) -> Result<(), E> {
        if self.at_end() {
            self.reader.item_scalar(node);
            return Ok(());
        }
        self.reader.shape = Some(self.reader.not_container_error(self.i, what));
        Err(E::custom("shape"))
    }
}

impl<'de> DeserializeSeed<'de> for Step<'_, '_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Step<'_, '_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.scalar(Node::Bool(v), "a boolean")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.scalar(Node::Int(v), "a number")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.scalar(
            i64::try_from(v).map(Node::Int).unwrap_or(Node::UInt(v)),
            "a number",
        )
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.scalar(Node::Float(v), "a number")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.scalar(Node::Str(Cow::Borrowed(v)), "a string")
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let reading = self.reader.reading;
        let step = self.reader.spec.violations_path.get(self.i);
        match step {
            None => {
                if let Some(feeder) = self.reader.feeder.take() {
                    let read = self.hand_over(&mut seq, feeder);
                    self.reader.feeder = Some(feeder);
                    return read;
                }
                if let Some(stop) = self.reader.head {
                    return self.head_items(&mut seq, stop);
                }
                // One list of slots for every item of the array.
                let mut slots = reading.plan.slots();
                while let Some(null) = seq.next_element_seed(reading.plan.item(&mut slots))? {
                    if !null {
                        self.reader.item_slots(&slots, &[]);
                    }
                }
            }
            Some(PointerStep::Each) => while seq.next_element_seed(self.next(true))?.is_some() {},
            Some(PointerStep::Key(key)) => {
                let index = key
                    .parse::<usize>()
                    .ok()
                    .filter(|_| key.bytes().all(|b| b.is_ascii_digit()));
                let mut n = 0;
                let mut found = false;
                loop {
                    let more = if Some(n) == index {
                        found = true;
                        seq.next_element_seed(self.next(false))?.is_some()
                    } else {
                        seq.next_element::<de::IgnoredAny>()?.is_some()
                    };
                    if !more {
                        break;
                    }
                    n += 1;
                }
                if !found && !self.flattened {
                    self.reader.shape = Some(self.reader.missing_key_error(self.i, key, true));
                    return Err(de::Error::custom("shape"));
                }
            }
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let step = self.reader.spec.violations_path.get(self.i);
        match step {
            None => {
                let mut slots = self.reader.reading.plan.slots();
                self.reader.reading.plan.item(&mut slots).visit_map(map)?;
                self.reader.item_slots(&slots, &[]);
            }
            Some(PointerStep::Each) => {
                while map.next_key::<de::IgnoredAny>()?.is_some() {
                    map.next_value_seed(self.next(true))?;
                }
            }
            Some(PointerStep::Key(key)) => {
                let mut found = false;
                while let Some(k) = map.next_key::<Cow<'de, str>>()? {
                    if k == key.as_str() {
                        found = true;
                        map.next_value_seed(self.next(false))?;
                    } else {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
                if !found && !self.flattened {
                    self.reader.shape = Some(self.reader.missing_key_error(self.i, key, false));
                    return Err(de::Error::custom("shape"));
                }
            }
        }
        Ok(())
    }
}

/// A seed that notes whether the parser got as far as the value (rather than failing before it).
struct Entered<'e, S> {
    seed: S,
    entered: &'e mut bool,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Entered<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        *self.entered = true;
        self.seed.deserialize(d)
    }
}

/// A violation item, read into slots, and the containers above it.
struct Item<'n, 'a> {
    spec: &'n JsonSpec,
    reading: &'n Reading,
    slots: &'n Slots<'a>,
    ancestors: &'n [Shallow<'a>],
}

impl<'n, 'a> Item<'n, 'a> {
    /// The value of a path that stays inside the item.
    fn inside(&self, which: Which) -> Option<&'n Node<'a>> {
        self.reading.at[which as usize]
            .as_ref()?
            .get(self.slots.values())
    }

    /// The text at a configured path: borrowed from the item (or the output) when it lies inside
    /// the item.
    fn text(&self, which: Which) -> Option<Cow<'n, str>> {
        let path = which.path(self.spec)?;
        if path.up == 0 {
            return self.inside(which).and_then(Node::to_text);
        }
        self.lookup(which, |n| n.and_then(Node::to_string_value))
            .flatten()
            .map(Cow::Owned)
    }

    /// The edits of the fix at `fe.path`.
    fn edits(&self, fe: &FixEditsSpec) -> Option<Vec<RawEdit<'n>>> {
        if fe.path.up == 0 && self.reading.plan.lists() {
            let at = &self.reading.edit_at;
            let records = self.reading.plan.records(self.slots)?;
            return edits_of(records.map(|record| {
                at.each_ref()
                    .map(|p| p.as_ref().and_then(|p| p.get(record)))
            }));
        }
        if fe.path.up == 0 {
            return self.inside(Which::FixEdits).and_then(|n| edits(n, fe));
        }
        self.lookup(Which::FixEdits, |n| {
            n.and_then(|n| edits(n, fe)).map(|list| {
                list.into_iter()
                    .map(|e| RawEdit {
                        content: Cow::Owned(e.content.into_owned()),
                        ..e
                    })
                    .collect()
            })
        })
        .flatten()
    }

    /// Calls `f` with the value at a configured path: inside the item, or `up` containers above
    /// it; `None` when the path is not configured.
    fn lookup<R>(&self, which: Which, f: impl FnOnce(Option<&Node<'a>>) -> R) -> Option<R> {
        let path = which.path(self.spec)?;
        if path.up == 0 {
            return Some(f(self.inside(which)));
        }
        Some(
            match self
                .ancestors
                .len()
                .checked_sub(path.up)
                .and_then(|i| self.ancestors.get(i))
            {
                Some(container) => container.lookup(&path.keys, f),
                None => f(None),
            },
        )
    }
}

/// The edits of one fix; `None` (the fix is dropped) when any edit lacks a field, since a
/// partial edit would corrupt the file.
fn edits<'n>(node: &'n Node<'_>, fe: &FixEditsSpec) -> Option<Vec<RawEdit<'n>>> {
    let list = match node {
        Node::Arr(items) => items.as_slice(),
        Node::Obj(_) => std::slice::from_ref(node),
        _ => return None,
    };
    // Paths inside an edit stay inside it: there is nothing of interest above an edit.
    let at = |edit: &'n Node<'_>, p: &FieldPath| {
        if p.up == 0 { edit.at(&p.keys) } else { None }
    };
    edits_of(list.iter().map(|edit| {
        [
            &fe.content,
            &fe.line,
            &fe.column,
            &fe.end_line,
            &fe.end_column,
        ]
        .map(|p| at(edit, p))
    }))
}

/// The edits from each edit's content, line, column, end line and end column; `None` when any
/// edit lacks one (or there are none).
fn edits_of<'n, 'a: 'n>(
    list: impl Iterator<Item = [Option<&'n Node<'a>>; 5]>,
) -> Option<Vec<RawEdit<'n>>> {
    let int = |n: Option<&Node>| n.and_then(Node::to_int);
    let out: Option<Vec<RawEdit>> = list
        .map(|[content, line, column, end_line, end_column]| {
            Some(RawEdit {
                line: int(line)?,
                column: int(column)?,
                end_line: int(end_line)?,
                end_column: int(end_column)?,
                content: match content? {
                    // `null` content is a deletion for some tools.
                    Node::Null => Cow::Borrowed(""),
                    n => n.to_text()?,
                },
            })
        })
        .collect();
    out.filter(|e| !e.is_empty())
}

/// Fills what the field map did not find. Placeholders are rendered from the values the map
/// found, before any default is applied, so the result does not depend on the order of fields.
pub(super) fn apply_defaults(v: &mut RawViolation<'_>, d: &crate::core::config::Defaults) {
    let missing =
        |field: &Option<Cow<'_, str>>, t: &Option<Template>| field.is_none() && t.is_some();
    if !(missing(&v.file, &d.file)
        || missing(&v.code, &d.code)
        || missing(&v.message, &d.message)
        || missing(&v.url, &d.url)
        || (v.severity.is_none() && d.severity.is_some()))
    {
        return;
    }
    let nums = [v.line, v.column, v.end_line, v.end_column].map(|n| n.map(|n| n.to_string()));
    let snapshot = v.clone();
    let lookup = |f: &str| -> Option<&str> {
        match f {
            "file" => snapshot.file.as_deref(),
            "line" => nums[0].as_deref(),
            "column" => nums[1].as_deref(),
            "end_line" => nums[2].as_deref(),
            "end_column" => nums[3].as_deref(),
            "code" => snapshot.code.as_deref(),
            "message" => snapshot.message.as_deref(),
            "severity" => snapshot.severity.as_deref(),
            "url" => snapshot.url.as_deref(),
            _ => None,
        }
    };
    let fill = |field: &mut Option<Cow<'_, str>>, t: &Option<Template>| {
        if field.is_none()
            && let Some(t) = t
        {
            *field = Some(Cow::Owned(t.render(lookup)));
        }
    };
    fill(&mut v.file, &d.file);
    fill(&mut v.code, &d.code);
    fill(&mut v.message, &d.message);
    fill(&mut v.url, &d.url);
    if v.severity.is_none() {
        v.severity = d.severity.map(|s| Cow::Borrowed(s.as_str()));
    }
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
    let mut open: Option<(usize, &str, usize, usize)> = None;
    let mut pos = 0;
    for (n, raw_line) in text.split_inclusive('\n').enumerate() {
        let line = raw_line.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let ticks = trimmed.bytes().take_while(|b| *b == b'`').count();
        let rest = &trimmed[ticks..];
        match open {
            None if ticks >= 3 && indent <= 3 && !rest.contains('`') => {
                let info = rest.split_whitespace().next().unwrap_or("");
                open = Some((ticks, info, pos + raw_line.len(), n + 1));
            }
            Some((need, info, start, first_line)) if ticks >= need && rest.trim().is_empty() => {
                fences.push(Fence {
                    info,
                    start,
                    end: pos,
                    line: first_line,
                });
                open = None;
            }
            _ => {}
        }
        pos += raw_line.len();
    }
    if let Some((_, info, start, first_line)) = open {
        fences.push(Fence {
            info,
            start,
            end: text.len(),
            line: first_line,
        });
    }
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
#[path = "json_split_props.rs"]
mod split_props;

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

    /// Parses `stdout` with a `json_violations` gate built from `parsing` (YAML, indented by six
    /// spaces), with the given threads, cutting a document's items array at `cuts` when given.
    pub(super) fn parse_using(
        parsing: &str,
        stdout: &str,
        threads: Threads,
        cuts: Option<&[usize]>,
    ) -> Result<super::super::Parsed, ParseError> {
        use crate::core::config::{ConfigSource, ParserSpec, parse_config};
        let yaml = format!(
            "version: 1\ngates:\n  g:\n    command: [tool]\n    parsing:\n      strategy: json_violations\n{parsing}"
        );
        let config = parse_config(&yaml, ConfigSource::Embedded).expect("valid configuration");
        let gate = config.gate("g").expect("the gate");
        let ParserSpec::Json(spec) = &gate.parser else {
            panic!("a JSON gate")
        };
        let root = std::path::Path::new("/ws");
        let ctx = ParseContext {
            gate,
            root,
            cwd: root,
            log_hint: "log",
        };
        let mut norm = Normalizer::new(ctx, (0, 0));
        let out = ToolOutput {
            stdout: stdout.as_bytes(),
            stderr: b"",
            exit_code: Some(1),
        };
        parse_with(spec, out, &ctx, &mut norm, threads, cuts)?;
        Ok(norm.finish())
    }

    pub(super) const ONE_PASS: Threads = Threads {
        document: 0,
        lines: 0,
        split: 0,
    };
    const POOL: Threads = Threads {
        document: 2,
        lines: 2,
        split: 0,
    };

    /// Items with escapes, non-ASCII text, nulls, fixes and skipped keys; between the arrays,
    /// single objects and bare strings at the end of the path (read by the streaming thread
    /// between the workers' batches, so the order is at stake).
    fn large_document(entries: usize) -> String {
        let entry = |k: usize| -> String {
            if k % 50 == 7 {
                return format!(
                    r#"{{"problems": {{"f": "single_{k}.py", "l": {k}, "m": "one object"}}}}"#
                );
            }
            if k % 70 == 9 {
                return format!(r#"{{"problems": "bare string {k}"}}"#);
            }
            let items: Vec<String> = (0..40)
                .map(|i| match i % 9 {
                    4 => "null".to_string(),
                    6 => format!(
                        r#"{{"f": "d{k}/caf\u00e9 {i}.py", "l": "{i}", "m": "tab\there \"q\" é ☕", "noise": [1, {{"deep": [true, null]}}]}}"#
                    ),
                    _ => format!(
                        r#"{{"f": "m{k}.py", "l": {i}, "m": "message {k} {i}", "fix": {{"edits": [{{"content": "x{i}", "at": [{i}, 1], "to": [{i}, 3]}}]}}}}"#
                    ),
                })
                .collect();
            format!(r#"{{"problems": [{}]}}"#, items.join(",\n  "))
        };
        let body: Vec<String> = (0..entries)
            .map(|k| format!("\"k{k}\": {}", entry(k)))
            .collect();
        format!("{{\"files\": {{{}}}}}", body.join(",\n"))
    }

    const LARGE_PARSING: &str = r#"      violations_path: /files/*/problems
      field_map: { file: f, line: l, message: m }
      fix_edits: { path: fix/edits, content: content, line: at/0, column: at/1, end_line: to/0, end_column: to/1 }
"#;

    #[test]
    fn the_document_pool_reads_what_one_pass_reads() {
        let doc = large_document(2_500);
        assert!(doc.len() > 2 * PARALLEL_MIN_BYTES);
        let one = parse_using(LARGE_PARSING, &doc, ONE_PASS, None).expect("valid");
        let pooled = parse_using(LARGE_PARSING, &doc, POOL, None).expect("valid");
        assert!(one.violations.len() > 80_000);
        assert!(one.violations.iter().any(|v| v.fix.is_some()));
        assert_eq!(one, pooled);
    }

    #[test]
    fn the_document_pool_reports_what_one_pass_reports() {
        let doc = large_document(2_500);
        // A syntax error late in the document, inside an item the workers would read.
        let at = doc.len() - 5_000 + doc[doc.len() - 5_000..].find("\"m\":").expect("an item");
        let broken = format!("{}\"m\" 1{}", &doc[..at], &doc[at + 4..]);
        let one = parse_using(LARGE_PARSING, &broken, ONE_PASS, None).expect_err("broken");
        let pooled = parse_using(LARGE_PARSING, &broken, POOL, None).expect_err("broken");
        assert!(matches!(one, ParseError::NotJson { .. }), "{one}");
        assert_eq!(one, pooled);
        // A shape error after many items: a path that needs an object meets a number.
        let shaped = format!(
            "{{\"files\": [{}, 5]}}",
            "{\"problems\": [{\"m\": \"x\"}]}, "
                .repeat(60_000)
                .trim_end_matches(", ")
        );
        let parsing =
            "      violations_path: /files/*/problems/0\n      field_map: { message: m }\n";
        let one = parse_using(parsing, &shaped, ONE_PASS, None);
        let pooled = parse_using(parsing, &shaped, POOL, None);
        assert_eq!(one, pooled);
    }

    #[test]
    fn the_lines_pool_reads_and_reports_what_one_pass_does() {
        let parsing = "      format: jsonl\n      field_map: { file: f, line: l, message: m }\n";
        let lines: Vec<String> = (0..50_000)
            .map(|i| match i % 13 {
                3 => String::new(),
                5 => format!("{{\"f\": \"caf\\u00e9/{i}.py\", \"l\": {i}, \"m\": \"é\"}}\r"),
                7 => "null".to_string(),
                _ => format!("{{\"f\": \"m{i}.py\", \"l\": {i}, \"m\": \"message number {i}\", \"x\": [1, 2]}}"),
            })
            .collect();
        let text = lines.join("\n");
        assert!(text.len() > PARALLEL_MIN_BYTES);
        let one = parse_using(parsing, &text, ONE_PASS, None).expect("valid");
        assert!(one.violations.len() > 40_000);
        assert_eq!(one, parse_using(parsing, &text, POOL, None).expect("valid"));
        let mut bad = lines.clone();
        bad[41_000] = "{\"f\": 1,".to_string();
        bad[45_000] = "[1, 2, 3]".to_string();
        let bad = bad.join("\n");
        let one = parse_using(parsing, &bad, ONE_PASS, None).expect_err("broken");
        assert!(one.to_string().contains("line 41001"), "{one}");
        assert_eq!(
            one,
            parse_using(parsing, &bad, POOL, None).expect_err("broken")
        );
    }
}
