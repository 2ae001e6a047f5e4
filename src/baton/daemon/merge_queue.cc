#include "baton/daemon/merge_queue.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "baton/daemon/worktrees.h"
#include "baton/util/log.h"

namespace baton {

// What one job of a target does off the loop, and what it found.
struct MergeQueue::Job {
  enum class Kind {
    kNothing,   // No entry to try (all finished meanwhile).
    kError,     // git failed: `error`.
    kWait,      // The target's checkout has changes: `reason`.
    kKnownRed,  // The one suspect left is red on this tip: no run.
    kConflict,  // The first entry conflicts on the tip.
    kRed,       // The batch (a prefix of it at a conflict) is red.
    kMoved,     // Green, but the target moved meanwhile: try again.
    kLanded,    // Green, and the target moved to its last result.
  };
  // In: a copy of the target's state and its queued entries, in order.
  std::string repo;
  std::string target;
  std::vector<LandEntry> queued;
  Target state;
  LandGit git;
  size_t max_batch = 16;
  CrashPoints* crash_points = nullptr;
  // Out.
  Kind kind = Kind::kNothing;
  std::string tip;             // The target's tip it worked on.
  std::vector<int64_t> batch;  // The entries it tried, in order.
  bool from_suspect = false;   // The batch is a half of the suspects.
  Trial trial;
  std::string error;
  std::string reason;

