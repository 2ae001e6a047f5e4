// Splitting text at a separator, for the line- and field-oriented output of
// other programs and the kernel (/proc, cgroup files, Slurm's tools).
#ifndef BATON_UTIL_SPLIT_H_
#define BATON_UTIL_SPLIT_H_

#include <string_view>
#include <vector>

namespace baton {

// The pieces of `text` between each `separator`, empty ones included:
// "a,,b" gives {"a", "", "b"}, "" gives {""}. Views into `text`.
std::vector<std::string_view> Split(std::string_view text, char separator);

}  // namespace baton

#endif  // BATON_UTIL_SPLIT_H_
