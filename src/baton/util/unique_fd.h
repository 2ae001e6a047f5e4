// A move-only owner of a file descriptor (as ccache util::Fd).
#ifndef BATON_UTIL_UNIQUE_FD_H_
#define BATON_UTIL_UNIQUE_FD_H_

#include <unistd.h>

#include <utility>

namespace baton {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other)
      reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

  // Gives up ownership; the caller closes the returned fd.
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;  // -1 when empty.
};

}  // namespace baton

#endif  // BATON_UTIL_UNIQUE_FD_H_
