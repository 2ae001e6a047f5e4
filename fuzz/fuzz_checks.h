// What the fuzz targets share: a failed invariant stops the run as a crash
// (so libFuzzer keeps the input), and the check that a JSON line stays one
// line. The targets are in this folder, one per parser (doc/fuzzing.md).
#ifndef BATON_FUZZ_FUZZ_CHECKS_H_
#define BATON_FUZZ_FUZZ_CHECKS_H_

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

// Aborts with `what` when `cond` is false: a finding, not a skipped input.
#define FUZZ_CHECK(cond, what)                                           \
  do {                                                                   \
    if (!(cond)) {                                                       \
      std::fprintf(stderr, "%s:%d: %s (%s)\n", __FILE__, __LINE__, what, \
                   #cond);                                               \
      std::abort();                                                      \
    }                                                                    \
  } while (0)

namespace baton::fuzz {

// A line written to a peer that reads one JSON document a line: valid JSON
// (so not cut inside a UTF-8 sequence), and no newline inside it.
inline bool IsOneJsonLine(std::string_view line) {
  return line.find('\n') == std::string_view::npos &&
         nlohmann::json::accept(line);
}

}  // namespace baton::fuzz

#endif  // BATON_FUZZ_FUZZ_CHECKS_H_
