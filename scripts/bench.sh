#!/usr/bin/env bash
# Builds qgates in release and runs every benchmark: parse throughput (criterion), check wall time
# against the tools by hand, peak memory, scope resolution and language-server latency. The tools
# come from .venv (scripts/setup.sh) unless QGATES_BENCH_TOOLS names a folder holding ruff and
# mypy. Takes a few minutes on 2 cores.
#   scripts/bench.sh            all benchmarks
#   scripts/bench.sh parse      only one (parse, check, memory, scope, lsp or scale)
# QGATES_BENCH_COLD=1 runs the check benchmark with mypy's and ruff's caches deleted before every
# timed command; QGATES_BENCH_RUNS=N sets its number of runs (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin qgates
benches=("${@:-parse check memory scope lsp scale}")
# shellcheck disable=SC2068 # word splitting of the default list is intended
for bench in ${benches[@]}; do
  echo "=== cargo bench --bench $bench"
  cargo bench --bench "$bench"
done
