#include "baton/daemon/output_cap.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "baton/util/file_util.h"
#include "tests/support/temp_dir.h"

namespace baton {
namespace {

class OutputCapFileTest : public ::testing::Test {
 protected:
  // Appends `bytes` bytes of `fill` to the log, as a task's O_APPEND
  // stdout does.
  void Append(size_t bytes, char fill = 'a') {
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    ASSERT_GE(fd, 0);
    std::string text(bytes, fill);
    ASSERT_EQ(::write(fd, text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
    ::close(fd);
  }
  std::string Read() { return ReadFile(path_).value_or("<missing>"); }

  testing::TempDir dir_;
  std::string path_ = dir_.path() + "/output.log";
};

TEST_F(OutputCapFileTest, TheMarkerFollowsTheKeptBytesWithTheExactCount) {
  Append(5000);
  auto dropped = FinishCappedOutput(path_, 1000);
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(*dropped, 4000u);
  EXPECT_EQ(Read(), std::string(1000, 'a') +
                        "\n[baton: output capped at 1000 bytes (max_output); "
                        "4000 more bytes were dropped]\n");
  // Again (a batond restarted while reporting the end): the same count,
  // the same file.
  dropped = FinishCappedOutput(path_, 1000);
  ASSERT_TRUE(dropped);
  EXPECT_EQ(*dropped, 4000u);
  EXPECT_EQ(Read().size(), 1000 + CapMarker(1000, 4000).size() + 1);
}

TEST_F(OutputCapFileTest, AKeptPartEndingInANewlineGetsNoBlankLine) {
  Append(9, 'x');
  Append(1, '\n');
  Append(7, 'y');
  ASSERT_EQ(*FinishCappedOutput(path_, 10), 7u);
  EXPECT_EQ(Read(), "xxxxxxxxx\n" + CapMarker(10, 7));
}

TEST_F(OutputCapFileTest, WithinTheCapTheFileIsLeftAlone) {
  Append(100);
  EXPECT_EQ(*FinishCappedOutput(path_, 100), 0u);
  EXPECT_EQ(Read(), std::string(100, 'a'));
  EXPECT_EQ(FinishCappedOutput(dir_.path() + "/none", 1).error().code,
            ErrorCode::kNotFound);
}

TEST_F(OutputCapFileTest, PunchingFreesTheBlocksPastTheCapAndKeepsTheSize) {
  constexpr size_t kSize = 8 << 20;
  Append(kSize);
  auto punched = PunchPastCap(path_, 4096, 0);
  ASSERT_TRUE(punched) << punched.error().message;
  EXPECT_EQ(*punched, kSize);
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), kSize);
  EXPECT_LE(st.st_blocks * 512, 64 * 1024) << st.st_blocks;
  // What was written after is punched from where the last punch ended.
  Append(1 << 20);
  punched = PunchPastCap(path_, 4096, *punched);
  ASSERT_TRUE(punched);
  EXPECT_EQ(*punched, kSize + (1 << 20));
  // The kept bytes are intact; the count at the end is exact.
  EXPECT_EQ(*FinishCappedOutput(path_, 100), kSize + (1 << 20) - 100);
  EXPECT_EQ(Read().substr(0, 100), std::string(100, 'a'));
}

}  // namespace
}  // namespace baton
