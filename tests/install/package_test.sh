#!/usr/bin/env bash
# The .deb that CPack makes from a build (the same install rules as
# `cmake --install`): its control fields (name, version from the project's
# and git's, Depends only on the Debian libraries the binary needs), its
# files in Debian's places, then unpacked into a fresh root and run from
# there (--version, a task waited for, an MCP initialize).
# Usage: package_test.sh BUILD_DIR PROJECT_VERSION [sanitized]
# A build under sanitizers (presets ci, tsan) also needs their runtimes:
# "sanitized" lets Depends name them, and nothing else besides libc6.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=$1
version=$2
sanitized=${3:-}
if ! command -v dpkg-deb >/dev/null || ! command -v dpkg-shlibdeps >/dev/null; then
  echo "package_test: skipped: dpkg-deb and dpkg-shlibdeps (dpkg-dev) are needed"
  exit 0
fi
tmp=$(mktemp -d /tmp/baton-package.XXXXXX)
root=$tmp/root
baton=$root/usr/bin/baton
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
  echo "package_test: FAIL: $*" >&2
  exit 1
}

cpack --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1 ||
  fail "cpack: $(cat "$tmp/cpack.log")"
debs=("$tmp"/out/baton_*.deb)
[ -f "${debs[0]}" ] || fail "cpack made no baton_*.deb: $(ls "$tmp/out")"
deb=${debs[0]}

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = baton ] || fail "Package is '$(field Package)'"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] ||
  fail "Architecture is '$(field Architecture)'"
pkg_version=$(field Version)
[[ $pkg_version =~ ^${version//./\\.}(\+git[0-9]+\.g[0-9a-f]+(\.dirty)?)?$ ]] ||
  fail "Version '$pkg_version' is not $version[+git<count>.g<hash>[.dirty]]"
[ "$(basename "$deb")" = "baton_${pkg_version}_$(field Architecture).deb" ] ||
  fail "file name $(basename "$deb")"
# The binary links SQLite, fmt, libstdc++ and libgcc statically: glibc is
# all it needs, and all the package may ask for.
depends=$(field Depends)
needs=$depends
if [ "$sanitized" = sanitized ]; then
  needs=$(echo "$depends" | tr ',' '\n' | sed 's/^ *//' |
    grep -Ev '^lib(a|ub|t)san[0-9]+( |$)' | paste -sd, - | sed 's/,/, /g')
fi
[[ $needs =~ ^libc6\ \(\>=\ [0-9.]+\)$ ]] ||
  fail "Depends is '$depends', not only libc6"

dpkg-deb -c "$deb" | awk '{print $6}' >"$tmp/files"
for f in ./usr/bin/baton ./usr/share/man/man1/baton.1 \
  ./usr/share/bash-completion/completions/baton \
  ./usr/share/zsh/vendor-completions/_baton \
  ./usr/share/fish/vendor_completions.d/baton.fish; do
  grep -qx -- "$f" "$tmp/files" || fail "the .deb has no $f: $(cat "$tmp/files")"
done
listed=$(dpkg-deb -c "$deb" | grep ' ./usr/bin/baton$')
[[ $listed == "-rwxr-xr-x root/root "* ]] ||
  fail "usr/bin/baton is not root's 0755: $listed"
# Stripped, as Debian ships binaries.
size=$(echo "$listed" | awk '{print $3}')
# (A sanitized binary is several times larger, stripped or not.)
[ "$sanitized" = sanitized ] || [ "$size" -lt 30000000 ] ||
  fail "usr/bin/baton is $size bytes: not stripped"

# Unpacked into a fresh root, it runs on its own.
dpkg-deb -x "$deb" "$root"
[ "$("$baton" --version)" = "baton $version" ] || fail "--version: $("$baton" --version)"
timeout 20 "$baton" run --wait -- true || fail "run --wait -- true exited $?"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
reply=$(printf '%s\n' "$init" | timeout 10 "$baton" mcp 2>/dev/null)
[[ $reply == *'"serverInfo"'* ]] || fail "baton mcp answered: $reply"

# An upgrade: the post-install replaces the running batond (started from
# the old file by the calls above) with the new file's, as its user, and
# the supervisor and a running task stay.
dpkg-deb -e "$deb" "$tmp/control"
[ -x "$tmp/control/postinst" ] || fail "the .deb has no executable postinst"
pids() {
  "$baton" --json daemon status |
    sed -n 's/.*"daemon_pid":\([0-9]*\).*"supervisor_pid":\([0-9]*\).*/\1 \2/p'
}
task=$("$baton" run -- sleep 60)
read -r old_batond old_supervisor <<<"$(pids)"
[ -n "$old_batond" ] || fail "no batond runs: $("$baton" daemon status 2>&1)"
cp "$baton" "$baton.new" && mv -f "$baton.new" "$baton"
BATON_POSTINST_BINARY=$baton timeout 60 sh "$tmp/control/postinst" configure 0.0.1 \
  >"$tmp/postinst.log" 2>&1 || fail "postinst exited $?: $(cat "$tmp/postinst.log")"
grep -q "batond upgraded: pid $old_batond" "$tmp/postinst.log" ||
  fail "postinst did not upgrade batond $old_batond: $(cat "$tmp/postinst.log")"
read -r new_batond new_supervisor <<<"$(pids)"
[ "$new_batond" != "$old_batond" ] || fail "batond $old_batond still runs"
[ "$new_supervisor" = "$old_supervisor" ] ||
  fail "supervisor $old_supervisor was replaced by $new_supervisor"
[[ $(readlink "/proc/$new_batond/exe") == "$baton" ]] ||
  fail "the new batond runs $(readlink "/proc/$new_batond/exe")"
"$baton" --json status "$task" | grep -q '"status":"running"' ||
  fail "$task did not keep running: $("$baton" status "$task")"
# A first install (no version replaced) touches nothing.
BATON_POSTINST_BINARY=$baton sh "$tmp/control/postinst" configure >"$tmp/first.log" 2>&1 ||
  fail "postinst configure (first install) exited $?"
[ ! -s "$tmp/first.log" ] || fail "a first install's postinst said: $(cat "$tmp/first.log")"
read -r still _ <<<"$(pids)"
[ "$still" = "$new_batond" ] || fail "a first install's postinst replaced batond"
echo "package_test: ok ($(basename "$deb"), Depends: $depends)"
