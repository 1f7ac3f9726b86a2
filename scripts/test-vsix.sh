#!/usr/bin/env bash
# The VS Code platform package as a user gets it: a release build of qgates (stripped), packaged
# by scripts/package-vsix.sh, installed into code-server where no qgates is on PATH or in the
# workspace's .venv: the `bundled` scenario of tests/editors/vscode/e2e.mjs (through
# scripts/test-vscode.sh, which installs code-server and the npm packages when missing).
#
#   CARGO_TARGET_DIR  where the release build goes (default: target): share it with the other
#                     release builds of a CI run, so the build is done once
#
# The last line is "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
target=${CARGO_TARGET_DIR:-$PWD/target}
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
# The machine is shared with other builds and tests: the release build yields to them.
nice -n 10 cargo build --release --bin qgates --quiet
bin=$target/release/qgates
echo "test-vsix: release build $(($(date +%s) - start)) s: $bin, $(du -h "$bin" | cut -f1), $("$bin" --version)"
QGATES_E2E_ONLY=bundled QGATES_BIN="$bin" QGATES_BUNDLE_BIN="$bin" exec scripts/test-vscode.sh
