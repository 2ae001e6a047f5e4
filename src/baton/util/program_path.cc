#include "baton/util/program_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace baton {

std::expected<std::string, int> ResolveProgram(
    const std::string& program, const std::vector<std::string>& env,
    const std::string& cwd) {
  if (program.find('/') != std::string::npos)
    return program;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& entry : env) {
    if (entry.starts_with("PATH="))
      path = entry.substr(5);
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
      if (::access(candidate.c_str(), X_OK) == 0)
        return candidate;
      err = EACCES;
    }
    if (end == std::string::npos)
      return std::unexpected(err);
    start = end + 1;
  }
}

}  // namespace baton
