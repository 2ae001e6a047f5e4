#include "baton/daemon/agent_event_log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

#include "tests/support/temp_dir.h"

namespace baton {
namespace {

using Json = nlohmann::json;

// Each line of `text` parsed, null for a line that is not JSON.
std::vector<Json> Lines(const std::string& text) {
  std::vector<Json> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    lines.push_back(
        Json::parse(text.substr(start, nl - start), nullptr, false));
  }
  return lines;
}

TEST(AgentEventLog, NumbersEventsAfterThoseInTheFile) {
  testing::TempDir tmp;
  std::string path = tmp.path() + "/events.jsonl";
  AgentEventLog log = AgentEventLog::Open(path, 4);
  Json first = {{"type", "text"}, {"text", "a"}};
  Json second = {{"type", "note"}, {"text", "b"}};
  ASSERT_TRUE(log.Append(first));
  ASSERT_TRUE(log.Append(second));
  EXPECT_EQ(first["seq"], 5);
  EXPECT_EQ(log.last_seq(), 6);
  std::vector<Json> events = ReadAgentEvents(path);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["text"], "a");
  EXPECT_EQ(events[1]["seq"], 6);
  EXPECT_TRUE(events[1]["at"].is_string());
  EXPECT_TRUE(ReadAgentEvents(tmp.path() + "/none.jsonl").empty());
}

TEST(AgentEventLog, AFailedAppendIsAnErrorWithTheReason) {
  AgentEventLog full = AgentEventLog::Open("/dev/full", 0);
  Json event = {{"type", "text"}};
  auto appended = full.Append(event);
  ASSERT_FALSE(appended);
  EXPECT_EQ(appended.error().sys_errno, ENOSPC);
  EXPECT_NE(appended.error().message.find(
                "could not record event 1 in /dev/full (write: No space left "
                "on device)"),
            std::string::npos)
      << appended.error().message;

  AgentEventLog closed = AgentEventLog::Open("/nonexistent/events.jsonl", 0);
  EXPECT_FALSE(closed.Append(event));
}

// A write that fails half-way (a full pipe here, a full disk in life)
// leaves a torn line; once writes succeed again the log ends it and records
// which events are missing, before the next event.
TEST(AgentEventLog, AfterAFailureTheNextAppendRecordsTheGap) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  UniqueFd read_end(fds[0]);
  // Two pages, the first one full: a write of more than a page fills the
  // second and fails.
  ASSERT_EQ(::fcntl(fds[1], F_SETPIPE_SZ, 8192), 8192);
  std::string filler(4096, 'x');
  ASSERT_EQ(::write(fds[1], filler.data(), filler.size()),
            static_cast<ssize_t>(filler.size()));
  AgentEventLog log(UniqueFd(fds[1]), 0, "events.jsonl");

  Json lost = {{"type", "text"}, {"text", std::string(5000, 'a')}};
  auto failed = log.Append(lost);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().sys_errno, EAGAIN);
  Json also_lost = {{"type", "text"}};
  EXPECT_FALSE(log.Append(also_lost));

  char drain[8192];
  std::string torn;
  for (ssize_t n; (n = ::read(read_end.get(), drain, sizeof drain)) > 0;)
    torn.append(drain, static_cast<size_t>(n));
  ASSERT_EQ(torn.size(), 8192u);  // The filler and a torn event.

  Json kept = {{"type", "note"}, {"text", "back"}};
  ASSERT_TRUE(log.Append(kept));
  std::string text;
  for (ssize_t n; (n = ::read(read_end.get(), drain, sizeof drain)) > 0;)
    text.append(drain, static_cast<size_t>(n));
  std::vector<Json> lines = Lines(torn + text);
  ASSERT_EQ(lines.size(), 3u) << torn + text;
  EXPECT_TRUE(lines[0].is_discarded());  // The filler and the torn event.
  EXPECT_EQ(lines[1]["type"], "error");
  // 1 and 3 were events, 2 the note of the gap that could not be written.
  EXPECT_EQ(lines[1]["seq"], 4);
  EXPECT_EQ(lines[1]["lost"], Json({1, 3}));
  EXPECT_NE(lines[1]["message"].get<std::string>().find(
                "batond could not record events 1 to 3 in events.jsonl"),
            std::string::npos)
      << lines[1];
  EXPECT_EQ(lines[2]["seq"], 5);
  EXPECT_EQ(lines[2]["text"], "back");
  // Recorded: nothing more to report.
  Json next = {{"type", "text"}};
  ASSERT_TRUE(log.Append(next));
  EXPECT_EQ(next["seq"], 6);
}

}  // namespace
}  // namespace baton
