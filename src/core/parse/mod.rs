//! Turning a tool's output into violations: one module per strategy, and the normalization
//! they share (paths relative to the root, offsets, severities, column units).

pub mod columns;
mod coverage;
mod exit_code;
mod fill;
mod json;
mod junit;
mod junit_message;
mod junit_place;
mod pointer;
pub(crate) mod sarif;
mod saved;
mod text;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::core::parse::columns::{LineIndex, convert_column, tool_column_in_chars};
pub use junit::TestCounts;
/// A tool's output as the readers see it: text, without terminal colour and hyperlink codes.
pub use pointer::decode as tool_text;
pub use saved::{
    OutputSource, ReadError, SavedOutput, parse_saved_output, parse_saved_with_reports,
};

use crate::core::config::{ColumnUnit, Gate, ParserSpec, Reader, TabCount, Templates};
use crate::core::report::CoverageTotals;
pub use crate::core::scope::changed_lines::DiffBase;
use crate::core::violation::{Edit, Fix, Severity, Violation};
use crate::core::workspace::paths::lexical_clean;

/// What a gate's process left behind.
#[derive(Debug, Clone, Copy)]
pub struct ToolOutput<'a> {
    pub stdout: &'a [u8],
    pub stderr: &'a [u8],
    pub exit_code: Option<i32>,
}

/// Where the output came from, for path resolution and messages.
#[derive(Debug, Clone, Copy)]
pub struct ParseContext<'a> {
    pub gate: &'a Gate,
    /// The workspace root (absolute).
    pub root: &'a Path,
    /// The directory the tool ran in (absolute).
    pub cwd: &'a Path,
    /// Where the full output is kept, named in messages (e.g. `.qgates/runs/…/mypy.stdout`).
    pub log_hint: &'a str,
    /// What the run compares with, for readers of changed lines (`strategy: coverage`); `None`
    /// outside a run (`qgates parse`).
    pub diff: Option<&'a DiffBase>,
}

/// The violations of one output, already normalized.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Parsed {
    pub violations: Vec<Violation>,
    /// Violations whose file lies outside the workspace root (dropped, but counted).
    pub outside_root: usize,
    /// What a coverage report measured (`strategy: coverage`).
    pub coverage: Option<CoverageTotals>,
    /// The tests a test report counted (`strategy: junit`).
    pub tests: Option<TestCounts>,
}

/// A report file a reader reads instead of the tool's output (its `output_file`).
#[derive(Debug, Clone, Copy)]
pub struct ReportFile<'a> {
    pub bytes: &'a [u8],
    /// Where it is kept, as shown in messages (e.g. `.qgates/runs/…/pytest.reports/junit.xml`).
    pub shown: &'a str,
}

/// Output that does not have the promised shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("its {stream} is not valid JSON ({detail}); the full output is in {log}")]
    NotJson {
        stream: &'static str,
        detail: String,
        log: String,
    },
    #[error("its {stream} has no ```json fenced block; the full output is in {log}")]
    NoFence { stream: &'static str, log: String },
    #[error("{what}; the full output is in {log}")]
    Shape { what: String, log: String },
    /// A report file (`output_file`) that is not what its reader reads.
    #[error("the report {file} {what}")]
    Report { file: String, what: String },
}

