#!/usr/bin/env bash
# Installs what the tests need and runs them all: formatting, lints, unit and integration tests
# (against the real ruff and mypy pinned in requirements-tools.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
# Every tool: the preset catalog is tested against each real tool (tests/presets_real_tools.rs).
./scripts/setup.sh
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test
# The editors, end to end, against the binary `cargo test` just built.
./scripts/test-nvim.sh
./scripts/test-vscode.sh
