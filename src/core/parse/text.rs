//! `text_violations`: one multi-line regex over a tool's text output; named groups fill the
//! Violation fields and `defaults` the rest.

use std::borrow::Cow;
use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError, mpsc};

use regex::{CaptureLocations, Regex};

use super::json::apply_defaults;
use super::line_pattern::{self, LinePattern, LineSearch};
use super::line_reader::LineFeedReader;
use super::parallel::{self, InOrder, PARALLEL_MIN_BYTES, PIECE_BYTES, Sink, cut_at_line_feeds};
use super::{Normalizer, Parsed, RawViolation, ReadError, ToolOutput};
use crate::core::config::{OutputStream, TextSpec};

pub(super) fn parse(spec: &TextSpec, out: ToolOutput, mut norm: Normalizer) -> Parsed {
    let mut engine = None;
    for bytes in selected(spec.stream, out.stdout, out.stderr) {
        read_bytes(spec, &mut engine, bytes, &mut norm);
    }
    norm.finish()
}

/// One stream of a saved output: in memory, or a file that is read in pieces when it is large.
pub(super) enum Stream<'a> {
    Bytes(&'a [u8]),
    File { file: File, path: &'a Path },
}

/// Whether the output can be cut at line feeds and its pieces read on their own with the
/// matches of one pass: no match crosses a line, nothing is anchored to the output's ends, and
/// no `^` or `$` looks at the `\r` of a CRLF line end.
pub(super) fn reads_in_pieces(spec: &TextSpec) -> bool {
    let shape = spec.shape;
    shape.line_local && !shape.anchored_to_output && !shape.crlf_anchors
}

/// The streams the gate reads, in order. `both` reads each stream on its own, so a match can
/// never start in one and end in the other.
pub(super) fn selected<T>(stream: OutputStream, stdout: T, stderr: T) -> Vec<T> {
    match stream {
        OutputStream::Stdout => vec![stdout],
        OutputStream::Stderr => vec![stderr],
        OutputStream::Both => vec![stdout, stderr],
    }
}

/// Like [`parse`], but a large file is read in pieces cut at line feeds as the workers need
/// them, so the whole output is never held: only the pieces being read and the violations.
/// Only for patterns that [read in pieces](reads_in_pieces).
pub(super) fn parse_streams(
    spec: &TextSpec,
    streams: Vec<Stream>,
    mut norm: Normalizer,
) -> Result<Parsed, ReadError> {
    debug_assert!(reads_in_pieces(spec));
    let mut engine = None;
    for stream in streams {
        let (mut file, path) = match stream {
            Stream::Bytes(bytes) => {
                read_bytes(spec, &mut engine, bytes, &mut norm);
                continue;
            }
            Stream::File { file, path } => (file, path),
        };
        let io_error = |error| ReadError::Io {
            path: path.to_path_buf(),
            error,
        };
        let len = file.metadata().map_err(io_error)?.len();
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len < PARALLEL_MIN_BYTES {
            // Small enough to hold whole, and read on one thread anyway.
            let mut bytes = Vec::with_capacity(len);
            file.read_to_end(&mut bytes).map_err(io_error)?;
            read_bytes(spec, &mut engine, &bytes, &mut norm);
            continue;
        }
        let engine = engine.get_or_insert_with(|| Engine::new(spec, len));
        let pieces = Streamed {
            reader: Mutex::new(LineFeedReader::new(file, PIECE_BYTES)),
        };
        read_pieces(spec, engine, &pieces, len, &mut norm);
        let reader = pieces
            .reader
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(error) = reader.into_error() {
            return Err(io_error(error));
        }
    }
    Ok(norm.finish())
}

/// Reads one stream held in memory.
fn read_bytes<'s>(
    spec: &'s TextSpec,
    engine: &mut Option<Engine<'s>>,
    bytes: &[u8],
    norm: &mut Normalizer,
) {
    // Tools print file names and source lines in whatever encoding they were given; one bad
    // byte must not hide every violation after it.
    let text = super::pointer::decode(bytes);
    let engine = engine.get_or_insert_with(|| Engine::new(spec, text.len()));
    read_parallel(spec, engine, &text, norm);
}

/// What runs the pattern: the gate's regex as it is, or (for a large output and a pattern that
/// qualifies, see [`LinePattern`]) one anchored search per line, which finds the same matches
/// quicker.
enum Engine<'s> {
    Regex(&'s Regex, Groups),
    Lines(LinePattern, Groups),
}

