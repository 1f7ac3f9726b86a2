#!/usr/bin/env bash
# Installs qgates every way a user would, from what is committed (a `git clone` of HEAD, so
# uncommitted changes are not tested), and runs each installed binary:
#   1. the source distribution carries what building needs and nothing of tests, fixtures, editors;
#   2. pre-commit, as a repository adopts it: a .pre-commit-config.yaml naming this checkout,
#      `pre-commit install`, then `git commit` of a staged unused import is refused, and the fix
#      commits (no quality.yaml there: the embedded default);
#   3. `pip install .` into a fresh virtual environment;
#   4. the GitHub Action's script (action.yml's steps) on a fixture, as the runner calls it: the
#      annotations and a SARIF file that validates against the SARIF 2.1.0 schema;
#   5. `cargo install --path .` (and by default `--git`) gives a stripped binary;
#   6. a wheel from `maturin build --release` installs into another fresh environment and runs;
#      by default it is the manylinux2014 wheel (`--zig`), which must need no glibc newer than
#      2.17.
#
# Usage: scripts/test-install.sh [--one-build]
#   --one-build  every install comes from one release build, unoptimized (what scripts/test.sh
#                runs): the wheel of step 6 is maturin's plain build, which reuses the others'.
#                Zig links for another glibc, so the manylinux2014 wheel is a second whole build
#                (about 7 min on two cores); it runs without this flag and in the release
#                workflow.
#
# The release builds share one CARGO_TARGET_DIR (target/install-test, or $QGATES_INSTALL_TARGET):
# pre-commit's environment builds first, and 3, 4, 5 and the plain wheel reuse that build whole
# (cargo rebuilds a crate only when its sources are newer than its build, and the clean checkout
# is older than pre-commit's clone; build.rs names the preset files relative to the package, so
# its output holds for every checkout); the zig wheel compiles everything again for an explicit
# --target. The build tools (requirements-install.txt) live in a virtual environment under
# ~/.cache/qgates-install-test, remade when that file changes. Needs cargo and python3; ruff and
# mypy come from the repository's .venv (scripts/setup.sh python).
set -euo pipefail
cd "$(dirname "$0")/.."
one_build=false
case "${1:-}" in
  --one-build) one_build=true ;;
  "") ;;
  *)
    echo "usage: scripts/test-install.sh [--one-build]" >&2
    exit 2
    ;;
esac
repo=$PWD
cache=${QGATES_INSTALL_CACHE:-$HOME/.cache/qgates-install-test}
if $one_build; then
  # These steps check how each install goes and that what it installs runs, not how fast it runs:
  # the one build is unoptimized and not link-time optimized (about 2 min on two cores, against
  # about 9 min for the shipped profile). Without --one-build, and in the release workflow, the
  # shipped profile is built.
  export CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_LTO=false
  export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
fi
export CARGO_TARGET_DIR=${QGATES_INSTALL_TARGET:-$repo/target/install-test}
work=$(mktemp -d "${TMPDIR:-/tmp}/qgates-install.XXXXXX")
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
started=$SECONDS
step_started=$SECONDS
ok() {
  passed=$((passed + 1))
  echo "  ok: $1"
}
bad() {
  failed=$((failed + 1))
  echo "  FAILED: $1"
}
check() { # check DESCRIPTION COMMAND...: the command's success is the check's
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
step() {
  echo "== $1 (previous step: $((SECONDS - step_started)) s)"
  step_started=$SECONDS
}
# A command that stops the script (set -e) says which and counts as a failure; in the `set +e`
# stretches a failing command is expected (its exit code is checked), so it is not reported.
trap '[[ $- != *e* ]] || { echo "FAILED at line $LINENO: $BASH_COMMAND"; echo "$passed passed, $((failed + 1)) failed"; }' ERR
contains() { grep -qF -- "$2" <<<"$1"; }
lacks_folder() { ! grep -q "^$2/" <<<"$1"; } # lacks_folder LISTING FOLDER
version_at_most() { [ "$(printf '%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$2" ]; } # V MAX
usage_error() { [ "$1" -eq 2 ] && grep -q "^::error title=qgates action::.*$2" <<<"$3"; } # CODE TEXT OUT

step "tools: ruff and mypy in .venv, the pinned build tools in $cache/venv"
./scripts/setup.sh python >/dev/null
tools="$cache/venv"
want=$(sha256sum requirements-install.txt | cut -c1-16)
if [ "$(cat "$tools/.requirements" 2>/dev/null)" != "$want" ]; then
  rm -rf "$tools"
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet -r requirements-install.txt
  echo "$want" >"$tools/.requirements"
fi
# The gate tools the checks below run (ruff, mypy), then maturin, zig, pre-commit.
export PATH="$tools/bin:$repo/.venv/bin:$PATH"
cargo_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)

