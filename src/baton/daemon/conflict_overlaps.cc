#include "baton/daemon/conflict_overlaps.h"

#include <algorithm>
#include <iterator>

namespace baton {
namespace {

bool SamePair(const OverlapInfo& a, const OverlapInfo& b) {
  return a.tasks == b.tasks;
}

}  // namespace

std::vector<std::string> SharedFiles(const std::vector<std::string>& a,
                                     const std::vector<std::string>& b) {
  std::vector<std::string> shared;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(),
                        std::back_inserter(shared));
  return shared;
}

ReconciledOverlaps ReconcileOverlaps(const std::vector<OverlapInfo>& before,
                                     std::vector<OverlapInfo> found,
                                     int64_t now_ms) {
  ReconciledOverlaps result;
  for (OverlapInfo& overlap : found) {
    overlap.checked_ms = now_ms;
    auto known = std::find_if(
        before.begin(), before.end(),
        [&](const OverlapInfo& old) { return SamePair(old, overlap); });
    if (known != before.end() && known->kind == overlap.kind) {
      overlap.since_ms = known->since_ms;
    } else {
      overlap.since_ms = now_ms;
      bool worse =
          known == before.end() || (known->kind == OverlapKind::kSameFile &&
                                    overlap.kind == OverlapKind::kConflict);
      if (worse)
        result.news.push_back(overlap);
    }
    result.current.push_back(std::move(overlap));
  }
  return result;
}

}  // namespace baton
