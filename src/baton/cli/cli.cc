#include "baton/cli/cli.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <unordered_set>

#include "baton/cli/format.h"
#include "baton/ipc/daemon_client.h"
#include "baton/ipc/event_text.h"
#include "baton/util/duration.h"
#include "baton/util/environment.h"
#include "baton/util/file_util.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

// What every verb shares: output mode, session, and the connection.
struct Context {
  bool json = false;
  std::string session;

  Result<DaemonClient> Connect(bool autostart = true) const {
    auto paths = StatePaths::FromEnvironment("");
    if (!paths)
      return std::unexpected(paths.error());
    DaemonClient::Options options;
    options.paths = *paths;
    options.session = session;
    options.autostart = autostart;
    return DaemonClient::Connect(options);
  }
};

// Prints the error on stderr (text) or stdout (--json); returns the exit
// code that goes with it (`exit_code` overrides the one its code implies).
int ReportError(const Context& ctx, const Error& error, int exit_code = -1) {
  if (ctx.json) {
    std::puts(Json{{"error", ErrorToJson(error)}}.dump().c_str());
  } else {
    std::fprintf(stderr, "baton: error: %s\n", error.message.c_str());
  }
  bool usage_or_connection = error.code == ErrorCode::kUnavailable ||
                             error.code == ErrorCode::kIncompatible ||
                             error.code == ErrorCode::kCorrupt;
  if (exit_code >= 0)
    return exit_code;
  return usage_or_connection ? kExitUsage : kExitFailed;
}

// batond could not be reached or started: always exit code 2.
int ConnectError(const Context& ctx, const Error& error) {
  return ReportError(ctx, error, kExitUsage);
}

// Prints what the replies carried for this session.
void PrintNotices(const Context& ctx, DaemonClient& client, Json* doc) {
  auto notices = client.TakeNotices();
  if (notices.empty())
    return;
  if (ctx.json && doc) {
    (*doc)["notices"] = notices;
    return;
  }
  for (const auto& notice : notices) {
    std::fprintf(stderr, "baton: notice: %s\n",
                 notice.value("text", "").c_str());
  }
}

void PrintJson(const Json& doc);

// A new task's reply: the whole document with --json, else its id (and
// why, if it failed at once), then the notices.
std::string PrintStarted(const Context& ctx, DaemonClient& client,
                         Json& result) {
  const Json& task = result["task"];
  std::string id = task.value("id", "");
  if (ctx.json) {
    PrintNotices(ctx, client, &result);
    PrintJson(result);
    return id;
  }
  std::printf("%s\n", id.c_str());
  std::fflush(stdout);
  PrintNotices(ctx, client, nullptr);
  if (task.value("status", "") == "failed") {
    std::fprintf(stderr, "baton: %s\n", TaskSummaryLine(task).c_str());
  }
  // batond ran another adapter than the profile's (doc/agents.md).
  if (auto agent = task.find("agent");
      agent != task.end() && agent->is_object() && agent->contains("note")) {
    std::fprintf(stderr, "baton: %s: %s\n", id.c_str(),
                 agent->value("note", "").c_str());
  }
  return id;
}

void PrintJson(const Json& doc) {
  std::string line =
      doc.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
}

Result<std::optional<milliseconds>> OptionalDuration(const std::string& text) {
  if (text.empty())
    return std::optional<milliseconds>();
  auto parsed = ParseDuration(text);
  if (!parsed)
    return std::unexpected(parsed.error());
  return std::optional(*parsed);
}

std::string CurrentDir() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) ? buf : "/";
}

int ExitCodeOf(const Json& task) {
  if (task.value("exit_code", Json()).is_number()) {
    return task["exit_code"].get<int>();
  }
  std::string signal = task.value("signal", Json()).is_string()
                           ? task["signal"].get<std::string>()
                           : "";
  if (!signal.empty()) {
    for (int sig = 1; sig < 65; ++sig) {
      const char* abbrev = sigabbrev_np(sig);
      if (abbrev && signal == std::string("SIG") + abbrev)
        return 128 + sig;
    }
  }
  return kExitFailed;
}

// Failed, killed or interrupted; a task that waits for an answer is not.
bool EndedBadly(const Json& task) {
  std::string status = task.value("status", "");
  return status == "failed" || status == "killed" || status == "interrupted";
}

// ---- run ------------------------------------------------------------------

// What `run` and `delegate` send alike: the folder (absolute), the deadline,
// the checks, and this process's environment for the task to inherit.
Status AddTaskPlacement(Json& request, const std::string& cwd_flag,
                        const std::string& timeout_text,
                        const std::vector<std::string>& checks) {
  std::string cwd = cwd_flag.empty() ? CurrentDir() : cwd_flag;
  if (cwd[0] != '/')
    cwd = CurrentDir() + "/" + cwd;
  request["cwd"] = cwd;
  auto timeout = OptionalDuration(timeout_text);
  if (!timeout)
    return std::unexpected(timeout.error());
  if (*timeout)
    request["timeout_ms"] = (*timeout)->count();
  if (!checks.empty())
    request["checks"] = checks;
  request["base_env"] = ProcessEnvironment();
  return {};
}

