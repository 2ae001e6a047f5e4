#include "baton/executor/slurm/slurm_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "baton/util/json_fields.h"
#include "baton/util/log.h"
#include "baton/util/split.h"

namespace baton {
namespace {

// Always quoted, for the job script: '...' with each ' as '\''.
std::string Quoted(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() &&
         (text.front() == ' ' || text.front() == '\r' || text.front() == '\t'))
    text.remove_prefix(1);
  while (!text.empty() &&
         (text.back() == ' ' || text.back() == '\r' || text.back() == '\t'))
    text.remove_suffix(1);
  return text;
}

bool IsJobId(std::string_view text) {
  // "12", or an array task "12_3"; never a step ("12.batch").
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) {
           return std::isdigit(c) || c == '_';
         });
}

// An exit status or a signal number: 0 to 255, as a wait status holds
// them. Anything else is not Slurm's (a negative code would be reported
// as the task's own).
std::optional<int> StatusByte(std::string_view text) {
  int value = 0;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0 ||
      value > 255)
    return std::nullopt;
  return value;
}

// "3:0" -> exit 3, signal 0; a part that is not 0 to 255 reads as 0.
void ParseExitCode(std::string_view text, SlurmEnd& end) {
  auto parts = Split(text, ':');
  if (parts.size() != 2)
    return;
  end.exit_code = StatusByte(parts[0]).value_or(0);
  end.signal = StatusByte(parts[1]).value_or(0);
}

// The command's status as the shell saw it: 128+N after signal N.
void ApplyStatus(int status, ExitInfo& exit) {
  if (status > 128 && status <= 128 + 64) {
    exit.signal = status - 128;
  } else {
    exit.exit_code = status;
  }
}

}  // namespace

std::string SlurmJobName(std::string_view home_tag, std::string_view run) {
  return fmt::format("baton-{}-{}", home_tag, run);
}

std::string SlurmJobScript(const TaskRecord& task, const std::string& job_dir) {
  std::string command = task.spec.shell_command
                            ? "/bin/sh -c " + Quoted(*task.spec.shell_command)
                            : std::string();
  if (!task.spec.shell_command) {
    for (const std::string& arg : task.spec.argv) {
      if (!command.empty())
        command += ' ';
      command += Quoted(arg);
    }
  }
  // A shell task runs in the foreground, its output to the job's output
  // (--output). An agent's CLI speaks its protocol on stdin and stdout:
  // its stdout goes to the stream file batond tails, and its stdin comes
  // from the stdin file batond appends to, passed on by a relay through a
  // FIFO on the node's own file system (a FIFO on a shared file system does
  // not cross nodes) until batond marks the file closed (doc/slurm.md,
  // "Agent workers").
  std::string run =
      task.spec.agent
          ? fmt::format(
                R"run(baton_relay() {{
    baton_sent=0
    baton_closing=
    while :; do
      baton_size=$(stat -c %s "$baton_dir/{stdin}" 2>/dev/null) || baton_size=0
      if [ "$baton_size" -gt "$baton_sent" ]; then
        tail -c +$((baton_sent + 1)) "$baton_dir/{stdin}" |
          head -c $((baton_size - baton_sent)) || return 0
        baton_sent=$baton_size
      elif [ -n "$baton_closing" ]; then
        return 0
      elif [ -e "$baton_dir/{closed}" ]; then
        baton_closing=1
      else
        sleep 0.1
      fi
    done
  }}
  baton_fifo="${{TMPDIR:-/tmp}}/baton-stdin.$$"
  rm -f "$baton_fifo"
  if mkfifo -m 600 "$baton_fifo"; then
    {command} < "$baton_fifo" > "$baton_dir/{stream}" 2> "$baton_dir/{stderr}" &
    baton_cli=$!
    baton_relay > "$baton_fifo" &
    baton_relay_pid=$!
    wait "$baton_cli"
    baton_status=$?
    # A trapped TERM ends the wait early; the CLI got it too.
    while kill -0 "$baton_cli" 2>/dev/null; do
      wait "$baton_cli"
      baton_status=$?
    done
    kill "$baton_relay_pid" 2>/dev/null
    rm -f "$baton_fifo"
  else
    baton_status=1
  fi)run",
                fmt::arg("command", command), fmt::arg("stdin", kStdinFile),
                fmt::arg("closed", kSlurmStdinClosedFile),
                fmt::arg("stream", kAgentStreamFile),
                fmt::arg("stderr", kAgentStderrFile))
          : command + "\n  baton_status=$?";
  // The times are GNU date's milliseconds; a date without %N gives a
  // record batond cannot parse, and the job's end then comes from Slurm.
  return fmt::format(
      R"script(#!/bin/sh
# baton task {id} as a Slurm job (doc/slurm.md); written by batond.
baton_dir={dir}
baton_now() {{ date +%s%3N; }}
baton_record() {{
  printf '%s\n' "$2" > "$baton_dir/$1.$$" && mv -f "$baton_dir/$1.$$" "$baton_dir/$1"
}}
baton_started=$(baton_now)
baton_record {started} "{{\"started_ms\":$baton_started,\"node\":\"${{SLURMD_NODENAME:-$(hostname)}}\",\"partition\":\"${{SLURM_JOB_PARTITION:-}}\"}}"
# A kill signals every process of the job: the command ends, and this
# shell goes on to record how.
trap 'baton_term=1' TERM
if cd {cwd}; then
  {run}
else
  echo "baton: cannot enter "{cwd}" on $(hostname)" >&2
  baton_status=1
fi
baton_record {exit} "{{\"status\":$baton_status,\"started_ms\":$baton_started,\"ended_ms\":$(baton_now)}}"
exit $baton_status
)script",
      fmt::arg("id", task.id.ToString()), fmt::arg("dir", Quoted(job_dir)),
      fmt::arg("started", kSlurmStartedFile),
      fmt::arg("cwd", Quoted(task.spec.cwd)), fmt::arg("run", run),
      fmt::arg("exit", kSlurmExitFile));
}

