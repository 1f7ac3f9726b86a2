//! A saved output parsed from files (`parse_saved_output`, what the runner and `qgates parse`
//! do) gives exactly what parsing the same bytes in memory gives. The outputs mix CRLF line
//! ends, invalid UTF-8 (also right before a line feed), empty lines, and a last line without a
//! line feed.

use std::path::Path;

use qgates::core::config::{ConfigSource, Gate, parse_config};
use qgates::core::parse::{
    OutputSource, ParseContext, Parsed, ReadError, SavedOutput, ToolOutput, parse_output,
    parse_saved_output,
};

const ROOT: &str = "/qgates-test/root";

fn text_gate(pattern: &str, stream: &str) -> Gate {
    let yaml = format!(
        "version: 1\ngates:\n  g:\n    command: [tool]\n    parsing:\n      strategy: text_violations\n      stream: {stream}\n      pattern: '{pattern}'\n"
    );
    let config = parse_config(&yaml, ConfigSource::File("quality.yaml".into()))
        .unwrap_or_else(|e| panic!("the test configuration is invalid:\n{e}"));
    config.gate("g").expect("gate g").clone()
}

fn ctx(gate: &Gate) -> ParseContext<'_> {
    ParseContext {
        gate,
        root: Path::new(ROOT),
        cwd: Path::new(ROOT),
        log_hint: ".qgates/runs/1/g.stdout",
        diff: None,
    }
}

fn in_memory(gate: &Gate, stdout: &[u8], stderr: &[u8]) -> Parsed {
    parse_output(
        &ctx(gate),
        ToolOutput {
            stdout,
            stderr,
            exit_code: Some(1),
        },
    )
    .expect("text never fails")
}

fn from_files(gate: &Gate, stdout: &Path, stderr: &Path) -> Result<Parsed, ReadError> {
    parse_saved_output(
        &ctx(gate),
        SavedOutput {
            stdout: OutputSource::File(stdout),
            stderr: OutputSource::File(stderr),
            exit_code: Some(1),
        },
    )
}

/// About `bytes` of tool output with every kind of line, varied by `seed`.
fn output(bytes: usize, seed: usize, last_line_feed: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 100);
    let mut i = seed;
    while out.len() < bytes {
        i += 1;
        match i % 9 {
            0 => out.extend_from_slice(
                format!(
                    "src/m{i}.py:{i}:{}: error: broken thing  [code-{i}]\n",
                    i % 80
                )
                .as_bytes(),
            ),
            1 => {
                out.extend_from_slice(format!("src/m{i}.py:{i}:1: note: crlf line\r\n").as_bytes())
            }
            2 => out.push(b'\n'),
            3 => out.extend_from_slice(b"src/bad\xff\xfe.py:3:4: error: bytes \xe2\x82\n"),
            4 => out.extend_from_slice("src/é.py:7:2: warning: naïve 😀  [misc]\n".as_bytes()),
            5 => out.extend_from_slice(b"noise without a match\r\n"),
            6 => {
                out.extend_from_slice(format!("src/m{i}.py:{i}:3: error: a cut byte ").as_bytes());
                out.extend_from_slice(b"\xf0\x9f\n");
            }
            _ => out
                .extend_from_slice(format!("src/m{i}.py:{i}:{}: error: plain\n", i % 7).as_bytes()),
        }
    }
    out.extend_from_slice(b"src/last.py:9:9: error: the last line");
    if last_line_feed {
        out.push(b'\n');
    }
    out
}

const PATTERNS: [&str; 4] = [
    // The mypy shape …
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>\w+): (?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$",
    // … one that matches empty lines …
    r"^(?P<message>)$",
    // … one whose matches start inside lines …
    r"(?P<code>\[[a-z0-9-]+\])",
    // … and one matching the carriage return at a line's end.
    r"(?P<message>[^\n]*\r)$",
];

#[test]
fn a_saved_output_parses_as_the_same_bytes_in_memory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let stdout = output(50_000, 0, false);
    let path = dir.path().join("g.stdout");
    std::fs::write(&path, &stdout).expect("write stdout");
    for pattern in PATTERNS {
        let gate = text_gate(pattern, "both");
        let want = in_memory(&gate, &stdout, b"x.py:1:1: error: from stderr\n");
        let got = parse_saved_output(
            &ctx(&gate),
            SavedOutput {
                stdout: OutputSource::File(&path),
                stderr: OutputSource::Bytes(b"x.py:1:1: error: from stderr\n"),
                exit_code: Some(1),
            },
        )
        .expect("read");
        assert_eq!(got, want, "{pattern}");
    }
}

#[test]
fn a_missing_file_is_a_read_error_naming_it_whichever_stream_the_gate_reads() {
    let dir = tempfile::tempdir().expect("temp dir");
    let present = dir.path().join("g.stdout");
    std::fs::write(&present, b"a.py:1:1: error: x\n").expect("write");
    let missing = dir.path().join("missing.stderr");
    let gate = text_gate(PATTERNS[0], "stdout");
    match from_files(&gate, &present, &missing) {
        Err(e @ ReadError::Io { .. }) => {
            assert!(
                e.to_string()
                    .starts_with(&format!("cannot read {}: ", missing.display()))
            );
        }
        other => panic!("expected a read error, got {other:?}"),
    }
}
