#!/usr/bin/env bash
# Tests the VS Code extension (editors/vscode) end to end in real VS Code: code-server in headless
# Chromium, driven by tests/editors/vscode/e2e.mjs. Installs what it needs when missing (as root on
# Debian): the system packages, code-server (into a cache outside the checkout, reused by later
# runs), the npm packages of the extension and of the test. Run scripts/setup.sh first (ruff, mypy).
#
#   QGATES_BIN            the qgates binary (default: target/debug/qgates, built when missing)
#   QGATES_EDITORS_CACHE  where code-server is installed (default: ~/.cache/qgates-editors)
#   QGATES_ARTIFACTS      screenshots and logs (default: target/editor-artifacts/vscode)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
CACHE=${QGATES_EDITORS_CACHE:-$HOME/.cache/qgates-editors}
CODE_SERVER_VERSION=4.100.3
CS_DIR=$CACHE/code-server
start=$(date +%s)

say() { echo "test-vscode: $*"; }

# System packages: compilers and headers for code-server's native modules, ripgrep (code-server's
# search), Chromium, and an emoji font so the summary line's ✅/❌ render in screenshots.
packages=(build-essential pkg-config python3 libkrb5-dev libsecret-1-dev libxkbfile-dev libx11-dev
  ripgrep chromium fonts-noto-color-emoji git)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" -ne 0 ]; then
    say "missing Debian packages: ${missing[*]} (install them, or run this as root)" >&2
    exit 1
  fi
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# code-server from npm only (its own installer downloads from elsewhere). The marker is written
# last, so an interrupted install is redone rather than used half-built.
if [ ! -f "$CS_DIR/.qgates-installed-$CODE_SERVER_VERSION" ]; then
  say "installing code-server $CODE_SERVER_VERSION into $CS_DIR (log: $CACHE/install-code-server.log)"
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  if ! bash tests/editors/vscode/install-code-server.sh "$CS_DIR" >"$CACHE/install-code-server.log" 2>&1; then
    tail -40 "$CACHE/install-code-server.log" >&2
    say "installing code-server failed (full log: $CACHE/install-code-server.log)" >&2
    exit 1
  fi
  touch "$CS_DIR/.qgates-installed-$CODE_SERVER_VERSION"
fi

# The gate tools the fixture's quality.yaml runs.
if [ ! -x .venv/bin/ruff ] || [ ! -x .venv/bin/mypy ]; then
  ./scripts/setup.sh
fi

# The binary under test.
export QGATES_BIN=${QGATES_BIN:-$REPO/target/debug/qgates}
if [ ! -x "$QGATES_BIN" ]; then
  say "building $QGATES_BIN"
  cargo build --quiet
fi

# npm packages from the committed lockfiles; skipped when node_modules is already that lockfile's.
npm_ci() {
  if [ ! -f "$1/node_modules/.package-lock.json" ] || [ "$1/package-lock.json" -nt "$1/node_modules/.package-lock.json" ]; then
    (cd "$1" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}
npm_ci editors/vscode
npm_ci tests/editors/vscode

say "installs took $(($(date +%s) - start)) s"

# The test packages the extension itself (its first check), prints its own time and ends with
# the line `N passed, N failed` (kept last for whoever reads the output).
CODE_SERVER=$CS_DIR/node_modules/.bin/code-server exec node tests/editors/vscode/e2e.mjs
