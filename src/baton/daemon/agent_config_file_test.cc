#include "baton/daemon/agent_config_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace baton {
namespace {

// Writes `text` to `path` and sets its mtime `age_s` seconds back.
void WriteConfig(const std::string& path, const std::string& text, int age_s) {
  std::ofstream(path, std::ios::trunc) << text;
  ::chmod(path.c_str(), 0600);
  timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= age_s;
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

TEST(AgentConfigCache, ParsesASettledFileOnceUntilItChanges) {
  testing::TempDir dir;
  std::string path = dir.path() + "/config.toml";
  WriteConfig(path, "[agents.r]\nadapter = \"claude\"\n", 10);
  AgentConfigCache cache;
  auto first = cache.Load({path, true});
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(first->Find("r"));
  auto again = cache.Load({path, true});
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->Find("r"));
  EXPECT_EQ(cache.parses(), 1);

  // Changed: read again, and the new profile is seen.
  WriteConfig(path, "[agents.s]\nadapter = \"claude\"\n", 10);
  auto changed = cache.Load({path, true});
  ASSERT_TRUE(changed) << changed.error().message;
  EXPECT_TRUE(changed->Find("s"));
  EXPECT_FALSE(changed->Find("r"));
  EXPECT_EQ(cache.parses(), 2);
}

TEST(AgentConfigCache, AFileWrittenJustNowIsReadEveryTime) {
  testing::TempDir dir;
  std::string path = dir.path() + "/config.toml";
  WriteConfig(path, "[agents.r]\nadapter = \"claude\"\n", 0);
  AgentConfigCache cache;
  ASSERT_TRUE(cache.Load({path, true}));
  ASSERT_TRUE(cache.Load({path, true}));
  EXPECT_EQ(cache.parses(), 2);
}

TEST(AgentConfigCache, ChecksThePermissionsAndPresenceOnEveryLoad) {
  testing::TempDir dir;
  std::string path = dir.path() + "/config.toml";
  WriteConfig(path, "[agents.r]\nadapter = \"claude\"\n", 10);
  AgentConfigCache cache;
  ASSERT_TRUE(cache.Load({path, true}));
  // Writable by others now: refused though the parse is kept.
  ::chmod(path.c_str(), 0602);
  auto open = cache.Load({path, true});
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message.find("writable by others"), std::string::npos);
  // Gone: the built-ins when not required, an error when required.
  ::unlink(path.c_str());
  auto builtins = cache.Load({path, false});
  ASSERT_TRUE(builtins);
  EXPECT_EQ(builtins->path, "");
  EXPECT_FALSE(cache.Load({path, true}));
  // A broken file is an error every time, never a stale parse.
  WriteConfig(path, "[agents.r\n", 10);
  EXPECT_FALSE(cache.Load({path, true}));
  EXPECT_FALSE(cache.Load({path, true}));
}

}  // namespace
}  // namespace baton
