//! Parsing throughput: `parse_output` over 100,000 ruff JSON violations (the embedded default
//! `ruff_lint` gate) and over 100,000 lines of mypy text (a `text_violations` gate with a mypy
//! pattern), on one thread. Targets: ≥ 400,000 violations/s and ≥ 300,000 lines/s. Criterion
//! prints the rate as `thrpt: … Kelem/s` or `Melem/s`.
//!
//! Also the time to report a `quality.yaml` broken all over: 2 000 gates, each with a mistake,
//! once of a shape the reader stops at (a command written as one string) and once found when
//! the gates are checked (an empty `run_on`, placed through the tree). The work grows with the
//! file, not with the file times its mistakes; the target is ≤ 200 ms each (105 ms and 102 ms
//! on the 2-core development machine).

mod common;

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use qgates::core::config::{Config, ConfigSource, MAX_REPORTED_PROBLEMS, ParserSpec, parse_config};
use qgates::core::parse::{ParseContext, ToolOutput, parse_output};

const N: usize = 100_000;

fn config() -> Config {
    parse_config(&common::config_with_text_gate(), ConfigSource::Embedded)
        .unwrap_or_else(|e| panic!("the benchmark configuration does not load: {e}"))
}

/// Parses once and checks that every generated violation comes out, so the benchmark cannot
/// quietly measure a parser that drops its input.
fn parse_all(config: &Config, gate: &str, stdout: &[u8]) -> usize {
    let gate = config.gate(gate).expect("the gate is active");
    let root = Path::new(common::FAKE_ROOT);
    let ctx = ParseContext {
        gate,
        root,
        cwd: root,
        log_hint: ".qgates/runs/bench/gate.stdout",
        diff: None,
    };
    let out = ToolOutput {
        stdout,
        stderr: b"",
        exit_code: Some(1),
    };
    match parse_output(&ctx, out) {
        Ok(parsed) => parsed.violations.len(),
        Err(e) => panic!("{gate} output did not parse: {e}", gate = gate.id),
    }
}

fn bench_parse(c: &mut Criterion) {
    let config = config();
    let ruff = common::ruff_json(N);
    let mypy = common::mypy_text(N);
    for (gate, bytes) in [
        ("ruff_lint", ruff.as_bytes()),
        ("mypy_text", mypy.as_bytes()),
    ] {
        let got = parse_all(&config, gate, bytes);
        assert_eq!(
            got, N,
            "{gate}: {got} of {N} generated violations were parsed; the benchmark would measure the wrong thing"
        );
    }

    let mut group = c.benchmark_group("parse");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6));
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("ruff_json_100k_violations", |b| {
        b.iter(|| parse_all(&config, "ruff_lint", black_box(ruff.as_bytes())))
    });
    group.bench_function("mypy_text_100k_lines", |b| {
        b.iter(|| parse_all(&config, "mypy_text", black_box(mypy.as_bytes())))
    });
    group.finish();

    // What the libraries alone cost on the same bytes, for reading the numbers above: a
    // validating serde_json pass that builds nothing, and the gate's regex finding every match
    // with its groups. The parser cannot be faster than these.
    let mut floor = c.benchmark_group("floor");
    floor
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    floor.throughput(Throughput::Elements(N as u64));
    floor.bench_function("serde_json_ignored_any_ruff_100k", |b| {
        b.iter(|| {
            serde_json::from_slice::<serde::de::IgnoredAny>(black_box(ruff.as_bytes()))
                .expect("generated JSON is valid")
        })
    });
    let pattern = match &config.gate("mypy_text").expect("active").parser.spec {
        ParserSpec::Text(spec) => spec.regex.clone(),
        _ => unreachable!("mypy_text is a text gate"),
    };
    floor.bench_function("regex_captures_mypy_100k", |b| {
        b.iter(|| {
            let text = black_box(mypy.as_str());
            let mut locs = pattern.capture_locations();
            let (mut at, mut count) = (0, 0);
            while let Some(m) = pattern.captures_read_at(&mut locs, text, at) {
                count += 1;
                at = m.end() + 1;
                if at > text.len() {
                    break;
                }
            }
            assert_eq!(count, N);
        })
    });
    floor.finish();
}

/// 2 000 gates, each with `mistake` (gate lines under the id) in it.
fn broken_config(mistake: &str) -> String {
    let mut text = String::from("version: 1\ngates:\n");
    for i in 0..2_000 {
        text.push_str(&format!(
            "  gate_{i}:\n{}    parsing: {{ strategy: exit_code }}\n",
            mistake.replace("{i}", &i.to_string())
        ));
    }
    text
}

/// Reads a broken configuration and checks that it is reported as broken, capped.
fn report_broken(text: &str) -> usize {
    match parse_config(text, ConfigSource::Embedded) {
        Ok(_) => panic!("the broken configuration loaded; the benchmark would measure nothing"),
        Err(e) => {
            assert_eq!(e.problems.len(), MAX_REPORTED_PROBLEMS + 1, "{e}");
            e.problems.len()
        }
    }
}

fn bench_broken_config(c: &mut Criterion) {
    let shape = broken_config("    command: \"tool {i}\"\n");
    let checked = broken_config("    command: [tool]\n    run_on: []\n");
    let mut group = c.benchmark_group("broken_config");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.bench_function("2000_gates_of_the_wrong_shape", |b| {
        b.iter(|| report_broken(black_box(&shape)))
    });
    group.bench_function("2000_gates_failing_their_checks", |b| {
        b.iter(|| report_broken(black_box(&checked)))
    });
    group.finish();
}

criterion_group!(benches, bench_parse, bench_broken_config);
criterion_main!(benches);
