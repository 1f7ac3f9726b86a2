#!/usr/bin/env bash
# Installs what the tests need and runs them all: formatting, lints, unit and integration tests
# (against the real ruff and mypy pinned in requirements-tools.txt), the editors end to end, and
# the installs.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every tool: the preset catalog is tested against each real tool
# (tests/tools/presets_real_tools.rs).
# The installs are mostly downloads and the lints mostly CPU, so they run side by side; the tests
# need both. The installs' output is shown when they end.
# One build, never rebuilt piecemeal: incremental artifacts would double the target folder's size
# (about 5 GB) for nothing.
export CARGO_INCREMENTAL=0
setup_log=$(mktemp)
./scripts/setup.sh >"$setup_log" 2>&1 &
setup=$!
trap 'kill "$setup" 2>/dev/null || true; rm -f "$setup_log"' EXIT
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
if ! wait "$setup"; then
  cat "$setup_log" >&2
  echo "test: scripts/setup.sh failed (its output is above)" >&2
  exit 1
fi
cat "$setup_log"
rm -f "$setup_log"
trap - EXIT
cargo test
# The editors, end to end, against the binary `cargo test` just built.
./scripts/test-nvim.sh
./scripts/test-vscode.sh
# The installs (pip, the GitHub Action, cargo install, a wheel, pre-commit) from a clean clone of
# HEAD, all from one release build; the manylinux2014 wheel is a second whole build and runs in
# `scripts/test-install.sh` without `--one-build`.
./scripts/test-install.sh --one-build
