# Shared by the install tests (sourced, not run).

# stop_batond BATON: stops the batond of $BATON_HOME and its tasks, then
# waits up to 5 s for batond and the supervisor to be gone, and kills
# whichever is not. For a test's cleanup: never fails.
stop_batond() {
  local baton=$1 pids pid
  pids=$("$baton" --json daemon status 2>/dev/null |
    sed -n 's/.*"daemon_pid":\([0-9]*\).*"supervisor_pid":\([0-9]*\).*/\1 \2/p' || true)
  timeout 20 "$baton" daemon stop --kill-tasks >/dev/null 2>&1 || true
  for pid in $pids; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
}
