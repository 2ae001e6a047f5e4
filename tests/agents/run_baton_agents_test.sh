#!/usr/bin/env bash
# Runs tests/agents/baton_agents.test.mjs and mcp_clients.test.mjs for ctest:
# the real agent CLIs as baton workers, and as baton's MCP clients, against
# the loopback model-API stand-in. Skips (exit 77,
# which ctest reports as skipped) only when node or the pinned CLIs are not
# installed (scripts/setup --tests installs them).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1; then
  echo "skipped: node is not installed (scripts/setup --tests installs it)"
  exit 77
fi
for cli in claude codex gemini; do
  if [ ! -x "node_modules/.bin/$cli" ]; then
    echo "skipped: tests/agents/node_modules/.bin/$cli is missing;" \
         "run scripts/setup --tests (or: cd tests/agents && npm ci)"
    exit 77
  fi
done
exec node --test --test-reporter=spec "$@" baton_agents.test.mjs mcp_clients.test.mjs
