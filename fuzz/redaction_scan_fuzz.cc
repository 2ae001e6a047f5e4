// Fuzzes the redaction of secrets (util/secret_shapes.h) and the pass that
// masks them in a task's log as it grows (RedactLog,
// daemon/output_redactor.h). The input's first byte says where the log is
// cut (what the task had written by the first pass); the rest is the log.
// Checks: masking keeps the length, puts the marker over each secret found
// and leaves the rest alone; masked text holds no secret (so masking it
// again changes nothing); and the log masked in two passes, the first
// before the task wrote the rest, is the text masked in one, with nothing
// a reader was given by the first pass changed by the second (a secret
// still being printed is never shown half masked).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "baton/daemon/output_redactor.h"
#include "baton/util/secret_shapes.h"
#include "fuzz/fuzz_checks.h"

namespace {

void CheckMasking(std::string_view text, const std::string& masked) {
  FUZZ_CHECK(masked.size() == text.size(), "masking keeps the length");
  size_t next = 0;  // Where the text not masked resumes.
  for (const baton::SecretMatch& secret : baton::FindSecrets(text, true)) {
    FUZZ_CHECK(secret.offset >= next && secret.length > 0,
               "secrets are in order and do not overlap");
    FUZZ_CHECK(text.substr(next, secret.offset - next) ==
                   std::string_view(masked).substr(next, secret.offset - next),
               "text that is no secret is left alone");
    FUZZ_CHECK(masked.substr(secret.offset, secret.length) ==
                   baton::SecretMarker(secret.kind, secret.length),
               "a secret is covered by its marker");
    next = secret.offset + secret.length;
  }
  FUZZ_CHECK(text.substr(next) == std::string_view(masked).substr(next),
             "text after the last secret is left alone");
  FUZZ_CHECK(baton::FindSecrets(masked, true).empty(),
             "masked text holds no secret");
  FUZZ_CHECK(baton::MaskSecrets(masked) == masked, "masking is idempotent");
}

// A log that lives in memory: RedactLog opens it by path.
struct MemoryLog {
  int fd = ::memfd_create("baton-fuzz-log", MFD_CLOEXEC);
  std::string path = "/proc/self/fd/" + std::to_string(fd);

  void Reset() { FUZZ_CHECK(::ftruncate(fd, 0) == 0, "the log is emptied"); }
  void Append(std::string_view bytes) {
    off_t end = ::lseek(fd, 0, SEEK_END);
    FUZZ_CHECK(::pwrite(fd, bytes.data(), bytes.size(), end) ==
                   static_cast<ssize_t>(bytes.size()),
               "the task's output is written");
  }
  std::string Contents() const {
    std::string text(static_cast<size_t>(::lseek(fd, 0, SEEK_END)), '\0');
    FUZZ_CHECK(::pread(fd, text.data(), text.size(), 0) ==
                   static_cast<ssize_t>(text.size()),
               "the log is read");
    return text;
  }
};

void CheckTwoPasses(std::string_view text, size_t cut,
                    const std::string& masked) {
  static MemoryLog* log = new MemoryLog();
  FUZZ_CHECK(log->fd >= 0, "a log in memory");
  log->Reset();
  log->Append(text.substr(0, cut));
  auto first = baton::RedactLog(log->path, 0, /*at_end=*/false);
  FUZZ_CHECK(first.has_value(), "the first pass runs");
  FUZZ_CHECK(first->whole, "a pass without a budget reaches the end");
  FUZZ_CHECK(first->settled <= cut && first->readable <= cut,
             "a pass decides only what was written");
  std::string shown = log->Contents().substr(0, first->readable);
  log->Append(text.substr(cut));
  auto last = baton::RedactLog(log->path, first->settled, /*at_end=*/true);
  FUZZ_CHECK(last.has_value(), "the last pass runs");
  FUZZ_CHECK(last->settled == text.size() && last->readable == text.size(),
             "the last pass decides the whole log");
  std::string log_masked = log->Contents();
  FUZZ_CHECK(log_masked == masked,
             "a log masked in two passes is the text masked in one");
  FUZZ_CHECK(log_masked.compare(0, shown.size(), shown) == 0,
             "what a reader was given is never changed after");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t cut = text.size() * data[0] / 255;
  std::string masked = baton::MaskSecrets(text);
  CheckMasking(text, masked);
  CheckTwoPasses(text, cut, masked);
  return 0;
}
