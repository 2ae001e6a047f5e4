#!/usr/bin/env bash
# `baton mcp install|uninstall` against a throw-away HOME holding a config
# for each client with another server in it: the other entries are kept,
# baton's entry is right, --dry-run writes nothing, a backup is kept, and
# uninstall gives back what was there; BATON_HOME goes with the entry, and
# the build tree's binary is named as such. Then, when the pinned real CLIs of
# tests/agents are installed, `claude mcp list` (through `claude mcp add`)
# and `codex mcp list` show baton. Usage: mcp_install_test.sh BATON SOURCE_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
baton=$(readlink -f "$1")
source_dir=$2
tmp=$(mktemp -d /tmp/baton-mcp-install.XXXXXX)
export HOME=$tmp/home BATON_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/home/.config
unset CODEX_HOME CLAUDE_CONFIG_DIR BATON_SESSION
mkdir -p "$HOME/.codex" "$HOME/.gemini" "$HOME/.cursor" "$XDG_CONFIG_HOME/Code/User" "$tmp/project"
# Without the real CLIs on PATH for the file edits (claude would be used).
export PATH=/usr/bin:/bin
cleanup() {
  stop_batond "$baton"
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "mcp_install_test: FAIL: $*" >&2
  exit 1
}
# json FILE EXPR: a python expression over the file's JSON (d).
json() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

printf '{"numStartups": 2, "mcpServers": {"other": {"type": "stdio", "command": "x", "args": []}}}\n' >"$HOME/.claude.json"
printf '# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n' >"$HOME/.codex/config.toml"
printf '{"theme": "dark", "mcpServers": {"other": {"command": "x"}}}\n' >"$HOME/.gemini/settings.json"
printf '{"mcpServers": {"other": {"command": "x"}}}\n' >"$HOME/.cursor/mcp.json"
printf '{"servers": {"other": {"type": "stdio", "command": "x"}}, "inputs": []}\n' >"$XDG_CONFIG_HOME/Code/User/mcp.json"
declare -A file=(
  [claude]=$HOME/.claude.json [codex]=$HOME/.codex/config.toml
  [gemini]=$HOME/.gemini/settings.json [cursor]=$HOME/.cursor/mcp.json
  [vscode]=$XDG_CONFIG_HOME/Code/User/mcp.json)
declare -A container=([claude]=mcpServers [gemini]=mcpServers [cursor]=mcpServers [vscode]=servers)
for client in claude codex gemini cursor vscode; do
  f=${file[$client]}
  cp "$f" "$tmp/$client.orig"
  out=$("$baton" mcp install "$client" --dry-run)
  cmp -s "$f" "$tmp/$client.orig" || fail "$client: --dry-run changed $f"
  [[ $out == *"would have added"* ]] || fail "$client: --dry-run said: $out"
  out=$("$baton" mcp install "$client")
  [[ $out == *"added"*"$f"* ]] || fail "$client: install said: $out"
  [[ $out == *"with BATON_HOME=$BATON_HOME, as this shell has it"* ]] || fail "$client: no BATON_HOME: $out"
  [[ $out == *"is a build's binary (in "* ]] || fail "$client: no word about the build tree: $out"
  cmp -s "$f.baton.bak" "$tmp/$client.orig" || fail "$client: no backup of $f"
  if [ "$client" = codex ]; then
    grep -q '^# mine$' "$f" && grep -q '^\[mcp_servers.other\]$' "$f" ||
      fail "codex: the other content is gone: $(cat "$f")"
    python3 - "$f" "$baton" "$BATON_HOME" <<'PY' || fail "codex: baton's entry: $(cat "$f")"
import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
assert d["mcp_servers"]["baton"] == {"command": sys.argv[2], "args": ["mcp"],
                                    "env": {"BATON_HOME": sys.argv[3]}}, d
