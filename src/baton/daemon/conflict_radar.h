// The conflict radar (doc/conflicts.md): while two or more live agent
// workers run in worktrees of one repository, batond snapshots each
// worktree (committed or not, without touching it), sees which files each
// changed against its base, and trial-merges every pair that changed the
// same files. A new overlap, or one that became a textual conflict, is a
// notice to the owners of both tasks; `conflicts` lists the current ones.
//
// Costs: git runs on a WorkerPool thread of the radar's own, never on
// batond's loop, each git with a deadline; one round per repository at a
// time, the next at least `pause` after it (longer when a round takes
// long: a radar that spends at most a fifth of a core); nothing at all for
// a repository with fewer than two running worktree tasks.
#ifndef BATON_DAEMON_CONFLICT_RADAR_H_
#define BATON_DAEMON_CONFLICT_RADAR_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/task_registry.h"
#include "baton/daemon/conflict_git.h"
#include "baton/ipc/messages.h"
#include "baton/loop/event_loop.h"
#include "baton/loop/worker_pool.h"

namespace baton {

class ConflictRadar {
 public:
  struct Options {
    std::string scratch;  // A folder of batond's for the index copies.
    std::chrono::milliseconds pause{1000};
    std::chrono::milliseconds git_timeout{10'000};
  };
  // What one owner is told of one overlap: `task` is the owner's task of
  // the pair (the older one when it owns both).
  struct RadarNotice {
    TaskId task;
    OverlapInfo overlap;
    std::string text;
  };

  // Borrows both; they must outlive it.
  ConflictRadar(EventLoop* loop, const TaskRegistry* registry, Options options);
  // Cancels its timers; waits for a round's git to end (its result is
  // dropped).
  ~ConflictRadar();
  ConflictRadar(const ConflictRadar&) = delete;
  ConflictRadar& operator=(const ConflictRadar&) = delete;

  // A task was created (or recovered): watched while it lives, when it has
  // a worktree of its own; ignored otherwise.
  void Track(const TaskRecord& task);
  // The overlap notices for `session`, each once.
  std::vector<RadarNotice> TakeNotices(const std::string& session);
  // The current overlaps `session` sees (it sees one of the two tasks),
  // only those of `task` when it is not empty; oldest first.
  std::vector<OverlapInfo> Overlaps(const std::string& session,
                                    const std::string& task) const;
  // Live worktree tasks that share a repository with another.
  int64_t Watched() const;
  // Rounds done since it was made.
  int64_t rounds() const { return rounds_; }
  // Whether the overlaps changed (one came, went, or changed its kind or
  // files) since the last call: the board's `watch` looks again.
  bool TakeMoved() { return std::exchange(moved_, false); }

  // Notices kept per session for a session that never reads them.
  static constexpr size_t kMaxNoticesPerSession = 256;

 private:
  struct Member {
    std::string id;
    std::string owner;
    Worktree worktree;
    std::vector<std::string> env;  // git's (RadarGitEnvironment).
    int64_t created_ms = 0;
    bool warned = false;  // Its git failed once: logged.
    // Tracked before it is stored: forgotten once it was live and is no
    // more, or when it never became live (refused at its creation).
    bool seen_live = false;
    MonoTime tracked_at;
    // The last round's snapshot: an unchanged worktree costs three gits.
    std::optional<WorktreeSnapshot> last;
  };
  // A pair's trial merge, by its two snapshots' commits.
  using MergeKey = std::pair<std::string, std::string>;
  using MergeCache = std::map<MergeKey, TrialMerge>;
  struct Repo {
    TimerId timer = 0;
    bool in_flight = false;
    std::vector<OverlapInfo> overlaps;
    MergeCache merges;          // Of the last round: one per pair at most.
    bool merge_warned = false;  // A trial merge failed once: logged.
  };
  struct Round;

  // Plans the repository's next round in `delay`, unless one is planned or
  // runs, or it has fewer than two tracked tasks.
  void Plan(const std::string& repo, std::chrono::milliseconds delay);
  void StartRound(const std::string& repo);
  void EndRound(const std::string& repo, Round& round);
  // Forgets ended tasks (and those refused at their creation, after
  // kNeverLive), and their overlaps.
  void Prune();
  static constexpr std::chrono::seconds kNeverLive{60};
  // The live task `id`; nullptr once it ended.
  const TaskRecord* FindLive(const std::string& id) const;
  // Whether a tracked task takes part in a round now: live and started.
  bool Running(const std::string& id) const;
  void Tell(const OverlapInfo& overlap);

  EventLoop* loop_;
  const TaskRegistry* registry_;
  Options options_;
  std::map<std::string, Member> members_;  // By task id.
  std::map<std::string, Repo> repos_;      // By repository top folder.
  std::map<std::string, std::vector<RadarNotice>> notices_;  // By owner.
  int64_t rounds_ = 0;
  bool moved_ = false;
  // Last: gone first, before what its rounds' results would reach.
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace baton

#endif  // BATON_DAEMON_CONFLICT_RADAR_H_
