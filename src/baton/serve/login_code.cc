#include "baton/serve/login_code.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <vector>

#include "baton/serve/token.h"
#include "baton/util/file_util.h"
#include "baton/util/unique_fd.h"

namespace baton::serve {
namespace {

constexpr size_t kCodeBytes = 16;

bool LooksLikeCode(std::string_view code) {
  return code.size() == 2 * kCodeBytes &&
         code.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// A file minted longer ago than a code lives (or in the future: a clock
// set back) can no longer be claimed.
bool Expired(const struct stat& st) {
  auto age = std::chrono::system_clock::now() -
             std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec);
  return age > kLoginCodeLifetime || age < -kLoginCodeLifetime;
}

void RemoveExpired(const std::string& dir) {
  DIR* listing = ::opendir(dir.c_str());
  if (!listing)
    return;
  std::vector<std::string> expired;
  while (const dirent* entry = ::readdir(listing)) {
    if (!LooksLikeCode(entry->d_name))
      continue;
    struct stat st {};
    std::string path = dir + "/" + entry->d_name;
    if (::lstat(path.c_str(), &st) == 0 && Expired(st))
      expired.push_back(std::move(path));
  }
  ::closedir(listing);
  for (const std::string& path : expired)
    ::unlink(path.c_str());
}

}  // namespace

std::string LoginCodeDir(const std::string& home) {
  return home + "/board-logins";
}

Result<std::string> MintLoginCode(const std::string& home) {
  std::string dir = LoginCodeDir(home);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return std::unexpected(ErrnoError("mkdir " + dir, errno));
  RemoveExpired(dir);
  auto code = RandomHex(kCodeBytes);
  if (!code)
    return code;
  std::string path = dir + "/" + *code;
  UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd)
    return std::unexpected(ErrnoError("create " + path, errno));
  return code;
}

bool ClaimLoginCode(const std::string& home, std::string_view code) {
  if (!LooksLikeCode(code))
    return false;
  std::string path = LoginCodeDir(home) + "/" + std::string(code);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != ::geteuid())
    return false;
  // The unlink is the claim: of two serves (or two requests) racing for one
  // code, only one removes the file.
  if (::unlink(path.c_str()) != 0)
    return false;
  return !Expired(st);
}

}  // namespace baton::serve