step "a clean checkout of HEAD ($(git rev-parse --short HEAD))"
git clone --quiet "$repo" "$work/src"
src=$work/src
example=(check --root "$src/fixtures/python-basic" --scope project --no-state --no-cache --format text)

# Runs an installed qgates: its version is Cargo.toml's, and the example fails with the README's
# summary line (one problem of each kind: exit 1).
try_binary() { # try_binary LABEL PATH-TO-QGATES
  local out code
  out=$("$2" --version)
  check "$1: --version is $cargo_version" [ "$out" = "qgates $cargo_version" ]
  set +e
  out=$("$2" "${example[@]}" 2>&1)
  code=$?
  set -e
  check "$1: the example exits 1 (violations), got $code" [ "$code" -eq 1 ]
  check "$1: the example reports the README's summary line" \
    contains "$out" "3/3 gates failed — 7 violations (4 auto-fixable): ruff_format, ruff_lint, mypy"
  check "$1: the binary is stripped" contains "$(file -L "$2")" ", stripped"
  check "$1: the preset catalog is embedded" contains "$("$2" presets)" "ruff-lint"
}

step "1. the source distribution"
(cd "$src" && maturin sdist --out "$work/sdist" >"$work/sdist.log" 2>&1) || { cat "$work/sdist.log"; false; }
listing=$(tar tzf "$work"/sdist/qgates-"$cargo_version".tar.gz | cut -d/ -f2- | sort)
for needed in Cargo.toml Cargo.lock build.rs pyproject.toml src/main.rs presets/ruff-lint.yaml \
  src/core/config/default.yaml README.md; do
  check "the sdist has $needed" grep -qx -- "$needed" <<<"$listing"
done
for unwanted in fixtures tests editors tools scripts target .ci; do
  check "the sdist has nothing under $unwanted/" lacks_folder "$listing" "$unwanted"
done

step "2. pre-commit in a fixture repository with no quality.yaml: install, commit, fix, commit"
check "pre-commit accepts .pre-commit-hooks.yaml" pre-commit validate-manifest "$src/.pre-commit-hooks.yaml"
hook_repo=$work/hook-repo
mkdir -p "$hook_repo"
git -C "$hook_repo" init --quiet
git -C "$hook_repo" config user.email test@example.invalid
git -C "$hook_repo" config user.name test
# What a repository adopting the hook writes; `rev` pins the commit under test. pre-commit clones
# it and pip-installs it into the hook's environment, in a store of this run's own. This is the
# release build the later steps reuse (CARGO_TARGET_DIR, which pre-commit passes on to pip and
# maturin): cargo rebuilds a crate whose sources are newer than its build, and pre-commit's
# clone is made after the clean checkout, so its build must come first.
cat >"$hook_repo/.pre-commit-config.yaml" <<EOF
repos:
  - repo: $src
    rev: $(git -C "$src" rev-parse HEAD)
    hooks:
      - id: qgates
