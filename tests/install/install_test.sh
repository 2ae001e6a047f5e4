#!/usr/bin/env bash
# `cmake --install` of a build into a fresh prefix: the man page and the
# completion scripts in their places, then the installed binary on its own: --version, a task run and waited for, an MCP
# initialize, and the batond it started is the installed binary (not the
# build's). Usage: install_test.sh BUILD_DIR VERSION
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=$1
version=$2
tmp=$(mktemp -d /tmp/baton-install.XXXXXX)
baton=$tmp/prefix/bin/baton
export BATON_HOME=$tmp/home
unset BATON_SESSION
cleanup() {
  if [ -x "$baton" ]; then
    stop_batond "$baton"
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "install_test: FAIL: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" ||
  fail "cmake --install: $(cat "$tmp/install.log")"
[ -x "$baton" ] || fail "no executable $baton after the install"

# The man page and the completion scripts, where man and the shells look.
for f in share/man/man1/baton.1 share/bash-completion/completions/baton \
  share/zsh/site-functions/_baton share/fish/vendor_completions.d/baton.fish; do
  [ -f "$tmp/prefix/$f" ] || fail "no $f in the prefix"
done
found=$(man -M "$tmp/prefix/share/man" -w baton) || fail "man does not find baton(1)"
[ "$found" = "$tmp/prefix/share/man/man1/baton.1" ] || fail "man found $found"
warnings=$(groff -man -Tutf8 -ww -z "$found" 2>&1)
[ -z "$warnings" ] || fail "groff warns of baton(1): $warnings"
for verb in run wait kill daemon; do
  MANWIDTH=100 man -l "$found" 2>/dev/null | grep -q "^   baton $verb\$" ||
    fail "baton(1) has no section for $verb"
done

got=$("$baton" --version)
[ "$got" = "baton $version" ] || fail "--version said '$got', not 'baton $version'"

# A task, waited for: the installed binary's exit code is the command's.
timeout 20 "$baton" run --wait -- true || fail "run --wait -- true exited $?"
set +e
timeout 20 "$baton" run --wait -- sh -c 'exit 3'
code=$?
set -e
[ "$code" = 3 ] || fail "run --wait of 'exit 3' exited $code"

# The batond it started runs the installed binary.
pid=$("$baton" --json daemon status |
  sed -n 's/.*"daemon_pid":\([0-9]*\).*/\1/p')
[ -n "$pid" ] || fail "daemon status gave no pid"
exe=$(readlink "/proc/$pid/exe")
[ "$exe" = "$(readlink -f "$baton")" ] ||
  fail "batond runs $exe, not the installed $baton"

# baton mcp answers initialize with its name and version.
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
reply=$(printf '%s\n' "$init" | timeout 10 "$baton" mcp 2>/dev/null)
case "$reply" in
  *'"serverInfo"'*'"name":"baton"'*"\"version\":\"$version\""*) ;;
  *) fail "baton mcp answered initialize with: $reply" ;;
esac
echo "install_test: ok ($tmp/prefix)"
