#include "baton/loop/command_runner.h"

#include <gtest/gtest.h>

#include <optional>

#include "baton/util/environment.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

class CommandRunnerTest : public ::testing::Test {
 protected:
  // Runs one command on the loop to its end.
  CommandResult RunToEnd(std::vector<std::string> argv,
                         milliseconds timeout = milliseconds(10000)) {
    std::optional<CommandResult> got;
    runner_.Run(std::move(argv), CleanEnvironment(), timeout,
                [&](CommandResult result) { got = std::move(result); });
    for (int i = 0; i < 2000 && !got; ++i)
      loop_.RunOnce(milliseconds(10));
    EXPECT_TRUE(got);
    return got.value_or(CommandResult{});
  }

  EventLoop loop_;
  CommandRunner runner_{&loop_};
};

TEST_F(CommandRunnerTest, KeepsStdoutStderrAndTheExitCode) {
  CommandResult result =
      RunToEnd({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(result.end, CommandResult::End::kExited);
  EXPECT_EQ(result.code, 3);
  EXPECT_EQ(result.out, "out\n");
  EXPECT_EQ(result.err, "err\n");
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.Describe(milliseconds(1)), "exit code 3: err");
  EXPECT_TRUE(RunToEnd({"true"}).ok());  // Found on the clean PATH.
}

TEST_F(CommandRunnerTest, AHungCommandIsKilledWithItsGroupAtTheDeadline) {
  auto start = std::chrono::steady_clock::now();
  CommandResult result =
      RunToEnd({"/bin/sh", "-c", "sleep 30 & sleep 30"}, milliseconds(200));
  EXPECT_EQ(result.end, CommandResult::End::kTimedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(runner_.running(), 0u);
}

TEST_F(CommandRunnerTest, AMissingProgramIsToldFromTheLoop) {
  bool called = false;
  runner_.Run({"no-such-program-anywhere"}, CleanEnvironment(),
              milliseconds(1000), [&](CommandResult result) {
                called = true;
                EXPECT_EQ(result.end, CommandResult::End::kSpawnFailed);
                EXPECT_NE(result.Describe(milliseconds(1)).find("could not"),
                          std::string::npos);
              });
  EXPECT_FALSE(called);  // Never from inside Run().
  for (int i = 0; i < 100 && !called; ++i)
    loop_.RunOnce(milliseconds(10));
  EXPECT_TRUE(called);
}

}  // namespace
}  // namespace baton
