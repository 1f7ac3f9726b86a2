#!/usr/bin/env bash
# Installs what the tests need and runs them all: formatting, lints, unit and integration tests
# (against the real ruff and mypy pinned in requirements-tools.txt), the editors end to end, and
# the installs.
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
# The installs (pip, the GitHub Action, cargo install, a wheel, pre-commit) from a clean clone of
# HEAD, all from one release build; the manylinux2014 wheel is a second whole build and runs in
# `scripts/test-install.sh` without `--one-build`.
./scripts/test-install.sh --one-build