SlurmRequest RequestOf(const TaskSpec& spec) {
  auto request = SlurmRequestOf(spec);
  if (!request) {
    BATON_LOG_ERROR("a task's slurm request: {}", request.error().message);
    return {};
  }
  return request->value_or(SlurmRequest{});
}

std::vector<std::string> SbatchArgv(const TaskRecord& task,
                                    const std::string& job_name,
                                    const std::string& script,
                                    const std::string& output, bool test_only) {
  const SlurmRequest slurm = RequestOf(task.spec);
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  if (test_only)
    argv.push_back("--test-only");
  argv.push_back("--job-name=" + job_name);
  argv.push_back("--chdir=" + task.spec.cwd);
  argv.push_back("--output=" + output);
  argv.push_back("--open-mode=append");
  // ALL: the job gets the client's environment as sbatch got it (NONE
  // would build a login environment on the node, a second per job).
  argv.push_back("--export=ALL");
  if (!slurm.partition.empty())
    argv.push_back("--partition=" + slurm.partition);
  if (!slurm.account.empty())
    argv.push_back("--account=" + slurm.account);
  if (slurm.time_limit_s > 0)
    argv.push_back(fmt::format("--time={}", (slurm.time_limit_s + 59) / 60));
  if (slurm.cpus > 0)
    argv.push_back(fmt::format("--cpus-per-task={}", slurm.cpus));
  if (!slurm.mem.empty())
    argv.push_back("--mem=" + slurm.mem);
  if (!slurm.gres.empty())
    argv.push_back("--gres=" + slurm.gres);
  for (const std::string& arg : slurm.sbatch_args)
    argv.push_back(arg);
  if (test_only) {
    argv.push_back("--wrap=true");  // Only the request is judged.
  } else {
    argv.push_back(script);
  }
  return argv;
}

Result<std::string> ParseSbatchJobId(std::string_view out) {
  std::string_view line = Trim(out.substr(0, out.find('\n')));
  std::string_view id = line.substr(0, line.find(';'));
  if (!IsJobId(id)) {
    return MakeError(ErrorCode::kInternal,
                     fmt::format("sbatch answered '{}', not a job id", line));
  }
  return std::string(id);
}

std::vector<SqueueRow> ParseSqueue(std::string_view out) {
  std::vector<SqueueRow> rows;
  for (std::string_view line : Split(out, '\n')) {
    auto fields = Split(Trim(line), '|');
    if (fields.size() != 5 || !IsJobId(fields[0]) || fields[1].empty())
      continue;
    rows.push_back({std::string(fields[0]), std::string(fields[1]),
                    std::string(fields[2]), std::string(fields[3]),
                    std::string(fields[4])});
  }
  return rows;
}

std::optional<SlurmEnd> ParseScontrolJob(std::string_view out) {
  SlurmEnd end;
  for (std::string_view token : Split(Trim(out), ' ')) {
    size_t equals = token.find('=');
    if (equals == std::string_view::npos)
      continue;
    std::string_view key = token.substr(0, equals);
    std::string_view value = Trim(token.substr(equals + 1));
    if (key == "JobState") {
      end.state = value;
    } else if (key == "Reason") {
      end.reason = value;
    } else if (key == "ExitCode") {
      ParseExitCode(value, end);
    }
  }
  if (end.state.empty())
    return std::nullopt;
  return end;
}

