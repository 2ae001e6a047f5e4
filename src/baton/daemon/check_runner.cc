#include "baton/daemon/check_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "baton/daemon/output_redactor.h"
#include "baton/daemon/worktrees.h"
#include "baton/util/environment.h"
#include "baton/util/file_util.h"
#include "baton/util/git.h"
#include "baton/util/log.h"
#include "baton/util/spawn_child.h"

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

// The paths `git status` reports in the repository at `cwd`, run with the
// task's environment; nullopt when git cannot tell.
std::optional<std::set<std::string>> GitDirtyPaths(
    const std::string& cwd, const std::vector<std::string>& env) {
  auto status = RunGit(cwd, {"status", "--porcelain=v1", "-uall"}, env);
  if (!status || !status->ok())
    return std::nullopt;
  std::set<std::string> dirty;
  const std::string& text = status->out;
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
  return dirty;
}

// How much of a diff is kept: enough for a person to review an agent's
// change, small enough to load in a page.
constexpr size_t kMaxDiffBytes = 1 << 20;
// A diff that lists more files than this is cut anyway.
constexpr size_t kMaxDiffFiles = 1000;
// New files each take a git process of their own.
constexpr size_t kMaxNewFileDiffs = 50;

// Writes to `path` the diff of `changed` (paths in the repository at
// `repo`) against `base`, the new files against nothing, and notes it in
// `evidence`. No file when git sees no change, or cannot tell.
void WriteDiff(const std::string& repo, const std::string& base,
               const std::vector<std::string>& changed,
               const std::vector<std::string>& env, const std::string& path,
               Evidence& evidence) {
  if (changed.empty())
    return;
  std::vector<std::string> files(
      changed.begin(), changed.begin() + static_cast<std::ptrdiff_t>(std::min(
                                             changed.size(), kMaxDiffFiles)));
  // Paths as they are, never as patterns; no colour, no external tool.
  auto git = [&](std::vector<std::string> args, bool with_files) {
    args.insert(args.begin(), "--literal-pathspecs");
    if (with_files) {
      args.push_back("--");
      args.insert(args.end(), files.begin(), files.end());
    }
    return RunGit(repo, args, env);
  };
  std::string diff;
  auto tracked = git({"diff", "--no-color", "--no-ext-diff", base}, true);
  if (tracked && tracked->ok())
    diff = std::move(tracked->out);
  // New files are in no diff against a commit until they are added; each
  // is shown against /dev/null (exit code 1: they differ), one git each,
  // on batond's loop: at most kMaxNewFileDiffs of them.
  bool cut = false;
  auto untracked =
      git({"ls-files", "--others", "--exclude-standard", "-z"}, true);
  if (untracked && untracked->ok()) {
    const std::string& names = untracked->out;
    size_t shown = 0;
    for (size_t start = 0, end;
         (end = names.find('\0', start)) != std::string::npos;
         start = end + 1) {
      if (diff.size() > kMaxDiffBytes || shown == kMaxNewFileDiffs) {
        cut = true;
        break;
      }
      auto added = git({"diff", "--no-color", "--no-ext-diff", "--no-index",
                        "--", "/dev/null", names.substr(start, end - start)},
                       false);
      ++shown;
      if (added && added->exit_code == 1)
        diff += added->out;
    }
  }
  if (diff.empty())
    return;
  if (cut || diff.size() > kMaxDiffBytes || files.size() < changed.size()) {
    evidence.diff_truncated = true;
    if (diff.size() > kMaxDiffBytes) {
      size_t cut = diff.rfind('\n', kMaxDiffBytes);
      diff.resize(cut == std::string::npos ? kMaxDiffBytes : cut + 1);
    }
  }
  if (auto written = WriteFileAtomic(path, diff); !written) {
    Log(LogLevel::kWarning, "{}: the diff was not kept: {}", path,
        written.error().message);
    return;
  }
  evidence.diff_path = path;
}

