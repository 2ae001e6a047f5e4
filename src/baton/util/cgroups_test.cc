#include "baton/util/cgroups.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace baton {
namespace {

TEST(Cgroups, ReadsAProcessesCgroupsOfBothVersions) {
  std::string path =
      ::testing::TempDir() + "/cgroup." + std::to_string(::getpid());
  std::ofstream(path) << "12:pids:/user.slice\n"
                         "4:memory:/jobs/a\n"
                         "3:cpu,cpuacct:/\n"
                         "0::/user.slice/user-1000.slice\n";
  auto own = CgroupsOf(path);
  std::remove(path.c_str());
  EXPECT_EQ(own[""], "/user.slice/user-1000.slice");
  EXPECT_EQ(own["memory"], "/jobs/a");
  EXPECT_EQ(own["cpu"], "/");
  EXPECT_EQ(own["cpuacct"], "/");
  EXPECT_EQ(own["pids"], "/user.slice");
}

TEST(Cgroups, AFolderIsUnderItsMountsRoot) {
  EXPECT_EQ(CgroupDir({"/sys/fs/cgroup/memory", "/"}, "/jobs/a"),
            "/sys/fs/cgroup/memory/jobs/a");
  EXPECT_EQ(CgroupDir({"/sys/fs/cgroup", "/"}, "/"), "/sys/fs/cgroup");
  EXPECT_EQ(CgroupDir({"/sys/fs/cgroup", "/ns"}, "/ns/x"), "/sys/fs/cgroup/x");
  EXPECT_EQ(CgroupDir({"/sys/fs/cgroup", "/ns"}, "/other"), "");
}

TEST(Cgroups, ForcedRlimitHoldsMemoryAloneAndNothingElse) {
  auto found = ForecastLimits("rlimit");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].limit, "memory");
  EXPECT_EQ(found[0].how, "rlimit");
  EXPECT_EQ(found[1].limit, "cpus");
  EXPECT_EQ(found[1].how, "");
  EXPECT_EQ(found[2].limit, "pids");
  EXPECT_EQ(found[2].how, "");
}

}  // namespace
}  // namespace baton
