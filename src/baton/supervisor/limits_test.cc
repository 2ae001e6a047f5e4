#include "baton/supervisor/limits.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "baton/util/file_util.h"

namespace baton {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(LimitHolder, WithoutCgroupsMemoryIsAnAddressSpaceRlimitAndTheRestIsSaid) {
  LimitHolder holder = LimitHolder::Probe("test", "rlimit");
  auto plan = holder.Prepare(
      "shell-1", {.memory_bytes = 64 * kMiB, .cpu_millis = 1500, .pids = 10});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->cgroup, nullptr);
  EXPECT_TRUE(plan->join.empty());
  ASSERT_EQ(plan->rlimits.size(), 1u);
  EXPECT_EQ(plan->rlimits[0].first, RLIMIT_AS);
  EXPECT_EQ(plan->rlimits[0].second, static_cast<rlim_t>(64 * kMiB));
  EXPECT_EQ(plan->held_by,
            "rlimit: memory (address space); not held (no cgroup): cpus, "
            "pids");
  EXPECT_EQ(holder.Find("shell-1"), nullptr);
}

// Where this process may use cgroups (root here and in CI, with cgroup v1
// controllers or a delegated v2 subtree): the task's folder is made, holds
// the limits, and goes once empty.
TEST(LimitHolder, ACgroupHoldsTheLimitsAndIsRemovedOnceEmpty) {
  std::string tag = "unit" + std::to_string(::getpid());
  LimitHolder holder = LimitHolder::Probe(tag, "");
  auto plan = holder.Prepare("shell-7", {.memory_bytes = 64 * kMiB});
  ASSERT_TRUE(plan) << plan.error().message;
  // As root (here and in CI) a cgroup must hold it; another user may have
  // none to write.
  if (!plan->cgroup && ::geteuid() != 0)
    GTEST_SKIP() << "no cgroup here for memory: " << holder.Describe();
  ASSERT_NE(plan->cgroup, nullptr) << "as root: " << holder.Describe();
  EXPECT_TRUE(plan->rlimits.empty());
  ASSERT_EQ(plan->join.size(), 1u);
  const std::string& dir = plan->cgroup->dirs().front();
  EXPECT_EQ(plan->join[0], dir + "/cgroup.procs");
  bool v2 = plan->held_by.starts_with("cgroup v2");
  auto limit = ReadFile(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
  ASSERT_TRUE(limit);
  EXPECT_EQ(*limit, std::to_string(64 * kMiB) + "\n");
  EXPECT_TRUE(plan->cgroup->Empty());
  EXPECT_FALSE(plan->cgroup->OomKilled());
  // A supervisor started later finds it by the task's name.
  auto found = holder.Find("shell-7");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->dirs(), plan->cgroup->dirs());
  EXPECT_TRUE(plan->cgroup->Remove());
  EXPECT_EQ(holder.Find("shell-7"), nullptr);
  // This baton's own folders go too.
  holder.RemoveStale({});
  holder.RemoveFolders();
  std::string base = dir.substr(0, dir.rfind('/'));
  EXPECT_NE(::access(base.c_str(), F_OK), 0) << base << " is left";
}

}  // namespace
}  // namespace baton
