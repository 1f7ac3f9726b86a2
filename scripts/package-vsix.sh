#!/usr/bin/env bash
# Packages the VS Code extension for one platform with a qgates binary inside, so it works where
# qgates is not installed (the extension falls back to it, or always uses it with
# qgates.importStrategy "useBundled").
#
#   scripts/package-vsix.sh QGATES_BIN=target/release/qgates [TARGET=linux-x64] [OUT=file.vsix]
#
#   QGATES_BIN  the binary to carry, built for TARGET (a release build: stripped and small)
#   TARGET      a VS Code platform: linux-x64, linux-arm64, darwin-arm64, win32-x64, ...
#               (default: this machine's)
#   OUT         the package (default: editors/vscode/qgates-TARGET.vsix)
#
# The same settings can come from the environment. The binary is copied to
# editors/vscode/bundled/ (git-ignored) for `vsce package --target` and removed afterwards, so the
# universal package (`npm run package`) never carries one by accident.
set -euo pipefail
for arg in "$@"; do
  case "$arg" in
    QGATES_BIN=* | TARGET=* | OUT=*) export "${arg?}" ;;
    *)
      echo "package-vsix: unknown argument '$arg' (expected QGATES_BIN=..., TARGET=... or OUT=...)" >&2
      exit 2
      ;;
  esac
done
caller=$PWD
cd "$(dirname "$0")/.."
repo=$PWD
ext="$repo/editors/vscode"

host_platform() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) os=win32 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    armv7l) arch=armhf ;;
    *) arch=$(uname -m) ;;
  esac
  echo "$os-$arch"
}

TARGET=${TARGET:-$(host_platform)}
if [ -z "${QGATES_BIN:-}" ]; then
  echo "package-vsix: give the binary to carry: QGATES_BIN=path/to/qgates (e.g. target/release/qgates after cargo build --release)" >&2
  exit 2
fi
# Relative paths are the caller's.
case "$QGATES_BIN" in /*) ;; *) QGATES_BIN="$caller/$QGATES_BIN" ;; esac
if [ ! -f "$QGATES_BIN" ] || [ ! -x "$QGATES_BIN" ]; then
  echo "package-vsix: QGATES_BIN=$QGATES_BIN is not an executable file" >&2
  exit 2
fi
# A binary for another platform than TARGET would make a package that starts nowhere.
case "$TARGET" in
  linux-x64 | alpine-x64) expect='ELF 64-bit.*x86-64' ;;
  linux-arm64 | alpine-arm64) expect='ELF 64-bit.*(aarch64|ARM)' ;;
  linux-armhf) expect='ELF 32-bit.*ARM' ;;
  darwin-*) expect='Mach-O' ;;
  win32-*) expect='PE32' ;;
  *) expect='' ;;
esac
if [ -n "$expect" ] && command -v file >/dev/null && ! file -b "$QGATES_BIN" | grep -Eq "$expect"; then
  echo "package-vsix: $QGATES_BIN is not a program for $TARGET ($(file -b "$QGATES_BIN" | cut -d, -f1-2))" >&2
  exit 2
fi
# A binary for this machine can prove it runs; one built for another platform cannot be run here.
if [ "$TARGET" = "$(host_platform)" ] && ! version=$("$QGATES_BIN" --version 2>&1); then
  echo "package-vsix: $QGATES_BIN does not run on $TARGET: $version" >&2
  exit 1
fi
name=qgates
case "$TARGET" in win32-*) name=qgates.exe ;; esac
OUT=${OUT:-$ext/qgates-$TARGET.vsix}
case "$OUT" in /*) ;; *) OUT="$caller/$OUT" ;; esac

if [ ! -f "$ext/node_modules/.package-lock.json" ] || [ "$ext/package-lock.json" -nt "$ext/node_modules/.package-lock.json" ]; then
  (cd "$ext" && npm ci --no-audit --no-fund --loglevel=error)
fi

trap 'rm -rf "$ext/bundled"' EXIT
rm -rf "$ext/bundled"
mkdir -p "$ext/bundled/bin"
cp "$QGATES_BIN" "$ext/bundled/bin/$name"
chmod 755 "$ext/bundled/bin/$name"

cd "$ext"
npm run --silent typecheck
node esbuild.mjs --production
npx --no-install vsce package --target "$TARGET" --no-dependencies --allow-missing-repository \
  --no-rewrite-relative-links --out "$OUT" >/dev/null
echo "package-vsix: $OUT ($TARGET, $(du -h "$OUT" | cut -f1), carries ${version:-$QGATES_BIN})"
