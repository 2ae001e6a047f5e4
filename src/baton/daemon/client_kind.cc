#include "baton/daemon/client_kind.h"

#include <fmt/format.h>

#include <string_view>

#include "baton/util/file_util.h"

namespace baton {
namespace {

constexpr size_t kMaxKindBytes = 64;

std::string_view FileName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string ClientKindFromCommandLine(const std::vector<std::string>& argv) {
  if (argv.empty())
    return "";
  std::string_view program = FileName(argv[0]);
  if (program != "baton")
    return std::string(program.substr(0, kMaxKindBytes));
  // The verb is the first word that is not a global flag (cli/cli.cc):
  // `baton --json --session build run ...`.
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view arg = argv[i];
    if (arg == "--session") {
      ++i;  // Its value.
      continue;
    }
    if (arg.starts_with("-"))
      continue;
    if (arg == "mcp")
      return "mcp";
    if (arg == "serve" || arg == "board")
      return "serve";
    return "cli";
  }
  return "cli";
}

std::string ClientKindOf(pid_t pid) {
  if (pid <= 0)
    return "";
  auto text = ReadFile(fmt::format("/proc/{}/cmdline", pid));
  if (!text || text->empty())
    return "";
  // NUL-separated, with a NUL after the last.
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\0', start);
    if (end == std::string::npos)
      end = text->size();
    argv.push_back(text->substr(start, end - start));
    start = end + 1;
  }
  return ClientKindFromCommandLine(argv);
}

}  // namespace baton
