#include "baton/daemon/check_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "baton/util/clean_spawn.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"
#include "baton/util/result.h"

extern char** environ;

namespace baton {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxScannedFiles = 20'000;
constexpr size_t kTailLines = 10;
constexpr size_t kTailBytes = 2000;

// path (relative to the folder) -> "size:mtime_ns".
using Stamps = std::map<std::string, std::string>;

// Every file under `dir` but .git, at most kMaxScannedFiles.
Stamps Scan(const std::string& dir) {
  namespace fs = std::filesystem;
  Stamps stamps;
  std::error_code ec;
  fs::recursive_directory_iterator it(
      dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec))
      continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0)
      continue;
    stamps[fs::relative(it->path(), dir, ec).string()] = fmt::format(
        "{}:{}.{}", st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    if (stamps.size() >= kMaxScannedFiles)
      break;
  }
  return stamps;
}

std::string Tail(const std::string& text) {
  size_t start = text.size();
  size_t lines = 0;
  while (start > 0 && lines <= kTailLines) {
    start = text.rfind('\n', start - 1);
    if (start == std::string::npos) {
      start = 0;
      break;
    }
    ++lines;
  }
  std::string tail = text.substr(start == 0 ? 0 : start + 1);
  if (tail.size() > kTailBytes)
    tail = tail.substr(tail.size() - kTailBytes);
  return tail;
}

}  // namespace

struct CheckRunner::Run {
  TaskRecord task;
  ExitInfo exit;
  Evidence evidence;
  size_t next_check = 0;
  UniqueFd pidfd;
  pid_t pid = 0;
  TimerId timer = 0;
};

CheckRunner::CheckRunner(EventLoop* loop, Executor* executor,
                         TaskRegistry* registry)
    : loop_(loop), executor_(executor), registry_(registry) {}

CheckRunner::~CheckRunner() {
  for (auto& [id, run] : runs_) {
    if (run->pidfd)
      loop_->RemoveFd(run->pidfd.get());
    if (run->pid > 0)
      ::kill(-run->pid, SIGKILL);
  }
}

void CheckRunner::OnTaskSpawned(const TaskId& id, int64_t pid,
                                int64_t started_ms) {
  registry_->OnTaskSpawned(id, pid, started_ms);
}

void CheckRunner::Snapshot(const TaskRecord& task) {
  if (task.spec.checks.empty())
    return;
  // Kept on disk, so that a restarted batond still has it.
  Json before = Scan(task.spec.cwd);
  (void)WriteFileAtomic(
      executor_->TaskDir(task.id) + "/before.json",
      before.dump(-1, ' ', false, Json::error_handler_t::replace));
}

void CheckRunner::OnTaskSpawnFailed(const TaskId& id, const Error& error) {
  registry_->OnTaskSpawnFailed(id, error);
}

void CheckRunner::OnTaskExited(const TaskId& id, const ExitInfo& exit) {
  const TaskRecord* task = registry_->FindLive(id);
  if (!task || task->spec.checks.empty() || runs_.count(id)) {
    return registry_->OnTaskExited(id, exit);
  }
  auto run = std::make_unique<Run>();
  run->task = *task;
  run->exit = exit;
  runs_[id] = std::move(run);
  RunNext(id);
}

Status CheckRunner::Spawn(const std::vector<std::string>& argv,
                          const std::string& cwd, const std::string& log,
                          std::function<void(int)> done) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  CleanSpawnAttributes attr;
  std::vector<char*> args = CStringArray(argv);
  pid_t pid = -1;
  int err =
      ::posix_spawnp(&pid, args[0], &actions, attr.get(), args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0)
    return std::unexpected(ErrnoError("spawn " + argv[0], err));
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    ::waitpid(pid, nullptr, 0);
    return std::unexpected(ErrnoError("pidfd_open", errno));
  }
  auto pidfd = std::make_shared<UniqueFd>(fd);
  return loop_->AddFd(fd, EPOLLIN, [this, pid, pidfd, done](uint32_t) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != pid)
      return;
    loop_->RemoveFd(pidfd->get());
    done(status);
  });
}

