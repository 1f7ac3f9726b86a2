#!/usr/bin/env bash
# Installs what qgates' example and tests need into .venv: the pinned gate tools and the MCP SDK
# that the agent-server test uses as its client.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if ! .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-tools.txt; then
  echo "setup: could not install the pinned tools from requirements-tools.txt (is PyPI reachable?)" >&2
  exit 1
fi