impl<'s> Engine<'s> {
    fn new(spec: &'s TextSpec, text_len: usize) -> Self {
        let lines = (text_len >= line_pattern::MIN_BYTES)
            .then(|| LinePattern::new(spec.regex.as_str(), spec.shape.line_local))
            .flatten();
        match lines {
            Some(lines) => {
                let groups = Groups::new(lines.group_names());
                Engine::Lines(lines, groups)
            }
            None => Engine::Regex(&spec.regex, Groups::new(spec.regex.capture_names())),
        }
    }

    /// One thread's search state.
    fn state(&self) -> State {
        match self {
            Engine::Regex(re, _) => State::Regex(re.capture_locations()),
            Engine::Lines(lines, _) => State::Lines(Box::new(lines.search())),
        }
    }

    /// Emits the violation of each match in `text[range]`, which starts at the text's start or
    /// just after a line feed and ends at the text's end or just before one.
    fn read<'t>(
        &self,
        spec: &TextSpec,
        state: &mut State,
        text: &'t str,
        range: Range<usize>,
        emit: &mut impl FnMut(RawViolation<'t>),
    ) {
        match (self, state) {
            (Engine::Regex(re, groups), State::Regex(locs)) => {
                read(spec, re, groups, locs, &text[range], emit)
            }
            (Engine::Lines(lines, groups), State::Lines(search)) => {
                lines.read(search, text, range, &mut |caps| {
                    let group = |i: usize| caps.get_group(i).map(|span| &text[span.range()]);
                    emit(violation(spec, groups, group));
                })
            }
            _ => unreachable!("a state is made by its own engine"),
        }
    }
}

enum State {
    Regex(CaptureLocations),
    Lines(Box<LineSearch>),
}

/// Reads large outputs on several threads when the pattern cannot cross a line: the text is cut
/// just before line feeds (which no match can contain), so `^` and `$` see the same neighbours
/// as in one pass and the matches, in order, are exactly those of one pass.
fn read_parallel<S: Sink>(spec: &TextSpec, engine: &Engine, text: &str, sink: &mut S) {
    if !reads_in_pieces(spec) || parallel::threads() < 2 || text.len() < PARALLEL_MIN_BYTES {
        let mut state = engine.state();
        return engine.read(spec, &mut state, text, 0..text.len(), &mut |v| sink.push(v));
    }
    let pieces = InMemory {
        text,
        pieces: cut_at_line_feeds(text, PIECE_BYTES),
        next: AtomicUsize::new(0),
    };
    read_pieces(spec, engine, &pieces, text.len(), sink);
}

/// One piece of a stream: `text[range]`, which starts at the stream's start or just after a
/// line feed and ends at the stream's end or just before one.
struct Piece<'t> {
    text: Cow<'t, str>,
    range: Range<usize>,
}

/// The pieces of one stream, handed out in order (numbered from 0) to whichever thread asks.
trait Pieces: Sync {
    fn next(&self) -> Option<(usize, Piece<'_>)>;
}

/// The pieces of a text held whole: ranges of it, so that searches still see the neighbours.
struct InMemory<'t> {
    text: &'t str,
    pieces: Vec<&'t str>,
    next: AtomicUsize,
}

impl Pieces for InMemory<'_> {
    fn next(&self) -> Option<(usize, Piece<'_>)> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let piece = self.pieces.get(i)?;
        let start = piece.as_ptr() as usize - self.text.as_ptr() as usize;
        Some((
            i,
            Piece {
                text: Cow::Borrowed(self.text),
                range: start..start + piece.len(),
            },
        ))
    }
}

/// The pieces of a stream read as they are asked for: each is decoded on its own, which gives
/// the text of decoding the whole (a line feed is never part of an invalid UTF-8 sequence, so
/// no replacement character spans a cut).
struct Streamed<R> {
    reader: Mutex<LineFeedReader<R>>,
}

impl<R: Read + Send> Pieces for Streamed<R> {
    fn next(&self) -> Option<(usize, Piece<'_>)> {
        let (i, bytes) = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next_piece()?;
        // Decoded after the lock is released, so another thread can read meanwhile.
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        let range = 0..text.len();
        Some((
            i,
            Piece {
                text: Cow::Owned(text),
                range,
            },
        ))
    }
}