EOF
export PRE_COMMIT_HOME=$work/pre-commit-home
(cd "$hook_repo" && pre-commit install --hook-type pre-commit >/dev/null)
printf 'import os\n\nprint("hello")\n' >"$hook_repo/app.py"
git -C "$hook_repo" add .pre-commit-config.yaml app.py
set +e
out=$(cd "$hook_repo" && nice -n 10 git commit --quiet -m "add app" 2>&1)
code=$?
set -e
check "the hook refuses the commit of a staged unused import (exit $code)" [ "$code" -ne 0 ]
check "nothing was committed" [ -z "$(git -C "$hook_repo" rev-list --all)" ]
check "the hook names the file" contains "$out" "app.py"
check "the hook names the unused import" \
  contains "$out" "1:8  error  F401  \`os\` imported but unused"
check "the hook ran the embedded default (no quality.yaml)" contains "$out" "config: embedded default"
[ "$code" -ne 0 ] || echo "$out"
printf 'print("hello")\n' >"$hook_repo/app.py"
git -C "$hook_repo" add app.py
set +e
out=$(cd "$hook_repo" && git commit --quiet -m "add app" 2>&1)
code=$?
set -e
check "after the fix the commit goes through (exit $code)" [ "$code" -eq 0 ]
check "the commit holds the fixed file" \
  [ "$(git -C "$hook_repo" show HEAD:app.py 2>/dev/null)" = 'print("hello")' ]
[ "$code" -eq 0 ] || echo "$out"

step "3. pip install . from the clean checkout into a fresh virtual environment"
python3 -m venv "$work/pip-venv"
(cd "$src" && nice -n 10 "$work/pip-venv/bin/pip" install --quiet .)
try_binary "pip install ." "$work/pip-venv/bin/qgates"

step "4. the GitHub Action's script on a fixture repository"
ws=$work/action-ws
mkdir -p "$ws/src" "$work/runner-temp"
git -C "$ws" init --quiet
printf 'version: 1\ngates:\n  ruff_lint: { preset: ruff-lint }\n' >"$ws/quality.yaml"
printf 'import os\n\nprint("hello")\n' >"$ws/src/app.py"
touch "$work/github-output" "$work/github-path" "$work/github-summary"
# action.yml's step, as the runner runs it: its env with the inputs' defaults filled in, its
# command, from the action's folder (the checkout) in the workspace.
action_env=$(python3 - "$src/action.yml" <<'EOF'
import re, sys, yaml  # pyyaml comes with pre-commit
action = yaml.safe_load(open(sys.argv[1]))
inputs = {k: v.get("default", "") for k, v in action["inputs"].items()}
overrides = {"args": "--scope project"}
(step,) = action["runs"]["steps"]
assert action["runs"]["using"] == "composite", action["runs"]
assert step["run"] == '"$GITHUB_ACTION_PATH/scripts/action/run.sh"', step["run"]
for name, value in step["env"].items():
    m = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", value)
    print(f"{name}={overrides.get(m.group(1), inputs[m.group(1)])}")
EOF
)
action_env_args=()
mapfile -t action_env_args <<<"$action_env"
set +e
out=$(cd "$ws" && env "${action_env_args[@]}" GITHUB_ACTIONS=true CI=true GITHUB_WORKSPACE="$ws" \
  GITHUB_ACTION_PATH="$src" GITHUB_OUTPUT="$work/github-output" GITHUB_PATH="$work/github-path" \
  GITHUB_STEP_SUMMARY="$work/github-summary" RUNNER_TEMP="$work/runner-temp" \
  nice -n 10 "$src/scripts/action/run.sh" 2>&1)
code=$?
set -e
check "the action exits 1 (violations), got $code" [ "$code" -eq 1 ]
check "the action annotates the unused import" \
  grep -qF "::error file=src/app.py,line=1,col=8,endLine=1,endColumn=10,title=Ruff Lint F401::\`os\` imported but unused" <<<"$out"
check "the action sets its outputs" \
  grep -qxF "exit-code=1" "$work/github-output"
