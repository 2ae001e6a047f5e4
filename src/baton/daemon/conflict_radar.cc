#include "baton/daemon/conflict_radar.h"

#include <algorithm>
#include <set>

#include "baton/core/sessions.h"
#include "baton/daemon/conflict_overlaps.h"
#include "baton/daemon/worktrees.h"
#include "baton/ipc/task_text.h"
#include "baton/util/environment.h"
#include "baton/util/log.h"

namespace baton {

namespace {

// The same pairs with the same kinds and files, whenever seen.
bool SameOverlaps(const std::vector<OverlapInfo>& a,
                  const std::vector<OverlapInfo>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const OverlapInfo& x, const OverlapInfo& y) {
                      return x.tasks == y.tasks && x.kind == y.kind &&
                             x.files == y.files &&
                             x.conflict_files == y.conflict_files;
                    });
}

}  // namespace

// One round of one repository: what the loop hands the thread, and what
// the thread hands back.
struct ConflictRadar::Round {
  std::vector<Member> members;  // Oldest first: a pair's order.
  MergeCache merges;            // The repository's, then this round's.
  std::string scratch;
  std::chrono::milliseconds timeout{};
  // Per member, its snapshot or why there is none.
  std::vector<Result<WorktreeSnapshot>> snapshots;
  std::vector<OverlapInfo> found;  // Pairs whose snapshots both worked.
  std::vector<std::string> errors;
  MonoTime started;

  void Run() {
    for (const Member& member : members) {
      snapshots.push_back(
          SnapshotWorktree(member.worktree, member.env, scratch, timeout,
                           member.last ? &*member.last : nullptr));
    }
    MergeCache used;
    for (size_t i = 0; i < members.size(); ++i) {
      for (size_t j = i + 1; j < members.size(); ++j) {
        if (!snapshots[i] || !snapshots[j])
          continue;
        auto files = SharedFiles(snapshots[i]->files, snapshots[j]->files);
        if (files.empty())
          continue;
        OverlapInfo overlap{.tasks = {members[i].id, members[j].id},
                            .repo = members[i].worktree.repo,
                            .files = std::move(files)};
        MergeKey key{snapshots[i]->commit, snapshots[j]->commit};
        TrialMerge trial;
        if (auto known = merges.find(key); known != merges.end()) {
          trial = known->second;
        } else if (auto merged =
                       TrialMergeCommits(overlap.repo, key.first, key.second,
                                         members[i].env, timeout)) {
          trial = std::move(*merged);
        } else {
          // No trial merge (git older than 2.38, a deadline): what is
          // known for sure is the same files.
          errors.push_back(merged.error().message);
          found.push_back(std::move(overlap));
          continue;
        }
        if (trial.conflict) {
          overlap.kind = OverlapKind::kConflict;
          overlap.conflict_files = trial.conflict_files;
        }
        used.emplace(std::move(key), std::move(trial));
        found.push_back(std::move(overlap));
      }
    }
    merges = std::move(used);
  }
};

ConflictRadar::ConflictRadar(EventLoop* loop, const TaskRegistry* registry,
                             Options options)
    : loop_(loop),
      registry_(registry),
      options_(std::move(options)),
      pool_(std::make_unique<WorkerPool>(loop, 1,
                                         WorkerPool::AtExit::kDropQueued)) {}

ConflictRadar::~ConflictRadar() {
  pool_.reset();
  for (auto& [path, repo] : repos_) {
    if (repo.timer)
      loop_->Cancel(repo.timer);
  }
}

void ConflictRadar::Track(const TaskRecord& task) {
  if (!HasWorktree(task))
    return;
  std::string id = task.id.ToString();
  const Worktree& worktree = *task.spec.agent->worktree;
  // git as the worktree was made: the client's environment with the
  // task's entries (its PATH finds the same git).
  auto env = SetEnvironmentEntries(
      task.spec.base_env.empty() ? ProcessEnvironment() : task.spec.base_env,
      TaskEnvironmentEntries(task));
  // Tasks refused at their creation go here too, in a repository without
  // rounds.
  Prune();
  members_[id] = Member{.id = id,
                        .owner = task.spec.owner,
                        .worktree = worktree,
                        .env = RadarGitEnvironment(std::move(env)),
                        .created_ms = task.created_ms,
                        .tracked_at = std::chrono::steady_clock::now()};
  Plan(worktree.repo, options_.pause);
}