/// Reads every piece, on several threads when there are cores for them.
///
/// Workers take pieces in turn and normalize them; this thread appends the pieces' violations in
/// order as they arrive (see [`InOrder`]), so at most a few pieces wait beside the final list.
/// `total_bytes` (the stream's size) sizes the list.
fn read_pieces<S: Sink>(
    spec: &TextSpec,
    engine: &Engine,
    pieces: &impl Pieces,
    total_bytes: usize,
    sink: &mut S,
) {
    let threads = parallel::threads();
    if threads < 2 {
        let mut state = engine.state();
        while let Some((_, piece)) = pieces.next() {
            engine.read(spec, &mut state, &piece.text, piece.range, &mut |v| {
                sink.push(v)
            });
        }
        return;
    }
    let (tx, rx) = mpsc::channel::<(usize, S::Part, usize)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let mut worker = sink.sibling();
            scope.spawn(move || {
                let mut state = engine.state();
                while let Some((i, piece)) = pieces.next() {
                    // Each piece stands for its line feed too.
                    let bytes = piece.range.len() + 1;
                    engine.read(spec, &mut state, &piece.text, piece.range, &mut |v| {
                        worker.push(v)
                    });
                    if tx.send((i, worker.take(), bytes)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // A worker's panic ends its sends; the scope then carries the panic on (the gate reports
        // an error), so it is never turned into "no findings".
        let mut in_order = InOrder::new(total_bytes);
        for (i, part, bytes) in rx {
            in_order.receive(sink, i, part, bytes);
        }
    });
}

/// Every match of the regex in `text`, as `captures_iter` finds them.
fn read<'t>(
    spec: &TextSpec,
    regex: &Regex,
    groups: &Groups,
    locs: &mut CaptureLocations,
    text: &'t str,
    emit: &mut impl FnMut(RawViolation<'t>),
) {
    let mut start = 0;
    let mut last_end = None;
    let next_char = |at: usize| at + text[at..].chars().next().map_or(1, char::len_utf8);
    // `captures_read_at` reuses one set of capture slots for every match, where `captures_iter`
    // would allocate per match.
    while start <= text.len() {
        let Some(m) = regex.captures_read_at(locs, text, start) else {
            break;
        };
        if m.is_empty() && last_end == Some(m.end()) {
            // As `captures_iter` does: no empty match right where the previous match ended.
            start = next_char(m.end());
            continue;
        }
        last_end = Some(m.end());
        emit(violation(spec, groups, |i| {
            locs.get(i).map(|(s, e)| &text[s..e])
        }));
        // An empty match must not be found again at the same place: step over one character.
        start = if m.is_empty() {
            next_char(m.end())
        } else {
            m.end()
        };
    }
}

/// The violation of one match, from its groups' texts (by group index).
fn violation<'t>(
    spec: &TextSpec,
    groups: &Groups,
    group: impl Fn(usize) -> Option<&'t str>,
) -> RawViolation<'t> {
    let group = |i: Option<usize>| i.and_then(&group);
    // Groups that took part in the match but captured nothing count as absent, so that
    // defaults fill them.
    let string = |i: Option<usize>| group(i).filter(|t| !t.is_empty()).map(Cow::Borrowed);
    let int = |i: Option<usize>| group(i).and_then(|s| s.trim().parse::<i64>().ok());
    let mut v = RawViolation {
        file: string(groups.file),
        line: int(groups.line),
        column: int(groups.column),
        end_line: int(groups.end_line),
        end_column: int(groups.end_column),
        code: string(groups.code),
        message: string(groups.message),
        severity: string(groups.severity),
        url: string(groups.url),
        fixable: match group(groups.fixable) {
            Some(text) => !text.is_empty(),
            None => spec.defaults.fixable.unwrap_or(false),
        },
        fix: None,
    };
    apply_defaults(&mut v, &spec.defaults);
    v
}

/// The capture group index of each Violation field, looked up once per parse.
struct Groups {
    file: Option<usize>,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    code: Option<usize>,
    message: Option<usize>,
    severity: Option<usize>,
    url: Option<usize>,
    fixable: Option<usize>,
}