assert d["mcp_servers"]["other"] == {"command": "x"} and d["model"] == "o3", d
PY
  else
    c=${container[$client]}
    [ "$(json "$f" "d['$c']['other']['command']")" = x ] || fail "$client: other entry lost"
    [ "$(json "$f" "d['$c']['baton']['command']")" = "$baton" ] || fail "$client: command"
    [ "$(json "$f" "d['$c']['baton']['args']")" = "['mcp']" ] || fail "$client: args"
    [ "$(json "$f" "d['$c']['baton']['env']['BATON_HOME']")" = "$BATON_HOME" ] || fail "$client: env"
  fi
  out=$("$baton" mcp install "$client")
  [[ $out == *"nothing to change"* ]] || fail "$client: a second install said: $out"
  # Without BATON_HOME it is another server (another state folder).
  out=$(env -u BATON_HOME "$baton" mcp install "$client")
  [[ $out == *"replaced"* ]] || fail "$client: an install without BATON_HOME said: $out"
  out=$("$baton" mcp install "$client")
  [[ $out == *"replaced"* ]] || fail "$client: an install with BATON_HOME again said: $out"
  "$baton" mcp uninstall "$client" >/dev/null
  if [ "$client" = codex ]; then
    cmp -s "$f" "$tmp/$client.orig" || fail "codex: uninstall left: $(cat "$f")"
  else
    [ "$(json "$f" "d")" = "$(json "$tmp/$client.orig" "d")" ] ||
      fail "$client: uninstall left $(cat "$f")"
  fi
done
# Project scope: the project's own files.
cd "$tmp/project"
"$baton" mcp install cursor --scope project >/dev/null
[ "$(json .cursor/mcp.json "d['mcpServers']['baton']['args']")" = "['mcp']" ] ||
  fail "cursor --scope project"
"$baton" mcp install vscode --scope project >/dev/null
[ "$(json .vscode/mcp.json "d['servers']['baton']['type']")" = stdio ] ||
  fail "vscode --scope project"
# A broken file is refused and left alone.
printf '{"mcpServers": [' >"$HOME/.gemini/settings.json"
if "$baton" mcp install gemini 2>"$tmp/err"; then fail "a broken settings.json was accepted"; fi
grep -q "nothing was changed" "$tmp/err" || fail "gemini error: $(cat "$tmp/err")"
[ "$(cat "$HOME/.gemini/settings.json")" = '{"mcpServers": [' ] || fail "broken file changed"

# The real CLIs, when tests/agents has them (scripts/setup --tests).
bin=$source_dir/tests/agents/node_modules/.bin
if [ -x "$bin/claude" ] && [ -x "$bin/codex" ]; then
  cd "$tmp"
  out=$(PATH=$bin:/usr/bin:/bin "$baton" mcp install claude)
  [[ $out == *"through $bin/claude mcp"* ]] || fail "claude mcp add not used: $out"
  [ "$(json "$HOME/.claude.json" "d['mcpServers']['baton']['env']['BATON_HOME']")" = "$BATON_HOME" ] ||
    fail "claude mcp add lost BATON_HOME: $(cat "$HOME/.claude.json")"
  listed=$(PATH=$bin:/usr/bin:/bin timeout 60 claude mcp list 2>&1) || true
  [[ $listed == *"baton: $baton mcp - ✔ Connected"* ]] || fail "claude mcp list: $listed"
  [[ $listed == *"other: x"* ]] || fail "claude mcp list lost other: $listed"
  "$baton" mcp install codex >/dev/null
  listed=$(PATH=$bin:/usr/bin:/bin timeout 60 codex mcp list 2>&1) || true
  grep -Eq "^baton +$baton +mcp " <<<"$listed" || fail "codex mcp list: $listed"
  echo "mcp_install_test: the real claude and codex list baton"
else
  echo "mcp_install_test: the real CLIs skipped (not in $bin; scripts/setup --tests installs them)"
fi
echo "mcp_install_test: ok"