// The evidence of a task's end besides its checks: the files it changed
// (its worktree against its base, or a scan of its folder against the one
// taken at its start, narrowed by git), the diff, masked. Runs on the
// evidence worker's thread: touches only the task's files and git.
void CollectEvidence(const TaskRecord& task,
                     const std::vector<std::string>& env,
                     const std::string& task_dir, Evidence& evidence) {
  std::string cwd = task.spec.cwd;
  auto before_text = ReadFile(task_dir + "/before.json");
  Json before =
      before_text ? Json::parse(*before_text, nullptr, false) : Json(nullptr);
  std::optional<WorktreeFindings> worktree;
  if (HasWorktree(task)) {
    worktree = ReadWorktree(*task.spec.agent->worktree, env);
    UnlockWorktree(task, env);  // It ran: its worktree may be cleaned.
  }
  std::string diff_path = task_dir + "/" + kTaskDiffFile;
  if (worktree) {
    evidence.source = "worktree";
    evidence.changed_files = std::move(worktree->changed_files);
    evidence.branch = std::move(worktree->branch);
    const Worktree& made = *task.spec.agent->worktree;
    WriteDiff(made.path, made.base, evidence.changed_files, env, diff_path,
              evidence);
  } else if (before.is_object()) {
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
    // In a repository, what git ignores (build output) does not count.
    if (std::filesystem::exists(cwd + "/.git")) {
      if (auto dirty = GitDirtyPaths(cwd, env)) {
        std::erase_if(changed, [&](const std::string& path) {
          return !dirty->count(path);
        });
        evidence.source = "git";
      }
    }
    evidence.changed_files.assign(changed.begin(), changed.end());
    if (evidence.source == "git")
      WriteDiff(cwd, "HEAD", evidence.changed_files, env, diff_path, evidence);
  } else {
    evidence.source = "none";
  }
  // The diff is shown (status, MCP, the board) like the output: masked
  // first (doc/redaction.md). A worker's new .env is in it.
  if (!evidence.diff_path.empty() && task.spec.redact)
    RedactFinishedFile(evidence.diff_path);
}

}  // namespace

struct CheckRunner::Run {
  TaskRecord task;
  std::vector<std::string> env;  // The checks'.
  ExitInfo exit;
  Evidence evidence;
  size_t next_check = 0;
  UniqueFd pidfd;
  pid_t pid = 0;
  TimerId timer = 0;
};

CheckRunner::CheckRunner(EventLoop* loop, Executor* executor,
                         TaskRegistry* registry)
    : ForwardingListener(registry),
      loop_(loop),
      executor_(executor),
      registry_(registry) {}

CheckRunner::~CheckRunner() {
  for (auto& [id, run] : runs_) {
    if (run->pidfd)
      loop_->RemoveFd(run->pidfd.get());
    if (run->pid > 0)
      ::kill(-run->pid, SIGKILL);
  }
}