check "the action names its SARIF file" grep -qxF "sarif-file=qgates.sarif" "$work/github-output"
check "the action puts qgates on the job's PATH" grep -qxF "$work/runner-temp/qgates-action-venv/bin" "$work/github-path"
check "the action writes the summary line" grep -q "1/1 gates failed" "$work/github-summary"
check "the SARIF file validates against the SARIF 2.1.0 schema" \
  check-jsonschema --schemafile "$src/fixtures/schemas/sarif-schema-2.1.0.json" "$ws/qgates.sarif"
check "the SARIF file has the F401 result at src/app.py:1" python3 -c '
import json, sys
(result,) = json.load(open(sys.argv[1]))["runs"][0]["results"]
place = result["locations"][0]["physicalLocation"]
assert result["ruleId"] == "ruff_lint/F401", result
assert place["artifactLocation"]["uri"] == "src/app.py", place
assert place["region"]["startLine"] == 1, place
' "$ws/qgates.sarif"
[ "$passed" -gt 0 ] && [ "$failed" -eq 0 ] || echo "$out"
# Bad input: each is a usage error (exit 2) with an annotation that says what to change.
for bad_input in "QGATES_ACTION_VERSION=latest|neither checkout, installed nor a release number" \
  "QGATES_ACTION_ARGS='--scope|cannot be split"; do
  set +e
  out=$(cd "$ws" && env "${action_env_args[@]}" "${bad_input%%|*}" GITHUB_ACTION_PATH="$src" \
    RUNNER_TEMP="$work/runner-temp" "$src/scripts/action/run.sh" 2>&1)
  code=$?
  set -e
  check "${bad_input%%|*}: exit 2 with '${bad_input#*|}'" \
    usage_error "$code" "${bad_input#*|}" "$out"
done

step "5. cargo install --path . --locked"
nice -n 10 cargo install --quiet --locked --path "$src" --root "$work/cargo-root" 2>/dev/null
try_binary "cargo install" "$work/cargo-root/bin/qgates"
if ! $one_build; then
  # From a git URL, as without a checkout (cargo clones it: another path, so the qgates crate
  # builds again).
  nice -n 10 cargo install --quiet --locked --git "file://$src" qgates --root "$work/cargo-git-root" 2>/dev/null
  try_binary "cargo install --git" "$work/cargo-git-root/bin/qgates"
fi

if $one_build; then
  step "6. maturin build --release (reusing the build), installed into another venv"
  wheel_args=()
else
  step "6. maturin build --release --zig --compatibility manylinux2014, installed into another venv"
  wheel_args=(--zig --compatibility manylinux2014)
fi
(cd "$src" && nice -n 10 maturin build --quiet --release "${wheel_args[@]}" \
  --out "$work/wheels" >"$work/wheel.log" 2>&1) || { cat "$work/wheel.log"; false; }
wheel=$(ls "$work"/wheels/qgates-"$cargo_version"-*.whl)
check "the wheel is a manylinux wheel: $(basename "$wheel")" contains "$wheel" "-manylinux_"
python3 -m venv "$work/wheel-venv"
"$work/wheel-venv/bin/pip" install --quiet --no-index "$wheel"
try_binary "the wheel" "$work/wheel-venv/bin/qgates"
# The newest glibc symbol version the binary links against is the oldest glibc it runs on.
glibc=$(objdump -T "$work/wheel-venv/bin/qgates" | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -n 1)
echo "  the wheel's binary needs $glibc"
if ! $one_build; then
  check "the wheel is tagged manylinux2014" contains "$wheel" "manylinux2014_x86_64"
  check "the wheel is tagged manylinux_2_17" contains "$wheel" "manylinux_2_17_x86_64"
  check "the wheel needs no glibc newer than 2.17 ($glibc)" version_at_most "$glibc" GLIBC_2.17
fi

step "done"
echo "install tests took $((SECONDS - started)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