  void Run();
};

void MergeQueue::Job::Run() {
  auto settings = ReadLandSettings(repo, git);
  if (!settings) {
    kind = Kind::kError;
    error = settings.error().message;
    batch.push_back(queued.front().id);
    return;
  }
  auto current = BranchTip(repo, target, git);
  if (!current) {
    kind = Kind::kError;
    error = current.error().message;
    batch.push_back(queued.front().id);
    return;
  }
  tip = *current;
  auto checkout = FindCheckout(repo, target, git);
  if (checkout && *checkout && (*checkout)->dirty) {
    kind = Kind::kWait;
    reason = fmt::format(
        "waits: {} is checked out in {} with uncommitted changes; commit or "
        "stash them there and it goes on",
        target, (*checkout)->path);
    return;
  }
  // The suspects, when they were red together on this very tip: the
  // first half of them now (or the last one, known red without a run).
  if (!state.suspect.empty() && state.suspect_tip == tip) {
    if (state.suspect.size() == 1) {
      kind = Kind::kKnownRed;
      batch = state.suspect;
      return;
    }
    from_suspect = true;
    batch.assign(state.suspect.begin(),
                 state.suspect.begin() + (state.suspect.size() + 1) / 2);
  } else {
    state.suspect.clear();
    // Entries with the same check as the first go together.
    for (const LandEntry& entry : queued) {
      if (entry.check != queued.front().check || batch.size() >= max_batch)
        break;
      batch.push_back(entry.id);
    }
  }
  std::vector<TrialBranch> branches;
  for (int64_t id : batch) {
    auto entry = std::find_if(queued.begin(), queued.end(),
                              [&](const LandEntry& e) { return e.id == id; });
    branches.push_back({.head = entry->head, .name = entry->branch});
  }
  if (!queued.front().check.empty())
    settings->check = queued.front().check;
  auto trial = TryBatch(repo, tip, branches, *settings, git);
  if (!trial) {
    kind = Kind::kError;
    error = trial.error().message;
    batch.resize(1);
    return;
  }
  this->trial = std::move(*trial);
  if (this->trial.conflict_at == 0u) {
    kind = Kind::kConflict;
    batch.resize(1);
    return;
  }
  batch.resize(this->trial.results.size());
  if (!this->trial.green) {
    kind = Kind::kRed;
    return;
  }
  crash_points->Pass("land-before-move");
  auto moved = MoveTarget(repo, target, tip, this->trial.results.back(), git);
  if (!moved) {
    kind = Kind::kError;
    error = moved.error().message;
    return;
  }
  crash_points->Pass("land-after-move");
  kind = *moved ? Kind::kLanded : Kind::kMoved;
}

MergeQueue::MergeQueue(EventLoop* loop, TaskStore* store, const Clock* clock,
                       CrashPoints* crash_points, Options options, Audit audit)
    : loop_(loop),
      store_(store),
      clock_(clock),
      crash_points_(crash_points),
      options_(std::move(options)),
      audit_(std::move(audit)),
      pool_(std::make_unique<WorkerPool>(loop, 1,
                                         WorkerPool::AtExit::kDropQueued)) {}

MergeQueue::~MergeQueue() {
  pool_.reset();
  for (auto& [key, target] : targets_) {
    if (target.timer)
      loop_->Cancel(target.timer);
  }
}

Status MergeQueue::Load() {
  auto stored = store_->LoadLands(options_.finished_kept);
  if (!stored)
    return std::unexpected(stored.error());
  std::set<Key> keys;
  for (LandEntry& entry : *stored) {
    next_id_ = std::max(next_id_, entry.id + 1);
    if (entry.state == LandState::kTesting) {
      // batond died while it was tried: the target is before it or after
      // it (a compare-and-swap); tried again, it lands at once if its
      // changes are on the target already.
      entry.state = LandState::kQueued;
      entry.reason = "tried again: batond stopped while it was tested";
      Put(entry);
    }
    if (!IsFinal(entry.state))
      keys.insert({entry.repo, entry.target});
    entries_[entry.id] = std::move(entry);
  }
  for (const Key& key : keys)
    Plan(key);
  return {};
}

void MergeQueue::Add(std::vector<TaskRecord> tasks, const std::string& onto,
                     const std::string& check, Added done) {
  struct Checked {
    std::vector<TaskRecord> tasks;
    std::vector<LandEntry> entries;
    std::optional<Error> refused;
  };
  auto job = std::make_shared<Checked>();
  job->tasks = std::move(tasks);
  LandGit git = options_.git;
  pool_->Post(
      [job, git, onto, check] {
        for (const TaskRecord& task : job->tasks) {
          const Worktree& worktree = *task.spec.agent->worktree;
          std::string id = task.id.ToString();
          auto refuse = [&](std::string why) {
            job->refused = Error{ErrorCode::kInvalidArgument,
                                 fmt::format("{} cannot land: {}", id, why)};
          };
          auto head = BranchTip(worktree.repo, worktree.branch, git);
          if (!head)
            return refuse(fmt::format("its branch {} is gone from {}",
                                      worktree.branch, worktree.repo));
          // Where it was made from, else (a detached HEAD then, or a task
          // from before that was recorded) what is checked out now.
          std::string target = onto.empty() ? worktree.from : onto;
          if (target.empty()) {
            auto branch = CheckedOutBranch(worktree.repo, git);
            if (!branch)
              return refuse(branch.error().message);
            if (branch->empty()) {
              return refuse(fmt::format(
                  "HEAD of {} (where its worktree was made) is detached; "
                  "name the target: baton land --onto BRANCH {}",
                  worktree.repo, id));
            }
            target = *branch;
          }
          auto tip = BranchTip(worktree.repo, target, git);
          if (!tip) {
            return refuse(
                fmt::format("{} has no branch {} (--onto names a "
                            "branch of the repository)",
                            worktree.repo, target));
          }
          auto ahead = CommitsAhead(worktree.repo, *head, *tip, git);
          if (!ahead)
            return refuse(ahead.error().message);
          if (*ahead == 0) {
            return refuse(fmt::format(
                "{} has no commit that {} lacks (changes left uncommitted "
                "in {} do not land: commit them there)",
                worktree.branch, target, worktree.path));
          }
          if (auto settings = ReadLandSettings(worktree.repo, git); !settings)
            return refuse(settings.error().message);
          job->entries.push_back(LandEntry{.task = id,
                                           .owner = task.spec.owner,
                                           .repo = worktree.repo,
                                           .branch = worktree.branch,
                                           .head = *head,
                                           .target = target,
                                           .check = check});
        }
      },
      [this, job, done = std::move(done)] {
        if (job->refused)
          return done(std::unexpected(*job->refused));
        std::set<Key> keys;
        for (LandEntry& entry : job->entries) {
          // Queued meanwhile by another request.
          if (const LandEntry* already = Unfinished(entry.task)) {
            return done(MakeError(
                ErrorCode::kInvalidArgument,
                fmt::format("{} is in the merge queue already (entry {}, {})",
                            entry.task, already->id,
                            EnumName(already->state))));
          }
        }
        for (LandEntry& entry : job->entries) {
          entry.id = next_id_++;
          entry.queued_ms = clock_->WallNowMillis();
          Put(entry);
          entries_[entry.id] = entry;
          keys.insert({entry.repo, entry.target});
        }
        for (const Key& key : keys)
          Plan(key);
        done(std::move(job->entries));
      });
}

std::vector<LandEntry> MergeQueue::Entries() const {
  std::vector<LandEntry> all;
  for (const auto& [id, entry] : entries_)
    all.push_back(entry);
  return all;
}

const LandEntry* MergeQueue::Unfinished(const std::string& task) const {
  for (const auto& [id, entry] : entries_) {
    if (entry.task == task && !IsFinal(entry.state))
      return &entry;
  }
  return nullptr;
}

void MergeQueue::Rewrite() {
  for (const auto& [id, entry] : entries_)
    (void)store_->PutLand(entry);
}

void MergeQueue::Put(const LandEntry& entry) {
  if (auto put = store_->PutLand(entry); !put)
    BATON_LOG_ERROR("merge queue: entry {}: {}", entry.id, put.error().message);
}

void MergeQueue::Plan(const Key& key) {
  Target& target = targets_[key];
  if (target.in_flight || target.timer)
    return;
  auto job = std::make_shared<Job>();
  for (const auto& [id, entry] : entries_) {
    if (entry.state == LandState::kQueued && entry.repo == key.first &&
        entry.target == key.second) {
      job->queued.push_back(entry);
    }
  }
  if (job->queued.empty())
    return;
  // Suspects are queued entries only (one may have been taken meanwhile).
  for (int64_t id : target.suspect) {
    auto it = entries_.find(id);
    if (it == entries_.end() || it->second.state != LandState::kQueued) {
      target.suspect.clear();
      break;
    }
  }
  job->repo = key.first;
  job->target = key.second;
  job->state = target;
  job->git = options_.git;
  job->max_batch = options_.max_batch;
  job->crash_points = crash_points_;
  target.in_flight = true;
  // Those it will likely try are `testing` (the job decides, once it read
  // the tip); those it does not try are queued again when it is done.
  std::vector<int64_t> likely;
  if (!target.suspect.empty()) {
    likely.assign(target.suspect.begin(),
                  target.suspect.begin() + (target.suspect.size() + 1) / 2);
  } else {
    for (const LandEntry& entry : job->queued) {
      if (entry.check != job->queued.front().check ||
          likely.size() >= options_.max_batch) {
        break;
      }
      likely.push_back(entry.id);
    }
  }
  for (int64_t id : likely) {
    LandEntry& stored = entries_[id];
    stored.state = LandState::kTesting;
    stored.reason.clear();
    Put(stored);
  }
  pool_->Post([job] { job->Run(); }, [this, key, job] { Finish(key, *job); });
}

void MergeQueue::Finish(const Key& key, Job& job) {
  Target& target = targets_[key];
  target.in_flight = false;
  // An entry of the job that is still unfinished (one may have ended
  // meanwhile: only unfinished ones are touched).
  auto live = [&](int64_t id) -> LandEntry* {
    auto it = entries_.find(id);
    return it == entries_.end() || IsFinal(it->second.state) ? nullptr
                                                             : &it->second;
  };
  if (job.trial.checked)
    ++check_runs_;
  for (int64_t id : job.batch) {
    if (LandEntry* entry = live(id); entry && job.trial.checked) {
      ++entry->batch;
      Put(*entry);
    }
  }
  std::chrono::milliseconds next{0};
  switch (job.kind) {
    case Job::Kind::kNothing:
      break;
    case Job::Kind::kError:
      target.suspect.clear();
      for (int64_t id : job.batch) {
        if (LandEntry* entry = live(id))
          Fail(*entry, "git failed: " + job.error, "");
      }
      break;
    case Job::Kind::kWait:
      for (auto& [id, entry] : entries_) {
        if (!IsFinal(entry.state) && entry.repo == key.first &&
            entry.target == key.second && entry.reason != job.reason) {
          entry.reason = job.reason;
          Put(entry);
        }
      }
      next = options_.wait_retry;
      break;
    case Job::Kind::kKnownRed:
      if (LandEntry* entry = live(job.batch.front())) {
        Fail(*entry,
             fmt::format("its land check failed on {} (found by splitting "
                         "a red batch)",
                         job.target),
             target.suspect_output);
      }
      target.suspect.clear();
      break;
    case Job::Kind::kConflict:
      if (LandEntry* entry = live(job.batch.front())) {
        Fail(*entry,
             fmt::format("conflict with {} in {}", job.target,
                         fmt::join(job.trial.conflict_files, ", ")),
             job.trial.conflict_hunks, job.trial.conflict_files);
      }
      target.suspect.clear();
      break;
    case Job::Kind::kRed:
      if (job.batch.size() == 1) {
        if (LandEntry* entry = live(job.batch.front())) {
          Fail(*entry, fmt::format("its land check failed on {}", job.target),
               job.trial.output);
        }
        // Red alone: the suspects after it are not known red any more
        // (it may have been the whole cause); they go on afresh.
        target.suspect.clear();
      } else {
        target.suspect = job.batch;
        target.suspect_tip = job.tip;
        target.suspect_output = job.trial.output;
      }
      break;
    case Job::Kind::kMoved:
      target.suspect.clear();
      break;
    case Job::Kind::kLanded:
      for (size_t i = 0; i < job.batch.size(); ++i) {
        if (LandEntry* entry = live(job.batch[i]))
          Land(*entry, job.tip, job.trial.results[i]);
      }
      if (job.from_suspect) {
        // The rest of the suspects, on the new tip, make the very tree
        // that was red: known red, split again.
        target.suspect.erase(target.suspect.begin(),
                             target.suspect.begin() + job.batch.size());
        target.suspect_tip = job.trial.results.back();
      } else {
        target.suspect.clear();
      }
      break;
  }
  // What it did not land or fail waits again (a red batch's entries as
  // suspects, those it did not try, all of them when the target moved).
  for (auto& [id, entry] : entries_) {
    if (entry.state == LandState::kTesting && entry.repo == key.first &&
        entry.target == key.second) {
      entry.state = LandState::kQueued;
      Put(entry);
    }
  }
  if (next.count() > 0) {
    target.timer =
        loop_->Schedule(std::chrono::steady_clock::now() + next, [this, key] {
          targets_[key].timer = 0;
          Plan(key);
        });
    return;
  }
  Plan(key);
}

void MergeQueue::Land(LandEntry& entry, const std::string& onto,
                      std::string result) {
  entry.state = LandState::kLanded;
  entry.onto = onto;
  entry.reason = result == onto ? fmt::format("its changes were on {} already",
                                              entry.target)
                                : "";
  entry.result = std::move(result);
  entry.ended_ms = clock_->WallNowMillis();
  Put(entry);
  Record(entry, "landed",
         fmt::format("{} onto {} at {}", entry.branch, entry.target,
                     entry.result.substr(0, 12)));
}

void MergeQueue::Fail(LandEntry& entry, std::string reason, std::string output,
                      std::vector<std::string> files) {
  entry.state = LandState::kFailed;
  entry.reason = std::move(reason);
  entry.output = std::move(output);
  entry.files = std::move(files);
  entry.ended_ms = clock_->WallNowMillis();
  Put(entry);
  Record(entry, "land_failed", entry.reason);
}

void MergeQueue::Record(const LandEntry& entry, std::string action,
                        std::string detail) {
  audit_(AuditRecord{.action = std::move(action),
                     .task = entry.task,
                     .session = entry.owner,
                     .detail = std::move(detail)});
}

}  // namespace baton
