// Finding a program as execvp would, but on a given environment's PATH
// rather than the caller's: the supervisor resolves a task's argv[0] on the
// task's PATH, and batond resolves it the same way to refuse a command that
// is not there (daemon/preflight.h) and an agent CLI before it probes it
// (daemon/app_server_probe.h).
#ifndef BATON_UTIL_PROGRAM_PATH_H_
#define BATON_UTIL_PROGRAM_PATH_H_

#include <chrono>
#include <expected>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace baton {

// The PATH of an environment that has none, for every search baton makes
// (the supervisor's spawn, batond's preflight and probe, so they agree):
// the directories of execvp's default, after /usr/local/bin, where programs
// installed by hand live.
inline constexpr char kFallbackPath[] = "/usr/local/bin:/usr/bin:/bin";

// Where PATH searches found their programs, by (PATH, cwd, program). A long
// PATH costs a failed stat per entry before the one that holds the program,
// for every task of a burst. A remembered file is checked again on each use,
// so the cache never names a program that is gone or no longer executable,
// and a find is used for `max_age` only: a program installed earlier in
// PATH is seen within that time (a shell's command hash keeps it until
// `hash -r`). Thread-safe.
class ProgramCache {
 public:
  static constexpr size_t kMaxEntries = 256;

  explicit ProgramCache(
      std::chrono::steady_clock::duration max_age = std::chrono::seconds(1))
      : max_age_(max_age) {}

  static std::string Key(std::string_view path, std::string_view cwd,
                         std::string_view program);
  // The file remembered under `key`, if it still is an executable file.
  std::optional<std::string> Find(const std::string& key);
  void Add(std::string key, std::string file);

 private:
  struct Found {
    std::string file;
    std::chrono::steady_clock::time_point when;
  };
  std::chrono::steady_clock::duration max_age_;
  std::mutex mu_;
  std::unordered_map<std::string, Found> files_;
};

// An executable regular file (stat and access(X_OK)).
bool IsExecutableFile(const std::string& path);

// `program` itself when it holds a '/'; else the first executable regular
// file named `program` in the PATH of `env` ("NAME=value" entries; without
// a PATH: kFallbackPath), relative entries taken from `cwd`.
// Returns an errno value on failure: ENOENT, or EACCES when a match was not
// executable.
// With `cache`, a find is remembered for the next call.
std::expected<std::string, int> ResolveProgram(
    const std::string& program, const std::vector<std::string>& env,
    const std::string& cwd, ProgramCache* cache = nullptr);

}  // namespace baton

#endif  // BATON_UTIL_PROGRAM_PATH_H_