struct RunArgs {
  std::string label, cwd, timeout;
  std::vector<std::string> env;
  std::vector<std::string> command;
  std::vector<std::string> checks;
  bool wait = false;
};

int WaitAndReport(const Context& ctx, DaemonClient& client,
                  const std::vector<std::string>& ids, bool all,
                  std::optional<milliseconds> timeout, bool exit_like_task);

// Sends `op` ("run" or "delegate"), prints the started task, then, with
// `wait_for_end`, waits for it: true = until it ends, exiting with its own
// code; false = until it ends or asks something.
int StartTask(const Context& ctx, const char* op, const Json& request,
              std::optional<bool> wait_for_end) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto result = client->Call(op, request);
  if (!result)
    return ReportError(ctx, result.error());
  std::string id = PrintStarted(ctx, *client, *result);
  if (!wait_for_end)
    return kExitOk;
  return WaitAndReport(ctx, *client, {id}, *wait_for_end, std::nullopt,
                       *wait_for_end);
}

int DoRun(const Context& ctx, const RunArgs& args) {
  Json request;
  if (args.command.empty()) {
    return ReportError(ctx, {ErrorCode::kInvalidArgument,
                             "empty command; give the command after --, "
                             "e.g. baton run -- make -j4"});
  }
  // One argument is a shell line; several are an argv, run as given.
  if (args.command.size() == 1) {
    request["command"] = args.command[0];
  } else {
    request["argv"] = args.command;
  }
  if (!args.label.empty())
    request["label"] = args.label;
  Json env = Json::object();
  for (const auto& entry : args.env) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      return ReportError(
          ctx, {ErrorCode::kInvalidArgument,
                fmt::format("--env '{}' is not NAME=VALUE; e.g. --env "
                            "MODE=fast",
                            entry)});
    }
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  request["env"] = env;
  if (auto placed =
          AddTaskPlacement(request, args.cwd, args.timeout, args.checks);
      !placed) {
    return ReportError(ctx, placed.error());
  }

  // --wait: until it ends, then exit with the command's own code.
  return StartTask(ctx, "run", request,
                   args.wait ? std::optional(true) : std::nullopt);
}

// ---- wait -----------------------------------------------------------------

