#include "baton/util/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

#include "baton/util/file_util.h"
#include "tests/support/temp_dir.h"

namespace baton {
namespace {

class LogTest : public ::testing::Test {
 protected:
  ~LogTest() override {
    std::vector<LogSink> sinks;
    sinks.push_back(LogSink::Stderr());
    SetLogSinks("baton", std::move(sinks));
  }

  std::string Read(const std::string& name) {
    return ReadFile(tmp_.path() + "/" + name).value_or("<missing>");
  }

  testing::TempDir tmp_;
};

// "2026-12-01T16:07:45.385" at the start of `text`: digits where the
// shape has a 'd'. (Not std::regex: g++ 12 warns inside <regex> under -O1
// with sanitizers, and CI builds with -Werror.)
bool StartsWithTimestamp(std::string_view text) {
  constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.ddd";
  if (text.size() < kShape.size())
    return false;
  for (size_t i = 0; i < kShape.size(); ++i) {
    bool digit = text[i] >= '0' && text[i] <= '9';
    if (kShape[i] == 'd' ? !digit : text[i] != kShape[i])
      return false;
  }
  return true;
}

TEST_F(LogTest, EverySinkGetsEachRecordInItsOwnFormat) {
  auto standard = LogSink::File(tmp_.path() + "/standard.log");
  auto utc = LogSink::File(tmp_.path() + "/utc.log", LogFormat::kUtcNoLevel);
  ASSERT_TRUE(standard && utc);
  std::vector<LogSink> sinks;
  sinks.push_back(std::move(*standard));
  sinks.push_back(std::move(*utc));
  SetLogSinks("tester", std::move(sinks));
  BATON_LOG_WARN("disk {} full", "nearly");
  BATON_LOG_DEBUG("not at the default level");

  std::string pid = std::to_string(::getpid());
  std::string standard_text = Read("standard.log");
  EXPECT_TRUE(StartsWithTimestamp(standard_text)) << standard_text;
  EXPECT_EQ(standard_text.substr(std::min<size_t>(23, standard_text.size())),
            " tester[" + pid + "] warning: disk nearly full\n");
  std::string utc_text = Read("utc.log");
  EXPECT_TRUE(StartsWithTimestamp(utc_text)) << utc_text;
  EXPECT_EQ(utc_text.substr(std::min<size_t>(23, utc_text.size())),
            "Z tester[" + pid + "] disk nearly full\n");
}

TEST_F(LogTest, ReplacedSinksGetNothingMoreAndNoSinksLogNothing) {
  auto file = LogSink::File(tmp_.path() + "/a.log");
  ASSERT_TRUE(file);
  std::vector<LogSink> sinks;
  sinks.push_back(std::move(*file));
  SetLogSinks("tester", std::move(sinks));
  BATON_LOG_INFO("first");
  SetLogSinks("tester", {});  // None.
  BATON_LOG_ERROR("second");
  std::string text = Read("a.log");
  EXPECT_NE(text.find("info: first\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("second"), std::string::npos) << text;
}

TEST_F(LogTest, AFileThatCannotBeOpenedIsAnError) {
  auto file = LogSink::File(tmp_.path() + "/no/such/folder/x.log");
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code, ErrorCode::kNotFound);
  EXPECT_NE(file.error().message.find("open log "), std::string::npos);
}

}  // namespace
}  // namespace baton
