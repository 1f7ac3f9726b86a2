//! Turning a tool's output into violations: one module per strategy, and the normalization
//! they share (paths relative to the root, offsets, severities, column units).

mod columns;
mod exit_code;
mod json;
mod pointer;
mod sarif;
mod text;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use columns::{LineIndex, convert_column};

use crate::core::config::{ColumnUnit, Gate, ParserSpec};
use crate::core::scope::lexical_clean;
use crate::core::violation::{Edit, Fix, Severity, Violation};

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
}

/// The violations of one output, already normalized.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Parsed {
    pub violations: Vec<Violation>,
    /// Violations whose file lies outside the workspace root (dropped, but counted).
    pub outside_root: usize,
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
}

/// A violation as a strategy read it, before normalization: raw path, raw numbers in the tool's
/// own base and column unit, raw severity word.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RawViolation {
    pub file: Option<String>,
    pub line: Option<i64>,
    pub column: Option<i64>,
    pub end_line: Option<i64>,
    pub end_column: Option<i64>,
    pub code: Option<String>,
    pub message: Option<String>,
    pub severity: Option<String>,
    pub url: Option<String>,
    pub fixable: bool,
    pub fix: Option<RawFix>,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct RawFix {
    pub title: Option<String>,
    pub edits: Vec<RawEdit>,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct RawEdit {
    pub line: i64,
    pub column: i64,
    pub end_line: i64,
    pub end_column: i64,
    pub content: String,
}

/// Parses one gate's output with the gate's strategy.
pub fn parse_output(ctx: &ParseContext, out: ToolOutput) -> Result<Parsed, ParseError> {
    let (raws, offsets) = match &ctx.gate.parser {
        ParserSpec::Json(spec) => (
            json::parse(spec, out, ctx)?,
            (spec.line_offset, spec.column_offset),
        ),
        ParserSpec::Text(spec) => (
            text::parse(spec, out),
            (spec.line_offset, spec.column_offset),
        ),
        ParserSpec::Sarif => (sarif::parse(out, ctx)?, (0, 0)),
        ParserSpec::ExitCode => (exit_code::parse(out, ctx), (0, 0)),
    };
    Ok(normalize(ctx, raws, offsets))
}

/// Applies what every strategy shares: offsets, root-relative paths, severities, column units.
fn normalize(
    ctx: &ParseContext,
    raws: Vec<RawViolation>,
    (line_off, col_off): (i64, i64),
) -> Parsed {
    let mut parsed = Parsed::default();
    let mut paths = PathResolver::new(ctx.root, ctx.cwd);
    let mut texts: HashMap<String, Option<LineIndex>> = HashMap::new();
    let unit = ctx.gate.column_unit;
    parsed.violations.reserve_exact(raws.len());
    // Tools repeat a handful of severity words; mapping each once saves two allocations per violation.
    let mut severities: Vec<(String, Option<Severity>)> = Vec::new();
    for raw in raws {
        let file = match raw.file.as_deref().map(str::trim).filter(|f| !f.is_empty()) {
            None => None,
            Some(f) => match paths.relative(f) {
                Some(rel) => Some(rel),
                None => {
                    parsed.outside_root += 1;
                    continue;
                }
            },
        };
        let to_line = |v: Option<i64>| v.map(|l| l + line_off).and_then(positive);
        let line = to_line(raw.line);
        let end_line = to_line(raw.end_line);
        let mut column = raw.column.map(|c| c + col_off).and_then(positive);
        let mut end_column = raw.end_column.map(|c| c + col_off).and_then(positive);
        let mut fix = raw.fix.map(|f| Fix {
            title: f
                .title
                .unwrap_or_else(|| "Apply the tool's fix".to_string()),
            edits: f
                .edits
                .into_iter()
                .filter_map(|e| {
                    Some(Edit {
                        line: positive(e.line + line_off)?,
                        column: positive(e.column + col_off)?,
                        end_line: positive(e.end_line + line_off)?,
                        end_column: positive(e.end_column + col_off)?,
                        content: e.content,
                    })
                })
                .collect(),
        });
        if unit != ColumnUnit::Char
            && let Some(rel) = &file
        {
            let index = texts.entry(rel.clone()).or_insert_with(|| {
                std::fs::read_to_string(ctx.root.join(rel))
                    .ok()
                    .map(|t| LineIndex::new(&t))
            });
            if let Some(index) = index {
                column = column
                    .zip(line)
                    .map(|(c, l)| convert_column(index, l, c, unit, ColumnUnit::Char));
                end_column = end_column
                    .zip(end_line.or(line))
                    .map(|(c, l)| convert_column(index, l, c, unit, ColumnUnit::Char));
                if let Some(f) = fix.as_mut() {
                    for e in &mut f.edits {
                        e.column = convert_column(index, e.line, e.column, unit, ColumnUnit::Char);
                        e.end_column =
                            convert_column(index, e.end_line, e.end_column, unit, ColumnUnit::Char);
                    }
                }
            }
        }
        let severity = raw
            .severity
            .and_then(|w| match severities.iter().find(|(k, _)| *k == w) {
                Some((_, s)) => *s,
                None => {
                    let s = ctx.gate.severity_of(&w);
                    // Bounded, so a field that is not really a severity word cannot make this quadratic.
                    if severities.len() < 16 {
                        severities.push((w, s));
                    }
                    s
                }
            })
            .unwrap_or(Severity::Error);
        let message = raw
            .message
            .map(|m| {
                if m.trim().len() == m.len() {
                    m
                } else {
                    m.trim().to_string()
                }
            })
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| format!("{} reported a problem without a message", ctx.gate.name));
        let fix = fix.filter(|f| !f.edits.is_empty());
        parsed.violations.push(Violation {
            file,
            line,
            column: column.filter(|_| line.is_some()),
            end_line,
            end_column,
            code: raw.code.filter(|c| !c.is_empty()),
            message,
            severity,
            fixable: raw.fixable,
            url: raw.url.filter(|u| !u.is_empty()),
            fix,
            gate: ctx.gate.id.clone(),
        });
    }
    parsed
}

fn positive(v: i64) -> Option<u32> {
    u32::try_from(v).ok().filter(|v| *v >= 1)
}

/// Makes the paths tools print relative to the workspace root, remembering answers per path.
struct PathResolver<'a> {
    root: &'a Path,
    canonical_root: Option<PathBuf>,
    cwd: &'a Path,
    memo: HashMap<String, Option<String>>,
}

impl<'a> PathResolver<'a> {
    fn new(root: &'a Path, cwd: &'a Path) -> Self {
        PathResolver {
            root,
            canonical_root: root.canonicalize().ok(),
            cwd,
            memo: HashMap::new(),
        }
    }

    /// The root-relative POSIX path, or `None` when the file lies outside the root.
    fn relative(&mut self, printed: &str) -> Option<String> {
        if let Some(hit) = self.memo.get(printed) {
            return hit.clone();
        }
        let printed_path = Path::new(printed.strip_prefix("file://").unwrap_or(printed));
        let joined = if printed_path.is_absolute() {
            printed_path.to_path_buf()
        } else {
            self.cwd.join(printed_path)
        };
        let clean = lexical_clean(&joined);
        let rel = strip_root(&clean, self.root).or_else(|| {
            // The root may be reached through a symlink (e.g. /tmp on macOS): try the real path.
            let canon = self.canonical_root.as_deref()?;
            strip_root(&clean, canon)
                .or_else(|| strip_root(&lexical_clean(&clean.canonicalize().ok()?), canon))
        });
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