/// A violation as a strategy read it, before normalization: raw path, raw numbers in the tool's
/// own base and column unit, raw severity word. Texts borrow from the output where they can, so
/// reading one allocates nothing that normalization does not keep.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RawViolation<'a> {
    pub file: Option<Cow<'a, str>>,
    pub line: Option<i64>,
    pub column: Option<i64>,
    pub end_line: Option<i64>,
    pub end_column: Option<i64>,
    pub code: Option<Cow<'a, str>>,
    pub message: Option<Cow<'a, str>>,
    pub severity: Option<Cow<'a, str>>,
    pub url: Option<Cow<'a, str>>,
    pub fixable: bool,
    pub fix: Option<RawFix<'a>>,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct RawFix<'a> {
    pub title: Option<Cow<'a, str>>,
    pub edits: Vec<RawEdit<'a>>,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct RawEdit<'a> {
    pub line: i64,
    pub column: i64,
    pub end_line: i64,
    pub end_column: i64,
    pub content: Cow<'a, str>,
}

/// Parses one gate's output with the gate's readers (its strategy, then `parsing.also`).
pub fn parse_output(ctx: &ParseContext, out: ToolOutput) -> Result<Parsed, ParseError> {
    parse_output_with_reports(ctx, out, &[])
}

/// Parses one gate's output with the gate's readers; `reports[i]` is the report file of reader
/// `i` (0 the gate's own, then those of `parsing.also`), for the readers with an `output_file`:
/// such a reader reads its report as the tool's stdout.
pub fn parse_output_with_reports(
    ctx: &ParseContext,
    out: ToolOutput,
    reports: &[Option<ReportFile>],
) -> Result<Parsed, ParseError> {
    let readers = std::iter::once(&ctx.gate.parser).chain(&ctx.gate.also);
    let mut parsed = Parsed::default();
    for (i, reader) in readers.enumerate() {
        let more = match (&reader.output_file, reports.get(i).copied().flatten()) {
            (None, _) => read_with(reader, ctx, out, None)?,
            (Some(_), Some(report)) => {
                let as_stdout = ToolOutput {
                    stdout: report.bytes,
                    stderr: b"",
                    ..out
                };
                read_with(reader, ctx, as_stdout, Some(report))?
            }
            (Some(file), None) => {
                return Err(ParseError::Report {
                    file: file.clone(),
                    what: "was not given: the reader that reads it has nothing to read".to_string(),
                });
            }
        };
        parsed.violations.extend(more.violations);
        parsed.outside_root += more.outside_root;
        parsed.coverage = parsed.coverage.or(more.coverage);
        parsed.tests = parsed
            .tests
            .into_iter()
            .chain(more.tests)
            .reduce(TestCounts::plus);
    }
    Ok(parsed)
}

fn read_with(
    reader: &Reader,
    ctx: &ParseContext,
    out: ToolOutput,
    report: Option<ReportFile>,
) -> Result<Parsed, ParseError> {
    let offsets = match &reader.spec {
        ParserSpec::Json(spec) => (spec.line_offset, spec.column_offset),
        ParserSpec::Text(spec) => (spec.line_offset, spec.column_offset),
        ParserSpec::Sarif | ParserSpec::ExitCode | ParserSpec::Junit | ParserSpec::Coverage(_) => {
            (0, 0)
        }
    };
    let mut norm = Normalizer::new(*ctx, offsets, reader);
    match &reader.spec {
        ParserSpec::Junit => {
            let shown = report.map_or(ctx.log_hint, |r| r.shown);
            let counts = junit::parse(out.stdout, shown, ctx, &mut norm)?;
            return Ok(Parsed {
                tests: Some(counts),
                ..norm.finish()
            });
        }
        ParserSpec::Json(spec) => json::parse(spec, out, ctx, &mut norm)?,
        ParserSpec::Text(spec) => return Ok(text::parse(spec, out, norm)),
        ParserSpec::Sarif => sarif::parse(out, ctx, &mut norm)?,
        ParserSpec::ExitCode => exit_code::parse(out, ctx, &mut norm),
        // Totals and changed lines, not a list of tool findings: nothing to normalize.
        ParserSpec::Coverage(spec) => return coverage::parse(spec, out, ctx),
    }
    Ok(norm.finish())
}

/// Applies what every strategy shares, one violation at a time as a strategy reads it (so no
/// list of raw violations is ever held): offsets, root-relative paths, severities, column units,
/// and one shared copy of each distinct text.
pub(super) struct Normalizer<'c> {
    ctx: ParseContext<'c>,
    offsets: (i64, i64),
    templates: &'c Templates,
    /// The unit the reader's columns count in.
    unit: ColumnUnit,
    /// How the reader's tool counts a tab.
    tabs: TabCount,
    paths: PathResolver<'c>,
    texts: HashMap<Arc<str>, Option<LineIndex>>,
    /// Tools repeat a handful of severity words; each is mapped once.
    severities: Vec<(String, Option<Severity>)>,
    strings: Interner,
    gate: Arc<str>,
    parsed: Parsed,
}

impl<'c> Normalizer<'c> {
    pub(super) fn new(ctx: ParseContext<'c>, offsets: (i64, i64), reader: &'c Reader) -> Self {
        Normalizer {
            ctx,
            offsets,
            templates: &reader.templates,
            unit: reader.column_unit.unwrap_or(ctx.gate.column_unit),
            tabs: reader.tabs,
            paths: PathResolver::new(ctx.root, ctx.cwd, ctx.gate.paths_relative_to.as_deref()),
            texts: HashMap::default(),
            severities: Vec::new(),
            strings: Interner::default(),
            gate: ctx.gate.id.as_str().into(),
            parsed: Parsed::default(),
        }
    }

