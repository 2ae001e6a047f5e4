#include "baton/daemon/output_redactor.h"

#include <fcntl.h>
#include <unistd.h>

#include <string_view>

#include "baton/util/secret_shapes.h"
#include "baton/util/unique_fd.h"

namespace baton {

Result<RedactPass> RedactLog(const std::string& path, uint64_t from,
                             bool at_end, size_t piece) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd)
    return std::unexpected(ErrnoError("open " + path, errno));
  RedactPass pass{.settled = from, .readable = from};
  std::string text;
  for (;;) {
    text.resize(piece);
    ssize_t got =
        ::pread(fd.get(), text.data(), piece, static_cast<off_t>(pass.settled));
    if (got < 0)
      return std::unexpected(ErrnoError("read " + path, errno));
    text.resize(static_cast<size_t>(got));
    if (text.empty())
      return pass;
    bool last_piece = text.size() < piece;
    ScanEnd end;
    auto found = FindSecrets(text, at_end && last_piece, &end);
    // A candidate as long as a whole piece is decided as it stands: each
    // pass must move on.
    if (end.settled == 0 && !last_piece)
      found = FindSecrets(text, /*at_end=*/true, &end);
    for (const SecretMatch& match : found) {
      std::string marker = SecretMarker(match.kind, match.length);
      off_t at = static_cast<off_t>(pass.settled + match.offset);
      if (::pwrite(fd.get(), marker.data(), marker.size(), at) !=
          static_cast<ssize_t>(marker.size())) {
        return std::unexpected(ErrnoError("write " + path, errno));
      }
      ++pass.masked[std::string(match.kind)];
    }
    if (last_piece) {
      // Up to a secret that may be starting, the log may be shown.
      pass.readable = pass.settled + end.open;
      pass.settled += end.settled;
      return pass;
    }
    pass.settled += end.settled;
  }
}

}  // namespace baton
