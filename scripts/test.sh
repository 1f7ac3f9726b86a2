#!/usr/bin/env bash
# Installs what the tests need and runs them all: formatting, lints, unit and integration tests
# (against the real ruff and mypy pinned in requirements-tools.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
# Only the part the tests use: the Python tools and the MCP SDK in .venv. The preset catalog's
# other tools (`scripts/setup.sh` with no argument) join when tests run them.
./scripts/setup.sh python
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test
# The editors, end to end, against the binary `cargo test` just built.
./scripts/test-nvim.sh
./scripts/test-vscode.sh
