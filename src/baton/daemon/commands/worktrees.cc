// Agents' own worktrees in batond (doc/agents.md, "Worktrees"): made, or
// taken over by a resume, before a task is stored; and the `worktrees`
// request: the worktrees of the session's agent tasks as git tells them
// now, and, with `clean`, the removal of those that lose nothing. git runs
// on the worktree worker, off the loop, one request's tasks after the
// other; the reply goes out when it is done.
#include "baton/daemon/worktrees.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "baton/daemon/daemon.h"
#include "baton/util/environment.h"

namespace baton {

void Daemon::PrepareThenStart(TaskRecord task,
                              TaskRegistry::StartCallback made) {
  if (!task.spec.agent || !task.spec.agent->worktree)
    return checks_->TakeBefore(std::move(task), std::move(made));
  struct Job {
    TaskRecord task;
    std::vector<std::string> env;
    Status status;
  };
  auto job = std::make_shared<Job>();
  job->env = SetEnvironmentEntries(
      task.spec.base_env.empty() ? ProcessEnvironment() : task.spec.base_env,
      TaskEnvironmentEntries(task));
  job->task = std::move(task);
  worktree_worker_->Post(
      [job, root = options_.paths.home + "/worktrees"] {
        job->status = PrepareWorktree(root, job->env, job->task);
      },
      [this, job, made = std::move(made)] {
        if (!job->status)
          return made(std::unexpected(job->status.error()));
        radar_->Track(job->task);  // Watched once it is stored and runs.
        checks_->TakeBefore(std::move(job->task), made);
      });
}

void Daemon::Handle(Connection& connection, const WorktreesRequest& request,
                    Session session, Reply reply) {
  auto tasks = registry_->List(session, /*all=*/true, nullptr);
  if (!tasks)
    return reply(std::unexpected(tasks.error()));
  std::erase_if(*tasks,
                [](const TaskRecord& task) { return !HasWorktree(task); });
  for (const std::string& id : request.tasks) {
    if (std::none_of(tasks->begin(), tasks->end(), [&](const TaskRecord& t) {
          return t.id.ToString() == id;
        })) {
      return reply(MakeError(ErrorCode::kNotFound,
                             fmt::format("{} has no worktree among this "
                                         "session's tasks (baton worktree ls "
                                         "lists them)",
                                         id)));
    }
  }
  // A resume goes on in the worktree of the task it resumes: that one's
  // stays while the resume is live.
  std::map<std::string, std::string> live_in;  // Path -> the live task.
  for (const TaskRecord& task : *tasks) {
    if (!IsTerminal(task.status))
      live_in[task.spec.agent->worktree->path] = task.id.ToString();
  }
  struct Job {
    std::vector<TaskRecord> tasks;
    std::vector<std::string> env;
    WorktreesReply answer;
  };
  // Who asked, taken now: the connection may be gone when git is done.
  AuditRecord audit = AuditOf(connection, session, "worktree_remove");
  auto job = std::make_shared<Job>();
  job->tasks = std::move(*tasks);
  job->env = request.base_env ? *request.base_env : ProcessEnvironment();
  worktree_worker_->Post(
      [job, request, live_in = std::move(live_in)] {
        for (const TaskRecord& task : job->tasks) {
          bool named = std::find(request.tasks.begin(), request.tasks.end(),
                                 task.id.ToString()) != request.tasks.end();
          if (!request.tasks.empty() && !named)
            continue;
          WorktreeInfo info = InspectWorktree(task, job->env);
          if (request.clean) {
            auto user = live_in.find(task.spec.agent->worktree->path);
            std::string used_by =
                user == live_in.end() || user->second == info.task
                    ? ""
                    : user->second;
            CleanWorktree(task, named, request.force, used_by, job->env, info);
          }
          job->answer.worktrees.push_back(std::move(info));
        }
      },
      [this, job, audit, reply = std::move(reply)] {
        // A removal is done whatever the next commit does: its record is
        // not taken back with the batch (doc/audit.md).
        for (const WorktreeInfo& info : job->answer.worktrees) {
          if (info.outcome != "removed")
            continue;
          AuditRecord record = audit;
          record.task = info.task;
          record.detail = info.note.empty()
                              ? info.path
                              : fmt::format("{}; {}", info.path, info.note);
          registry_->audit().Record(std::move(record), /*with_batch=*/false);
        }
        reply(std::move(job->answer));
      });
}

}  // namespace baton
