// Fuzzes `baton mcp` (mcp/mcp_server.h) the way a client drives it: the
// input is what the client writes on stdin, served in-process by
// RunMcpServer with no batond (autostart off, a state folder that cannot
// exist), so a tool call gets "batond is not running" once its arguments
// passed their checks. Checks that nothing throws or crashes, that the
// server ends when stdin ends, and that each line it writes is one
// JSON-RPC 2.0 message. It logs to stderr: fuzz/run closes it.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "baton/mcp/mcp_server.h"
#include "fuzz/fuzz_checks.h"

namespace {

bool WriteAllTo(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::string ReadAllFrom(int fd) {
  std::string text;
  char buf[65536];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int in = ::memfd_create("mcp-stdin", MFD_CLOEXEC);
  int out = ::memfd_create("mcp-stdout", MFD_CLOEXEC);
  FUZZ_CHECK(in >= 0 && out >= 0, "memfd_create");
  FUZZ_CHECK(WriteAllTo(in, data, size), "writing the input");
  ::lseek(in, 0, SEEK_SET);

  baton::mcp::McpServerOptions options;
  // Under /proc nothing can be created: no state folder, no log file, no
  // socket to find.
  options.paths = {"/proc/baton-fuzz/home", "/proc/baton-fuzz/run"};
  options.session = "fuzz";
  options.baton_binary = "/nonexistent/baton";
  options.autostart = false;
  options.in_fd = in;
  options.out_fd = out;
  int code = baton::mcp::RunMcpServer(options);
  FUZZ_CHECK(code == 0, "the server ends cleanly when stdin ends");

  std::string written = ReadAllFrom(out);
  ::close(in);
  ::close(out);
  std::string_view rest = written;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    FUZZ_CHECK(end != std::string_view::npos, "every line ends");
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end + 1);
    FUZZ_CHECK(baton::fuzz::IsOneJsonLine(line), "a line is one JSON");
    auto message = nlohmann::json::parse(line);
    FUZZ_CHECK(message.is_object() && message.value("jsonrpc", "") == "2.0",
               "a line is a JSON-RPC 2.0 message");
  }
  return 0;
}
