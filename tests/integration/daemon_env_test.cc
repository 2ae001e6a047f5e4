// batond re-executes itself with its allocator tunables
// (src/baton/daemon/malloc_tuning.h); its tasks still see the user's.
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "baton/daemon/malloc_tuning.h"
#include "baton/util/split.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::seconds;

// GLIBC_TUNABLES as a process was exec'd with it, as the kernel keeps
// it. glibc ends each value it reads with a NUL in that original string,
// so the entries after it that are settings are joined back.
std::string InitialTunables(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ",
                   std::ios::binary);
  std::string all(std::istreambuf_iterator<char>(in), {});
  std::vector<std::string_view> entries = Split(all, '\0');
  const std::string prefix = "GLIBC_TUNABLES=";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i].starts_with(prefix))
      continue;
    std::string joined(entries[i].substr(prefix.size()));
    for (size_t j = i + 1;
         j < entries.size() && entries[j].starts_with("glibc."); ++j) {
      joined += ":";
      joined += entries[j];
    }
    return joined;
  }
  return "unset";
}

class DaemonEnvTest : public BatonTest {
 protected:
  // What a task started by the CLI (which sends its own environment, with
  // `tunables` as GLIBC_TUNABLES) sees of the two variables.
  std::string TaskSees(const std::string& tunables) {
    std::string id =
        Run("printf '%s|%s' \"${GLIBC_TUNABLES-unset}\" "
            "\"${BATON_SAVED_GLIBC_TUNABLES-unset}\"",
            {}, {{"GLIBC_TUNABLES", tunables}});
    EXPECT_EQ(Baton({"wait", id}).exit_code, 0);
    return Baton({"output", id}).out;
  }
  // What a task of a raw client that sent no environment sees: the clean
  // environment, never batond's own (doc/protocol.md, "Environment").
  std::string RawTaskSees() {
    auto client = ConnectToDaemon();
    EXPECT_TRUE(client) << client.error().message;
    if (!client)
      return "";
    auto run = client->Call(
        RunRequest{.argv = {"/bin/sh", "-c",
                            "printf '%s|%s|%s' \"${GLIBC_TUNABLES-unset}\" "
                            "\"${BATON_SAVED_GLIBC_TUNABLES-unset}\" "
                            "\"${BATON_T_SECRET-unset}\""},
                   .cwd = "/"});
    EXPECT_TRUE(run) << run.error().message;
    if (!run)
      return "";
    std::string id = run->task.task.id.ToString();
    EXPECT_EQ(Baton({"wait", id}).exit_code, 0);
    return Baton({"output", id}).out;
  }
};

TEST_F(DaemonEnvTest, BatondRunsTunedAndTasksSeeTheUsersTunables) {
  std::string user = "glibc.malloc.perturb=0";
  ASSERT_EQ(Baton({"daemon", "start"}, {{"GLIBC_TUNABLES", user}}).exit_code,
            0);
  auto [daemon_pid, supervisor_pid] = DaemonPids();
  // Ours first, so the user's own settings win. (glibc may drop from the
  // process's copy the settings it does not keep, so only ours is checked
  // there; the task shows that the user's value went through.)
  EXPECT_TRUE(InitialTunables(daemon_pid).starts_with(kDaemonMallocTunables))
      << InitialTunables(daemon_pid);
  EXPECT_EQ(TaskSees(user), user + "|unset");
}

TEST_F(DaemonEnvTest, ARawClientsTaskGetsACleanEnvironmentNotBatonds) {
  // batond is started by a client whose environment holds a secret.
  ASSERT_EQ(Baton({"daemon", "start"},
                  {{"BATON_T_SECRET", "s3cret"}, {"GLIBC_TUNABLES", ""}})
                .exit_code,
            0);
  EXPECT_EQ(RawTaskSees(), "unset|unset|unset");
}

TEST_F(DaemonEnvTest, WithoutTheUsersTunablesTasksSeeNone) {
  ASSERT_EQ(Baton({"daemon", "start"}, {{"GLIBC_TUNABLES", ""}}).exit_code, 0);
  auto [daemon_pid, supervisor_pid] = DaemonPids();
  EXPECT_EQ(InitialTunables(daemon_pid), kDaemonMallocTunables);
  EXPECT_EQ(TaskSees(""), "|unset");
}

}  // namespace
}  // namespace baton::testing
