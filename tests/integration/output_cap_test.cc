// The output cap (issue 16, doc/tasks.md "Output cap"): past --max-output,
// a task runs on, what it prints is dropped, the disk keeps none of it, and
// its log ends with a marker of exactly how many bytes were dropped, also
// across a kill -9 of batond.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class OutputCapTest : public BatonTest {
 protected:
  // Polls (bounded) until `path` exists.
  static bool WaitForFile(const std::string& path) {
    auto deadline = std::chrono::steady_clock::now() + seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::filesystem::exists(path))
        return true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return false;
  }
  // `head -c N` of 'a's, then a flag file, then a long sleep.
  std::string Printer(int64_t bytes, const std::string& flag) {
    return "head -c " + std::to_string(bytes) +
           " /dev/zero | tr '\\0' a; touch " + flag + "; exec sleep 60";
  }
  nlohmann::json KillAndWait(const std::string& id) {
    EXPECT_EQ(Baton({"kill", "--grace", "100ms", id}).exit_code, 0);
    auto waited = Baton({"--json", "wait", "--timeout", "20s", id});
    return waited.json()["ended"][0];
  }
};

TEST_F(OutputCapTest, PastTheCapOutputIsDroppedAndTheLogEndsWithAnExactMarker) {
  std::string flag = home_ + "/printed";
  std::string id = Run(Printer(5000, flag), {"--max-output", "1000"});
  ASSERT_TRUE(WaitForFile(flag));
  // Running: readers get the first 1000 bytes, the status the rest's count.
  EXPECT_EQ(Baton({"output", id}).out, std::string(1000, 'a'));
  auto running = Status(id);
  EXPECT_EQ(running["status"], "running");
  EXPECT_EQ(running["output_bytes"], 1000) << running.dump();
  EXPECT_EQ(running["max_output"], 1000);
  EXPECT_EQ(running["output_dropped"], 4000);
  EXPECT_NE(Baton({"status", id})
                .out.find("dropped:  4000 bytes past the cap of 1000 bytes"),
            std::string::npos)
      << Baton({"status", id}).out;

  auto ended = KillAndWait(id);
  EXPECT_EQ(ended["status"], "killed");
  EXPECT_EQ(ended["output_dropped"], 4000) << ended.dump();
  EXPECT_EQ(Baton({"output", id}).out,
            std::string(1000, 'a') +
                "\n[baton: output capped at 1000 bytes (max_output); 4000 "
                "more bytes were dropped]\n");
}

TEST_F(OutputCapTest, TheDiskKeepsNoneOfWhatWasDropped) {
  std::string flag = home_ + "/printed";
  std::string id = Run(Printer(64 << 20, flag), {"--max-output", "1M"});
  ASSERT_TRUE(WaitForFile(flag));
  std::string path = Status(id)["output_path"];
  // Within a few of batond's ticks (250 ms) the 63 MiB past the cap are
  // holes: the file's size counts them, its blocks do not.
  struct stat st {};
  auto deadline = std::chrono::steady_clock::now() + seconds(10);
  do {
    std::this_thread::sleep_for(milliseconds(100));
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
  } while (st.st_blocks * 512 > (4 << 20) &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(st.st_size, 64 << 20);
  EXPECT_LE(st.st_blocks * 512, 4 << 20) << "blocks " << st.st_blocks;
  auto ended = KillAndWait(id);
  EXPECT_EQ(ended["output_dropped"], (64 << 20) - (1 << 20));
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_LT(st.st_size, (1 << 20) + 128);
}

TEST_F(OutputCapTest, UnderTheCapOrWithoutOneNothingChanges) {
  std::string small = Run("printf 'hello\\n'", {"--max-output", "1K"});
  std::string uncapped =
      Run("head -c 5000 /dev/zero | tr '\\0' b", {"--max-output", "0"});
  for (const auto& id : {small, uncapped})
    Baton({"wait", "--timeout", "20s", id});
  auto task = Status(small);
  EXPECT_FALSE(task.contains("output_dropped")) << task.dump();
  EXPECT_EQ(Baton({"output", small}).out, "hello\n");
  EXPECT_EQ(Baton({"output", uncapped}).out, std::string(5000, 'b'));
  // The default cap is 1 GiB.
  EXPECT_EQ(Status(Run("true"))["max_output"], int64_t{1} << 30);
}

TEST_F(OutputCapTest, ABadSizeIsRefusedAndStartsNothing) {
  auto refused = Baton({"run", "--max-output", "lots", "--", "true"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("'lots' is not a size"), std::string::npos)
      << refused.err;
  EXPECT_EQ(Baton({"ls", "--all", "--quiet"}).out, "");
}

TEST_F(OutputCapTest, TheMarkerIsExactAcrossAKillOfBatond) {
  std::string flag = home_ + "/printed";
  std::string id = Run(Printer(3000, flag), {"--max-output", "100"});
  ASSERT_TRUE(WaitForFile(flag));
  std::string pid = std::to_string(Status(id)["pid"].get<int>());
  KillDaemonHard();
  // The task ends while no batond runs; the next one finishes its log.
  ASSERT_EQ(std::system(("pkill -KILL -s " + pid).c_str()), 0);
  auto waited = Baton({"--json", "wait", "--timeout", "20s", id});
  auto ended = waited.json()["ended"][0];
  EXPECT_EQ(ended["output_dropped"], 2900) << waited.out;
  EXPECT_EQ(Baton({"output", id}).out,
            std::string(100, 'a') +
                "\n[baton: output capped at 100 bytes (max_output); 2900 "
                "more bytes were dropped]\n");
}

}  // namespace
}  // namespace baton::testing
