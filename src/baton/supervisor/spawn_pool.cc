#include "baton/supervisor/spawn_pool.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "baton/supervisor/process_info.h"
#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "baton/util/json_fields.h"
#include "baton/util/log.h"
#include "baton/util/program_path.h"
#include "baton/util/spawn_child.h"

namespace baton {

SpawnOutcome StartTask(SpawnRequest request, ProgramCache* programs,
                       const LimitHolder* limits, Journal* journal) {
  SpawnOutcome out;
  out.request = std::move(request);
  const SpawnRequest& req = out.request;
  JournalTask& record = out.record;
  record.task = req.task;
  record.exit_file = req.exit_file;
  record.log = req.log;
  record.grace_ms = req.grace.count();
  bool journaled = false;
  auto fail = [&](std::string error) {
    if (journaled)
      journal->Ended(req.task);
    out.error = std::move(error);
    out.log_fd.reset();
    out.stdin_holder.reset();
    if (out.cgroup)
      (void)out.cgroup->Remove();
    out.cgroup.reset();
    return std::move(out);
  };
  if (req.argv.empty())
    return fail("empty argv");
  // The task's folder, unless batond made it already; its parent too, in
  // case someone removed the tasks folder under a running batond.
  std::string folder = req.log.substr(0, req.log.rfind('/'));
  Status made = MakeDir(folder);
  if (!made && made.error().sys_errno == ENOENT) {
    (void)MakeDir(folder.substr(0, folder.rfind('/')));
    made = MakeDir(folder);
  }
  if (!made) {
    return fail(fmt::format("create task folder {}: {}", folder,
                            std::strerror(made.error().sys_errno)));
  }
  // Both stdout and stderr write to this one description (O_APPEND), so the
  // output lands merged, in order and without passing through us.
  out.log_fd.reset(
      ::open(req.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (!out.log_fd) {
    return fail(
        fmt::format("open output log {}: {}", req.log, std::strerror(errno)));
  }
  UniqueFd err_file, stdin_file;
  if (!req.stderr_path.empty()) {
    err_file.reset(::open(req.stderr_path.c_str(),
                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
    if (!err_file) {
      return fail(fmt::format("open stderr log {}: {}", req.stderr_path,
                              std::strerror(errno)));
    }
  }
  if (!req.stdin_path.empty()) {
    if (req.stdin_fifo) {
      // Our writer first, so the task's read-only open does not block and
      // the task never sees EOF while batond (the real writer) is away.
      out.stdin_holder.reset(
          ::open(req.stdin_path.c_str(), O_RDWR | O_CLOEXEC));
      stdin_file.reset(
          ::open(req.stdin_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
      if (stdin_file) {
        int flags = ::fcntl(stdin_file.get(), F_GETFL);
        ::fcntl(stdin_file.get(), F_SETFL, flags & ~O_NONBLOCK);
      }
    } else {
      stdin_file.reset(::open(req.stdin_path.c_str(), O_RDONLY | O_CLOEXEC));
    }
    if (!stdin_file || (req.stdin_fifo && !out.stdin_holder)) {
      return fail(fmt::format("open stdin {}: {}", req.stdin_path,
                              std::strerror(errno)));
    }
  }
  // posix_spawn reports a failed chdir and a failed exec with the same
  // errno, so check the directory first for a message that names it.
  std::string cwd = req.cwd.empty() ? "/" : req.cwd;
  struct stat st {};
  int cwd_error = ::stat(cwd.c_str(), &st) != 0 ? errno
                  : S_ISDIR(st.st_mode)         ? 0
                                                : ENOTDIR;
  if (cwd_error != 0) {
    return fail(
        fmt::format("working directory {}: {}", cwd, std::strerror(cwd_error)));
  }
  // A stale record would read as this run's end.
  ::unlink(req.exit_file.c_str());
  std::vector<std::string> env = SpawnEnvironment(req);
  auto program = ResolveProgram(req.argv[0], env, cwd, programs);
  if (!program) {
    return fail(fmt::format("spawn \"{}\": {}", req.argv[0],
                            std::strerror(program.error())));
  }
  // Its limits, set up before it runs (doc/limits.md), and said in its
  // folder for `baton status`.
  LimitPlan plan;
  if (req.limits && req.limits->any()) {
    if (!limits)
      return fail("this supervisor holds no limits");
    auto prepared = limits->Prepare(req.task, *req.limits);
    if (!prepared)
      return fail("set up its limits: " + prepared.error().message);
    plan = std::move(*prepared);
    out.cgroup = plan.cgroup;
    std::string said = EncodeObject(LimitsHeld{plan.held_by});
    if (auto written = WriteFileAtomic(folder + "/" + kTaskLimitsFile, said);
        !written) {
      return fail(written.error().message);
    }
  }
  // As late as can be: from here on the task may run. A spawn still queued
  // is named nowhere, so a supervisor that dies first leaves it to batond to
  // send again.
  record.started_ms = WallMillis();
  if (req.timeout)
    record.deadline_ms = record.started_ms + req.timeout->count();
  // The supervisor blocks SIGCHLD and SIGTERM and ignores SIGPIPE, SIGHUP
  // and SIGINT; a task starts with none of that, in its own session.
  ChildSpec child{.program = std::move(*program),
                  .argv = req.argv,
                  .env = std::move(env),
                  .cwd = cwd,
                  .stdin_fd = stdin_file ? stdin_file.get() : -1,
                  .stdout_fd = out.log_fd.get(),
                  .stderr_fd = err_file ? err_file.get() : out.log_fd.get(),
                  .join_cgroups = std::move(plan.join),
                  .rlimits = std::move(plan.rlimits)};
  // The child says "began" with its pid right before its exec, so that a
  // supervisor started after we die mid-spawn knows whether it runs.
  Journal::SpawnSlot slot;
  if (journal) {
    slot = journal->Spawning(record);
    journaled = true;
    child.announce_fd = slot.fd;
    child.announce_before_pid = slot.began_before_pid;
    child.announce_after_pid = slot.began_after_pid;
  }
  auto pid = SpawnChild(child);
  if (!pid)
    return fail(pid.error().message);
  out.pid = *pid;
  record.started = true;
  record.pid = *pid;
  // The start time names this process among all that will have its pid
  // (a zombie still has it; a process already reaped has none).
  if (auto stat = ReadProcStat(*pid))
    record.start_ticks = stat->start_ticks;
  if (journal)
    journal->Started(record);
  return out;
}

SpawnPool::SpawnPool(EventLoop* loop, int threads, DoneCallback on_done,
                     const LimitHolder* limits, Journal* journal)
    : on_done_(std::move(on_done)),
      limits_(limits),
      journal_(journal),
      workers_(loop, threads, WorkerPool::AtExit::kRunQueued) {}

void SpawnPool::Submit(SpawnRequest request) {
  auto outcome = std::make_shared<SpawnOutcome>();
  workers_.Post(
      [this, outcome, request = std::move(request)]() mutable {
        *outcome = StartTask(std::move(request), &programs_, limits_, journal_);
      },
      [this, outcome] { on_done_(std::move(*outcome)); });
}

}  // namespace baton