    pub(super) fn finish(self) -> Parsed {
        self.parsed
    }

    pub(super) fn push(&mut self, mut raw: RawViolation<'_>) {
        fill::apply_templates(&mut raw, self.templates);
        // A file outside the workspace root drops the violation, counted.
        let printed = raw.file.as_deref().map(str::trim).filter(|f| !f.is_empty());
        let file = match printed.map(|f| self.paths.relative(f)) {
            None => None,
            Some(Some(rel)) => Some(rel),
            Some(None) => {
                self.parsed.outside_root += 1;
                return;
            }
        };
        let (line_off, col_off) = self.offsets;
        let to_line = |v: Option<i64>| v.map(|l| l + line_off).and_then(positive);
        let to_column = |v: Option<i64>| v.map(|c| c + col_off).and_then(positive);
        let line = to_line(raw.line);
        let severity = self.severity(raw.severity);
        // A workspace file the tool named by its absolute path (ruff's `filename`, rendered into
        // a message by `defaults` or `templates`) is named as the report names it.
        let absolute = printed.filter(|f| f.starts_with('/'));
        let message = self.message(raw.message.as_deref(), absolute, file.as_ref());
        let mut v = Violation {
            line,
            column: to_column(raw.column).filter(|_| line.is_some()),
            end_line: to_line(raw.end_line),
            end_column: to_column(raw.end_column),
            code: self.shared(raw.code.as_deref()),
            message,
            severity,
            fixable: raw.fixable,
            url: self.shared(raw.url.as_deref()),
            fix: raw
                .fix
                .map(|f| self.offset_fix(f))
                .filter(|f| !f.edits.is_empty())
                .map(Box::new),
            gate: self.gate.clone(),
            file,
            new: None,
        };
        if self.unit != ColumnUnit::Char || self.tabs != TabCount::One {
            self.count_columns_in_chars(&mut v);
        }
        self.parsed.violations.push(v);
    }

    /// The tool's fix with the reader's offsets applied; an edit with a place before line or
    /// column 1 is dropped.
    fn offset_fix(&self, f: RawFix<'_>) -> Fix {
        let (line_off, col_off) = self.offsets;
        Fix {
            title: f
                .title
                .map_or_else(|| "Apply the tool's fix".to_string(), Cow::into_owned),
            edits: f
                .edits
                .into_iter()
                .filter_map(|e| {
                    Some(Edit {
                        line: positive(e.line + line_off)?,
                        column: positive(e.column + col_off)?,
                        end_line: positive(e.end_line + line_off)?,
                        end_column: positive(e.end_column + col_off)?,
                        content: e.content.into_owned(),
                    })
                })
                .collect(),
        }
    }

    /// Converts the columns of a violation and of its fix's edits from the reader's unit to
    /// characters, reading its file once per output; a file that cannot be read keeps them.
    fn count_columns_in_chars(&mut self, v: &mut Violation) {
        let (unit, tabs, root) = (self.unit, self.tabs, self.ctx.root);
        let Some(rel) = &v.file else {
            return;
        };
        let index = self.texts.entry(rel.clone()).or_insert_with(|| {
            std::fs::read_to_string(root.join(&**rel))
                .ok()
                .map(|t| LineIndex::new(&t))
        });
        let Some(index) = index else {
            return;
        };
        let in_chars =
            |line: u32, column: u32| tool_column_in_chars(index, line, column, unit, tabs);
        v.column = v.column.zip(v.line).map(|(c, l)| in_chars(l, c));
        v.end_column = v
            .end_column
            .zip(v.end_line.or(v.line))
            .map(|(c, l)| in_chars(l, c));
        for e in v.fix.iter_mut().flat_map(|f| &mut f.edits) {
            e.column = in_chars(e.line, e.column);
            e.end_column = in_chars(e.end_line, e.end_column);
        }
    }

    /// The severity a tool's word maps to (an error when the tool gives none or the gate maps
    /// it to none).
    fn severity(&mut self, word: Option<Cow<'_, str>>) -> Severity {
        word.and_then(|w| match self.severities.iter().find(|(k, _)| *k == w) {
            Some((_, s)) => *s,
            None => {
                let s = self.ctx.gate.severity_of(&w);
                // Bounded, so a field that is not really a severity word cannot make this quadratic.
                if self.severities.len() < 16 {
                    self.severities.push((w.into_owned(), s));
                }
                s
            }
        })
        .unwrap_or(Severity::Error)
    }

