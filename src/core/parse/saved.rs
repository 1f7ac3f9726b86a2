//! Parsing an output kept in files (a run's logs, the file given to `qgates parse`) without
//! reading it whole when that can be avoided: a text gate whose pattern stays within lines reads
//! a large file in pieces, so its peak memory is the violations and not the output as well.

use std::borrow::Cow;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::text::{self, Stream};
use super::{Normalizer, ParseContext, ParseError, Parsed, ToolOutput, parse_output};
use crate::core::config::ParserSpec;

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

/// Parses a saved output with the gate's strategy: the same violations as [`parse_output`] over
/// the files' contents.
pub fn parse_saved_output(ctx: &ParseContext, out: SavedOutput) -> Result<Parsed, ReadError> {
    // Both files are opened first, so a missing one is reported whichever stream the gate reads
    // (as when both were read whole).
    let stdout = Opened::open(out.stdout)?;
    let stderr = Opened::open(out.stderr)?;
    if let ParserSpec::Text(spec) = &ctx.gate.parser
        && text::reads_in_pieces(spec)
    {
        let streams = text::selected(spec.stream, stdout, stderr)
            .into_iter()
            .map(Opened::into_stream)
            .collect();
        let norm = Normalizer::new(*ctx, (spec.line_offset, spec.column_offset));
        return text::parse_streams(spec, streams, norm);
    }
    let stdout = stdout.read_whole()?;
    let stderr = stderr.read_whole()?;
    let out = ToolOutput {
        stdout: &stdout,
        stderr: &stderr,
        exit_code: out.exit_code,
    };
    Ok(parse_output(ctx, out)?)
}

/// A stream whose file, if it has one, is open.
enum Opened<'a> {
    Bytes(&'a [u8]),
    File { file: File, path: &'a Path },
}

impl<'a> Opened<'a> {
    fn open(source: OutputSource<'a>) -> Result<Self, ReadError> {
        Ok(match source {
            OutputSource::Bytes(bytes) => Opened::Bytes(bytes),
            OutputSource::File(path) => Opened::File {
                file: File::open(path).map_err(|error| ReadError::Io {
                    path: path.to_path_buf(),
                    error,
                })?,
                path,
            },
        })
    }

    fn read_whole(self) -> Result<Cow<'a, [u8]>, ReadError> {
        match self {
            Opened::Bytes(bytes) => Ok(Cow::Borrowed(bytes)),
            Opened::File { mut file, path } => {
                // `read_to_end` sizes the buffer from the file's length itself.
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes)
                    .map_err(|error| ReadError::Io {
                        path: path.to_path_buf(),
                        error,
                    })?;
                Ok(Cow::Owned(bytes))
            }
        }
    }

    fn into_stream(self) -> Stream<'a> {
        match self {
            Opened::Bytes(bytes) => Stream::Bytes(bytes),
            Opened::File { file, path } => Stream::File { file, path },
        }
    }
}