impl Groups {
    /// From the pattern's group names, by group index.
    fn new<'n>(names: impl Iterator<Item = Option<&'n str>> + Clone) -> Self {
        let find = |name: &str| names.clone().position(|n| n == Some(name));
        Groups {
            file: find("file"),
            line: find("line"),
            column: find("column"),
            end_line: find("end_line"),
            end_column: find("end_column"),
            code: find("code"),
            message: find("message"),
            severity: find("severity"),
            url: find("url"),
            fixable: find("fixable"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::{Defaults, Template};
    use regex::RegexBuilder;

    fn spec(pattern: &str, stream: OutputStream) -> TextSpec {
        TextSpec {
            regex: RegexBuilder::new(pattern)
                .multi_line(true)
                .build()
                .expect("valid regex"),
            shape: crate::core::config::pattern_shape(pattern),
            stream,
            defaults: Defaults::default(),
            line_offset: 0,
            column_offset: 0,
        }
    }

    /// Collects what was read, written out, in order.
    #[derive(Default)]
    struct Collect(Vec<String>);

    impl Sink for Collect {
        type Part = Vec<String>;
        fn push(&mut self, v: RawViolation<'_>) {
            self.0.push(format!("{v:?}"));
        }
        fn sibling(&self) -> Self {
            Collect::default()
        }
        fn take(&mut self) -> Vec<String> {
            std::mem::take(&mut self.0)
        }
        fn part_len(part: &Vec<String>) -> usize {
            part.len()
        }
        fn append(&mut self, mut part: Vec<String>, _room: usize) {
            self.0.append(&mut part);
        }
    }

    /// The gate's regex run as it is over the whole text, from its start.
    fn one_pass<'t>(s: &TextSpec, text: &'t str, emit: &mut impl FnMut(RawViolation<'t>)) {
        let engine = Engine::Regex(&s.regex, Groups::new(s.regex.capture_names()));
        engine.read(s, &mut engine.state(), text, 0..text.len(), emit);
    }

    /// What one pass over the output reads, with owned texts.
    fn read_all(s: &TextSpec, stdout: &[u8], stderr: &[u8]) -> Vec<RawViolation<'static>> {
        let mut found = Vec::new();
        let streams: Vec<&[u8]> = match s.stream {
            OutputStream::Stdout => vec![stdout],
            OutputStream::Stderr => vec![stderr],
            OutputStream::Both => vec![stdout, stderr],
        };
        for bytes in streams {
            let text = std::str::from_utf8(bytes).expect("test output is UTF-8");
            one_pass(s, text, &mut |v| found.push(owned(v)));
        }
        found
    }

    fn owned(v: RawViolation<'_>) -> RawViolation<'static> {
        let own = |c: Option<Cow<'_, str>>| c.map(|c| Cow::Owned(c.into_owned()));
        RawViolation {
            file: own(v.file),
            line: v.line,
            column: v.column,
            end_line: v.end_line,
            end_column: v.end_column,
            code: own(v.code),
            message: own(v.message),
            severity: own(v.severity),
            url: own(v.url),
            fixable: v.fixable,
            fix: None,
        }
    }

    #[test]
    fn empty_matches_advance() {
        let s = spec(r"(?P<code>x*)", OutputStream::Stdout);
        // Like `captures_iter`: "" at 0, "xx" at 1, not "" at 3 (where "xx" ended), "" at 5.
        let found = read_all(&s, "axxé".as_bytes(), b"");
        let codes: Vec<Option<String>> = found
            .into_iter()
            .map(|v| v.code.map(Cow::into_owned))
            .collect();
        assert_eq!(codes, [None, Some("xx".into()), None]);
    }

    #[test]
    fn both_streams_never_join() {
        let s = spec(r"^(?P<file>\w+)\n(?P<message>\w+)$", OutputStream::Both);
        let found = read_all(&s, b"a\nb\nc", b"d\ne");
        let pairs: Vec<(Option<String>, Option<String>)> = found
            .into_iter()
            .map(|v| (v.file.map(Cow::into_owned), v.message.map(Cow::into_owned)))
            .collect();
        assert_eq!(
            pairs,
            [
                (Some("a".into()), Some("b".into())),
                (Some("d".into()), Some("e".into()))
            ]
        );
    }

    #[test]
    fn fixable_group_and_defaults() {
        let mut s = spec(
            r"^(?P<file>\S+) (?P<fixable>\[\*\])?(?P<code>\w*)$",
            OutputStream::Stdout,
        );
        s.defaults.code = Some(Template::parse("X-{file}"));
        let found = read_all(&s, b"a.py [*]E1\nb.py \n", b"");
        assert_eq!(
            (found[0].fixable, found[0].code.as_deref()),
            (true, Some("E1"))
        );
        assert_eq!(
            (found[1].fixable, found[1].code.as_deref()),
            (false, Some("X-b.py"))
        );
    }

    #[test]
    fn parallel_reading_finds_exactly_what_one_pass_finds() {
        // Empty lines, empty matches and lines of every length around the cut points.
        let mut text = String::new();
        for i in 0..120_000 {
            match i % 5 {
                0 => text.push_str(&format!(
                    "src/m{i}.py:{i}:{}: error: broken [x]  [code-{i}]\n",
                    i % 80
                )),
                1 => text.push('\n'),
                2 => text.push_str("noise é 😀 line\n"),
                3 => text.push_str(&format!("src/m{i}.py:{i}:1: note: no code\n")),
                _ => text.push_str(&"z".repeat(i % 97)),
            }
        }
        for pattern in [
            r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>\w+): (?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$",
            r"^(?P<message>)$",
        ] {
            let s = spec(pattern, OutputStream::Stdout);
            assert!(s.shape.line_local);
            assert!(text.len() > PARALLEL_MIN_BYTES);
            let engine = Engine::new(&s, text.len());
            assert!(matches!(engine, Engine::Lines(..)), "one search per line");
            let (mut one, mut many) = (Vec::new(), Collect::default());
            one_pass(&s, &text, &mut |v| one.push(format!("{v:?}")));
            read_parallel(&s, &engine, &text, &mut many);
            assert!(!one.is_empty());
            assert!(
                text.len() / PIECE_BYTES > 8,
                "the text is cut in many pieces"
            );
            assert_eq!(one, many.0, "pattern {pattern}");
        }
    }

    #[test]
    fn a_stream_read_in_pieces_gives_exactly_what_one_pass_gives() {
        // CRLF line ends, invalid UTF-8 (also an incomplete sequence right before a line feed),
        // empty lines and a last line without a line feed, with cuts after every line and at
        // larger sizes.
        let mut bytes = Vec::new();
        for i in 0..6_000 {
            match i % 6 {
                0 => bytes.extend_from_slice(
                    format!("src/m{i}.py:{i}:{}: error: broken  [code-{i}]\n", i % 80).as_bytes(),
                ),
                1 => {
                    bytes.extend_from_slice(format!("src/m{i}.py:{i}:1: note: crlf\r\n").as_bytes())
                }
                2 => bytes.push(b'\n'),
                3 => bytes.extend_from_slice(b"src/b\xff.py:3:4: error: cut \xe2\x82\n"),
                4 => {
                    bytes.extend_from_slice("src/é.py:7:2: warning: naïve 😀  [misc]\n".as_bytes())
                }
                _ => bytes.extend_from_slice(b"noise \xf0\x9f\r\n"),
            }
        }
        bytes.extend_from_slice(b"src/last.py:1:1: error: no final line feed");
        let whole = String::from_utf8_lossy(&bytes);
        for pattern in [
            r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>\w+): (?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$",
            r"^(?P<message>)$",
            r"(?P<code>\[[a-z0-9-]+\])",
            r"(?P<message>[^\n]*\r)$",
        ] {
            let s = spec(pattern, OutputStream::Stdout);
            assert!(reads_in_pieces(&s), "pattern {pattern}");
            let mut one = Vec::new();
            one_pass(&s, &whole, &mut |v| one.push(format!("{v:?}")));
            assert!(one.len() > 100, "pattern {pattern}");
            let engines = [
                Engine::new(&s, line_pattern::MIN_BYTES),
                Engine::Regex(&s.regex, Groups::new(s.regex.capture_names())),
            ];
            for engine in &engines {
                for size in [1, 100, 4096, 1 << 20] {
                    let pieces = Streamed {
                        reader: Mutex::new(LineFeedReader::new(&bytes[..], size)),
                    };
                    let mut many = Collect::default();
                    read_pieces(&s, engine, &pieces, bytes.len(), &mut many);
                    assert_eq!(one, many.0, "pattern {pattern}, pieces of {size} bytes");
                }
            }
        }
    }

    #[test]
    fn crlf_mode_line_ends_are_never_cut_apart() {
        // In CRLF mode `$` holds before a `\r` but not between `\r` and `\n`; a piece cut just
        // before a line feed ends in `\r`, where `$` would hold and `[^\n]*` keep the `\r`.
        let text = "a.py:x\r\n".repeat(400_000);
        assert!(text.len() > PARALLEL_MIN_BYTES);
        let s = spec(
            r"(?R)^(?P<file>[^:\n]+):(?P<code>[^\n]*)$",
            OutputStream::Stdout,
        );
        assert!(!reads_in_pieces(&s));
        let engine = Engine::new(&s, text.len());
        let (mut one, mut many) = (Vec::new(), Collect::default());
        one_pass(&s, &text, &mut |v| one.push(format!("{v:?}")));
        read_parallel(&s, &engine, &text, &mut many);
        assert_eq!(one.len(), 400_000);
        assert_eq!(one, many.0);
    }

    #[test]
    fn a_pattern_anchored_to_the_whole_output_is_read_in_one_pass() {
        // `\A` holds only where the output starts: read in pieces it would hold at each piece.
        let mut text = String::new();
        for i in 0..200_000 {
            text.push_str(&format!("src/m{i}.py:{i}: error: broken\n"));
        }
        assert!(text.len() > 2 * PARALLEL_MIN_BYTES);
        let s = spec(
            r"\A(?P<file>[^:\n]+):|^(?P<message>src/m1\.py.*)$",
            OutputStream::Stdout,
        );
        assert!(s.shape.line_local && s.shape.anchored_to_output);
        let engine = Engine::new(&s, text.len());
        let (mut one, mut many) = (Vec::new(), Collect::default());
        one_pass(&s, &text, &mut |v| one.push(format!("{v:?}")));
        read_parallel(&s, &engine, &text, &mut many);
        assert_eq!(
            one.len(),
            2,
            "the output's first line and src/m1.py: {one:?}"
        );
        assert_eq!(one, many.0);
    }

    #[test]
    fn one_search_per_line_finds_exactly_what_one_pass_finds() {
        // ASCII and non-ASCII lines side by side, so both the pattern and its ASCII twin run;
        // lines where a class or a case-insensitive letter matches only through a non-ASCII
        // character (`ſ` and `K` fold to `s` and `k`), and word boundaries next to non-ASCII
        // letters.
        let lines = [
            "src/a.py:12:5: error: Name \"x\" is not defined  [name-defined]",
            "src/é.py:3:1: note: naïve größe",
            "src/b.py:7:2: warning: ſkip this K  [misc]",
            "src/c.py:7:2: warning: skip this k  [misc]",
            "plain words here",
            "données:1:1: error: x",
            "",
            "a:1:1: error: trailing spaces  ",
            "abc:9:9: errorX: éword wordé word",
            "abc:9:9: errorX: word wordé word",
            "abc:9:9: e: ",
        ];
        let mut text = String::new();
        for i in 0..4_000 {
            text.push_str(lines[i % lines.len()]);
            text.push('\n');
        }
        text.push_str("last:1:1: error: no final line feed");
        for pattern in [
            r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>\w+): (?P<message>.*?)(?:  \[(?P<code>[a-z-]+)\])?$",
            r"(?i)^(?P<file>[a-zſ./]+):\d+:\d+: (?P<severity>\w+): (?P<message>SKIP.*)$",
            r"^(?P<file>\w+):(?P<line>\d+):\d+: \w+: (?P<message>\bword\b.*)?$",
            r"^(?P<message>\S*)",
            r"^(?P<message>.é.*)$|^(?P<code>[^é\n]+)$",
            r"\A(?P<file>[^:\n]+):(?P<message>.*)$",
        ] {
            let s = spec(pattern, OutputStream::Stdout);
            let engine = Engine::new(&s, line_pattern::MIN_BYTES);
            assert!(matches!(engine, Engine::Lines(..)), "pattern {pattern}");
            let (mut one, mut lines) = (Vec::new(), Vec::new());
            one_pass(&s, &text, &mut |v| one.push(format!("{v:?}")));
            engine.read(&s, &mut engine.state(), &text, 0..text.len(), &mut |v| {
                lines.push(format!("{v:?}"))
            });
            assert!(!one.is_empty(), "pattern {pattern}");
            assert_eq!(one, lines, "pattern {pattern}");
        }
        // A match may start inside a line: the pattern runs as it is.
        let s = spec(r"(?P<code>[a-z]+-[a-z]+)", OutputStream::Stdout);
        assert!(matches!(
            Engine::new(&s, line_pattern::MIN_BYTES),
            Engine::Regex(..)
        ));
    }
}
