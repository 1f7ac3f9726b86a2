#!/usr/bin/env bash
# Installs every gate tool qgates' presets and tests run against, each at its pinned version:
#   python   .venv: the PyPI tools and the MCP SDK (requirements-tools.txt)
#   venvs    a venv of its own, tools/NAME-venv, for each tools/requirements-NAME.txt: a tool whose
#            pins clash with .venv's (its program NAME is linked, and those a `# programs:` line names) (semgrep pins an older MCP SDK than the one
#            tests/mcp/mcp_server.rs drives qgates with)
#   node     tools/node_modules: the npm tools (tools/package.json, exact versions in its lock file;
#            tools/node-bins.txt names the programs linked into tools/bin), and tools/node-NAME/
#            for tools whose dependencies clash with those
#   debian   Debian packages (tools/apt-packages.txt); needs root when one is missing
#   go       the Go tools (tools/go-tools.txt), built by `go install` with the machine's Go into
#            tools/go-bin
#   java     the Java tools (tools/java/pom.xml), their jars copied by Maven into tools/java/lib, a
#            folder per tool; tools/java/bin has a launcher for each
#   rust     checks that clippy and rustfmt came with the Rust toolchain
# then links into tools/bin the tools that live outside .venv/bin or under another name, so that
# `.venv/bin` and `tools/bin` on PATH give every tool by its usual name.
#
# Usage: scripts/setup.sh [PART...]   (default: every part; e.g. `scripts/setup.sh python`)
# The parts run side by side (most of their time is downloads); each one's output is shown when
# it ends. A second run is quick: a part whose pin file has not changed since it was installed is skipped
# (the pin file's SHA-256 is kept beside what it installed).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "setup: $*" >&2
  exit 1
}

# Whether the stamp beside an install matches the pin file it was made from.
up_to_date() { # STAMP PINFILE
  [ -f "$1" ] && [ "$(cat "$1")" = "$(sha256sum "$2" | cut -d' ' -f1)" ]
}
stamp() { # STAMP PINFILE
  sha256sum "$2" | cut -d' ' -f1 >"$1"
}

# A venv at DIR with the pinned requirements of FILE.
pip_part() { # DIR FILE
  local dir=$1 file=$2
  up_to_date "$dir/.pins.sha256" "$file" && return 0
  [ -x "$dir/bin/python" ] || python3 -m venv "$dir" || fail "could not make the venv $dir (is python3-venv installed?)"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$file" ||
    fail "could not install the pinned tools from $file into $dir (is PyPI reachable?)"
  stamp "$dir/.pins.sha256" "$file"
}

node_part() {
  command -v npm >/dev/null || fail "npm is missing: install Node.js 20 or newer (Debian: apt-get install nodejs npm)"
  local dir
  # tools/ and each tools/node-NAME/: a tool whose dependencies clash with tools/'s has a project
  # of its own (svelte-check and vue-tsc need TypeScript 6's JavaScript API).
  for dir in tools tools/node-*/; do
    dir=${dir%/}
    [ -f "$dir/package-lock.json" ] || continue
    up_to_date "$dir/node_modules/.pins.sha256" "$dir/package-lock.json" && continue
    # `npm ci` installs exactly the lock file's versions (it starts from an empty node_modules).
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error ||
      fail "could not install the npm tools from $dir/package-lock.json (is the npm registry reachable?)"
    stamp "$dir/node_modules/.pins.sha256" "$dir/package-lock.json"
  done
}