    /// The violation's message, its file named by its root-relative path where the tool
    /// `printed` the absolute one; a violation without one says so.
    fn message(
        &mut self,
        message: Option<&str>,
        printed: Option<&str>,
        file: Option<&Arc<str>>,
    ) -> Arc<str> {
        match message.map(str::trim).filter(|m| !m.is_empty()) {
            Some(m) => match (printed, file) {
                (Some(abs), Some(rel)) if m.contains(abs) => self.strings.get(&m.replace(abs, rel)),
                _ => self.strings.get(m),
            },
            None => self.strings.get(&format!(
                "{} reported a problem without a message",
                self.ctx.gate.name
            )),
        }
    }

    /// One shared copy of a text the tool gave (`None` for an empty one).
    fn shared(&mut self, text: Option<&str>) -> Option<Arc<str>> {
        text.filter(|t| !t.is_empty()).map(|t| self.strings.get(t))
    }
}

fn positive(v: i64) -> Option<u32> {
    u32::try_from(v).ok().filter(|v| *v >= 1)
}

/// One shared copy of each distinct text (codes, urls, messages): 100,000 violations of a large
/// output name a few hundred rules and repeat most messages, so sharing saves an allocation and
/// most of the memory per violation.
#[derive(Default)]
struct Interner {
    set: HashSet<Arc<str>>,
}

impl Interner {
    /// Past this many distinct texts new ones are no longer remembered, so an output whose
    /// messages never repeat costs a plain allocation per message and not a growing table too.
    const MAX_DISTINCT: usize = 1 << 16;

    fn get(&mut self, text: &str) -> Arc<str> {
        if let Some(hit) = self.set.get(text) {
            return hit.clone();
        }
        let new: Arc<str> = text.into();
        if self.set.len() < Self::MAX_DISTINCT {
            self.set.insert(new.clone());
        }
        new
    }
}

/// Makes the paths tools print relative to the workspace root, remembering answers per path.
struct PathResolver<'a> {
    root: &'a Path,
    canonical_root: Option<PathBuf>,
    /// Where relative paths start: the tool's cwd, or the gate's `paths_relative_to`.
    base: PathBuf,
    memo: HashMap<String, Option<Arc<str>>>,
    /// The last answer: tools print a file's violations together, so most look-ups hit it.
    last: Option<(String, Option<Arc<str>>)>,
}

impl<'a> PathResolver<'a> {
    fn new(root: &'a Path, cwd: &Path, relative_to: Option<&Path>) -> Self {
        PathResolver {
            root,
            canonical_root: root.canonicalize().ok(),
            base: relative_to.map_or_else(|| cwd.to_path_buf(), |dir| root.join(dir)),
            memo: HashMap::default(),
            last: None,
        }
    }

    /// The root-relative POSIX path, or `None` when the file lies outside the root.
    fn relative(&mut self, printed: &str) -> Option<Arc<str>> {
        if let Some((last, rel)) = &self.last
            && last == printed
        {
            return rel.clone();
        }
        let rel = match self.memo.get(printed) {
            Some(hit) => hit.clone(),
            None => self.resolve(printed),
        };
        self.last = Some((printed.to_string(), rel.clone()));
        rel
    }

    fn resolve(&mut self, printed: &str) -> Option<Arc<str>> {
        let printed_path = Path::new(printed.strip_prefix("file://").unwrap_or(printed));
        let joined = if printed_path.is_absolute() {
            printed_path.to_path_buf()
        } else {
            self.base.join(printed_path)
        };
        let clean = lexical_clean(&joined);
        let rel: Option<Arc<str>> = strip_root(&clean, self.root)
            .or_else(|| {
                // The root may be reached through a symlink (e.g. /tmp on macOS): try the real path.
                let canon = self.canonical_root.as_deref()?;
                strip_root(&clean, canon)
                    .or_else(|| strip_root(&lexical_clean(&clean.canonicalize().ok()?), canon))
            })
            .map(Into::into);
        self.memo.insert(printed.to_string(), rel.clone());
        rel
    }
}

fn strip_root(path: &Path, root: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}
