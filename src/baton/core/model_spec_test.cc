#include "baton/core/model_spec.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(ModelSpec, ParsesProviderModelAndEffort) {
  auto spec = ParseModelSpec("anthropic/claude-sonnet-4-5:high");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->provider, "anthropic");
  EXPECT_EQ(spec->model, "claude-sonnet-4-5");
  EXPECT_EQ(spec->effort, "high");
  EXPECT_EQ(spec->ToString(), "anthropic/claude-sonnet-4-5:high");
}

TEST(ModelSpec, SuffixThatIsNoEffortBelongsToTheModel) {
  auto spec = ParseModelSpec("ollama/qwen3:32b");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->model, "qwen3:32b");
  EXPECT_FALSE(spec->effort);
  auto both = ParseModelSpec("ollama/qwen3:32b:max");
  EXPECT_EQ(both->model, "qwen3:32b");
  EXPECT_EQ(both->effort, "max");
  EXPECT_EQ(ParseModelSpec("openai/gpt-5/mini")->model, "gpt-5/mini");
}

TEST(ModelSpec, ACliTakesTheModelAloneTheWholeSpecOrTheEffortApart) {
  ModelSpec spec = *ParseModelSpec("deepseek/deepseek-v4-pro:max");
  using Argv = std::vector<std::string>;
  EXPECT_EQ(ModelArgv(spec, {}), (Argv{"--model", "deepseek-v4-pro"}));
  EXPECT_EQ(ModelArgv(spec, {.style = ModelArgStyle::kSpec}),
            (Argv{"--model", "deepseek/deepseek-v4-pro:max"}));
  ModelArgs split{.style = ModelArgStyle::kModelAndEffort,
                  .model_flag = "-m",
                  .effort_flag = "--effort"};
  EXPECT_EQ(ModelArgv(spec, split),
            (Argv{"-m", "deepseek-v4-pro", "--effort", "max"}));
  // No effort in the spec: no effort flag.
  EXPECT_EQ(ModelArgv(*ParseModelSpec("deepseek/deepseek-v4-flash"), split),
            (Argv{"-m", "deepseek-v4-flash"}));
  EXPECT_EQ(ParseModelArgStyle("model+effort"), ModelArgStyle::kModelAndEffort);
  EXPECT_EQ(ParseModelArgStyle("both").error().code, ErrorCode::kInvalidConfig);
}

TEST(ModelSpec, RejectsMalformedSpecsWithInvalidModel) {
  std::string long_part(201, 'a');
  for (std::string bad :
       {std::string("claude"), std::string("/model"), std::string("openai/"),
        std::string("openai/:high"), std::string("openai/gpt-5:"),
        std::string("ollama/qwen3:32b:"), std::string("a b/c"),
        std::string("openai/gpt\t5"), std::string("open:ai/gpt"),
        "p/" + long_part, long_part + "/m", std::string(513, 'x')}) {
    auto spec = ParseModelSpec(bad);
    ASSERT_FALSE(spec) << bad;
    EXPECT_EQ(spec.error().code, ErrorCode::kInvalidModel) << bad;
    EXPECT_NE(spec.error().message.find("<provider>/<model>"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace baton