std::map<std::string, SlurmEnd> ParseSacct(std::string_view out) {
  std::map<std::string, SlurmEnd> ends;
  for (std::string_view line : Split(out, '\n')) {
    auto fields = Split(Trim(line), '|');
    if (fields.size() < 3 || !IsJobId(fields[0]))
      continue;
    SlurmEnd end;
    // "CANCELLED by 1000": the state, then who.
    std::string_view state = fields[1];
    if (size_t by = state.find(" by "); by != std::string_view::npos) {
      end.cancelled_by = Trim(state.substr(by + 4));
      state = state.substr(0, by);
    }
    end.state = state;
    ParseExitCode(fields[2], end);
    ends[std::string(fields[0])] = std::move(end);
  }
  return ends;
}

bool IsSlurmEndState(std::string_view state) {
  // squeue's %T words (Slurm 22.05); the rest are on the way: PENDING,
  // RUNNING, SUSPENDED, COMPLETING, CONFIGURING, REQUEUED, RESIZING, ...
  for (std::string_view end :
       {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY",
        "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "REVOKED",
        "SPECIAL_EXIT"}) {
    if (state == end)
      return true;
  }
  return false;
}

std::optional<JobRecord> ParseJobRecord(std::string_view text) {
  auto parsed = ParseJson(text);
  if (!parsed || !parsed->value.is_object())
    return std::nullopt;
  const Json& json = parsed->value;
  const Json& status = MemberAt(json, "status");
  const Json& started = MemberAt(json, "started_ms");
  if (!status.is_number_integer() && !started.is_number_integer())
    return std::nullopt;
  // The shell's $? is 0 to 255. Any other status is no record the script
  // wrote; cut to an int, 4294967296 read as 0, a success.
  int64_t shell_status = IntAt(json, "status", -1);
  if (!status.is_null() && (shell_status < 0 || shell_status > 255))
    return std::nullopt;
  JobRecord record;
  record.status = static_cast<int>(std::max<int64_t>(shell_status, 0));
  record.started_ms = IntAt(json, "started_ms");
  record.ended_ms = IntAt(json, "ended_ms");
  record.node = StringAt(json, "node");
  record.partition = StringAt(json, "partition");
  return record;
}

ExitInfo SlurmExit(const std::optional<SlurmEnd>& end,
                   const std::optional<JobRecord>& record, bool killed,
                   std::string_view job_id) {
  ExitInfo exit;
  if (record) {
    exit.started_ms = record->started_ms;
    exit.ended_ms = record->ended_ms;
    ApplyStatus(record->status, exit);
  } else if (end) {
    if (end->signal != 0) {
      exit.signal = end->signal;
    } else {
      exit.exit_code = end->exit_code;
    }
  }
  if (killed) {
    exit.cause = ExitCause::kKilled;
    return exit;
  }
  std::string state = end ? end->state : "";
  auto verdict = [&](TaskStatus status, std::string detail) {
    exit.verdict = status;
    exit.verdict_detail = std::move(detail);
    return exit;
  };
  if (state.empty() || state == "COMPLETED" || state == "FAILED") {
    if (!record && !end) {
      exit.cause = ExitCause::kLost;
      return exit;
    }
    if (!record && end && end->reason == "JobLaunchFailure") {
      return verdict(TaskStatus::kFailed,
                     fmt::format("slurm could not launch job {} "
                                 "(JobLaunchFailure; see slurmd's log)",
                                 job_id));
    }
    return exit;  // The command's own end.
  }
  if (state == "TIMEOUT") {
    return verdict(TaskStatus::kKilled,
                   fmt::format("timed out: slurm ended job {} at its time "
                               "limit (TIMEOUT)",
                               job_id));
  }
  if (state == "OUT_OF_MEMORY") {
    return verdict(TaskStatus::kFailed,
                   fmt::format("out of memory: slurm ended job {} "
                               "(OUT_OF_MEMORY)",
                               job_id));
  }
  if (state == "CANCELLED" || state == "DEADLINE") {
    std::string who =
        end->cancelled_by.empty() ? "" : " by uid " + end->cancelled_by;
    return verdict(TaskStatus::kKilled,
                   state == "DEADLINE"
                       ? fmt::format("killed: slurm ended job {} at its "
                                     "deadline (DEADLINE)",
                                     job_id)
                       : fmt::format("killed: job {} was cancelled outside "
                                     "baton{} (slurm: CANCELLED)",
                                     job_id, who));
  }
  if (state == "NODE_FAIL" || state == "PREEMPTED" || state == "BOOT_FAIL" ||
      state == "REVOKED") {
    return verdict(
        TaskStatus::kInterrupted,
        fmt::format("interrupted: slurm ended job {} ({})", job_id, state));
  }
  return verdict(TaskStatus::kFailed,
                 fmt::format("slurm ended job {} ({})", job_id, state));
}

}  // namespace baton
