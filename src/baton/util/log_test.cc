#include "baton/util/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>

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
  EXPECT_TRUE(std::regex_match(
      Read("standard.log"),
      std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} tester\[)" + pid +
                 R"(\] warning: disk nearly full\n)")))
      << Read("standard.log");
  EXPECT_TRUE(std::regex_match(
      Read("utc.log"),
      std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z tester\[)" + pid +
                 R"(\] disk nearly full\n)")))
      << Read("utc.log");
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