void CheckRunner::RunNext(const TaskId& id) {
  // Callers hold a run for `id` (just added, or found by its callback).
  auto found = runs_.find(id);
  BATON_CHECK(found != runs_.end());
  Run& run = *found->second;
  const auto& checks = run.task.spec.checks;
  if (run.next_check >= checks.size())
    return Complete(id);
  size_t index = run.next_check++;
  std::string log =
      fmt::format("{}/check-{}.log", executor_->TaskDir(id), index + 1);
  auto started = Spawn({"/bin/sh", "-c", checks[index]}, run.task.spec.cwd, log,
                       [this, id, index, log](int status) {
                         auto it = runs_.find(id);
                         if (it == runs_.end())
                           return;
                         Run& run = *it->second;
                         if (run.timer)
                           loop_->Cancel(std::exchange(run.timer, 0));
                         run.pid = 0;
                         CheckResult result;
                         result.command = run.task.spec.checks[index];
                         result.exit_code =
                             WIFEXITED(status)     ? WEXITSTATUS(status)
                             : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                                   : -1;
                         result.tail = Tail(ReadFile(log).value_or(""));
                         run.evidence.checks.push_back(std::move(result));
                         RunNext(id);
                       });
  if (!started) {
    run.evidence.checks.push_back(
        {checks[index], -1, "could not start: " + started.error().message});
    return RunNext(id);
  }
}

void CheckRunner::Complete(const TaskId& id) {
  auto node = runs_.extract(id);
  Run& run = *node.mapped();
  std::string cwd = run.task.spec.cwd;
  auto before_text = ReadFile(executor_->TaskDir(id) + "/before.json");
  Json before =
      before_text ? Json::parse(*before_text, nullptr, false) : Json(nullptr);
  Evidence& evidence = run.evidence;
  if (before.is_object()) {
    Stamps after = Scan(cwd);
    std::set<std::string> changed;
    for (const auto& [path, stamp] : after) {
      auto it = before.find(path);
      if (it == before.end() || *it != stamp)
        changed.insert(path);
    }
    for (const auto& [path, stamp] : before.items()) {
      if (!after.count(path))
        changed.insert(path);  // Deleted.
    }
    evidence.source = "scan";
    // In a repository, what git ignores (build output) does not count:
    // keep what `git status` reports (run synchronously; it is quick and
    // this happens once per task).
    std::string git_out = executor_->TaskDir(id) + "/git-status.txt";
    std::string command = fmt::format(
        "git -C '{}' status --porcelain=v1 -uall > '{}' 2>/dev/null", cwd,
        git_out);
    if (std::filesystem::exists(cwd + "/.git") &&
        std::system(command.c_str()) == 0) {
      std::set<std::string> dirty;
      std::string text = ReadFile(git_out).value_or("");
      size_t start = 0;
      for (size_t nl; (nl = text.find('\n', start)) != std::string::npos;
           start = nl + 1) {
        std::string line = text.substr(start, nl - start);
        if (line.size() > 3) {
          std::string path = line.substr(3);
          size_t arrow = path.find(" -> ");
          if (arrow != std::string::npos)
            path = path.substr(arrow + 4);
          if (path.size() > 1 && path.front() == '"') {
            path = path.substr(1, path.size() - 2);
          }
          dirty.insert(path);
        }
      }
      std::set<std::string> kept;
      for (const auto& path : changed) {
        if (dirty.count(path))
          kept.insert(path);
      }
      changed = std::move(kept);
      evidence.source = "git";
    }
    evidence.changed_files.assign(changed.begin(), changed.end());
  } else {
    evidence.source = "none";
  }
  evidence.overlapping_tasks = registry_->OverlappingTasks(run.task);
  run.exit.evidence = evidence;
  registry_->OnTaskExited(id, run.exit);
}

}  // namespace baton
