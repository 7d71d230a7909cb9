#!/usr/bin/env bash
# Install Claude Code (pinned in package.json) into this Tusk checkout's
# node_modules, unless it is there already (restored from the Actions cache).
set -euo pipefail
# The checkout's real path: npm takes a linked root for a package of its own.
root="$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# npm ci empties node_modules first: run it only when Claude Code is missing.
# --omit=dev: Claude Code alone, not the API descriptions only the local GitHub
# stand-in reads.
if [ ! -x "$root/node_modules/.bin/claude" ]; then
  npm ci --prefix "$root" --omit=dev --no-audit --no-fund
fi
