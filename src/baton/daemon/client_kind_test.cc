#include "baton/daemon/client_kind.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace baton {
namespace {

TEST(ClientKindTest, BatonIsToldByItsVerbPastTheGlobalFlags) {
  EXPECT_EQ(ClientKindFromCommandLine({"/usr/bin/baton", "mcp"}), "mcp");
  EXPECT_EQ(ClientKindFromCommandLine({"baton", "serve", "--port", "7420"}),
            "serve");
  EXPECT_EQ(ClientKindFromCommandLine({"baton", "board"}), "serve");
  EXPECT_EQ(ClientKindFromCommandLine({"baton", "run", "--", "baton", "mcp"}),
            "cli");
  // --session's value is not the verb, even when it reads like one.
  EXPECT_EQ(ClientKindFromCommandLine(
                {"baton", "--json", "--session", "mcp", "kill", "shell-1"}),
            "cli");
  EXPECT_EQ(ClientKindFromCommandLine({"baton", "--session=mcp", "mcp"}),
            "mcp");
  EXPECT_EQ(ClientKindFromCommandLine({"baton"}), "cli");
}

TEST(ClientKindTest, AnotherProgramIsItsFileName) {
  EXPECT_EQ(ClientKindFromCommandLine({"/usr/bin/python3", "client.py"}),
            "python3");
  EXPECT_EQ(ClientKindFromCommandLine({std::string(100, 'x')}),
            std::string(64, 'x'));
  EXPECT_EQ(ClientKindFromCommandLine({}), "");
}

TEST(ClientKindTest, ReadsALiveProcessAndNothingOfAGoneOne) {
  // This test binary: its own file name.
  std::string self = ClientKindOf(::getpid());
  EXPECT_FALSE(self.empty());
  EXPECT_EQ(self.find('/'), std::string::npos);
  EXPECT_EQ(ClientKindOf(0), "");
  EXPECT_EQ(ClientKindOf(-1), "");
}

}  // namespace
}  // namespace baton
