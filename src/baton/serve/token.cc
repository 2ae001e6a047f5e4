#include "baton/serve/token.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "baton/util/file_util.h"
#include "baton/util/unique_fd.h"

namespace baton::serve {
namespace {

constexpr size_t kTokenBytes = 32;

}  // namespace

Result<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::getrandom(raw.data() + done, bytes - done, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return std::unexpected(ErrnoError("getrandom", errno));
    done += static_cast<size_t>(n);
  }
  std::string hex;
  for (char c : raw)
    hex += fmt::format("{:02x}", static_cast<unsigned char>(c));
  return hex;
}

namespace {

Result<std::string> ReadToken(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return std::unexpected(ErrnoError("stat " + path, errno));
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    return MakeError(ErrorCode::kPermissionDenied,
                     fmt::format("{} may be read or changed by others (mode "
                                 "{:o}); remove it and baton serve makes a "
                                 "new token, or chmod 600 it",
                                 path, st.st_mode & 0777));
  }
  auto text = ReadFile(path);
  if (!text)
    return std::unexpected(text.error());
  std::string token = *text;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r'))
    token.pop_back();
  if (token.size() < 32 ||
      token.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
    return MakeError(ErrorCode::kCorrupt,
                     fmt::format("{} holds no token (at least 32 hex "
                                 "digits); remove it and baton serve makes "
                                 "a new one",
                                 path));
  }
  return token;
}

}  // namespace

Result<std::string> LoadOrCreateToken(const std::string& path) {
  UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd) {
    if (errno == EEXIST)
      return ReadToken(path);
    return std::unexpected(ErrnoError("create " + path, errno));
  }
  auto token = RandomHex(kTokenBytes);
  if (!token)
    return token;
  if (auto written = WriteAll(fd.get(), *token + "\n"); !written) {
    ::unlink(path.c_str());
    return std::unexpected(written.error());
  }
  return token;
}

}  // namespace baton::serve
