#!/usr/bin/env bash
# The completion scripts that `baton internal-docs` wrote, in real shells:
# bash always (complete -p, then COMP_WORDS as bash's completion sets
# them); zsh (its completion functions stubbed: no terminal here) and fish
# (complete -C) when installed, else said skipped. Live task ids come from
# a batond in a temp BATON_HOME: an unowned task and one of session "x"
# (which sees both).
# Usage: completion_test.sh BATON_BINARY COMPLETIONS_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
baton=$1
dir=$2
tmp=$(mktemp -d /tmp/baton-completion.XXXXXX)
mkdir -p "$tmp/bin"
ln -s "$(readlink -f "$baton")" "$tmp/bin/baton"
export PATH=$tmp/bin:$PATH BATON_HOME=$tmp/home
unset BATON_SESSION
cleanup() {
  stop_batond baton
  rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
expect() {  # expect WHAT WANTED GOT
  if [ "$2" != "$3" ]; then
    echo "completion_test: FAIL: $1: wanted '$2', got '$3'" >&2
    failures=$((failures + 1))
  fi
}

unowned=$(baton run -- sleep 30)
owned=$(baton --session x run -- sleep 30)

# bash ------------------------------------------------------------------
bash_complete() {  # the words, the last one being completed
  bash --norc --noprofile -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
    _baton
    echo "${COMPREPLY[*]}"' bash "$dir/baton.bash" "$@"
}
got=$(bash --norc --noprofile -c 'source "$1"; complete -p baton' bash "$dir/baton.bash")
expect "bash complete -p" "complete -o default -F _baton baton" "$got"
expect "bash: baton wa" "wait" "$(bash_complete baton wa)"
expect "bash: baton da" "daemon" "$(bash_complete baton da)"
expect "bash: baton daemon s" "start stop status" "$(bash_complete baton daemon s)"
expect "bash: baton ls -" "--all -a --quiet -q --status --kind --label --queue --help" "$(bash_complete baton ls -)"
expect "bash: baton --json ls --qui" "--quiet" "$(bash_complete baton --json ls --qui)"
expect "bash: baton ls --q" "--quiet --queue" "$(bash_complete baton ls --q)"
expect "bash: a value of run --cwd" "" "$(bash_complete baton run --cwd '')"
expect "bash: kill's ids" "$unowned" "$(bash_complete baton kill '')"
expect "bash: --session x wait's ids" "$unowned $owned" \
  "$(bash_complete baton --session x wait '')"
expect "bash: ids after a value" "$unowned" \
  "$(bash_complete baton kill --reason done '')"
expect "bash: the command after --" "baton" "$(bash_complete baton run -- bato)"

# zsh -------------------------------------------------------------------
if command -v zsh >/dev/null 2>&1; then
  zsh_complete() {
    zsh -f -c '
      _describe() { local arr=${@[-1]}; print -r -- ${(P)arr} }
      _default() { print -r -- "(default)" }
      _normal() { print -r -- "(normal ${words[*]} $CURRENT)" }
      words=(baton ""); CURRENT=2
      source "$1" >/dev/null; shift
      words=("$@"); CURRENT=$#
      _baton' zsh "$dir/_baton" "$@"
  }
  got=$(zsh_complete baton wa | tr ' ' '\n' | grep -c '^wait:') || true
  expect "zsh: baton wa offers wait" "1" "$got"
  expect "zsh: baton daemon s" "start:Start batond if it is not running stop:Stop batond (tasks keep running unless --kill-tasks) upgrade:Replace a running batond with this baton's; tasks keep running status:Is batond running? install-service:Write batond's systemd user units (socket activation) and enable them" \
    "$(zsh_complete baton daemon s)"
  expect "zsh: kill's ids" "$unowned" "$(zsh_complete baton kill '')"
  expect "zsh: --session x wait's ids" "$unowned $owned" \
    "$(zsh_complete baton --session x wait '')"
  expect "zsh: a value of --timeout" "(default)" \
    "$(zsh_complete baton wait --timeout '')"
  expect "zsh: the command after --" "(normal ma 1)" \
    "$(zsh_complete baton run --wait -- ma)"
else
  echo "completion_test: zsh skipped (not installed)"
fi

# fish ------------------------------------------------------------------
if command -v fish >/dev/null 2>&1; then
  fish_complete() {  # the command line; prints the candidates, no descriptions
    fish --no-config -c 'source $argv[1]; complete -C $argv[2]' \
      "$dir/baton.fish" "$1" | cut -f1 | tr '\n' ' ' | sed 's/ $//'
  }
  expect "fish: baton wa" "wait" "$(fish_complete 'baton wa')"
  expect "fish: baton daemon s" "start status stop" \
    "$(fish_complete 'baton daemon s')"
  expect "fish: baton ls --qui" "--quiet" "$(fish_complete 'baton ls --qui')"
  expect "fish: kill's ids" "$unowned" "$(fish_complete 'baton kill ')"
  expect "fish: --session x wait's ids" "$unowned $owned" \
    "$(fish_complete 'baton --session x wait ')"
else
  echo "completion_test: fish skipped (not installed)"
fi

[ "$failures" = 0 ] || exit 1
echo "completion_test: ok"
