// The redactor's scan speed (doc/redaction.md): FindSecrets over 64 MiB of
// compiler-output-like text with a token every MiB, in pieces of 1 MiB as
// batond reads a log, 5 runs, CPU time (so a busy machine still measures
// the scan, not its share of the CPU). Prints the median in MB/s.
//
//   g++ -std=c++23 -O2 -Isrc bench/redaction_scan.cc \
//       src/baton/util/secret_shapes.cc -o /tmp/redaction_scan -lfmt
//   /tmp/redaction_scan
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "baton/util/secret_shapes.h"

namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main() {
  const std::string line =
      "src/baton/daemon/output_redactor.cc:42:7: warning: unused variable "
      "'x' [-Wunused-variable] sk-no ghp_ AKIA eyJ\n";
  const size_t kPiece = 1 << 20;
  std::string text;
  while (text.size() < (64u << 20)) {
    text += line;
    if (text.size() % kPiece < line.size())
      text += "token ghp_" + std::string(36, 'Z') + "\n";
  }
  std::vector<double> rates;
  for (int run = 0; run < 5; ++run) {
    double start = CpuSeconds();
    size_t found = 0;
    for (size_t at = 0; at < text.size(); at += kPiece) {
      std::string_view piece(text.data() + at,
                             std::min(kPiece, text.size() - at));
      found += baton::FindSecrets(piece, /*at_end=*/true).size();
    }
    double seconds = CpuSeconds() - start;
    rates.push_back(static_cast<double>(text.size()) / seconds / 1e6);
    std::fprintf(stderr, "run %d: %zu secrets, %.0f MB/s\n", run + 1, found,
                 rates.back());
  }
  std::sort(rates.begin(), rates.end());
  std::printf(
      "FindSecrets: median %.0f MB/s (min %.0f, max %.0f) over 5 runs "
      "of %zu MiB\n",
      rates[2], rates[0], rates[4], text.size() >> 20);
}
