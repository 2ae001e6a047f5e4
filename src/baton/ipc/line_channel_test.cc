#include "baton/ipc/line_channel.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace baton {
namespace {

using std::chrono::milliseconds;

class LineChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    peer_ = UniqueFd(fds[1]);
    channel_ = std::make_unique<LineChannel>(
        &loop_, UniqueFd(fds[0]),
        [this](std::string_view line) {
          lines_.emplace_back(line);
          order_.push_back("line");
        },
        [this] { order_.push_back("close"); });
    loop_.AddBeforeSleep([this] { order_.push_back("turn"); });
  }

  void Write(const std::string& data) {
    ASSERT_EQ(::write(peer_.get(), data.data(), data.size()),
              static_cast<ssize_t>(data.size()));
  }

  // Lines served between two before-sleep hooks, turn by turn.
  std::vector<size_t> LinesPerTurn() const {
    std::vector<size_t> turns;
    size_t count = 0;
    for (const auto& what : order_) {
      if (what == "line") {
        ++count;
      } else if (count) {
        turns.push_back(count);
        count = 0;
      }
    }
    if (count)
      turns.push_back(count);
    return turns;
  }

  EventLoop loop_;
  UniqueFd peer_;
  std::unique_ptr<LineChannel> channel_;
  std::vector<std::string> lines_;
  std::vector<std::string> order_;
};

TEST_F(LineChannelTest, ServesABurstAFewLinesPerTurnInOrder) {
  std::string burst;
  for (int i = 0; i < 150; ++i)
    burst += "line " + std::to_string(i) + "\n";
  Write(burst);
  for (int turn = 0; turn < 10 && lines_.size() < 150; ++turn)
    ASSERT_TRUE(loop_.RunOnce(milliseconds(100)));
  ASSERT_EQ(lines_.size(), 150u);
  for (int i = 0; i < 150; ++i)
    EXPECT_EQ(lines_[i], "line " + std::to_string(i));
  // The before-sleep hooks (batond's commit and flushes) run between
  // turns, so the first lines' work leaves before the last are parsed.
  std::vector<size_t> expected = {LineChannel::kLinesPerTurn,
                                  LineChannel::kLinesPerTurn,
                                  150 - 2 * LineChannel::kLinesPerTurn};
  EXPECT_EQ(LinesPerTurn(), expected);
}

TEST_F(LineChannelTest, ACloseIsReportedAfterEveryLineIsServed) {
  std::string burst;
  for (int i = 0; i < 100; ++i)
    burst += std::to_string(i) + "\n";
  Write(burst + "an unfinished line");
  peer_.reset();
  for (int turn = 0; turn < 10 && !channel_->closed(); ++turn)
    ASSERT_TRUE(loop_.RunOnce(milliseconds(100)));
  EXPECT_TRUE(channel_->closed());
  ASSERT_EQ(lines_.size(), 100u);
  EXPECT_EQ(lines_.back(), "99");
  ASSERT_FALSE(order_.empty());
  EXPECT_EQ(order_.back(), "close");
}

TEST_F(LineChannelTest, ClosingWithLinesLeftDropsThemAndTheirTurn) {
  std::string burst;
  for (int i = 0; i < 100; ++i)
    burst += std::to_string(i) + "\n";
  Write(burst);
  ASSERT_TRUE(loop_.RunOnce(milliseconds(100)));
  ASSERT_EQ(lines_.size(), LineChannel::kLinesPerTurn);
  EXPECT_EQ(loop_.pending_timers(), 1u);  // The next turn's.
  // The channel may be destroyed now: no turn of it is left to run.
  channel_.reset();
  EXPECT_EQ(loop_.pending_timers(), 0u);
  ASSERT_TRUE(loop_.RunOnce(milliseconds(0)));
  EXPECT_EQ(lines_.size(), LineChannel::kLinesPerTurn);
}

}  // namespace
}  // namespace baton
