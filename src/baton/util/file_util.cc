#include "baton/util/file_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace baton {

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return std::unexpected(ErrnoError("write", errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

Result<std::string> ReadFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd)
    return std::unexpected(ErrnoError("open " + path, errno));
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return std::unexpected(ErrnoError("read " + path, errno));
    }
    if (n == 0)
      break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  {
    UniqueFd fd(
        ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!fd)
      return std::unexpected(ErrnoError("create " + tmp, errno));
    if (auto written = WriteAll(fd.get(), data); !written) {
      ::unlink(tmp.c_str());
      return written;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return std::unexpected(ErrnoError("rename " + tmp, err));
  }
  return {};
}

Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return std::unexpected(ErrnoError("mkdir " + path, errno));
  }
  return {};
}

Status EnsurePrivateDir(const std::string& path, std::string_view what) {
  if (path.empty() || path[0] != '/') {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} '{}' is not an absolute path; give a full "
                                 "path such as /tmp/baton",
                                 what, path));
  }
  // Create missing parents with 0700 too; only the last component is checked.
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    std::string parent = path.substr(0, slash);
    if (::mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST) {
      int err = errno;
      return MakeError(ErrorCode::kPermissionDenied,
                       fmt::format("cannot create {} {}: mkdir {}: {}; choose "
                                   "a directory you can write",
                                   what, path, parent, std::strerror(err)),
                       err);
    }
  }
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    int err = errno;
    return MakeError(ErrorCode::kPermissionDenied,
                     fmt::format("cannot create {} {}: {}; choose a directory "
                                 "you can write",
                                 what, path, std::strerror(err)),
                     err);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return std::unexpected(ErrnoError(fmt::format("stat {}", path), errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} {} is not a directory; point it at a "
                                 "directory",
                                 what, path));
  }
  if (st.st_uid != ::geteuid()) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        fmt::format("{} {} is owned by uid {}, not by you (uid {}); use a "
                    "directory of your own",
                    what, path, st.st_uid, ::geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    return MakeError(ErrorCode::kPermissionDenied,
                     fmt::format("{} {} has insecure permissions {:04o}; run "
                                 "'chmod 700 {}'",
                                 what, path, st.st_mode & 07777, path));
  }
  if (::access(path.c_str(), W_OK | X_OK) != 0) {
    return MakeError(ErrorCode::kPermissionDenied,
                     fmt::format("{} {} is not writable; run 'chmod 700 {}' "
                                 "or choose another directory",
                                 what, path, path));
  }
  return {};
}

Result<std::string> ReadFileRange(const std::string& path, uint64_t from,
                                  uint64_t to) {
  std::string data;
  if (to <= from)
    return data;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd)
    return std::unexpected(ErrnoError("open " + path, errno));
  data.resize(static_cast<size_t>(to - from));
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::pread(fd.get(), data.data() + got, data.size() - got,
                        static_cast<off_t>(from + got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return std::unexpected(ErrnoError("read " + path, errno));
    if (n == 0)
      break;  // the file is shorter
    got += static_cast<size_t>(n);
  }
  data.resize(got);
  return data;
}

Result<uint64_t> CopyFileRange(const std::string& path, uint64_t from,
                               uint64_t to, int out_fd) {
  if (to <= from)
    return 0;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd)
    return std::unexpected(ErrnoError("open " + path, errno));
  off_t offset = static_cast<off_t>(from);
  uint64_t copied = 0;
  bool use_sendfile = true;
  while (from + copied < to) {
    size_t want =
        static_cast<size_t>(std::min<uint64_t>(to - from - copied, 1u << 30));
    ssize_t n;
    if (use_sendfile) {
      n = ::sendfile(out_fd, fd.get(), &offset, want);
      if (n < 0 && (errno == EINVAL || errno == ENOSYS)) {
        use_sendfile = false;  // e.g. out_fd is a pipe in append mode.
        continue;
      }
    } else {
      char buf[1 << 16];
      n = ::pread(fd.get(), buf, std::min(want, sizeof buf), offset);
      if (n > 0) {
        if (auto w = WriteAll(out_fd, std::string_view(buf, n)); !w) {
          return std::unexpected(w.error());
        }
        offset += n;
      }
    }
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return std::unexpected(ErrnoError("copy " + path, errno));
    }
    if (n == 0)
      break;  // File shorter than asked.
    copied += static_cast<uint64_t>(n);
  }
  return copied;
}

Result<uint64_t> FileSize(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return 0;
    return std::unexpected(ErrnoError("stat " + path, errno));
  }
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace baton
