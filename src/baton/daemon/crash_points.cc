#include "baton/daemon/crash_points.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>

#include "baton/util/log.h"

namespace baton {
namespace {

constexpr std::array<std::string_view, 6> kPoints = {
    "before-commit", "after-commit",     "after-flush",
    "after-reply",   "land-before-move", "land-after-move"};

}  // namespace

Result<CrashPoints> CrashPoints::FromEnvironment() {
  const char* spec = std::getenv("BATON_CRASH_AT");
  if (!spec || !*spec)
    return CrashPoints{};
  return Parse(spec);
}

Result<CrashPoints> CrashPoints::Parse(std::string_view spec) {
  auto bad = [&] {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("BATON_CRASH_AT='{}' is not <point>:<n>, with a point of "
                    "before-commit, after-commit, after-flush, after-reply, "
                    "land-before-move, land-after-move and n from 1 (e.g. "
                    "after-commit:2)",
                    spec));
  };
  size_t colon = spec.rfind(':');
  if (colon == std::string_view::npos)
    return bad();
  std::string_view point = spec.substr(0, colon);
  std::string_view count = spec.substr(colon + 1);
  CrashPoints points;
  auto [end, ec] =
      std::from_chars(count.data(), count.data() + count.size(), points.at_);
  if (ec != std::errc() || end != count.data() + count.size() ||
      points.at_ < 1) {
    return bad();
  }
  if (std::ranges::find(kPoints, point) == kPoints.end())
    return bad();
  points.point_ = point;
  return points;
}

void CrashPoints::Pass(std::string_view point) {
  if (point_.empty() || point != point_)
    return;
  if (++passed_ < at_)
    return;
  BATON_LOG_WARN("BATON_CRASH_AT={}:{}: dying here, as a kill -9 would", point_,
                 at_);
  ::raise(SIGKILL);
}

}  // namespace baton
