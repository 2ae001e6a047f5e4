// The conflict radar's logic, without git or a loop (doc/conflicts.md):
// which files two workers both changed, which overlaps of a round are
// news (new, or a same-file overlap that became a conflict); their words
// are ipc/task_text.h's OverlapText. daemon/conflict_radar.h runs the
// rounds.
#ifndef BATON_DAEMON_CONFLICT_OVERLAPS_H_
#define BATON_DAEMON_CONFLICT_OVERLAPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "baton/ipc/messages.h"

namespace baton {

// The paths in both sorted lists `a` and `b`, sorted.
std::vector<std::string> SharedFiles(const std::vector<std::string>& a,
                                     const std::vector<std::string>& b);

// The overlaps a round found (`found`, each with its kind and files), set
// against those known before it (`before`), for one repository.
struct ReconciledOverlaps {
  // `found`, each keeping its `since_ms` from `before` when its kind is
  // unchanged; `checked_ms` is `now_ms`.
  std::vector<OverlapInfo> current;
  // What the owners are told: overlaps not in `before`, and those that
  // were `same_file` and are a `conflict` now. A conflict that became a
  // same-file overlap, or more files of the same kind, is not news: the
  // owners were told of the pair already, and `conflicts` shows the rest.
  std::vector<OverlapInfo> news;
};
ReconciledOverlaps ReconcileOverlaps(const std::vector<OverlapInfo>& before,
                                     std::vector<OverlapInfo> found,
                                     int64_t now_ms);

}  // namespace baton

#endif  // BATON_DAEMON_CONFLICT_OVERLAPS_H_
