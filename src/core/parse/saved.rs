//! Parsing an output kept in files (a run's logs, the file given to `qgates parse`): the files
//! are read whole and parsed as [`parse_output`] parses an output held in memory.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::{ParseContext, ParseError, Parsed, ReportFile, ToolOutput, parse_output_with_reports};

/// Where one stream of a saved output is.
#[derive(Debug, Clone, Copy)]
pub enum OutputSource<'a> {
    /// Already in memory (e.g. read from standard input).
    Bytes(&'a [u8]),
    File(&'a Path),
}

/// What a gate's process left behind, kept in files or in memory.
#[derive(Debug, Clone, Copy)]
pub struct SavedOutput<'a> {
    pub stdout: OutputSource<'a>,
    pub stderr: OutputSource<'a>,
    pub exit_code: Option<i32>,
}

/// A file of the output could not be read, or the output does not have the promised shape.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Parse(#[from] ParseError),
}

/// Parses a saved output with the gate's strategy. Both streams are read, so a missing file is
/// reported whichever stream the gate reads.
pub fn parse_saved_output(ctx: &ParseContext, out: SavedOutput) -> Result<Parsed, ReadError> {
    parse_saved_with_reports(ctx, out, &[])
}

/// Parses a saved output and the report files of the readers that read one: `reports[i]` is
/// reader `i`'s (0 the gate's own, then those of `parsing.also`), with its name for messages.
pub fn parse_saved_with_reports(
    ctx: &ParseContext,
    out: SavedOutput,
    reports: &[Option<(OutputSource, &str)>],
) -> Result<Parsed, ReadError> {
    let stdout = read(out.stdout)?;
    let stderr = read(out.stderr)?;
    let mut kept = Vec::with_capacity(reports.len());
    for report in reports {
        kept.push(match report {
            Some((source, shown)) => Some((read(*source)?, *shown)),
            None => None,
        });
    }
    let files: Vec<Option<ReportFile>> = kept
        .iter()
        .map(|r| r.as_ref().map(|(bytes, shown)| ReportFile { bytes, shown }))
        .collect();
    let out = ToolOutput {
        stdout: &stdout,
        stderr: &stderr,
        exit_code: out.exit_code,
    };
    Ok(parse_output_with_reports(ctx, out, &files)?)
}

fn read(source: OutputSource<'_>) -> Result<Cow<'_, [u8]>, ReadError> {
    match source {
        OutputSource::Bytes(bytes) => Ok(Cow::Borrowed(bytes)),
        OutputSource::File(path) => {
            std::fs::read(path)
                .map(Cow::Owned)
                .map_err(|error| ReadError::Io {
                    path: path.to_path_buf(),
                    error,
                })
        }
    }
}
