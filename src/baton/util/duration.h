// Human durations on the command line and in the protocol: "30s", "5m",
// "1h30m", "250ms", "1.5s", or a bare number of seconds.
#ifndef BATON_UTIL_DURATION_H_
#define BATON_UTIL_DURATION_H_

#include <chrono>
#include <string>
#include <string_view>

#include "baton/util/result.h"

namespace baton {

// Fails with kInvalidArgument and a message that shows valid forms.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// The shortest exact form: "30s", "5m", "1h30m", "250ms".
std::string FormatDuration(std::chrono::milliseconds duration);

}  // namespace baton

#endif  // BATON_UTIL_DURATION_H_
