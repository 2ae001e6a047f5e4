#!/usr/bin/env bash
# `baton doctor` on a healthy set-up and on a broken one, in a throw-away
# HOME and BATON_HOME. Healthy: a private state folder, batond reachable, a
# stand-in `claude` on PATH with its version and a login, baton registered
# in ~/.claude.json: no error, exit code 0. Broken: the state folder open
# to others and no agent CLI: an error with its fix, a warning, exit code 1.
# A fresh set-up: doctor starts nothing and makes no folder.
# Usage: doctor_test.sh BATON
set -euo pipefail
. "$(dirname "$0")/lib.sh"
baton=$(readlink -f "$1")
tmp=$(mktemp -d /tmp/baton-doctor.XXXXXX)
export HOME=$tmp/home BATON_HOME=$tmp/state
unset BATON_SESSION ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY CODEX_HOME XDG_CONFIG_HOME
mkdir -p "$HOME/.claude" "$tmp/bin"
cleanup() {
  chmod 700 "$BATON_HOME" 2>/dev/null || true
  stop_batond "$baton"
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "doctor_test: FAIL: $*" >&2
  exit 1
}
printf '#!/bin/sh\necho "2.1.332 (Claude Code)"\n' >"$tmp/bin/claude"
chmod +x "$tmp/bin/claude"
echo '{}' >"$HOME/.claude/.credentials.json"
# Registered by editing ~/.claude.json (the stand-in cannot add servers).
PATH=/usr/bin:/bin "$baton" mcp install claude >/dev/null

# Read-only: on a fresh set-up it starts nothing and makes no folder.
set +e
out=$(PATH=$tmp/bin:/usr/bin:/bin "$baton" doctor)
code=$?
set -e
[ "$code" = 0 ] || fail "fresh: exit code $code: $out"
grep -q "^ok       state folder: $BATON_HOME is not there yet" <<<"$out" || fail "fresh state folder: $out"
grep -q "^ok       batond: not running: the first task starts it" <<<"$out" || fail "fresh batond: $out"
[ ! -e "$BATON_HOME" ] || fail "fresh: doctor made $BATON_HOME"
grep -q "^ok       MCP clients: no config file of codex, gemini, cursor, vscode here" <<<"$out" ||
  fail "fresh MCP clients: $out"

timeout 20 "$baton" daemon start >/dev/null
set +e
out=$(PATH=$tmp/bin:/usr/bin:/bin "$baton" doctor)
code=$?
set -e
[ "$code" = 0 ] || fail "healthy: exit code $code: $out"
grep -q "^ok       state folder: $BATON_HOME is yours, mode 700$" <<<"$out" || fail "healthy state folder: $out"
grep -q "^ok       batond: running (pid [0-9]*, protocol 1; baton " <<<"$out" || fail "healthy batond: $out"
grep -q "^ok       claude: 2.1.332 (Claude Code) ($tmp/bin/claude), logged in$" <<<"$out" || fail "healthy claude: $out"
grep -q "^ok       MCP in claude: baton is registered in $HOME/.claude.json$" <<<"$out" || fail "healthy MCP: $out"
! grep -q "^error" <<<"$out" || fail "healthy has an error: $out"
json=$(PATH=$tmp/bin:/usr/bin:/bin "$baton" --json doctor)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert all(f["level"]!="error" for f in d) and any(f["check"]=="batond" for f in d), d' "$json" ||
  fail "--json: $json"

timeout 20 "$baton" daemon stop >/dev/null
chmod 755 "$BATON_HOME"
rm "$tmp/bin/claude"
set +e
out=$(PATH=$tmp/bin:/usr/bin:/bin "$baton" doctor)
code=$?
set -e
[ "$code" = 1 ] || fail "broken: exit code $code: $out"
grep -q "^error    state folder: $BATON_HOME has mode 755: others may read your tasks' output$" <<<"$out" ||
  fail "broken state folder: $out"
grep -q "^         fix: chmod 700 $BATON_HOME$" <<<"$out" || fail "broken: no fix: $out"
grep -q "^warning  agent CLIs: none of claude, codex, gemini is on PATH" <<<"$out" ||
  fail "broken: no agent CLI warning: $out"
echo "doctor_test: ok"
