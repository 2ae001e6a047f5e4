// Sizes in bytes on the command line: "1G", "500M", "64K", "4096", with
// binary units (K = 1024) and an optional "B" or "iB" ("1GiB", "64KB").
#ifndef BATON_UTIL_BYTE_SIZE_H_
#define BATON_UTIL_BYTE_SIZE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "baton/util/result.h"

namespace baton {

// Fails with kInvalidArgument, showing valid forms, for anything else or
// for more than 2^62 bytes.
Result<int64_t> ParseByteSize(std::string_view text);

// For people, in the largest binary unit it fills: "512 B", "64 MiB",
// "1.5 GiB" (one decimal, dropped when it is 0).
std::string FormatByteSize(int64_t bytes);

}  // namespace baton

#endif  // BATON_UTIL_BYTE_SIZE_H_
