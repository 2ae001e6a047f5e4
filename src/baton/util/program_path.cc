#include "baton/util/program_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace baton {

std::string ProgramCache::Key(std::string_view path, std::string_view cwd,
                              std::string_view program) {
  std::string key;
  key.reserve(path.size() + cwd.size() + program.size() + 2);
  key.append(path).append(1, '\0').append(cwd).append(1, '\0').append(program);
  return key;
}

std::optional<std::string> ProgramCache::Find(const std::string& key) {
  std::string file;
  {
    std::lock_guard lock(mu_);
    auto it = files_.find(key);
    if (it == files_.end())
      return std::nullopt;
    if (std::chrono::steady_clock::now() - it->second.when > max_age_) {
      files_.erase(it);
      return std::nullopt;
    }
    file = it->second.file;
  }
  if (IsExecutableFile(file))
    return file;
  std::lock_guard lock(mu_);
  files_.erase(key);
  return std::nullopt;
}

void ProgramCache::Add(std::string key, std::string file) {
  std::lock_guard lock(mu_);
  if (files_.size() >= kMaxEntries)
    files_.clear();
  files_.insert_or_assign(
      std::move(key), Found{std::move(file), std::chrono::steady_clock::now()});
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

std::expected<std::string, int> ResolveProgram(
    const std::string& program, const std::vector<std::string>& env,
    const std::string& cwd, ProgramCache* cache) {
  if (program.find('/') != std::string::npos)
    return program;
  std::string path = kFallbackPath;
  for (const std::string& entry : env) {
    if (entry.starts_with("PATH="))
      path = entry.substr(5);
  }
  std::string key;
  if (cache) {
    key = ProgramCache::Key(path, cwd, program);
    if (auto found = cache->Find(key))
      return *found;
  }
  int err = ENOENT;
  for (size_t start = 0;;) {
    size_t end = path.find(':', start);
    std::string dir = path.substr(start, end - start);
    if (dir.empty() || dir[0] != '/')
      dir = cwd + "/" + dir;
    std::string candidate = dir + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (::access(candidate.c_str(), X_OK) == 0) {
        if (cache)
          cache->Add(std::move(key), candidate);
        return candidate;
      }
      err = EACCES;
    }
    if (end == std::string::npos)
      return std::unexpected(err);
    start = end + 1;
  }
}

}  // namespace baton
