// DeepSeek Harness (`dsh`) takes `<provider>/<model>[:<effort>]` as one
// string (issue 13): through a real batond and the CLI, a stand-in `dsh`
// that prints its arguments shows the whole spec, effort included.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/integration/fake_agent_fixture.h"
#include "tests/support/baton_fixture.h"

namespace baton::testing {
namespace {

class DshModelTest : public FakeAgentTest {};

TEST_F(DshModelTest, TheWholeModelSpecGoesToDsh) {
  std::string bin = home_ + "/dsh-bin";
  std::filesystem::create_directories(bin);
  {
    std::ofstream script(bin + "/dsh");
    script << "#!/bin/sh\necho \"args: $*\"\n";
  }
  ASSERT_EQ(::chmod((bin + "/dsh").c_str(), 0755), 0);
  env_["PATH"] = bin + ":" + env_["PATH"];
  std::string id = Delegate(
      {"--agent", "dsh", "--model", "deepseek/deepseek-v4-pro:max", "hi"});
  EXPECT_EQ(WaitEnd(id)["status"], "completed");
  std::string output = Baton({"output", id}, env_).out;
  EXPECT_NE(output.find("args: --profile headless --model "
                        "deepseek/deepseek-v4-pro:max"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace baton::testing