namespace {

// The "before" half of the scan of `cwd`, kept in the task's folder `dir`
// so that a restarted batond still has it. The folder is made here: the
// spawn (which makes it too) leaves batond only after the task is
// committed.
void WriteBefore(const std::string& cwd, const std::string& dir) {
  Json before = Scan(cwd);
  (void)MakeDir(dir.substr(0, dir.rfind('/')));
  (void)MakeDir(dir);
  (void)WriteFileAtomic(
      dir + "/before.json",
      before.dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace

void CheckRunner::KeepEnvironment(const TaskRecord& task) {
  // The environment the task runs with, kept in memory only (the client's
  // part may hold secrets): the base the executor uses, then the task's
  // own entries.
  environments_[task.id] = SetEnvironmentEntries(
      task.spec.base_env.empty() ? ProcessEnvironment() : task.spec.base_env,
      TaskEnvironmentEntries(task));
}

void CheckRunner::TakeBefore(TaskRecord task,
                             TaskRegistry::StartCallback made) {
  bool worktree = HasWorktree(task);
  if (task.spec.checks.empty() && !worktree)
    return made(std::move(task));
  KeepEnvironment(task);
  // A worktree's evidence is the worktree against its base: no scan.
  if (worktree)
    return made(std::move(task));
  // Up to kMaxScannedFiles stats: on a thread, so that a big folder holds
  // this task's answer, not batond's loop.
  std::string cwd = task.spec.cwd;
  std::string dir = executor_->TaskDir(task.id);
  auto held = std::make_shared<TaskRecord>(std::move(task));
  scan_worker_.Post([cwd, dir] { WriteBefore(cwd, dir); },
                    [held, made = std::move(made)] { made(std::move(*held)); });
}

void CheckRunner::Snapshot(const TaskRecord& task) {
  bool worktree = HasWorktree(task);
  if (task.spec.checks.empty() && !worktree)
    return;
  KeepEnvironment(task);
  if (!worktree)
    WriteBefore(task.spec.cwd, executor_->TaskDir(task.id));
}

void CheckRunner::OnTaskSpawnFailed(const TaskId& id, const Error& error) {
  environments_.erase(id);
  registry_->OnTaskSpawnFailed(id, error);
}

void CheckRunner::OnTaskExited(const TaskId& id, const ExitInfo& exit) {
  auto environment = environments_.extract(id);
  const TaskRecord* task = registry_->FindLive(id);
  if (!task || (task->spec.checks.empty() && !HasWorktree(*task)) ||
      runs_.count(id)) {
    return registry_->OnTaskExited(id, exit);
  }
  auto run = std::make_unique<Run>();
  run->task = *task;
  // A batond restarted since the task started no longer has its client's
  // environment (never stored): its own then, as for a task that came
  // without one (doc/agents.md).
  run->env = environment ? std::move(environment.mapped())
                         : SetEnvironmentEntries(ProcessEnvironment(),
                                                 TaskEnvironmentEntries(*task));
  run->exit = exit;
  runs_[id] = std::move(run);
  RunNext(id);
}

Status CheckRunner::Spawn(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env,
                          const std::string& cwd, const std::string& log,
                          std::function<void(int)> done) {
  UniqueFd log_fd(
      ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!log_fd)
    return std::unexpected(ErrnoError("open " + log, errno));
  auto pid = SpawnChild({.program = argv[0],
                         .argv = argv,
                         .env = env,
                         .cwd = cwd,
                         .stdout_fd = log_fd.get(),
                         .stderr_fd = log_fd.get()});
  if (!pid)
    return std::unexpected(pid.error());
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0));
  if (fd < 0) {
    ::waitpid(*pid, nullptr, 0);
    return std::unexpected(ErrnoError("pidfd_open", errno));
  }
  auto pidfd = std::make_shared<UniqueFd>(fd);
  return loop_->AddFd(fd, EPOLLIN, [this, pid = *pid, pidfd, done](uint32_t) {
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
  auto started =
      Spawn({"/bin/sh", "-c", checks[index]}, run.env, run.task.spec.cwd, log,
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
              result.exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                                 : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                                       : -1;
              // A check's output is shown and kept like the task's own:
              // masked first (doc/redaction.md).
              if (run.task.spec.redact)
                RedactFinishedFile(log);
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
  std::shared_ptr<Run> run = std::move(runs_.extract(id).mapped());
  // Git and a walk of the folder may take long: off the loop, each git
  // bounded by its deadline (util/git.h). The worker reads only its copy.
  auto evidence = std::make_shared<Evidence>(run->evidence);
  evidence_worker_.Post(
      [run, evidence, dir = executor_->TaskDir(id)] {
        CollectEvidence(run->task, run->env, dir, *evidence);
      },
      [this, id, run, evidence] {
        evidence->overlapping_tasks = registry_->OverlappingTasks(run->task);
        run->exit.evidence = std::move(*evidence);
        registry_->OnTaskExited(id, run->exit);
      });
}

}  // namespace baton
