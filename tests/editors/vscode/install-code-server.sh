#!/usr/bin/env bash
# Offline-safe install of code-server 4.100.3 (node 20) from npm only.
# Needs: apt-get install -y build-essential pkg-config python3 libkrb5-dev libsecret-1-dev libxkbfile-dev libx11-dev ripgrep
set -euo pipefail
export npm_config_yes=true   # node-pty postinstall runs `npx node-gyp` (from the npm registry) and must not ask
DEST=${1:-$PWD}
mkdir -p "$DEST" && cd "$DEST"
[ -f package.json ] || npm init -y >/dev/null
npm install code-server@4.100.3 --ignore-scripts --no-audit --no-fund
npm rebuild argon2 --foreground-scripts            # prebuilt fetch from github fails -> compiles from source
cd node_modules/code-server/lib/vscode
npm install --omit=dev --ignore-scripts --no-audit --no-fund
mkdir -p node_modules/@vscode/ripgrep/bin
cp /usr/bin/rg node_modules/@vscode/ripgrep/bin/rg   # Debian ripgrep instead of GitHub download
npm rebuild --foreground-scripts                    # node-pty, spdlog, kerberos, parcel watcher ... from source
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
cd extensions
npm install --omit=dev --no-audit --no-fund --foreground-scripts
echo "code-server installed: $DEST/node_modules/.bin/code-server"