debian_part() {
  local wanted=() missing=() line name version
  while read -r line; do
    line=${line%%#*}
    line=${line//[[:space:]]/}
    [ -n "$line" ] || continue
    wanted+=("$line")
    name=${line%%=*}
    version=${line#*=}
    [ "$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null)" = "install ok installed $version" ] ||
      missing+=("$line")
  done <tools/apt-packages.txt
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    fail "these Debian packages are missing or at another version: ${missing[*]}
  install them as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
  fi
  apt-get update -qq || fail "apt-get update failed (is the Debian mirror reachable?)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${wanted[@]}" >/dev/null ||
    fail "could not install the Debian packages ${wanted[*]}"
}

go_part() {
  up_to_date tools/go-bin/.pins.sha256 tools/go-tools.txt && return 0
  command -v go >/dev/null || fail "go is missing: install Go 1.22 or newer (https://go.dev/dl, or Debian's golang-go)"
  local line
  while read -r line; do
    line=${line%%#*}
    line=${line//[[:space:]]/}
    [ -n "$line" ] || continue
    GOBIN="$PWD/tools/go-bin" go install "$line" ||
      fail "could not build $line (is the Go module proxy reachable?)"
  done <tools/go-tools.txt
  stamp tools/go-bin/.pins.sha256 tools/go-tools.txt
}

java_part() {
  up_to_date tools/java/lib/.pins.sha256 tools/java/pom.xml && return 0
  command -v java >/dev/null || fail "java is missing: install Java 17 or newer (Debian: apt-get install openjdk-17-jre-headless)"
  command -v mvn >/dev/null || fail "mvn is missing: install Maven (Debian: apt-get install maven)"
  # A folder per tool: their dependencies would clash on one class path.
  rm -rf tools/java/lib
  # Debian's Maven 3.8 prints colour resets even with -q: its output is shown only on failure.
  local out
  out=$(mvn -B -q -f tools/java/pom.xml dependency:copy-dependencies@checkstyle dependency:copy@google-java-format 2>&1) ||
    fail "could not copy the Java tools of tools/java/pom.xml (is Maven Central reachable?)
$out"
  stamp tools/java/lib/.pins.sha256 tools/java/pom.xml
}

rust_part() {
  cargo clippy --version >/dev/null 2>&1 || fail "cargo clippy is missing: rustup component add clippy"
  rustfmt --version >/dev/null 2>&1 || fail "rustfmt is missing: rustup component add rustfmt"
}

venvs_part() {
  local file name pids=() failed=0 pid
  # Side by side: each is mostly downloads.
  for file in tools/requirements-*.txt; do
    name=${file#tools/requirements-}
    name=${name%.txt}
    pip_part "tools/$name-venv" "$file" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || failed=1
  done
  [ $failed -eq 0 ]
}

# Lines of a list file without comments and blanks.
names_in() { # FILE
  sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$1"
}

# tools/bin: one folder for every tool that is not in .venv/bin under its usual name.
link_tools() {
  mkdir -p tools/bin
  local name file venv
  for name in $(names_in tools/node-bins.txt); do
    for file in tools/node_modules/.bin/"$name" tools/node-*/node_modules/.bin/"$name"; do
      [ -e "$file" ] && ln -sfn "../${file#tools/}" "tools/bin/$name" && break
    done
  done
  # Each extra venv's program: the one it is named after, and those its file's `# programs:` line
  # names.
  for file in tools/requirements-*.txt; do
    venv=${file#tools/requirements-}
    venv=${venv%.txt}
    for name in "$venv" $(sed -n 's/^# programs://p' "$file"); do
      [ -e "tools/$venv-venv/bin/$name" ] && ln -sfn "../$venv-venv/bin/$name" "tools/bin/$name"
    done
  done
  for name in tools/go-bin/*; do
    [ -x "$name" ] && ln -sfn "../go-bin/${name##*/}" "tools/bin/${name##*/}"
  done
  for name in tools/java/bin/*; do
    [ -d tools/java/lib ] && ln -sfn "../java/bin/${name##*/}" "tools/bin/${name##*/}"
  done
  return 0
}

run_part() { # PART
  case $1 in
    python) pip_part .venv requirements-tools.txt ;;
    venvs) venvs_part ;;
    node) node_part ;;
    debian) debian_part ;;
    go) go_part ;;
    java) java_part ;;
    rust) rust_part ;;
    *) fail "unknown part '$1': the parts are python, venvs, node, debian, go, java and rust" ;;
  esac
}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(debian python venvs node go java rust)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for part in "${parts[@]}"; do
  (run_part "$part") >"$logs/$part" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!parts[@]}"; do
  wait "${pids[$i]}" || failed=1
  [ -s "$logs/${parts[$i]}" ] && sed "s/^/[${parts[$i]}] /" "$logs/${parts[$i]}"
done
[ $failed -eq 0 ] || fail "a part failed (its output is above)"
link_tools
