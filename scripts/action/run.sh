#!/usr/bin/env bash
# The steps of the GitHub Action (action.yml), as one script so that they can be run and tested
# outside GitHub: install qgates, write the SARIF file, then run `qgates check --format github`,
# whose workflow commands the runner turns into annotations. Exits with `qgates check`'s code.
#
# Reads what action.yml passes (QGATES_ACTION_ARGS, QGATES_ACTION_VERSION, QGATES_ACTION_SARIF)
# and what the runner sets (GITHUB_ACTION_PATH, GITHUB_OUTPUT, GITHUB_PATH, GITHUB_STEP_SUMMARY,
# RUNNER_TEMP).
set -euo pipefail

fail() { # a usage error, as an annotation the run's page shows
  echo "::error title=qgates action::$1"
  exit 2
}

version=${QGATES_ACTION_VERSION:-checkout}
sarif=${QGATES_ACTION_SARIF:-qgates.sarif}
# Split the arguments as a shell would, without running anything they hold: xargs honours quotes
# and backslashes but expands no variables or commands.
args=()
if [ -n "${QGATES_ACTION_ARGS:-}" ]; then
  split=$(printf '%s' "$QGATES_ACTION_ARGS" | xargs -n1 printf '%s\n') ||
    fail "the args input cannot be split (an unmatched quote?): $QGATES_ACTION_ARGS"
  mapfile -t args <<<"$split"
fi

install_into_venv() { # pip-installs $1 into a virtual environment and puts its bin/ on PATH
  local venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/qgates-action-venv"
  echo "::group::Install qgates ($1)"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$1"
  echo "::endgroup::"
  export PATH="$venv/bin:$PATH"
  # Later steps of the job find the same qgates.
  if [ -n "${GITHUB_PATH:-}" ]; then echo "$venv/bin" >>"$GITHUB_PATH"; fi
}

case "$version" in
  checkout)
    [ -n "${GITHUB_ACTION_PATH:-}" ] || fail "version: checkout builds qgates from the action's folder, but GITHUB_ACTION_PATH is not set"
    install_into_venv "$GITHUB_ACTION_PATH"
    ;;
  installed)
    command -v qgates >/dev/null ||
      fail "version: installed, but there is no qgates on PATH: install it in an earlier step, or use version: checkout"
    ;;
  *)
    [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([.+-]?[0-9A-Za-z.]+)?$ ]] ||
      fail "version: '$version' is neither checkout, installed nor a release number such as 0.1.0"
    install_into_venv "qgates==$version"
    ;;
esac
echo "Using $(command -v qgates) ($(qgates --version))"

# First the SARIF file, with --no-state so the baseline of the `auto` scope is left as it was;
# the annotation run then checks the same files, and its gates' results come from the cache.
sarif_args=(--format sarif)
[[ " ${args[*]-} " == *" --no-state "* ]] || sarif_args+=(--no-state)
mkdir -p "$(dirname "$sarif")"
set +e
qgates check "${sarif_args[@]}" "${args[@]}" >"$sarif"
set -e
if [ ! -s "$sarif" ]; then
  rm -f "$sarif"
  sarif=""
fi

annotations=$(mktemp)
trap 'rm -f "$annotations"' EXIT
set +e
qgates check --format github "${args[@]}" | tee "$annotations"
code=${PIPESTATUS[0]}
set -e

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "exit-code=$code"
    echo "sarif-file=$sarif"
  } >>"$GITHUB_OUTPUT"
fi
# The summary line (the last one the github format prints) heads the run's summary page.
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  tail -n 1 "$annotations" >>"$GITHUB_STEP_SUMMARY"
fi
exit "$code"