const TaskRecord* ConflictRadar::FindLive(const std::string& id) const {
  auto parsed = TaskId::Parse(id);
  return parsed ? registry_->FindLive(*parsed) : nullptr;
}

bool ConflictRadar::Running(const std::string& id) const {
  const TaskRecord* task = FindLive(id);
  return task && task->status != TaskStatus::kQueued;
}

void ConflictRadar::Plan(const std::string& repo,
                         std::chrono::milliseconds delay) {
  Repo& state = repos_[repo];
  if (state.timer || state.in_flight)
    return;
  size_t tracked = std::count_if(
      members_.begin(), members_.end(),
      [&](const auto& entry) { return entry.second.worktree.repo == repo; });
  if (tracked < 2) {
    repos_.erase(repo);
    return;
  }
  state.timer =
      loop_->Schedule(std::chrono::steady_clock::now() + delay, [this, repo] {
        repos_[repo].timer = 0;
        StartRound(repo);
      });
}

void ConflictRadar::Prune() {
  auto now = std::chrono::steady_clock::now();
  for (auto it = members_.begin(); it != members_.end();) {
    Member& member = it->second;
    bool live = FindLive(it->first) != nullptr;
    member.seen_live = member.seen_live || live;
    // Daemon::Start's create hook tracks a task before it is stored.
    bool gone =
        !live && (member.seen_live || now - member.tracked_at > kNeverLive);
    it = gone ? members_.erase(it) : std::next(it);
  }
  for (auto& [path, repo] : repos_) {
    std::erase_if(repo.overlaps, [&](const OverlapInfo& overlap) {
      return !members_.contains(overlap.tasks[0]) ||
             !members_.contains(overlap.tasks[1]);
    });
  }
}

void ConflictRadar::StartRound(const std::string& repo) {
  Prune();
  auto round = std::make_shared<Round>();
  for (const auto& [id, member] : members_) {
    if (member.worktree.repo == repo && Running(id))
      round->members.push_back(member);
  }
  if (round->members.size() < 2) {
    // Held tasks may start later: look again then, cheaply (no git).
    return Plan(repo, options_.pause);
  }
  std::sort(round->members.begin(), round->members.end(),
            [](const Member& a, const Member& b) {
              return std::tie(a.created_ms, a.id) <
                     std::tie(b.created_ms, b.id);
            });
  Repo& state = repos_[repo];
  state.in_flight = true;
  round->merges = state.merges;
  round->scratch = options_.scratch;
  round->timeout = options_.git_timeout;
  round->started = std::chrono::steady_clock::now();
  pool_->Post([round] { round->Run(); },
              [this, repo, round] { EndRound(repo, *round); });
}

