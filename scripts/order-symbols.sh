#!/usr/bin/env bash
# Records which functions of the release binary start-up and everyday use run, into
# link/startup-symbols.txt, which build.rs hands to the linker so that they lie together in the
# binary (see build.rs for why). Needs valgrind. Function names carry hashes of their crates'
# versions and of the Rust toolchain: run this again after updating either. `cargo bench --bench
# lsp` reports how many of the listed functions the binary still has.
#
# Order: what the language server runs up to its `initialize` answer, then the rest of a short
# session (open, two saves, the summary, shutdown), then what a `qgates check` of the example
# adds; each part sorted, so that a new recording changes only the lines that changed.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "order-symbols.sh needs valgrind (apt-get install valgrind)" >&2; exit 2; }
./scripts/setup.sh >/dev/null
export PATH="$PWD/.venv/bin:$PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export QGATES_TRUST_FILE="$tmp/trust.json"
cp -r fixtures/python-basic "$tmp/project"
git -C "$tmp/project" init -q
git -C "$tmp/project" add -A
git -C "$tmp/project" -c user.name=qgates -c user.email=qgates@localhost commit -qm example

grind=(valgrind --tool=callgrind --demangle=no --trace-children=no)
record() { # BINARY BUILD: the functions each use runs, in $tmp/{init,session,check}.out.*
  local bin=$1
  python3 scripts/lsp-session.py "$tmp/project" src/unused_import.py --until initialize \
    -- "${grind[@]}" --callgrind-out-file="$tmp/init.out.%p" "$bin" lsp >/dev/null
  python3 scripts/lsp-session.py "$tmp/project" src/unused_import.py \
    -- "${grind[@]}" --callgrind-out-file="$tmp/session.out.%p" "$bin" lsp >/dev/null
  "${grind[@]}" --callgrind-out-file="$tmp/check.out.%p" "$bin" check --root "$tmp/project" \
    --scope project >/dev/null 2>&1 || [ $? -eq 1 ]
  nm --defined-only "$bin" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$tmp/defined.$2"
  cat "$tmp/defined.$2" >>"$tmp/defined"
}

# The binary `cargo build --release` makes, and the one `cargo bench` makes: the benches' build
# turns on features the dev-dependencies ask for, so its crates, and their functions' names,
# differ. Both are listed; the linker skips the names a binary does not have.
cargo build --release --quiet --bin qgates
cp target/release/qgates "$tmp/qgates-release"
record "$tmp/qgates-release" release
bench_bin=$(cargo bench --no-run --bench lsp --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["kind"] == ["bin"] and m["target"]["name"] == "qgates":
        print(m["executable"])')
record "$bench_bin" bench
cargo build --release --quiet --bin qgates

names() { grep -ohP '^c?fn=\(\d+\) \K.*' "$tmp/$1".out.* | sort -u | comm -12 - "$tmp/defined.sorted"; }
sort -u "$tmp/defined" >"$tmp/defined.sorted"
names init >"$tmp/init"
names session | comm -23 - "$tmp/init" >"$tmp/session"
names check | comm -23 - "$tmp/init" | comm -23 - "$tmp/session" >"$tmp/check"
out=link/startup-symbols.txt
cat "$tmp/init" "$tmp/session" "$tmp/check" >"$tmp/list"
in_build() { sort -u "$tmp/list" | comm -12 - "$tmp/defined.$1" | wc -l; }
{
  echo "# Functions of qgates that start-up and everyday use run, in the order the linker lays them"
  echo "# out (build.rs). Written by scripts/order-symbols.sh; do not edit by hand."
  # Read by benches/lsp.rs, which tells how many of them the binary it measures still has.
  echo "# release build: $(in_build release) of these functions"
  echo "# bench build: $(in_build bench) of these functions"
  cat "$tmp/list"
} >"$out"
echo "$(grep -vc '^#' "$out") functions in $out"