// A live "waiting" line on a terminal's stderr; nothing on a pipe.
class LiveLine {
 public:
  LiveLine()
      : enabled_(::isatty(2)), start_(std::chrono::steady_clock::now()) {}
  void Show(size_t running, size_t done) {
    if (!enabled_)
      return;
    auto elapsed = std::chrono::duration_cast<milliseconds>(
        std::chrono::steady_clock::now() - start_);
    std::fprintf(stderr, "\r\033[Kwaiting: %zu running, %zu done, %s", running,
                 done, ShortSpan(elapsed.count()).c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void Clear() {
    if (shown_)
      std::fputs("\r\033[K", stderr);
    shown_ = false;
  }
  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

// Waits for any (or all) of `ids`; prints each ended task; exits 0 if all
// reported tasks completed, 1 if one did not, 124 on timeout. With
// `exit_like_task` (run --wait), exits with the task's own exit code.
int WaitAndReport(const Context& ctx, DaemonClient& client,
                  const std::vector<std::string>& ids, bool all,
                  std::optional<milliseconds> timeout, bool exit_like_task) {
  LiveLine live;
  // A plain time point, not an optional: g++ 12 misjudges the latter as
  // maybe-uninitialized.
  auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                          : std::chrono::steady_clock::time_point::max();
  // Each id once, in the order given: what is left of it after the ends
  // is what still runs.
  std::vector<std::string> remaining;
  {
    std::unordered_set<std::string_view> seen;
    for (const std::string& id : ids) {
      if (seen.insert(id).second)
        remaining.push_back(id);
    }
  }
  Json ended = Json::array();
  Json still_running = Json::array();
  bool timed_out = false;
  // On a terminal with --all, wait for one at a time to keep the count
  // live; otherwise one request does it all.
  bool stepwise = all && live.enabled();
  while (!remaining.empty()) {
    {
      // Freed before the reply comes: a thousand ids take a while to free.
      Json request = {{"tasks", remaining}, {"all", all && !stepwise}};
      // The text output names still-running tasks by id only, and we know
      // which we asked for: without the list, a wait over a thousand tasks
      // is as quick as over one.
      if (!ctx.json)
        request["still_running"] = "none";
      if (timeout) {
        auto left = std::chrono::duration_cast<milliseconds>(
            deadline - std::chrono::steady_clock::now());
        request["timeout_ms"] = std::max<int64_t>(0, left.count());
      }
      auto sent = client.Send("wait", request);
      if (!sent)
        return ReportError(ctx, sent.error());
    }
    Result<Json> reply;
    for (;;) {
      live.Show(remaining.size(), ended.size());
      reply = client.ReadReply(live.enabled() ? std::optional(milliseconds(200))
                                              : std::nullopt);
      if (!reply && reply.error().code == ErrorCode::kTimeout)
        continue;
      break;
    }
    live.Clear();
    if (!reply)
      return ReportError(ctx, reply.error());
    if (!reply->value("ok", false)) {
      return ReportError(ctx, ErrorFromJson(reply->value("error", Json())));
    }
    const Json& result = (*reply)["result"];
    std::unordered_set<std::string> ended_now;
    for (const auto& task : result["ended"]) {
      ended.push_back(task);
      ended_now.insert(task.value("id", ""));
    }
    std::erase_if(remaining, [&](const std::string& id) {
      return ended_now.contains(id);
    });
    if (ctx.json)
      still_running = result["still_running"];
    timed_out = result.value("timed_out", false);
    if (timed_out || !stepwise)
      break;
  }
  if (ctx.json) {
    Json doc = {{"ended", ended},
                {"still_running", still_running},
                {"timed_out", timed_out}};
    PrintNotices(ctx, client, &doc);
    PrintJson(doc);
  } else {
    for (const auto& task : ended) {
      std::printf("%s\n", TaskSummaryLine(task).c_str());
    }
    // The daemon accepted the ids, so each is spelled as it spells them.
    std::string ids_text;
    for (const std::string& id : remaining)
      ids_text += " " + id;
    if (!ids_text.empty()) {
      std::printf("%s:%s\n",
                  timed_out ? "timed out; still running" : "still running",
                  ids_text.c_str());
    }
    PrintNotices(ctx, client, nullptr);
  }
  if (timed_out)
    return kExitTimeout;
  if (exit_like_task && ended.size() == 1)
    return ExitCodeOf(ended[0]);
  for (const auto& task : ended) {
    if (EndedBadly(task))
      return kExitFailed;
  }
  return kExitOk;
}

int DoWait(const Context& ctx, const std::vector<std::string>& ids, bool all,
           const std::string& timeout_text) {
  auto timeout = OptionalDuration(timeout_text);
  if (!timeout)
    return ReportError(ctx, timeout.error());
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  return WaitAndReport(ctx, *client, ids, all, *timeout, false);
}

// ---- ls, status, kill -----------------------------------------------------

int DoList(const Context& ctx, bool all) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto result = client->Call("list", {{"all", all}});
  if (!result)
    return ReportError(ctx, result.error());
  if (ctx.json) {
    PrintNotices(ctx, *client, &*result);
    PrintJson(*result);
    return kExitOk;
  }
  const Json& tasks = (*result)["tasks"];
  if (tasks.empty()) {
    std::printf("no tasks%s\n",
                all ? "" : " (baton ls --all shows ended ones)");
  } else {
    std::fputs(TaskTable(tasks).c_str(), stdout);
  }
  size_t hidden = result->value("hidden", size_t{0});
  if (hidden) {
    std::printf("... and %zu older ended tasks (baton ls --all)\n", hidden);
  }
  PrintNotices(ctx, *client, nullptr);
  return kExitOk;
}

int DoStatus(const Context& ctx, const std::string& id) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto result = client->Call("get", {{"task", id}});
  if (!result)
    return ReportError(ctx, result.error());
  if (ctx.json) {
    PrintNotices(ctx, *client, &*result);
    PrintJson(*result);
  } else {
    std::fputs(TaskDetails((*result)["task"]).c_str(), stdout);
    PrintNotices(ctx, *client, nullptr);
  }
  return kExitOk;
}

int DoKill(const Context& ctx, const std::vector<std::string>& ids,
           const std::string& reason, const std::string& grace_text) {
  auto grace = OptionalDuration(grace_text);
  if (!grace)
    return ReportError(ctx, grace.error());
  Json request = {{"tasks", ids}, {"reason", reason}};
  if (*grace)
    request["grace_ms"] = (*grace)->count();
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto result = client->Call("kill", request);
  if (!result)
    return ReportError(ctx, result.error());
  if (ctx.json) {
    PrintNotices(ctx, *client, &*result);
    PrintJson(*result);
  } else {
    for (const auto& item : (*result)["results"]) {
      std::printf("%s: %s\n", item.value("id", "").c_str(),
                  item.value("outcome", "").c_str());
    }
    PrintNotices(ctx, *client, nullptr);
  }
  return kExitOk;
}

// ---- output ---------------------------------------------------------------

// Writes [from, to) of the log to stdout (or as JSON). Returns bytes done.
Result<uint64_t> EmitRange(const Context& ctx, const std::string& path,
                           uint64_t from, uint64_t to, const Json& meta) {
  if (to <= from)
    return 0;
  if (!ctx.json) {
    std::fflush(stdout);
    return CopyFileRange(path, from, to, 1);
  }
  auto text = ReadFile(path);
  if (!text)
    return std::unexpected(text.error());
  uint64_t end = std::min<uint64_t>(to, text->size());
  Json doc = meta;
  doc["from"] = from;
  doc["to"] = end;
  doc["data"] = from < end ? text->substr(from, end - from) : "";
  PrintJson(doc);
  return end - from;
}

int DoOutput(const Context& ctx, const std::string& id, bool follow,
             bool new_only, std::optional<uint64_t> offset) {
  if (new_only && offset) {
    return ReportError(ctx, {ErrorCode::kInvalidArgument,
                             "--new and --offset do not go together; use one"});
  }
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  Json request = {{"task", id},
                  {"mode", new_only ? "new"
                           : offset ? "offset"
                                    : "all"}};
  if (offset)
    request["offset"] = *offset;
  auto result = client->Call("read", request);
  if (!result)
    return ReportError(ctx, result.error());
  std::string path = (*result)["path"];
  Json meta = {{"id", id}};
  uint64_t pos = (*result)["from"];
  uint64_t to = (*result)["to"];
  auto copied = EmitRange(ctx, path, pos, to, meta);
  if (!copied)
    return ReportError(ctx, copied.error());
  pos += *copied;
  bool ended = result->value("at_end", false);
  if (!follow || ended) {
    PrintNotices(ctx, *client, nullptr);
    return kExitOk;
  }
  // Follow: inotify says when the log grows; a wait on the daemon says when
  // the task ends. No polling.
  UniqueFd inotify(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (inotify)
    ::inotify_add_watch(inotify.get(), path.c_str(), IN_MODIFY);
  auto sent = client->Send("wait", {{"tasks", {id}}});
  if (!sent)
    return ReportError(ctx, sent.error());
  for (;;) {
    pollfd fds[2] = {{client->fd(), POLLIN, 0}, {inotify.get(), POLLIN, 0}};
    int ready = ::poll(fds, inotify ? 2 : 1, -1);
    if (ready < 0 && errno == EINTR)
      continue;
    if (fds[1].revents & POLLIN) {
      char events[4096];
      while (::read(inotify.get(), events, sizeof events) > 0) {
      }
      auto size = FileSize(path);
      if (size && *size > pos) {
        auto more = EmitRange(ctx, path, pos, *size, meta);
        if (!more)
          return ReportError(ctx, more.error());
        pos += *more;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      auto reply = client->ReadReply();
      if (!reply)
        return ReportError(ctx, reply.error());
      break;  // The task ended: read to the end below.
    }
  }
  // A consuming follow also moves this session's cursor to the end.
  auto last =
      client->Call("read", {{"task", id}, {"mode", new_only ? "new" : "all"}});
  if (!last)
    return ReportError(ctx, last.error());
  auto rest = EmitRange(ctx, path, pos, (*last)["to"], meta);
  if (!rest)
    return ReportError(ctx, rest.error());
  PrintNotices(ctx, *client, nullptr);
  return kExitOk;
}

// ---- daemon, attach, notices ----------------------------------------------

int DoDaemonStart(const Context& ctx) {
  auto client = ctx.Connect(true);
  if (!client)
    return ConnectError(ctx, client.error());
  auto status = client->Call("daemon_status");
  if (!status)
    return ReportError(ctx, status.error());
  if (ctx.json) {
    PrintJson(*status);
  } else {
    std::printf("batond running (pid %lld) on %s\n",
                static_cast<long long>((*status)["daemon_pid"].get<int64_t>()),
                (*status)["socket"].get<std::string>().c_str());
  }
  return kExitOk;
}

int DoDaemonStatus(const Context& ctx) {
  auto client = ctx.Connect(false);
  if (!client) {
    if (ctx.json) {
      PrintJson({{"running", false}});
    } else {
      std::printf("batond is not running\n");
    }
    return kExitFailed;
  }
  auto status = client->Call("daemon_status");
  if (!status)
    return ReportError(ctx, status.error());
  (*status)["running"] = true;
  if (ctx.json) {
    PrintJson(*status);
  } else {
    std::printf(
        "batond running (pid %lld), supervisor pid %lld, %zu live tasks, up "
        "%s\n  home:   %s\n  socket: %s\n",
        static_cast<long long>((*status)["daemon_pid"].get<int64_t>()),
        static_cast<long long>((*status).value("supervisor_pid", int64_t{0})),
        (*status)["live_tasks"].get<size_t>(),
        ShortSpan((*status)["uptime_ms"].get<int64_t>()).c_str(),
        (*status)["home"].get<std::string>().c_str(),
        (*status)["socket"].get<std::string>().c_str());
  }
  return kExitOk;
}

int DoDaemonStop(const Context& ctx, bool kill_tasks) {
  auto client = ctx.Connect(false);
  if (!client) {
    if (!ctx.json)
      std::printf("batond is not running\n");
    else
      PrintJson({{"stopped", false}, {"running", false}});
    return kExitOk;
  }
  auto result = client->Call("shutdown", {{"kill_tasks", kill_tasks}});
  if (!result)
    return ReportError(ctx, result.error());
  // The daemon closes the connection as it exits; then wait for the
  // process itself to be gone (a pidfd works for a process that is not our
  // child), so a start right after the stop finds no old daemon.
  int64_t daemon_pid = result->value("daemon_pid", int64_t{0});
  UniqueFd pidfd(daemon_pid > 0 ? static_cast<int>(
                                      ::syscall(SYS_pidfd_open, daemon_pid, 0))
                                : -1);
  while (client->ReadReply(milliseconds(10'000))) {
  }
  if (pidfd) {
    pollfd pfd{pidfd.get(), POLLIN, 0};
    ::poll(&pfd, 1, 10'000);
  }
  size_t live = result->value("live_tasks", size_t{0});
  if (ctx.json) {
    PrintJson({{"stopped", true}, {"live_tasks", live}});
  } else if (live) {
    std::printf(
        "batond stopped; %zu tasks keep running under the supervisor "
        "and are picked up by the next batond\n",
        live);
  } else {
    std::printf("batond stopped\n");
  }
  return kExitOk;
}

int DoAttach(const Context& ctx) {
  if (ctx.session.empty()) {
    return ReportError(ctx, {ErrorCode::kInvalidArgument,
                             "attach needs a session: --session NAME or "
                             "BATON_SESSION"});
  }
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto result = client->Call("attach");
  if (!result)
    return ReportError(ctx, result.error());
  if (!ctx.json) {
    std::fprintf(stderr,
                 "session %s attached; its tasks are stopped %s after this "
                 "command ends (ctrl-c to detach)\n",
                 ctx.session.c_str(),
                 ShortSpan(result->value("lease_ms", int64_t{0})).c_str());
  }
  // Hold the connection until the daemon goes away or we are interrupted.
  while (client->ReadReply()) {
  }
  return kExitOk;
}

int DoNotices(const Context& ctx) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto result = client->Call("notices");
  if (!result)
    return ReportError(ctx, result.error());
  auto notices = client->TakeNotices();
  if (ctx.json) {
    PrintJson({{"notices", notices}});
  } else {
    for (const auto& notice : notices) {
      std::printf("%s\n", notice.value("text", "").c_str());
    }
  }
  return kExitOk;
}

// ---- agents ---------------------------------------------------------------

// "agent-3", "shell-12": a task id rather than an agent CLI's session id.
bool IsTaskIdText(const std::string& text) {
  for (std::string_view prefix : {"agent-", "shell-"}) {
    if (text.size() > prefix.size() && text.starts_with(prefix) &&
        text.find_first_not_of("0123456789", prefix.size()) ==
            std::string::npos) {
      return true;
    }
  }
  return false;
}

struct DelegateArgs {
  std::string agent, model, label, cwd, resume, timeout;
  std::vector<std::string> checks;
  std::vector<std::string> brief;
  bool wait = false;
};

int DoDelegate(const Context& ctx, const DelegateArgs& args) {
  std::string brief;
  for (const auto& word : args.brief)
    brief += (brief.empty() ? "" : " ") + word;
  if (brief.empty() && !::isatty(0)) {
    char buf[65536];
    for (ssize_t n; (n = ::read(0, buf, sizeof buf)) > 0;)
      brief.append(buf, n);
  }
  Json request = {{"brief", brief}};
  // Without --agent, batond picks: the resumed task's agent, else the
  // default one.
  if (!args.agent.empty())
    request["agent"] = args.agent;
  if (!args.model.empty())
    request["model"] = args.model;
  if (!args.label.empty())
    request["label"] = args.label;
  if (!args.resume.empty())
    request["resume_from"] = args.resume;
  if (auto placed =
          AddTaskPlacement(request, args.cwd, args.timeout, args.checks);
      !placed) {
    return ReportError(ctx, placed.error());
  }
  // A resumed task runs where its session ran, unless --cwd says otherwise
  // (batond takes the ended task's folder when none is sent).
  if (args.cwd.empty() && IsTaskIdText(args.resume))
    request.erase("cwd");
  // --wait: until it ends or asks something.
  return StartTask(ctx, "delegate", request,
                   args.wait ? std::optional(false) : std::nullopt);
}

// The effective agent profiles (built-in and from the config file) and
// where each came from.
int DoAgents(const Context& ctx) {
  Json request = Json::object();
  // Names the config file (BATON_CONFIG, ...).
  request["base_env"] = ProcessEnvironment();
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto result = client->Call("agents", request);
  if (!result)
    return ReportError(ctx, result.error());
  if (ctx.json) {
    PrintNotices(ctx, *client, &*result);
    PrintJson(*result);
    return kExitOk;
  }
  std::string path = result->value("config", Json()).is_string()
                         ? (*result)["config"].get<std::string>()
                         : "";
  std::printf("config: %s\n",
              path.empty() ? "none (no HOME): built-in profiles only"
              : result->value("config_found", false)
                  ? path.c_str()
                  : (path + " (not found): built-in profiles only").c_str());
  std::printf("%-2s%-12s %-8s %-34s %-8s %s\n", "", "NAME", "ADAPTER", "MODEL",
              "TIMEOUT", "COMMAND");
  for (const auto& agent : (*result)["agents"]) {
    std::string command;
    for (const auto& name : agent["env"])
      command += name.get<std::string>() + "=... ";
    for (const auto& part : {agent["command"], agent["args"]}) {
      for (const auto& word : part) {
        std::string text = word.get<std::string>();
        bool plain = !text.empty() &&
                     text.find_first_of(" \t'\"\\$") == std::string::npos;
        command += (plain ? text : "'" + text + "'") + " ";
      }
    }
    if (!command.empty())
      command.pop_back();
    std::string model = agent.value("model", "");
    std::printf(
        "%-2s%-12s %-8s %-34s %-8s %s\n    from %s\n",
        agent.value("default", false) ? "*" : "",
        agent.value("name", "").c_str(), agent.value("adapter", "").c_str(),
        model.empty() ? "(the CLI's own)" : model.c_str(),
        FormatDuration(milliseconds(agent.value("timeout_ms", int64_t{0})))
            .c_str(),
        command.c_str(), agent.value("origin", "").c_str());
  }
  PrintNotices(ctx, *client, nullptr);
  return kExitOk;
}

int DoSend(const Context& ctx, const std::string& id,
           const std::vector<std::string>& words, bool steer) {
  std::string message;
  for (const auto& word : words)
    message += (message.empty() ? "" : " ") + word;
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto result = client->Call("send", {{"task", id},
                                      {"message", message},
                                      {"mode", steer ? "steer" : "followup"}});
  if (!result)
    return ReportError(ctx, result.error());
  if (ctx.json) {
    PrintNotices(ctx, *client, &*result);
    PrintJson(*result);
  } else {
    std::printf("%s: %s\n", id.c_str(), result->value("delivery", "").c_str());
    PrintNotices(ctx, *client, nullptr);
  }
  return kExitOk;
}

int DoAnswer(const Context& ctx, const std::string& id,
             const std::vector<std::string>& answers) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  auto result = client->Call("answer", {{"task", id}, {"answers", answers}});
  if (!result)
    return ReportError(ctx, result.error());
  if (ctx.json) {
    PrintNotices(ctx, *client, &*result);
    PrintJson(*result);
  } else {
    std::printf("%s: answered %s\n", id.c_str(),
                (*result)["answered"]["answers"].dump().c_str());
    PrintNotices(ctx, *client, nullptr);
  }
  return kExitOk;
}

int DoEvents(const Context& ctx, const std::string& id, bool follow) {
  auto client = ctx.Connect();
  if (!client)
    return ConnectError(ctx, client.error());
  int64_t after = 0;
  UniqueFd inotify;
  // Waits go on a connection of their own, so that the events calls on
  // `client` never read (and drop) a wait's answer.
  std::optional<DaemonClient> waiter;
  bool wait_pending = false;
  for (;;) {
    auto result = client->Call("events", {{"task", id}, {"after", after}});
    if (!result)
      return ReportError(ctx, result.error());
    for (const auto& event : (*result)["events"]) {
      after = std::max<int64_t>(after, event.value("seq", 0));
      if (ctx.json) {
        PrintJson(event);
      } else {
        std::printf("%s\n", EventLine(event).c_str());
      }
    }
    std::fflush(stdout);
    const Json& task = (*result)["task"];
    std::string status = task.value("status", "");
    bool ended = status == "completed" || status == "failed" ||
                 status == "killed" || status == "interrupted";
    if (!follow || ended)
      break;
    // Event-driven: inotify on the task's folder says when events.jsonl
    // grows (it may not exist yet); a wait on the daemon says when the task
    // ends. A wait would answer at once while a question is open, so none
    // is sent then: the answer's event wakes us instead.
    if (!inotify) {
      std::string path = task.value("output_path", "");
      std::string dir = path.substr(0, path.rfind('/'));
      inotify.reset(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
      if (!inotify || ::inotify_add_watch(inotify.get(), dir.c_str(),
                                          IN_MODIFY | IN_CREATE) < 0) {
        return ReportError(ctx, ErrnoError("inotify " + dir, errno));
      }
    }
    if (!wait_pending && status != "waiting") {
      if (!waiter) {
        auto connected = ctx.Connect();
        if (!connected)
          return ConnectError(ctx, connected.error());
        waiter.emplace(std::move(*connected));
      }
      auto sent = waiter->Send("wait", {{"tasks", {id}}});
      if (!sent)
        return ReportError(ctx, sent.error());
      wait_pending = true;
    }
    pollfd fds[2] = {{inotify.get(), POLLIN, 0},
                     {waiter ? waiter->fd() : -1, POLLIN, 0}};
    int ready = ::poll(fds, 2, -1);
    if (ready < 0 && errno != EINTR)
      return ReportError(ctx, ErrnoError("poll", errno));
    if (fds[0].revents & POLLIN) {
      char buf[4096];
      while (::read(inotify.get(), buf, sizeof buf) > 0) {
      }
    }
    if (waiter && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      auto reply = waiter->ReadReply();
      if (!reply)
        return ReportError(ctx, reply.error());
      wait_pending = false;
    }
  }
  PrintNotices(ctx, *client, nullptr);
  return kExitOk;
}

}  // namespace

int RunCli(int argc, char** argv) {
  CLI::App app{"baton: background tasks for coding agents and people", "baton"};
  app.require_subcommand(1);
  app.fallthrough();
  Context ctx;
  const char* env_session = std::getenv("BATON_SESSION");
  ctx.session = env_session ? env_session : "";
  app.add_flag("--json", ctx.json, "One JSON document per line on stdout");
  app.add_option("--session", ctx.session,
                 "Owner session (default: $BATON_SESSION; none = unowned)");
  app.set_version_flag("--version", "baton 0.1.0");

  std::function<int()> action;
  // Each verb's options are defined only when that verb is used (or for
  // the overview of --help): building every verb's CLI11 parser was 70% of
  // the instructions of a `baton run` (callgrind), and a CLI process starts
  // once per task.
  struct Verb {
    std::string name, description;
    std::function<void(CLI::App*)> define;
  };
  std::vector<Verb> verbs;

  RunArgs run;
  verbs.push_back(
      {"run", "Start a command in the background", [&](CLI::App* run_cmd) {
         run_cmd->add_option("--label", run.label, "A name for people");
         run_cmd->add_option("--cwd", run.cwd,
                             "Working directory (default: here)");
         run_cmd->add_option("--env", run.env, "Extra variable NAME=VALUE")
             ->take_all()
             ->allow_extra_args(false);
         run_cmd->add_option("--timeout", run.timeout,
                             "Kill it after this long (e.g. 30s, 5m)");
         run_cmd
             ->add_option("--check", run.checks,
                          "A check command run in its folder when it ends")
             ->allow_extra_args(false);
         run_cmd->add_flag("--wait", run.wait,
                           "Wait for it and exit with its exit code");
         run_cmd
             ->add_option("command", run.command,
                          "The command: one argument is a shell line, several "
                          "are run as given")
             ->required();
         run_cmd->callback([&] { action = [&] { return DoRun(ctx, run); }; });
       }});

  bool ls_all = false;
  verbs.push_back({"ls", "List your tasks", [&](CLI::App* ls_cmd) {
                     ls_cmd->add_flag("--all,-a", ls_all,
                                      "Include all ended tasks");
                     ls_cmd->callback(
                         [&] { action = [&] { return DoList(ctx, ls_all); }; });
                   }});

  std::string status_id;
  verbs.push_back(
      {"status", "Show one task", [&](CLI::App* status_cmd) {
         status_cmd->add_option("id", status_id, "Task id")->required();
         status_cmd->callback(
             [&] { action = [&] { return DoStatus(ctx, status_id); }; });
       }});

  std::string output_id;
  bool follow = false, new_only = false;
  std::optional<uint64_t> offset;
  verbs.push_back(
      {"output", "Print a task's output", [&](CLI::App* output_cmd) {
         output_cmd->add_option("id", output_id, "Task id")->required();
         output_cmd->add_flag("--follow,-f", follow,
                              "Stream until the task ends");
         output_cmd->add_flag(
             "--new", new_only,
             "Only what came since this session's last --new read");
         output_cmd->add_option("--offset", offset,
                                "Start at this byte offset");
         output_cmd->callback([&] {
           action = [&] {
             return DoOutput(ctx, output_id, follow, new_only, offset);
           };
         });
       }});

  std::vector<std::string> wait_ids;
  bool wait_all = false;
  std::string wait_timeout;
  verbs.push_back(
      {"wait", "Wait until any of the tasks ends (all, with --all)",
       [&](CLI::App* wait_cmd) {
         wait_cmd->add_option("ids", wait_ids, "Task ids")->required();
         wait_cmd->add_flag("--all", wait_all, "Wait for every task");
         wait_cmd->add_option("--timeout", wait_timeout,
                              "Give up after (e.g. 30s)");
         wait_cmd->callback([&] {
           action = [&] {
             return DoWait(ctx, wait_ids, wait_all, wait_timeout);
           };
         });
       }});

  std::vector<std::string> kill_ids;
  std::string kill_reason, kill_grace;
  verbs.push_back(
      {"kill", "Stop tasks (SIGTERM, then SIGKILL)", [&](CLI::App* kill_cmd) {
         kill_cmd->add_option("ids", kill_ids, "Task ids")->required();
         kill_cmd->add_option("--reason", kill_reason,
                              "Why (shown in its detail)");
         kill_cmd->add_option("--grace", kill_grace,
                              "Time between SIGTERM and SIGKILL (default 5s)");
         kill_cmd->callback([&] {
           action = [&] {
             return DoKill(ctx, kill_ids, kill_reason, kill_grace);
           };
         });
       }});

  DelegateArgs delegate;
  verbs.push_back(
      {"delegate", "Hand a brief to an agent CLI running in the background",
       [&](CLI::App* delegate_cmd) {
         delegate_cmd->add_option(
             "--agent", delegate.agent,
             "claude (default), codex, codex-exec, gemini, "
             "opencode, qwen, dsh, or a configured profile");
         delegate_cmd->add_option("--model", delegate.model,
                                  "<provider>/<model>[:<effort>]");
         delegate_cmd->add_option("--label", delegate.label,
                                  "A name for people");
         delegate_cmd->add_option("--cwd", delegate.cwd, "Working directory");
         delegate_cmd
             ->add_option("--check", delegate.checks,
                          "A check command run when it ends")
             ->take_all()
             ->allow_extra_args(false);
         delegate_cmd->add_option(
             "--resume", delegate.resume,
             "Resume the session of an ended task (or a CLI "
             "session id)");
         delegate_cmd->add_option("--timeout", delegate.timeout,
                                  "Deadline (default 30m)");
         delegate_cmd->add_flag("--wait", delegate.wait,
                                "Wait until it ends or asks something");
         delegate_cmd->add_option("brief", delegate.brief,
                                  "What to do (or on stdin)");
         delegate_cmd->callback(
             [&] { action = [&] { return DoDelegate(ctx, delegate); }; });
       }});

  std::string send_id;
  std::vector<std::string> send_words;
  bool send_steer = false;
  verbs.push_back(
      {"send", "Send a running agent a message", [&](CLI::App* send_cmd) {
         send_cmd->add_option("id", send_id, "Task id")->required();
         send_cmd->add_option("message", send_words, "The message")->required();
         send_cmd->add_flag("--steer", send_steer,
                            "Into the running turn (else after it)");
         send_cmd->callback([&] {
           action = [&] {
             return DoSend(ctx, send_id, send_words, send_steer);
           };
         });
       }});

  std::string answer_id;
  std::vector<std::string> answer_words;
  verbs.push_back(
      {"answer", "Answer an agent's open question, one answer per item",
       [&](CLI::App* answer_cmd) {
         answer_cmd->add_option("id", answer_id, "Task id")->required();
         answer_cmd
             ->add_option("answers", answer_words,
                          "Option number, label, text, or skip")
             ->required();
         answer_cmd->callback([&] {
           action = [&] { return DoAnswer(ctx, answer_id, answer_words); };
         });
       }});

  std::string events_id;
  bool events_follow = false;
  verbs.push_back(
      {"events", "Show an agent's events", [&](CLI::App* events_cmd) {
         events_cmd->add_option("id", events_id, "Task id")->required();
         events_cmd->add_flag("--follow,-f", events_follow, "Until it ends");
         events_cmd->callback([&] {
           action = [&] { return DoEvents(ctx, events_id, events_follow); };
         });
       }});

  verbs.push_back(
      {"agents", "List the agent profiles (built-in and from the config)",
       [&](CLI::App* agents_cmd) {
         agents_cmd->callback([&] { action = [&] { return DoAgents(ctx); }; });
       }});

  verbs.push_back(
      {"attach", "Hold the session attached (its lease starts when this ends)",
       [&](CLI::App* attach_cmd) {
         attach_cmd->callback([&] { action = [&] { return DoAttach(ctx); }; });
       }});

  verbs.push_back({"notices", "Print tasks of this session that ended unseen",
                   [&](CLI::App* notices_cmd) {
                     notices_cmd->callback(
                         [&] { action = [&] { return DoNotices(ctx); }; });
                   }});

  bool kill_tasks = false;
  verbs.push_back(
      {"daemon", "Manage batond", [&](CLI::App* daemon_cmd) {
         daemon_cmd->require_subcommand(1);
         daemon_cmd
             ->add_subcommand("start", "Start batond if it is not running")
             ->callback([&] { action = [&] { return DoDaemonStart(ctx); }; });
         auto* stop_cmd = daemon_cmd->add_subcommand(
             "stop", "Stop batond (tasks keep running unless --kill-tasks)");
         stop_cmd->add_flag("--kill-tasks", kill_tasks,
                            "Kill every live task first");
         stop_cmd->callback(
             [&] { action = [&] { return DoDaemonStop(ctx, kill_tasks); }; });
         daemon_cmd->add_subcommand("status", "Is batond running?")
             ->callback([&] { action = [&] { return DoDaemonStatus(ctx); }; });
       }});

  // The verb: the first argument that is not an option. CLI11 would say "A
  // subcommand is required" for a mistyped one; name it.
  const Verb* chosen = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--session") {
      ++i;
      continue;
    }
    if (arg.starts_with("-"))
      continue;
    for (const Verb& verb : verbs) {
      if (verb.name == arg)
        chosen = &verb;
    }
    if (!chosen) {
      std::fprintf(stderr,
                   "baton: error: unknown command '%s'; see 'baton --help'\n",
                   arg.c_str());
      return kExitUsage;
    }
    break;
  }
  for (const Verb& verb : verbs) {
    if (!chosen || chosen == &verb)
      verb.define(app.add_subcommand(verb.name, verb.description));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "baton: error: %s; see 'baton --help'\n", e.what());
    return kExitUsage;
  }
  if (!action)
    return kExitUsage;
  return action();
}

}  // namespace baton