void ConflictRadar::EndRound(const std::string& repo, Round& round) {
  ++rounds_;
  Repo& state = repos_[repo];
  state.in_flight = false;
  state.merges = std::move(round.merges);
  Prune();
  std::set<std::string> failed;
  for (size_t i = 0; i < round.members.size(); ++i) {
    auto member = members_.find(round.members[i].id);
    if (round.snapshots[i]) {
      if (member != members_.end())
        member->second.last = *round.snapshots[i];
      continue;
    }
    failed.insert(round.members[i].id);
    if (member != members_.end() && !std::exchange(member->second.warned, true))
      BATON_LOG_WARN("conflict radar: {}", round.snapshots[i].error().message);
  }
  // Once per repository: a git without merge-tree --write-tree fails
  // every round alike.
  if (!round.errors.empty() && !std::exchange(state.merge_warned, true)) {
    BATON_LOG_WARN(
        "conflict radar: {}; its overlaps are told as the same "
        "files only",
        round.errors.front());
  }
  auto live = [&](const OverlapInfo& overlap) {
    return members_.contains(overlap.tasks[0]) &&
           members_.contains(overlap.tasks[1]);
  };
  std::erase_if(round.found, [&](const OverlapInfo& o) { return !live(o); });
  auto reconciled =
      ReconcileOverlaps(state.overlaps, std::move(round.found), WallMillis());
  // A pair with a worker git could not read this round stays as it was.
  for (const OverlapInfo& old : state.overlaps) {
    if (failed.contains(old.tasks[0]) || failed.contains(old.tasks[1]))
      reconciled.current.push_back(old);
  }
  std::sort(reconciled.current.begin(), reconciled.current.end(),
            [](const OverlapInfo& a, const OverlapInfo& b) {
              return std::tie(a.since_ms, a.tasks) <
                     std::tie(b.since_ms, b.tasks);
            });
  if (!SameOverlaps(state.overlaps, reconciled.current))
    moved_ = true;
  state.overlaps = std::move(reconciled.current);
  for (const OverlapInfo& overlap : reconciled.news)
    Tell(overlap);
  // A round that took long waits longer: at most a fifth of one core.
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - round.started);
  Plan(repo, std::max(options_.pause, 4 * took));
}

void ConflictRadar::Tell(const OverlapInfo& overlap) {
  std::string text = OverlapText(overlap);
  std::set<std::string> told;
  for (const std::string& id : overlap.tasks) {
    auto member = members_.find(id);
    // An unowned task has no one to tell; one owner of both, once.
    if (member == members_.end() || member->second.owner.empty() ||
        !told.insert(member->second.owner).second) {
      continue;
    }
    auto task = TaskId::Parse(id);
    if (!task)
      continue;
    auto& queue = notices_[member->second.owner];
    if (queue.size() >= kMaxNoticesPerSession)
      queue.erase(queue.begin());
    queue.push_back({*task, overlap, text});
  }
}

std::vector<ConflictRadar::RadarNotice> ConflictRadar::TakeNotices(
    const std::string& session) {
  auto it = notices_.find(session);
  if (it == notices_.end())
    return {};
  auto taken = std::move(it->second);
  notices_.erase(it);
  return taken;
}

std::vector<OverlapInfo> ConflictRadar::Overlaps(
    const std::string& session, const std::string& task) const {
  // Tasks that ended since the last round are pruned at the next one.
  auto live = [&](const OverlapInfo& overlap) {
    return FindLive(overlap.tasks[0]) && FindLive(overlap.tasks[1]);
  };
  auto sees = [&](const std::string& id) {
    auto member = members_.find(id);
    return member != members_.end() && SeesOwner(session, member->second.owner);
  };
  std::vector<OverlapInfo> overlaps;
  for (const auto& [path, repo] : repos_) {
    for (const OverlapInfo& overlap : repo.overlaps) {
      if (!task.empty() && overlap.tasks[0] != task && overlap.tasks[1] != task)
        continue;
      if (live(overlap) && (sees(overlap.tasks[0]) || sees(overlap.tasks[1])))
        overlaps.push_back(overlap);
    }
  }
  std::sort(overlaps.begin(), overlaps.end(),
            [](const OverlapInfo& a, const OverlapInfo& b) {
              return std::tie(a.since_ms, a.tasks) <
                     std::tie(b.since_ms, b.tasks);
            });
  return overlaps;
}

int64_t ConflictRadar::Watched() const {
  std::map<std::string, int64_t> per_repo;
  for (const auto& [id, member] : members_) {
    if (FindLive(id))
      ++per_repo[member.worktree.repo];
  }
  int64_t watched = 0;
  for (const auto& [repo, count] : per_repo) {
    if (count >= 2)
      watched += count;
  }
  return watched;
}

}  // namespace baton
