#include "baton/mcp/mcp_server.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "baton/ipc/async_daemon_client.h"
#include "baton/loop/event_loop.h"
#include "baton/mcp/json_rpc.h"
#include "baton/mcp/line_reader.h"
#include "baton/mcp/protocol_version.h"
#include "baton/mcp/server.h"
#include "baton/util/log.h"
#include "baton/util/unique_fd.h"

namespace baton::mcp {

const char* const kInstructions =
    "baton runs shell commands in the background for you (run), delegates "
    "briefs to coding agents (delegate), and tells you when they finish or "
    "an agent asks a question (answer it with task_answer). Track every task "
    "id you start. You are told when "
    "tasks end and when an agent asks a question, once each (notices come "
    "with every baton tool result, with the question's numbered options), "
    "so never busy-poll task_status/task_output and never sleep to wait. While "
    "tasks "
    "run, do independent work, and do not redo a running task's work "
    "yourself. When you are blocked, wait on all the relevant ids in one "
    "task_output call with wait: true, leaving out the ids you already "
    "collected (a wait on those alone answers at once, naming them in "
    "told_before). Collect every task's result before "
    "your final answer; task_status shows a worker's brief, branch and "
    "diff, task_events what it did step by step. If you lost track (after a "
    "compaction, say), call "
    "task_list: it marks the ended tasks you have not collected. Kill "
    "(task_kill) what stopped mattering. If your client runs shell commands "
    "in the background and wakes you when they end, you can instead run a "
    "task's wait_command (given by run and delegate) there: it blocks until "
    "the task ends, even across a restart of baton's daemon, and prints its "
    "status, then its output's last lines or its open question.";

namespace {

// A line longer than this is not a message we can serve; it is dropped
// (LineReader) and answered with one parse error.
constexpr size_t kMaxLine = 64 << 20;

// stdio: one JSON-RPC message a line on stdin and stdout, for one Server.
class StdioServer : public Transport {
 public:
  explicit StdioServer(const McpServerOptions& options)
      : options_(options), server_(&loop_, options, this) {
    loop_.AddBeforeSleep([this] { server_.ReleaseRetired(); });
  }
  int Run();

  void Send(const Json& message, const std::string& exchange) override;
  void Idle() override {
    if (eof_)
      loop_.Stop();
  }

 private:
  void OnStdin();
  void ReadAllBlocking();
  void Feed(std::string_view data);
  void ServeLine(std::string_view line);
  void OnEof();

  McpServerOptions options_;
  // Before server_, which may still call Idle() while it is destroyed.
  bool eof_ = false;
  bool stdout_broken_ = false;
  bool started_ = false;  // Server::Start ran (after the first input).
  EventLoop loop_;
  Server server_;
  LineReader reader_{kMaxLine};
};

void StdioServer::Send(const Json& message, const std::string&) {
  if (stdout_broken_)
    return;
  std::string line = SerializeLine(message);
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n =
        ::write(options_.out_fd, line.data() + done, line.size() - done);
    if (n >= 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // A client that set our stdout non-blocking: wait for room.
      pollfd pfd{options_.out_fd, POLLOUT, 0};
      ::poll(&pfd, 1, -1);
      continue;
    }
    BATON_LOG_WARN("stdout closed ({}); stopping", std::strerror(errno));
    stdout_broken_ = true;
    OnEof();
    return;
  }
}

int StdioServer::Run() {
  if (!loop_.ok()) {
    BATON_LOG_ERROR("cannot create the event loop");
    return 1;
  }
  BATON_LOG_INFO("serving MCP on stdio as session {}", server_.facts().session);
  auto watched = loop_.AddFd(options_.in_fd, EPOLLIN | EPOLLRDHUP,
                             [this](uint32_t) { OnStdin(); });
  if (!watched) {
    // A regular file or /dev/null cannot be polled: it is all there, read
    // it now and serve it, then end as at EOF.
    ReadAllBlocking();
  }
  if (!eof_ || !server_.idle()) {
    if (auto ran = loop_.Run(); !ran) {
      BATON_LOG_ERROR("event loop: {}", ran.error().message);
      return 1;
    }
  }
  BATON_LOG_INFO(
      "stdin closed; session {} detaches (its tasks live "
      "on under the lease)",
      server_.facts().session);
  return 0;
}

void StdioServer::ReadAllBlocking() {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(options_.in_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    Feed(std::string_view(buf, static_cast<size_t>(n)));
  }
  reader_.Finish([this](std::string_view line) { ServeLine(line); });
  OnEof();
}

void StdioServer::OnStdin() {
  char buf[65536];
  // One read per wake-up: the fd is blocking (it is the client's pipe; we
  // leave its flags alone) and readable, so this does not block.
  ssize_t n = ::read(options_.in_fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0) {
    // A last line without its newline is served too.
    reader_.Finish([this](std::string_view line) { ServeLine(line); });
    OnEof();
    return;
  }
  Feed(std::string_view(buf, static_cast<size_t>(n)));
  // Attach to batond (holding the session's lease) once the first input
  // is served, not before: a client's first message, often a
  // server/discover probe with a short timeout, must not wait for batond
  // to start.
  if (!started_) {
    started_ = true;
    server_.Start();
  }
}

void StdioServer::Feed(std::string_view data) {
  reader_.Feed(
      data, [this](std::string_view line) { ServeLine(line); },
      [this] {
        // One answer per line, however many reads it spans.
        BATON_LOG_ERROR("dropping a line over {} bytes", kMaxLine);
        Send(MakeErrorResponse(
                 nullptr, kParseError,
                 fmt::format("Parse error: message too long (a line holds at "
                             "most {} bytes)",
                             kMaxLine)),
             "");
      });
}

void StdioServer::ServeLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  if (line.find_first_not_of(" \t") != std::string_view::npos)
    server_.ServeLine(line);
}

void StdioServer::OnEof() {
  if (eof_)
    return;
  eof_ = true;
  loop_.RemoveFd(options_.in_fd);
  server_.Shutdown();
  if (server_.idle())
    loop_.Stop();
}

}  // namespace

int RunMcpServer(const McpServerOptions& options) {
  // A client that goes away mid-write must not kill us with SIGPIPE; the
  // write fails and we stop cleanly. (batond ignores it too; the
  // supervisor resets signals for tasks.)
  ::signal(SIGPIPE, SIG_IGN);
  // Logs go to stderr (the client shows or keeps them) and to
  // <home>/mcp.log, which outlives the client's view.
  std::vector<LogSink> sinks;
  sinks.push_back(LogSink::Stderr());
  if (options.paths.Prepare()) {
    if (auto file = LogSink::File(options.paths.home + "/mcp.log",
                                  LogFormat::kUtcNoLevel)) {
      sinks.push_back(std::move(*file));
    }
  }
  SetLogSinks("baton-mcp", std::move(sinks));
  StdioServer server(options);
  int code = server.Run();
  std::vector<LogSink> stderr_only;
  stderr_only.push_back(LogSink::Stderr());
  SetLogSinks("baton-mcp", std::move(stderr_only));  // Closes mcp.log.
  return code;
}

int RunMcpServerFromEnvironment() {
  auto paths = StatePaths::FromEnvironment("");
  if (!paths) {
    std::fprintf(stderr, "baton mcp: error: %s\n",
                 paths.error().message.c_str());
    return 2;
  }
  McpServerOptions options;
  options.paths = *paths;
  if (const char* session = std::getenv("BATON_SESSION"))
    options.session = session;
  if (const char* home = std::getenv("BATON_HOME"))
    options.baton_home = home;
  return RunMcpServer(options);
}

}  // namespace baton::mcp
