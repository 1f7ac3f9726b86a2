#!/usr/bin/env bash
# Runs `qgates check` on the bundled example project (fixtures/python-basic) and prints its summary.
# The example has one problem of each kind, so qgates exits 1 (violations); that is the expected result.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh python
cargo build --release --quiet
export PATH="$PWD/.venv/bin:$PATH"
set +e
./target/release/qgates check --root fixtures/python-basic --scope project --format text
code=$?
set -e
echo
echo "qgates exited with $code (0 green, 1 violations, 2 configuration error, 3 a gate could not run)."
[ "$code" -eq 1 ] || exit "$code"
