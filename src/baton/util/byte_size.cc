#include "baton/util/byte_size.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace baton {
namespace {

constexpr std::string_view kUnits = "KMGT";
constexpr int64_t kMost = int64_t{1} << 62;

}  // namespace

Result<int64_t> ParseByteSize(std::string_view text) {
  auto bad = [&] {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("'{}' is not a size; give bytes or a number "
                                 "with K, M, G or T (binary), e.g. 4096, "
                                 "64K, 500M, 1G",
                                 text));
  };
  int64_t number = 0;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data() || number < 0)
    return bad();
  std::string_view unit(end, text.data() + text.size() - end);
  int shift = 0;
  if (!unit.empty()) {
    size_t at = kUnits.find(static_cast<char>(std::toupper(unit[0])));
    if (at == std::string_view::npos)
      return bad();
    shift = 10 * static_cast<int>(at + 1);
    unit.remove_prefix(1);
    if (unit != "" && unit != "B" && unit != "iB")
      return bad();
  }
  if (number > (kMost >> shift))
    return bad();
  return number << shift;
}

std::string FormatByteSize(int64_t bytes) {
  if (bytes < 1024)
    return fmt::format("{} B", bytes);
  int shift = 10;
  while (shift < 40 && bytes >= (int64_t{1} << (shift + 10)))
    shift += 10;
  // Tenths of the unit, rounded down so that a limit never reads larger.
  int64_t tenths =
      bytes < (kMost >> 4) ? (bytes * 10) >> shift : (bytes >> shift) * 10;
  char unit = kUnits[shift / 10 - 1];
  if (tenths % 10 == 0)
    return fmt::format("{} {}iB", tenths / 10, unit);
  return fmt::format("{}.{} {}iB", tenths / 10, tenths % 10, unit);
}

}  // namespace baton
