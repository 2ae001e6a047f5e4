#include "baton/daemon/app_server_probe.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "baton/core/task.h"
#include "baton/util/environment.h"
#include "baton/util/log.h"
#include "baton/util/program_path.h"

namespace baton {
namespace {

constexpr size_t kMaxOutput = 16384;
constexpr size_t kMaxReasonLine = 200;

// The line of `text` that says what went wrong: the first "error:" line
// (clap's), else the last non-empty one.
std::string TellingLine(const std::string& text) {
  std::string last;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(
        start, nl == std::string::npos ? std::string::npos : nl - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.pop_back();
    if (line.starts_with("error:")) {
      last = line;
      break;
    }
    if (!line.empty())
      last = line;
    if (nl == std::string::npos)
      break;
    start = nl + 1;
  }
  if (last.size() > kMaxReasonLine)
    last = last.substr(0, kMaxReasonLine) + "...";
  return last;
}

// The first "Usage:" line of a clap help, trimmed; "" when there is none.
std::string UsageLine(const std::string& text) {
  size_t at = 0;
  while ((at = text.find("Usage:", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') {
      size_t nl = text.find('\n', at);
      std::string line = text.substr(
          at, nl == std::string::npos ? std::string::npos : nl - at);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
        line.pop_back();
      return line.size() > kMaxReasonLine
                 ? line.substr(0, kMaxReasonLine) + "..."
                 : line;
    }
    at += 6;
  }
  return "";
}

}  // namespace

ProbeVerdict JudgeProbe(const ProbeRun& run,
                        std::chrono::milliseconds timeout) {
  ProbeVerdict verdict;
  switch (run.end) {
    case ProbeRun::End::kExited: {
      if (run.code == 0) {
        // A codex whose top level takes a [PROMPT] (0.171.0 does) reads an
        // unknown word as the prompt: `app-server --help` then prints the
        // top-level help and exits 0. Only app-server's own usage says yes.
        std::string usage = UsageLine(run.output);
        verdict.lasting = true;
        if (usage.empty() || usage.find(" app-server") != std::string::npos) {
          verdict.mode = CodexMode::kAppServer;
          verdict.reason =
              usage.empty() ? "exit code 0" : "exit code 0: " + usage;
        } else {
          verdict.mode = CodexMode::kExec;
          verdict.reason = fmt::format(
              "exit code 0, but with the top-level help ({}): app-server "
              "was taken for a prompt",
              usage);
        }
        break;
      }
      verdict.mode = CodexMode::kExec;
      std::string line = TellingLine(run.output);
      verdict.reason = fmt::format("exit code {}{}", run.code,
                                   line.empty() ? "" : ": " + line);
      verdict.lasting =
          run.output.find("unrecognized subcommand") != std::string::npos;
      break;
    }
    case ProbeRun::End::kSignaled:
      verdict.reason =
          run.code ? "killed by " + SignalName(run.code) : "its end was lost";
      break;
    case ProbeRun::End::kTimedOut:
      verdict.reason = fmt::format("no answer within {:g} s",
                                   static_cast<double>(timeout.count()) / 1000);
      break;
    case ProbeRun::End::kSpawnFailed:
      verdict.reason =
          fmt::format("cannot run it: {}", std::strerror(run.code));
      break;
  }
  return verdict;
}

AppServerProbe::AppServerProbe(EventLoop* loop,
                               std::chrono::milliseconds timeout)
    : timeout_(timeout), runner_(loop) {}

AppServerProbe::~AppServerProbe() = default;  // runner_ kills what runs.

void AppServerProbe::Check(const std::vector<std::string>& command,
                           const std::vector<std::string>& env,
                           const std::string& cwd, Done done) {
  if (command.empty())
    return done({CodexMode::kUnknown, "no command", false});
  std::string dir = cwd.empty() ? "/" : cwd;
  std::vector<std::string> task_env = env.empty() ? ProcessEnvironment() : env;
  auto program = ResolveProgram(command[0], task_env, dir);
  struct stat st {};
  if (program && ::stat(program->c_str(), &st) != 0)
    program = std::unexpected(errno);
  if (!program) {
    return done({CodexMode::kUnknown,
                 fmt::format("cannot find {}: {}", command[0],
                             std::strerror(program.error())),
                 false});
  }
  Key key{*program,
          st.st_dev,
          st.st_ino,
          st.st_size,
          st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec,
          st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec,
          std::vector<std::string>(command.begin() + 1, command.end())};
  if (auto cached = cache_.find(key); cached != cache_.end())
    return done(cached->second);
  std::vector<Done>& waiters = running_[key];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1)
    return;  // The same question runs: its answer is this one's too.

  std::vector<std::string> argv = command;  // Found on task_env's PATH.
  argv.push_back("app-server");
  argv.push_back("--help");
  ++probes_started_;
  BATON_LOG_INFO("probing {} app-server --help", *program);
  runner_.Run(
      std::move(argv), std::move(task_env), timeout_,
      [this, key](CommandResult result) {
        ProbeRun run;
        switch (result.end) {
          case CommandResult::End::kExited:
            run.end = ProbeRun::End::kExited;
            break;
          case CommandResult::End::kSignaled:
            run.end = ProbeRun::End::kSignaled;
            break;
          case CommandResult::End::kTimedOut:
            run.end = ProbeRun::End::kTimedOut;
            break;
          case CommandResult::End::kSpawnFailed:
            run.end = ProbeRun::End::kSpawnFailed;
            break;
        }
        run.code = result.code;
        // Help goes to stdout, clap's errors to stderr: the stdout first.
        run.output = std::move(result.out);
        if (!result.err.empty()) {
          if (!run.output.empty() && !run.output.ends_with('\n'))
            run.output += '\n';
          run.output += result.err;
        }
        if (run.output.size() > kMaxOutput)
          run.output.resize(kMaxOutput);
        Finish(key, std::move(run));
      },
      dir);
}

void AppServerProbe::Finish(const Key& key, ProbeRun run) {
  auto node = running_.extract(key);
  if (node.empty())
    return;
  ProbeVerdict verdict = JudgeProbe(run, timeout_);
  BATON_LOG_INFO("{} app-server --help: {}", std::get<0>(key), verdict.reason);
  if (verdict.lasting)
    cache_[key] = verdict;
  for (Done& waiter : node.mapped())
    waiter(verdict);
}

}  // namespace baton
