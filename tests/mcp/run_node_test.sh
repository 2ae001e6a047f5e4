#!/usr/bin/env bash
# Runs one node test file of tests/mcp for ctest. Skips (exit 0, says so)
# only when node is missing; installs the pinned packages from the
# lockfile when they are not there yet (scripts/setup normally did).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1; then
  echo "skipped: node is not installed (scripts/setup installs it)"
  exit 0
fi
if [ ! -d node_modules/@modelcontextprotocol/sdk ] || [ ! -d node_modules/playwright-core ]; then
  # `npm install` with the lockfile, as scripts/setup does (npm ci refuses
  # this lockfile: a Windows-only optional dependency is not published).
  npm install --no-audit --no-fund --loglevel=error
fi
exec node --test --test-reporter=spec "$@"
