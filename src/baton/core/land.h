// The merge queue's entries (doc/land.md): a finished worktree worker's
// branch, queued to land on a target branch of its repository. batond
// stores each (store/, schema 10) and shows it as it is to clients.
#ifndef BATON_CORE_LAND_H_
#define BATON_CORE_LAND_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/util/json_fields.h"

namespace baton {

// queued: waits its turn (or, with `reason`, for something to change);
// testing: brought onto the target in a scratch worktree, its check runs;
// landed: the target holds it (`result`); failed: a conflict or a red
// check (`reason`, `output`). landed and failed are final.
enum class LandState { kQueued, kTesting, kLanded, kFailed };

template <>
struct JsonEnum<LandState> {
  static constexpr std::pair<LandState, std::string_view> kNames[] = {
      {LandState::kQueued, "queued"},
      {LandState::kTesting, "testing"},
      {LandState::kLanded, "landed"},
      {LandState::kFailed, "failed"}};
};

inline bool IsFinal(LandState state) {
  return state == LandState::kLanded || state == LandState::kFailed;
}

struct LandEntry {
  int64_t id = 0;    // Its place in every queue, from 1, in order.
  std::string task;  // The worker whose branch it is.
  std::string owner;
  std::string repo;    // The repository's top folder.
  std::string branch;  // "baton/<task>".
  std::string head;    // The branch's commit when it was queued.
  std::string target;  // A branch name ("main"), without refs/heads/.
  std::string check;   // --check; "" = the repository's (doc/land.md).
  std::string onto;    // The target's commit it was last tested on.
  std::string result;  // landed: the target's commit that holds it.
  std::string reason;  // failed: why; queued: what it waits for.
  std::string output;  // failed: the check's output's tail, or the hunks.
  std::vector<std::string> files;  // failed by a conflict: its files.
  LandState state = LandState::kQueued;
  int64_t batch = 0;  // The check runs it took part in.
  int64_t queued_ms = 0;
  int64_t ended_ms = 0;

  template <class V>
  void Fields(V& v) {
    v("id", id, {.doc = "its place in the queues, from 1"});
    v("task", task, {.doc = "the worker whose branch lands"});
    v("owner", owner);
    v("repo", repo, {.doc = "the repository's top folder"});
    v("branch", branch, {.doc = "the worker's branch, `baton/<task>`"});
    v("head", head, {.doc = "the branch's commit when it was queued"});
    v("target", target, {.doc = "the branch it lands on"});
    v("check", check,
      {.omit_when_empty = true,
       .doc = "the land check it was given (`--check`); else the "
              "repository's `baton.landCheck`"});
    v("state", state,
      {.doc = "`queued`, `testing`, `landed` or `failed` (doc/land.md)"});
    v("onto", onto,
      {.omit_when_empty = true,
       .doc = "the target's commit it was last brought onto"});
    v("result", result,
      {.omit_when_empty = true,
       .doc = "landed: the target's commit that holds it"});
    v("reason", reason,
      {.omit_when_empty = true,
       .doc = "failed: why; queued: what it waits for"});
    v("output", output,
      {.omit_when_empty = true,
       .doc = "failed: the check's output's tail, or the conflict's hunks"});
    v("files", files,
      {.omit_when_empty = true, .doc = "failed by a conflict: its files"});
    v("runs", batch, {.doc = "the check runs it took part in"});
    v("queued_ms", queued_ms);
    v("ended_ms", ended_ms, {.doc = "0 until landed or failed"});
  }
};

}  // namespace baton

#endif  // BATON_CORE_LAND_H_
